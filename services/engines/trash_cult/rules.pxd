# Cython's augmenting declarations for rules.py (pure-Python mode: the .py stays the one
# source, and runs unchanged where nothing is compiled). The hot loops of a decision are
# module-level functions typed here: the main actions (and the action cards' plays they
# share with a stolen card's free play) and the kind masks they are read from, finding a
# card of a kind, and forgetting moved cards; the state class below types its own
# methods. Their integers are C integers: card ids index the kind table, kinds are below
# 22 and counts below a deck's size, so every value fits a C long and means what the
# Python int means (tests/core/test_compiled.py plays the same seeds both ways).
import cython

cdef long _ACTION_CARDS, _PIGEON_BIT, _POISON_BIT, _PLUSHIE_BIT, _CONVERT_BIT
# The tables of each kind mask's actions, as C globals: read without a module-dict
# lookup each (private names: nothing outside rules.py reads them).
cdef tuple _ADDS, _DISCARDS_LOW, _DISCARDS_HIGH, _TAKES_LOW, _TAKES_HIGH, _SNACK_MEMBERS
cdef tuple _SNACK_HOSTAGES, _SNACK_FOODS, _CONVERTS, _PLUSHIES, _POISONS
cdef tuple _TRASH_MEMBERS, _TRASH_HOSTAGES, _TRASH_FOODS

@cython.locals(mask=cython.long, c=cython.Py_ssize_t, k=cython.long)
cpdef long _kind_mask(list zone, bytes kinds) except? -1

@cython.locals(c=cython.Py_ssize_t, k=cython.long, n0=cython.long, n1=cython.long, n2=cython.long, n3=cython.long)
cpdef long _kinds_with(list zone, bytes kinds, long offset, long least) except? -1

@cython.locals(i=cython.Py_ssize_t, c=cython.Py_ssize_t, k=cython.long)
cpdef Py_ssize_t _last_of(list zone, bytes kinds, long kind) except? -2

@cython.locals(s=cython.Py_ssize_t, record=list)
cpdef _forget_in(list records, object cards, long only)

@cython.locals(n=cython.Py_ssize_t, t=cython.Py_ssize_t)
cpdef _card_plays(list acts, long held, Py_ssize_t s, list hands, list hostages, bytes kinds)

@cython.locals(held=cython.long, foods=cython.long, n=cython.Py_ssize_t, t=cython.Py_ssize_t, acts=list, adds=list)
cpdef list _main_actions_of(Py_ssize_t s, list hands, list members, list hostages, list shrine, list stash, long cult, bytes kinds, long hostage_cost, long food_cost)

# Compiled, the state is an extension type extending core/game.pxd's `State`: its fields
# live in the object, so the rules read them without an instance-dict lookup each
# (docs/engine-guide.md). Every field is a `public object`: it holds, accepts and refuses
# what the interpreted class does.
from services.engines.core.game cimport State

