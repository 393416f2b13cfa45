"""The small Crazy Cultists tune the Celery and API tests both run: 2 players (CC-2's
switch on), threshold and starting hand searched for a fair seat 0, a budget that races
two rungs and confirms in well under a minute on one worker. The target is one the printed
rules miss at the first look (52.5 % on these seeds), so the tune searches instead of
stopping early with no change needed."""

from __future__ import annotations

from typing import Any

SMALL_CC_TUNE: dict[str, Any] = {
    "game": "crazy_cultists",
    "seed": 5,
    "players": [2],
    "config": {"two_players": True},
    "search": {"threshold": {"low": 8, "high": 12}, "starting_hand": [1, 3]},
    "objectives": [{"metric": "seat_rate", "seat": 0, "target": [0.4, 0.5]}],
    "budget": 250,
    "racing": {"games": 40, "eta": 2, "rungs": 2, "batch": 4},
    "confirm": 60,
    "chunk": 20,
}
