# Cython's augmenting declarations for rules.py (pure-Python mode: the .py stays the one
# source, and runs unchanged where nothing is compiled). An augmenting .pxd can type only
# module-level functions and names, so the hot loops of a decision live in such functions:
# the main actions (and the action cards' plays they share with a stolen card's free play)
# and the kind masks they are read from, finding a card of a kind, and forgetting moved
# cards. Their integers are C integers: card ids index the kind table,
# kinds are below 22 and counts below a deck's size, so every value fits a C long and means
# what the Python int means (tests/core/test_compiled.py plays the same seeds both ways).
import cython

cdef long _ACTION_CARDS, _PIGEON_BIT, _POISON_BIT, _PLUSHIE_BIT, _CONVERT_BIT

@cython.locals(mask=cython.long, c=cython.Py_ssize_t, k=cython.long)
cpdef long _kind_mask(list zone, tuple kinds) except? -1

@cython.locals(c=cython.Py_ssize_t, k=cython.long, n0=cython.long, n1=cython.long, n2=cython.long, n3=cython.long)
cpdef long _kinds_with(list zone, tuple kinds, long offset, long least) except? -1

@cython.locals(i=cython.Py_ssize_t, c=cython.Py_ssize_t)
cpdef Py_ssize_t _last_of(list zone, tuple kinds, long kind) except? -2

@cython.locals(s=cython.Py_ssize_t, record=list)
cpdef _forget_in(list records, object cards, long only)

@cython.locals(n=cython.Py_ssize_t, t=cython.Py_ssize_t)
cpdef _card_plays(list acts, long held, Py_ssize_t s, list hands, list hostages, tuple kinds)

@cython.locals(held=cython.long, foods=cython.long, n=cython.Py_ssize_t, t=cython.Py_ssize_t, acts=list)
cpdef list _main_actions_of(Py_ssize_t s, list hands, list members, list hostages, list shrine, list stash, long cult, tuple kinds, long hostage_cost, long food_cost)

# Compiled, the state is an extension type extending core/game.pxd's `State`: its fields
# live in the object, so the rules read them without an instance-dict lookup each
# (docs/engine-guide.md). Every field is a `public object`: it holds, accepts and refuses
# what the interpreted class does.
from services.engines.core.game cimport State

cdef class TrashCultState(State):
    cdef public object deck
    cdef public object trash
    cdef public object chaos_deck
    cdef public object chaos_discard
    cdef public object cult
    cdef public object hands
    cdef public object members
    cdef public object tucked
    cdef public object hostages
    cdef public object shrine
    cdef public object stash
    cdef public object active
    cdef public object actions_left
    cdef public object pending
    cdef public object winner
    cdef public object over
    cdef public object known
    cdef public object known_deck

    # Methods the rules call on self, as `cpdef`: a call through the C method table rather
    # than an attribute lookup. The view, the checks, the labels and the determinisation
    # are not on the hot paths and stay `def`.
    cpdef to_act(self)
    cpdef is_terminal(self)
    cpdef legal_actions(self, seat)
    cpdef _apply(self, seat, action)
    cpdef _deal_and_start(self)
    cpdef _begin_turn(self, seat)
    cpdef _draw(self, seat, count)
    cpdef _deal_from(self, deck, pile)
    cpdef _refill(self, deck, pile)
    cpdef _end_turn(self)
    cpdef _pick(self, seat, action)
    cpdef _plays_of(self, s, kind)
    cpdef _play(self, s, action)
    cpdef _add(self, s, card, kind)
    cpdef _snackrifice(self, s, action, arg)
    cpdef _open_protection(self, event, perk, target)
    cpdef _answer_protection(self, seat, p, action)
    cpdef _after_effect(self, event)
    cpdef _start_perk(self, event, perk)
    cpdef _perk_choices(self, s, perk)
    cpdef _use_perk(self, s, perk, action)
    cpdef _reveal_chaos(self)
    cpdef _chaos_actions(self, q, p)
    cpdef _either_or(self, q, kind)
    cpdef _answer_chaos(self, q, p, action)
    cpdef _resolve_chaos(self, q, kind)
    cpdef _swap_hands(self, hiders)
    cpdef _losable(self, q, want)
    cpdef _trash_choices(self, q, want)
    cpdef _trash_chosen(self, q, action)
    cpdef _answer_steal(self, s, p, action)
    cpdef _take(self, zone, kind)
    cpdef _learn(self, seat, cards)
    cpdef _forget(self, cards, only=*)
    cpdef _drew(self, seat, card)
    cpdef _holds(self, seat, kind)
    cpdef _trash_member(self, s, kind)
    cpdef _trash_food(self, s, cult)
