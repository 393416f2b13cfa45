"""Simulating one chunk in-process with the rules library (architecture decision 2).

A Celery worker and a local pool process run exactly this function on the same chunk, so
the two paths cannot disagree. The result is columnar (one list per column) and carries
only what cannot be recomputed from the plan: seeds and seat line-ups follow from the game
index, so they are not stored.

Games are played with the engine core's `play_to_end`, the same loop as `play_game`,
which also hands back the final State the facts hooks read.

A cancel is asked between decisions and inside a bot's search, not only between games:
one game of search bots can run for minutes (a 1,000-iteration IS-MCTS table ran ~13),
and a cancel that waited for it would hold a worker the nightly needs. The question costs
a Redis round trip, so it is asked at most every `STOP_POLL_SECONDS`.
"""

from __future__ import annotations

import os
import time
import zlib
from collections.abc import Callable
from typing import Any

import orjson

from services.engines.core.errors import SearchStopped
from services.engines.core.play import play_to_end

from .cards import catalogue, play_tracked
from .facts import facts_hook
from .plan import Chunk, game_seed
from .spec import SweepSpec

# How often a running chunk asks whether its sweep was cancelled: the bound on how long a
# cancelled chunk keeps its worker (plus one decision of a bot without a search hook).
STOP_POLL_SECONDS = float(os.environ.get("SWEEP_STOP_POLL_SECONDS", "0.5"))


def throttled(check: Callable[[], bool], every: float) -> Callable[[], bool]:
    """`check`, asked at most once per `every` seconds (its last answer in between); once
    it said yes it stays yes."""
    last = {"at": -float("inf"), "answer": False}

    def ask() -> bool:
        if last["answer"]:
            return True
        now = time.monotonic()
        if now - last["at"] >= every:
            last["at"], last["answer"] = now, bool(check())
        return bool(last["answer"])

    return ask


def simulate_chunk(
    spec: SweepSpec,
    chunk: Chunk,
    should_stop: Callable[[], bool] | None = None,
    poll_seconds: float | None = None,
    progress: dict[str, Any] | None = None,
) -> dict[str, Any] | None:
    """Play every game of `chunk`; None if `should_stop()` said so part-way (a cancel),
    asked before each game and between the decisions of a game, at most every
    `poll_seconds` (STOP_POLL_SECONDS).

    `progress`, when given, holds the columns of the games finished so far and is kept up
    to date game by game: a chunk stopped part-way (it gave way to the nightly) hands it
    to its next run, which plays on from the first game not in it. Games are
    deterministic by index (rulings G-2), so the result is the one an unbroken run makes."""
    stop = None
    if should_stop is not None:
        stop = throttled(should_stop, STOP_POLL_SECONDS if poll_seconds is None else poll_seconds)
    gspec = spec.game_spec
    cell = spec.cells()[chunk.cell]
    config = gspec.make_config(cell.overrides)
    hook = facts_hook(spec.game)
    # A game with a card catalogue is played with its hands watched (cards.py): who drew,
    # held and opened with which card, beside the facts' plays.
    tracked = catalogue(spec.game) is not None
    kept: dict[str, Any] = progress if progress is not None else {}
    winners: list[list[int]] = kept.setdefault("winners", [])
    turns: list[int] = kept.setdefault("turns", [])
    decisions: list[int] = kept.setdefault("decisions", [])
    capped: list[int] = kept.setdefault("capped", [])
    facts: list[dict[str, Any]] = kept.setdefault("facts", [])
    earlier = float(kept.get("seconds", 0.0))  # spent by the runs before this one
    finished = len(winners)
    started = time.perf_counter()
    for index in chunk.indices()[finished:]:
        if stop is not None and stop():
            return None
        bots = cell.seat_bots(index)
        try:
            if tracked:
                state, rec, cards = play_tracked(
                    gspec,
                    config,
                    cell.players,
                    game_seed(spec, index),
                    bots,
                    hook is not None,
                    spec.shuffle,
                    stop=stop,
                )
            else:
                state, rec = play_to_end(
                    gspec,
                    config,
                    cell.players,
                    game_seed(spec, index),
                    bots,
                    hook is not None,
                    None,
                    spec.shuffle,
                    stop=stop,
                )
        except SearchStopped:
            if stop is not None and stop():
                return None
            raise
        winners.append(rec.winners)
        turns.append(rec.turns)
        decisions.append(rec.decisions)
        capped.append(int(rec.capped))
        if hook is not None or tracked:
            fact = hook(state, rec.actions, bots) if hook is not None else {"groups": {}, "played": {}}
            if tracked:
                fact["cards"] = cards
            facts.append(fact)
        kept["seconds"] = earlier + time.perf_counter() - started
    return {
        "chunk": chunk.id,
        "cell": chunk.cell,
        "start": chunk.start,
        "games": chunk.games,
        "winners": winners,
        "turns": turns,
        "decisions": decisions,
        "capped": capped,
        "facts": facts,
        "seconds": round(earlier + time.perf_counter() - started, 4),
    }


def replay_record(spec: SweepSpec, cell_index: int, game_index: int) -> dict[str, Any]:
    """A `cultists replay` record of one game of the sweep, rebuilt from seed and line-up.

    Games are deterministic (rulings G-2), so the sweep stores no action lists: the one game
    a report links to is played again here, with actions recorded.
    """
    gspec = spec.game_spec
    cell = spec.cells()[cell_index]
    config = gspec.make_config(cell.overrides)
    bots = cell.seat_bots(game_index)
    _state, rec = play_to_end(
        gspec, config, cell.players, game_seed(spec, game_index), bots, True, None, spec.shuffle
    )
    return {
        "game": spec.game,
        "players": cell.players,
        "seed": rec.seed,
        "config": rec.config,
        "bots": bots,
        "winners": rec.winners,
        "turns": rec.turns,
        "decisions": rec.decisions,
        "cell": cell_index,
        "game_index": game_index,
        "actions": rec.actions,
        "shuffle": rec.shuffle,
    }


def pack(result: dict[str, Any]) -> bytes:
    """Chunk result -> compact bytes for Redis (columnar JSON compresses ~10x)."""
    return zlib.compress(orjson.dumps(result), 6)


def unpack(blob: bytes) -> dict[str, Any]:
    return orjson.loads(zlib.decompress(blob))
