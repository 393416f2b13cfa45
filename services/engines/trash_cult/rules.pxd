# Cython's augmenting declarations for rules.py (pure-Python mode: the .py stays the one
# source, and runs unchanged where nothing is compiled). The kind masks the main actions
# are read from, in C integers: card ids index the kind table and kinds are below 22, so
# every value fits a C long and means what the Python int means (tests/core/test_compiled.py
# plays the same seeds both ways).
import cython

@cython.locals(mask=cython.long, c=cython.Py_ssize_t, k=cython.long)
cpdef long _kind_mask(list zone, tuple kinds) except? -1

@cython.locals(mask=cython.long, c=cython.Py_ssize_t, k=cython.long, counts=list)
cpdef long _kinds_with(list zone, tuple kinds, long offset, long least) except? -1

@cython.locals(i=cython.Py_ssize_t, c=cython.Py_ssize_t)
cpdef Py_ssize_t _last_of(list zone, tuple kinds, long kind) except? -2

@cython.locals(s=cython.Py_ssize_t, record=list)
cpdef _forget_in(list records, object cards, long only)
