"""Giving freed heap back to the system after a burst (glibc's malloc_trim).

A crowd of event streams arriving at once has thousands of requests in flight together,
each with its greenlet's saved stack and its reads; once they are pushed streams
(services/gateway/pushed_streams.py) that memory is free, but glibc keeps the freed pages
of its heap's middle in the process (only the top is trimmed on its own), so the
worker's resident memory stayed at its peak: about 8 KB a stream after 2,000 streams
opened at once (bench/streams.py). malloc_trim(0) hands those pages back. Elsewhere (not
glibc) it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable

_trim: Callable[[int], int] | None = None
try:
    _trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
except (OSError, AttributeError):  # not glibc
    _trim = None


def trim() -> bool:
    """Returns the heap's free pages to the system; False where that cannot be done."""
    if _trim is None:
        return False
    _trim(0)
    return True
