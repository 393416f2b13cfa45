# Cython's augmenting declarations for rules.py (pure-Python mode: the .py stays the one
# source, and runs unchanged where nothing is compiled). Compiled, the state is an
# extension type extending core/game.pxd's `State`: its fields live in the object, so the
# rules read them without an instance-dict lookup each (docs/engine-guide.md). Every field
# is a `public object`: it holds, accepts and refuses what the interpreted class does.
# The kind table (`kind`, `n_main`) stays a cached_property, derived from the config on
# first use, which needs the instance __dict__ declared here.

from services.engines.core.game cimport State

cdef class CrazyCultistsState(State):
    cdef dict __dict__
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

    # Methods the rules call on self, as `cpdef`: a call through the C method table rather
    # than an attribute lookup. Cython refuses a generator inside a `cpdef` method, so the
    # methods holding one (`_would_act`, `_on_counter`, `_add_favor`) stay `def`, as do
    # the ones the rules do not call on their hot paths (view, checks, labels).
    cpdef to_act(self)
    cpdef _decider(self)
    cpdef is_terminal(self)
    cpdef legal_actions(self, seat)
    cpdef _turn_actions(self, seat)
    cpdef _would_hit(self, k, seat, target)
    cpdef _hail_seats(self, seat)
    cpdef _apply(self, seat, action)
    cpdef _play(self, seat, action)
    cpdef _on_voodoo(self, p, action)
    cpdef _open_window(self, p)
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
    cpdef _check_candle(self, seat)
    cpdef _strip(self, seat, count)
    cpdef _end_turn(self, first=*)
    cpdef _start_turn(self, seat, regular)
    cpdef _take(self, zone, k)
    cpdef _trash(self, card)
    cpdef _learn(self, seat, cards)
    cpdef _learn_deck(self, seat, cards)
    cpdef _forget(self, cards, keep=*, only=*)
    cpdef _drew(self, seat, card)
