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
