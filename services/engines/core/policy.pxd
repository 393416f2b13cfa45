# Cython's augmenting declarations for policy.py (pure-Python mode: the .py stays the one
# source, and runs unchanged where nothing is compiled). The policy's decision in C: both
# layers of the net in `_sparse_scores`, over typed views of the net's float32 arrays, the
# sums in double (what the interpreted source computes too, in the same order: the same
# scores, tests/envs/test_policy_fast.py). Its inputs and columns are checked against the
# arrays' shapes before the loops, which run without bounds checks (its decorators).
import cython

@cython.locals(rows=cython.Py_ssize_t, width=cython.Py_ssize_t, outs=cython.Py_ssize_t,
               n=cython.Py_ssize_t, m=cython.Py_ssize_t, k=cython.Py_ssize_t, j=cython.Py_ssize_t,
               i=cython.Py_ssize_t, c=cython.Py_ssize_t, v=cython.double, s=cython.double,
               scores=list)
cpdef list _sparse_scores(float[:, ::1] w0, float[:, ::1] out_rows, double[::1] acc, float[::1] unit,
                          list idx, list values, list cols)
