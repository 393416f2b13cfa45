# Cython's augmenting declarations for rules.py (pure-Python mode: the .py stays the one
# source, and runs unchanged where nothing is compiled). Compiled, the state is an
# extension type extending core/game.pxd's `State`: its fields live in the object, so the
# rules read them without an instance-dict lookup each (docs/engine-guide.md). Every field
# is a `public object`: it holds, accepts and refuses what the interpreted class does.

import cython

from services.engines.core.game cimport State
from services.engines.tricky_cultists.cards cimport agenda_kind

cdef class TrickyCultistsState(State):
    # FIELDS: written from TrickyCultistsState.FIELDS by deploy/compile_engines.py, never by hand
    cdef public object round
    cdef public object start
    cdef public object phase
    cdef public object actor
    cdef public object hands
    cdef public object codex
    cdef public object undealt
    cdef public object trick
    cdef public object leader
    cdef public object won
    cdef public object last_winner
    cdef public object final_trick
    cdef public object trump
    cdef public object bonus
    cdef public object suspicion
    cdef public object abilities
    cdef public object agendas
    cdef public object pack
    cdef public object agenda_out
    cdef public object stealers
    cdef public object suit_limits
    cdef public object breakdown
    cdef public object agenda_met
    cdef public object capped
    # end FIELDS

    # Methods the rules call on self, as `cpdef`: a call through the C method table rather
    # than an attribute lookup (a `def` method called on self is looked up by name each
    # time). Cython refuses a generator inside a `cpdef` method, so these build lists.
    # A phase is one of the module's str constants: typed `str`, comparing one asks
    # Cython's string equality (identity, then length and hash) instead of a rich compare.
    @cython.locals(phase=str)
    cpdef to_act(self)
    # Card ids, suits and counts as C longs (ids are below the config's 100-card cap, so
    # every value means what the Python int means); the lists still hold Python ints.
    @cython.locals(phase=str, ranks=cython.long, lead=cython.long, led=cython.long, c=cython.long,
                   h=cython.long, cards=cython.long, base=cython.long, held=cython.long, n=cython.long,
                   a=cython.long, k=cython.long, s=cython.long, top=cython.long)
    cpdef legal_actions(self, seat)
    # The action and its stride as C longs, so decoding it is a C divmod.
    @cython.locals(code=cython.long, stride=cython.long, kind=cython.long, arg=cython.long)
    cpdef _apply(self, seat, action)
    @cython.locals(phase=str)
    cpdef is_terminal(self)
    @cython.locals(n=cython.long, h=cython.long, c=cython.long, at=cython.long, i=cython.long,
                   card=cython.long, agenda=cython.long)
    cpdef _deal_round(self, round_index)
    cpdef _keep(self, seat, kind)
    cpdef _pass_pack(self, seat)
    @cython.locals(n=cython.long, i=cython.long)
    cpdef _reveal(self)
    cpdef _begin_trick(self, leader)
    @cython.locals(hand=list, trick=list, ranks=cython.long, first=cython.long, suit=cython.long,
                   led=cython.long, n=cython.long)
    cpdef _play(self, Py_ssize_t seat, long card)
    @cython.locals(suit_bit=cython.long, void=cython.long, m=cython.long, b=cython.long)
    cpdef _note_play(self, Py_ssize_t seat, long suit, long led)
    cpdef _loosen_limits(self, seat)
    @cython.locals(trick=list, led_cards=list, trumps=list, pile=list, ranks=cython.long,
                   first=cython.long, led=cython.long, trump=cython.long, c=cython.long,
                   top=cython.long, second=cython.long, leader=cython.long, top_at=cython.long,
                   second_at=cython.long, winner=cython.long, trigger=cython.long, n=cython.long,
                   phase=str)
    cpdef _gather(self)
    cpdef _after_trick(self)
    @cython.locals(n=cython.long, i=cython.long)
    cpdef _judge_agendas(self)
    @cython.locals(ranks=cython.long, bonus=cython.long, top=cython.long)
    cpdef _agenda_met(self, kind, seat, tricks)
    @cython.locals(n=cython.long, v=cython.long)
    cpdef _next_stealer(self, first=*)
    cpdef _steal(self, seat, top)
    @cython.locals(n=cython.long, s=cython.long, ranks=cython.long, bonus=cython.long, t=cython.long)
    cpdef _score_round(self)

# The limits a seat's hand showed (`suit_limits`): masks, bounds and the hand size in C.
@cython.locals(i=cython.Py_ssize_t, m=cython.long, b=cython.long, tight=list)
cpdef list _tightest(list limits, long hand_size)
@cython.locals(j=cython.Py_ssize_t, m=cython.long, b=cython.long, o=cython.long, ob=cython.long)
cpdef bint _implied(Py_ssize_t i, list limits) except -1
