# Cython's augmenting declarations for features.py (pure-Python mode: the .py stays the one
# source, and runs unchanged where nothing is compiled). Compiled, the policy's encoder reads
# the state's fields straight from the extension type (rules.pxd) instead of looking each
# attribute up by name, and counts seats, cards and suits in C longs: every value is a
# small non-negative count or id (cards below the config's 100, seats below 4, Suspicion
# and scores far inside a long), and `%` keeps Python's sign rule (cdivision is off), so
# the indices are exactly the interpreted ones (tests/envs/test_policy_fast.py).
import cython

from services.engines.tricky_cultists.rules cimport TrickyCultistsState

@cython.locals(value=cython.long, bins=cython.long)
cpdef long _bin(value, bins)

@cython.locals(st=TrickyCultistsState, out=list,
               seat=cython.long, n=cython.long, ranks=cython.long, leader=cython.long,
               trump=cython.long, bonus=cython.long, led=cython.long, top=cython.long,
               top_at=cython.long, i=cython.long, rel=cython.long, suit=cython.long,
               mine=cython.long, s=cython.long, a=cython.long, mask=cython.long,
               bound=cython.long, u=cython.long, rnd=cython.long, diff=cython.long,
               part=cython.long, b=cython.long, card=cython.long)
cpdef list features(state, seat)

@cython.locals(seat=cython.long, n=cython.long, a=cython.long, kind=cython.long, known=list,
               cols=list)
cpdef tuple legal_columns(state, seat, list legal, dict column)
