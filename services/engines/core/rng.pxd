# Cython's augmenting declarations for rng.py (pure-Python mode: the .py stays the one
# source, and runs unchanged where nothing is compiled). SplitMix64's constants and output
# function in C 64-bit integers: unsigned products wrap at 2**64, which is what rng.py's
# masks do, so the compiled and interpreted generators draw the same numbers
# (tests/core/test_compiled.py plays the same seeds both ways).
import cython

cdef Py_ssize_t _SCRATCH_WORDS
cdef bint _COMPILED
cdef unsigned long long[:] _SCRATCH
cdef unsigned long long _MASK, _GAMMA, _MIX1, _MIX2, _LOW32, _ID_MASK, _KEY_MASK

@cython.locals(z=cython.ulonglong)
cpdef unsigned long long _mix(unsigned long long z)

# Rng.shuffle's loop: the state, the draw and the indexes in C. `n` <= `size` < 2**32
# (checked), so `(x >> 32) * n` and `(x & _LOW32) * n` stay below 2**64, and their
# sum below it too: the same integers as the interpreted arithmetic.
@cython.locals(size=cython.Py_ssize_t, i=cython.Py_ssize_t, j=cython.Py_ssize_t,
               n=cython.ulonglong, x=cython.ulonglong)
cpdef object _shuffle(object items, unsigned long long state)

# The keyed shuffle's salt and keys in C, sorted in a C array (`_sort_keys`).
cpdef object _keyed_shuffle(list items, tuple tags, unsigned long long state)

@cython.locals(k=cython.ulonglong, t=cython.ulonglong, i=cython.Py_ssize_t, c=cython.Py_ssize_t,
               n=cython.Py_ssize_t, size=cython.Py_ssize_t, view=cython.ulonglong[:])
cpdef keyed_order(list items, tuple tags, unsigned long long salt)

@cython.locals(bits=cython.int)
cpdef int _bit_length(Py_ssize_t n)

@cython.locals(words=cython.Py_ssize_t)
cpdef unsigned long long[:] _scratch(Py_ssize_t n)

# The counting and insertion passes over the keys' typed view: every step a C one.
@cython.locals(i=cython.Py_ssize_t, j=cython.Py_ssize_t, b=cython.Py_ssize_t, bits=cython.int,
               shift=cython.int, out=cython.Py_ssize_t, counts=cython.Py_ssize_t,
               buckets=cython.Py_ssize_t, total=cython.Py_ssize_t, m=cython.Py_ssize_t,
               place=cython.Py_ssize_t, k=cython.ulonglong)
cpdef _sort_keys(unsigned long long[:] view, Py_ssize_t n)

@cython.locals(t=cython.ulonglong, i=cython.Py_ssize_t, size=cython.Py_ssize_t, m=cython.Py_ssize_t,
               below=cython.Py_ssize_t, place=cython.Py_ssize_t, c=cython.Py_ssize_t, view=cython.ulonglong[:])
cpdef _coupled_fill(list items, tuple tags, tuple ids, unsigned long long salt)
