"""A designer's sweeps and tunes still queued or running, and the games they have left:
what their quotas (services/platform/quotas.py) are checked against.

Read from the stores' active sets (queued and running work, what the reconcilers walk),
so the cost is one read per active sweep or tune of the whole platform, which the quotas
themselves keep small. The owner is the `owner` field a submit over HTTP writes; work
without one (the nightly, the CLI's) belongs to no designer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .sweeps.store import SweepStore
from .tune.store import TuneStore

ACTIVE = ("queued", "running")


@dataclass(frozen=True)
class InFlight:
    count: int
    games_left: int


def sweeps_of(store: SweepStore, owner: str) -> InFlight:
    return _owned(store.active_ids(), store.meta, owner, "total_games", "games_done")


def tunes_of(tunes: TuneStore, owner: str) -> InFlight:
    """A tune's games left: what remains of its search budget (its confirmation comes on top
    and is bounded by the spec)."""
    return _owned(tunes.active_ids(), tunes.meta, owner, "budget", "spent")


def _owned(
    ids: Iterable[str], meta_of: Callable[[str], dict[str, str]], owner: str, total: str, done: str
) -> InFlight:
    """`owner`'s active works among `ids`, and the games they have still to play."""
    count = games = 0
    for work_id in ids:
        meta = meta_of(work_id)
        if meta.get("owner") == owner and meta.get("status") in ACTIVE:
            count += 1
            games += max(0, int(meta.get(total, 0)) - int(meta.get(done, 0)))
    return InFlight(count, games)
