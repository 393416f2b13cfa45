"""`State.apply`'s legality check answers exactly as `action in legal` does.

Compiled, the check compares an int against a list of ints as C integers (core/game.pxd)
instead of a rich comparison per entry; every other case is handed to `in`. Each case
below is one a caller could pass (gRPC gives ints, but the library is called directly by
tests, sweeps and bots), and the answer must be `in`'s, whichever build is loaded.
"""

from __future__ import annotations

from typing import Any

import pytest

from services.engines.core.game import _holds

BIG = 1 << 70  # past any C long


class _Odd(int):
    """An int subclass: not the rules' own type, so it takes `in`."""


@pytest.mark.parametrize(
    ("legal", "action"),
    [
        ([1, 2, 3], 2),
        ([1, 2, 3], 4),
        ([], 0),
        ([0, 1], True),  # bool is an int: True == 1
        ([0, 1], False),
        ([1, 2], 2.0),  # a float equal to a legal int
        ([1, 2], 2.5),
        ([1.0, 2], 1),  # an entry that is no int
        (["a", 3], 3),
        ([BIG, 5], 5),  # an entry past a C long
        ([5, BIG], BIG),
        ([5], BIG),
        ([5, 6], -BIG),
        ((1, 2, 3), 3),  # not a list
        (range(10), 9),
        ([1, 2], "1"),
        ([1, 2], None),
        ([_Odd(7)], 7),
        ([7], _Odd(7)),
        ([-(1 << 62), 1 << 62], 1 << 62),
    ],
)
def test_holds_answers_as_in(legal: Any, action: Any) -> None:
    assert _holds(legal, action) is (action in legal)
