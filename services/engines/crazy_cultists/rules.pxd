# Cython's augmenting declarations for rules.py (pure-Python mode: the .py stays the one
# source, and runs unchanged where nothing is compiled). Compiled, the state is an
# extension type extending core/game.pxd's `State`: its fields live in the object, so the
# rules read them without an instance-dict lookup each (docs/engine-guide.md). Every field
# is a `public object`: it holds, accepts and refuses what the interpreted class does,
# except the kind table derived from the config (`kind`, `n_main`), which the rules set
# themselves: a tuple and a C integer, so a card's kind is a C read; so are the hand
# limit and turn cap every turn reads.
#
# Integers typed here are C integers where they mean what the Python ints mean: card kinds
# (below 27, so a kind's bit fits a C long), seats, positions in a zone and favor totals
# (below a deck's size). The card kinds imported from cards.py are C constants here, so a
# test of a kind is a C comparison, and so are the action bases a turn's plays are built
# from: a C constant is no attribute of the compiled module, which is why only names
# nothing imports from this module are declared here (bots.py imports PASS, DONE...).
# Compiled and interpreted play the same seeds byte for byte (tests/core/test_compiled.py).
import cython

from services.engines.core.game cimport State

cdef long NO_TARGET, PLAY_ROOM, PLAY

cdef long BEELZE_BEATDOWN, BLACK_SPIRE, COUNTER_SPELL, DARK_BAPTISM, DARK_FAVOR_4, EVIL_EYE
cdef long FEAR_THE_REAPER, FORBIDDEN_ALCHEMY, HAIL_YOURSELF, HEAVY_METAL, LIFE_SIPHON
cdef long NECROMANCY, NERDRONOMICON, OUIJA, POLYMORPHIZATION, PUPPET_MASTER, SCRYING_BONES
cdef long SWITCHEROO, TOILING_TROUBLE, VOODOO
cdef long _TARGETED_BITS, _MAIN_FAVOR_BITS
cdef long _HIT_STACK, _HIT_UNMARKED, _HIT_HAND, _HIT_NO_SPIRE, _HIT_PAIR, _HIT_BOTH_STACKS
cdef long _ACT_ALWAYS, _ACT_DECK, _ACT_DISCARD, _ACT_HAIL, _ACT_OTHER_HANDS, _ACT_OTHER_STACKS
cdef long _ACT_HANDS_MOVE
cdef tuple _PLAYABLE
cdef tuple VALUE

cpdef dict _record(kind, player, target, card)

@cython.locals(out=list, i=cython.Py_ssize_t, j=cython.Py_ssize_t, c=cython.Py_ssize_t, k=cython.Py_ssize_t,
               value=cython.long)
cpdef list _pairs(tuple kinds, list stack)

@cython.locals(seen=cython.long, bit=cython.long, k=cython.long, c=cython.Py_ssize_t)
cpdef list _distinct(tuple kinds, list zone, long base)

@cython.locals(i=cython.Py_ssize_t, c=cython.Py_ssize_t)
cpdef Py_ssize_t _last_of(list zone, tuple kinds, long k) except -2

@cython.locals(total=cython.long, c=cython.Py_ssize_t, k=cython.Py_ssize_t)
cpdef long _favor(tuple kinds, list zone) except? -1

@cython.locals(s=cython.Py_ssize_t, lo=cython.Py_ssize_t, hi=cython.Py_ssize_t, record=list)
cpdef _forget_in(list records, object cards, Py_ssize_t keep, Py_ssize_t only, Py_ssize_t n)