cdef class TrashCultState(State):
    # FIELDS: written from TrashCultState.FIELDS by deploy/compile_engines.py, never by hand
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
    # end FIELDS

    # What the rules ask the config on every decision, read once per state (`_derive`),
    # as C fields the compiled rules read without an attribute lookup. Not `public`: the
    # rules' own working, never part of the state's documented form.
    cdef bytes _kinds
    cdef tuple _tags
    cdef long _hostage_cost, _food_cost, _food_needed, _hand_size, _actions_per_turn, _max_turns
    cdef long _trucks_draw, _storm_food
    cdef dict _chaos_amounts
    cdef object _derived_for  # the config they were read from

    # Methods the rules call on self, as `cpdef`: a call through the C method table rather
    # than an attribute lookup. The view, the checks, the labels and the determinisation
    # are not on the hot paths and stay `def`. Seats, actions, kinds and counts are C
    # integers: they index the zones and the kind table, and compare, as the Python ints
    # do (every caller passes the rules' own ints; `legal_actions` and `_apply` keep the
    # protocol's untyped arguments and type a seat only once it is known to be asked).
    cpdef _derive(self)
    cpdef to_act(self)
    cpdef is_terminal(self)
    @cython.locals(p=dict, s=cython.Py_ssize_t)
    cpdef legal_actions(self, seat)
    @cython.locals(p=dict)
    cpdef _apply(self, seat, action)
    cpdef _deal_and_start(self)
    @cython.locals(held=cython.Py_ssize_t, size=cython.Py_ssize_t)
    cpdef _begin_turn(self, Py_ssize_t seat)
    @cython.locals(hand=list, deck=list, _=cython.long, drawn=cython.long)
    cpdef _draw(self, Py_ssize_t seat, long count)
    cpdef _deal_from(self, list deck, list pile)
    cpdef _refill(self, list deck, list pile)
    @cython.locals(s=cython.Py_ssize_t)
    cpdef _end_turn(self)
    cpdef _pick(self, Py_ssize_t seat, long action)
    @cython.locals(acts=list)
    cpdef list _plays_of(self, Py_ssize_t s, long kind)
    @cython.locals(arg=cython.long, hand=list, victim=list, t=cython.Py_ssize_t)
    cpdef _play(self, Py_ssize_t s, long action)
    @cython.locals(cult=cython.long)
    cpdef _add(self, Py_ssize_t s, card, long kind)
    @cython.locals(cost=cython.long, _=cython.long)
    cpdef _snackrifice(self, Py_ssize_t s, long action, long arg)
    cpdef _open_protection(self, event, long perk, long target)
    @cython.locals(nxt=cython.Py_ssize_t)
    cpdef _answer_protection(self, Py_ssize_t seat, dict p, long action)
    cpdef _after_effect(self, event)
    @cython.locals(s=cython.Py_ssize_t, food=cython.long, choices=list)
    cpdef _start_perk(self, event, long perk)
    @cython.locals(n=cython.Py_ssize_t, food=cython.long, held=cython.long)
    cpdef list _perk_choices(self, Py_ssize_t s, long perk)
    @cython.locals(t=cython.Py_ssize_t, food=cython.long)
    cpdef _use_perk(self, Py_ssize_t s, long perk, long action)
    cpdef _reveal_chaos(self)
    @cython.locals(acts=list, kind=cython.long)
    cpdef list _chaos_actions(self, Py_ssize_t q, dict p)
    @cython.locals(animals=cython.Py_ssize_t, food=cython.Py_ssize_t, most=cython.Py_ssize_t)
    cpdef list _either_or(self, Py_ssize_t q, long kind)
    @cython.locals(kind=cython.long, nxt=cython.Py_ssize_t, choices=list)
    cpdef _answer_chaos(self, Py_ssize_t q, dict p, long action)
    @cython.locals(_=cython.long)
    cpdef _resolve_chaos(self, Py_ssize_t q, long kind)
    cpdef _swap_hands(self, hiders)
    cpdef Py_ssize_t _losable(self, Py_ssize_t q, want) except -1
    @cython.locals(foods=cython.long)
    cpdef list _trash_choices(self, Py_ssize_t q, want)
    @cython.locals(arg=cython.long)
    cpdef _trash_chosen(self, Py_ssize_t q, long action)
    cpdef _answer_steal(self, Py_ssize_t s, dict p, long action)
    @cython.locals(i=cython.Py_ssize_t)
    cpdef _take(self, list zone, long kind)
    @cython.locals(record=list)
    cpdef _learn(self, Py_ssize_t seat, cards)
    cpdef _forget(self, cards, long only=*)
    cpdef _drew(self, Py_ssize_t seat, card)
    cpdef bint _holds(self, Py_ssize_t seat, long kind) except -1
    @cython.locals(members=list, tucked=list, i=cython.Py_ssize_t)
    cpdef _trash_member(self, Py_ssize_t s, long kind)
    @cython.locals(food=cython.long, zone=list)
    cpdef _trash_food(self, Py_ssize_t s, long cult)
