# Cython's augmenting declarations for game.py (pure-Python mode: the .py stays the one
# source, and runs unchanged where nothing is compiled). Compiled, `State` is an extension
# type whose attributes live in the object itself, not in an instance __dict__: reading
# one from compiled code is a pointer load, where a plain class pays a dict lookup per
# read (the cost callgrind found, docs/engine-guide.md). Every attribute is a `public
# object`, so it holds, accepts and refuses exactly what the interpreted class does.
# A game's state class may extend this one in its own .pxd (tricky_cultists/rules.pxd);
# a plain Python subclass (tests, a game without a .pxd) gets a __dict__ as usual.

import cython

@cython.locals(wanted=cython.long, found=cython.long)
cpdef bint _holds(object legal, object action) except -1

cdef class State:
    cdef public object config
    cdef public object num_players
    cdef public object seed
    cdef public object shuffle
    cdef public object rng
    cdef public object turn
    cdef public object decisions
    cdef public object log

    # The decision vocabulary as `cpdef`: `apply` (and a compiled game's own methods) call
    # these on a compiled subclass through its C method table instead of an attribute
    # lookup each; a Python subclass's override is still found and called.
    cpdef to_act(self)
    cpdef legal_actions(self, seat)
    cpdef _apply(self, seat, action)
    cpdef is_terminal(self)
    cpdef apply(self, seat, action, legal=*)