cdef class CrazyCultistsState(State):
    cdef public tuple kind
    cdef public Py_ssize_t n_main
    cdef public Py_ssize_t _hand_limit, _max_turns
    cdef object _derived_for  # the config they were derived from
    cdef tuple _tags
    cdef object _refill_tags
    # FIELDS: written from CrazyCultistsState.FIELDS by deploy/compile_engines.py, never by hand
    cdef public object deck
    cdef public object discard
    cdef public object hands
    cdef public object stacks
    cdef public object candles
    cdef public object poly
    cdef public object spire
    cdef public object dark_deck
    cdef public object dark_discard
    cdef public object dark_due
    cdef public object baptized
    cdef public object active
    cdef public object extra_turn
    cdef public object pending
    cdef public object winner
    cdef public object over
    cdef public object known
    cdef public object known_deck
    # end FIELDS

    # Methods the rules call on self, as `cpdef`: a call through the C method table rather
    # than an attribute lookup. Cython refuses a generator inside a `cpdef` method, so the
    # hot methods hold none; the ones the rules do not call on their hot paths (view,
    # checks, labels) stay `def`.
    cpdef _derive(self, CrazyCultistsState like=*)
    cpdef to_act(self)
    @cython.locals(p=dict)
    cpdef _decider(self)
    cpdef is_terminal(self)
    @cython.locals(p=dict)
    cpdef legal_actions(self, seat)
    @cython.locals(hand=list, kinds=tuple, out=list, seen=cython.long, bit=cython.long,
                   k=cython.long, base=cython.long, c=cython.Py_ssize_t, targets=list,
                   n=cython.Py_ssize_t, t=cython.Py_ssize_t)
    cpdef _turn_actions(self, Py_ssize_t seat)
    @cython.locals(condition=cython.long)
    cpdef bint _would_hit(self, long k, Py_ssize_t seat, Py_ssize_t target) except -1
    @cython.locals(condition=cython.long)
    cpdef bint _would_act(self, long k, Py_ssize_t seat) except -1
    cpdef _hail_seats(self, seat)
    cpdef _apply(self, seat, action)
    @cython.locals(k=cython.long, target=cython.long, hand=list, logged=bint)
    cpdef _play(self, seat, action)
    cpdef _on_voodoo(self, p, action)
    @cython.locals(n=cython.Py_ssize_t, player=cython.Py_ssize_t)
    cpdef _open_window(self, dict p)
    @cython.locals(n=cython.Py_ssize_t, active=cython.Py_ssize_t, seat=cython.Py_ssize_t, asked=list)
    cpdef _on_counter(self, dict p, action)
    cpdef _close_window(self, p)
    cpdef _resolve(self, p)
    cpdef _ask(self, kind, p)
    cpdef _finish(self, card=*)
    cpdef _on_toil(self, p, action)
    cpdef _on_evil_eye(self, p, action)
    cpdef _on_nerd_keep(self, p, action)
    cpdef _on_nerd_top(self, p, action)
    cpdef _on_ouija(self, p, action)
    cpdef _on_hail(self, p, action)
    cpdef _on_necro(self, p, action)
    cpdef _on_scry(self, p, action)
    cpdef _on_alchemy(self, p, action)
    cpdef _on_dark_draw(self, p, action)
    cpdef _add_favor(self, seat, card)
    @cython.locals(total=cython.long, need=cython.long)
    cpdef _check_candle(self, seat)
    cpdef need(self, Py_ssize_t seat)
    cpdef candles_to_win(self)
    cpdef _strip(self, seat, count)
    @cython.locals(n=cython.Py_ssize_t, limit=cython.Py_ssize_t, step=cython.Py_ssize_t,
                   seat=cython.Py_ssize_t, active=cython.Py_ssize_t, hand=list)
    cpdef _end_turn(self, Py_ssize_t first=*)
    @cython.locals(n=cython.Py_ssize_t)
    cpdef _start_turn(self, Py_ssize_t seat, bint regular)
    @cython.locals(i=cython.Py_ssize_t)
    cpdef _take(self, list zone, long k)
    cpdef _trash(self, card)
    cpdef _learn(self, seat, cards)
    cpdef _learn_deck(self, seat, cards)
    cpdef _forget(self, cards, Py_ssize_t keep=*, Py_ssize_t only=*)
    @cython.locals(s=cython.Py_ssize_t, record=list)
    cpdef _drew(self, Py_ssize_t seat, card)
