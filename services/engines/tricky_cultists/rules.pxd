# Cython's augmenting declarations for rules.py (pure-Python mode: the .py stays the one
# source, and runs unchanged where nothing is compiled). Compiled, the state is an
# extension type extending core/game.pxd's `State`: its fields live in the object, so the
# rules read them without an instance-dict lookup each (docs/engine-guide.md). Every field
# is a `public object`: it holds, accepts and refuses what the interpreted class does.

from services.engines.core.game cimport State

cdef class TrickyCultistsState(State):
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

    # Methods the rules call on self, as `cpdef`: a call through the C method table rather
    # than an attribute lookup (a `def` method called on self is looked up by name each
    # time). Cython refuses a generator inside a `cpdef` method, so those once-a-round
    # methods that hold one (`_keep`, `_agenda_met`, `_next_stealer`, `_score_round`) stay
    # `def`.
    cpdef to_act(self)
    cpdef legal_actions(self, seat)
    cpdef _apply(self, seat, action)
    cpdef is_terminal(self)
    cpdef _deal_round(self, round_index)
    cpdef _pass_pack(self, seat)
    cpdef _reveal(self)
    cpdef _begin_trick(self, leader)
    cpdef _play(self, seat, card)
    cpdef _note_play(self, seat, card)
    cpdef _loosen_limits(self, seat)
    cpdef _gather(self)
    cpdef _after_trick(self)
    cpdef _judge_agendas(self)
    cpdef _steal(self, seat, top)
