"""Golden games: stored records that pin every game's random stream and rules' outcomes.

A record is a seed, a config, a player count and the action list of one seeded random
game, with a digest of every position along it: the whole state's documented JSON, every
seat's view and the spectator's. Replaying the actions must give the same digests, so a
change to the generator, to a shuffle, or to what any rule does to any position fails
`test_golden.py` at the first decision it changes, and the record file's diff shows it in
review. `make golden` rewrites the records after a change that is meant (docs/fairness.md).
"""

from __future__ import annotations

import hashlib
import pathlib
import random
import sys
from collections.abc import Iterator
from typing import Any

import orjson

from services.engines.core.game import GameSpec, State
from services.engines.registry import load_game

FOLDER = pathlib.Path(__file__).parent

# (game, players, config): every game at every player count it takes, and the variants
# whose decks and shuffles differ (Crazy Cultists' Dark Powers, CC-10).
CASES: tuple[tuple[str, int, dict[str, Any]], ...] = (
    ("crazy_cultists", 3, {}),
    ("crazy_cultists", 4, {}),
    ("crazy_cultists", 5, {}),
    ("crazy_cultists", 6, {}),
    ("crazy_cultists", 4, {"dark_powers": True}),
    ("crazy_cultists", 2, {"two_players": True, "dark_powers": True}),
    ("trash_cult", 2, {}),
    ("trash_cult", 3, {}),
    ("trash_cult", 4, {}),
    ("tricky_cultists", 4, {}),
)
SEED = 20260
MAX_DECISIONS = 300  # a golden game is short to read; the digest pins every step of it


def file_name(game: str, players: int, config: dict[str, Any]) -> str:
    tag = "-".join(sorted(config)) if config else "default"
    return f"{game}-{players}p-{tag}.json"


def position_digest(state: State) -> str:
    """The state's JSON, every seat's view and the public view, hashed together."""
    parts = [state.to_json(), state.view(None), *(state.view(s) for s in range(state.num_players))]
    return hashlib.sha256(orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


def replay_digests(spec: GameSpec, record: dict[str, Any]) -> Iterator[str]:
    """The digest of the first position and of the one after each recorded action, one at
    a time: a test compares each before the next action is tried, so a changed deal is
    reported as the position that changed, not as the illegal move it leads to later."""
    state = spec.new_state(record["config"] or None, record["players"], record["seed"])
    yield position_digest(state)
    for seat, action in record["actions"]:
        state.apply(seat, action)
        yield position_digest(state)


def play(game: str, players: int, config: dict[str, Any]) -> dict[str, Any]:
    """A new record: a seeded random game (the chooser is seeded too, but only the action
    list is stored, so the record does not depend on it)."""
    spec = load_game(game)
    state = spec.new_state(config or None, players, SEED)
    pick = random.Random(SEED)
    actions: list[list[int]] = []
    while not state.is_terminal() and len(actions) < MAX_DECISIONS:
        seat = state.to_act()[0]
        action = pick.choice(state.legal_actions(seat))
        state.apply(seat, action)
        actions.append([seat, action])
    record = {"game": game, "players": players, "seed": SEED, "config": config, "actions": actions}
    record["digests"] = list(replay_digests(spec, record))
    record["returns"] = state.returns()
    return record


def main() -> int:
    """`make golden`: rewrite every record from the current rules."""
    for game, players, config in CASES:
        path = FOLDER / file_name(game, players, config)
        record = play(game, players, config)
        path.write_bytes(orjson.dumps(record, option=orjson.OPT_INDENT_2) + b"\n")
        print(f"wrote {path.relative_to(FOLDER.parent.parent)} ({len(record['actions'])} decisions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
