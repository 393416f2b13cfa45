"""`cultists replay`: rebuild a game from seed + config + action list (rulings G-2).

Takes the replay record the gateway hands out after a match (with the table's
`deal_key` where its deal was keyed), or a line of
`cultists simulate --json --actions`, from a file or standard input, checks its shape
before playing anything (a record that is not one is refused naming the first field that
is wrong), and checks every action's legality as it is replayed: an action that is not
legal where the record puts it is refused naming its position in the record.

Prints how the game went (`--json`: as one JSON document; `--state` adds the final
state's JSON form to it), `--steps` every action as it is replayed.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import orjson

from services.engines.core.errors import BadConfig, IllegalAction
from services.engines.core.game import SHUFFLES
from services.engines.core.play import replay
from services.engines.registry import load_game

from .options import FILE, add_json, command

REQUIRED = ("game", "seed", "actions")


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "replay",
        "rebuild a game from its record and print how it went",
        description=__doc__.split("\n\n", 1)[1],
        environment=["CULTISTS_PURE_PYTHON"],
    )
    p.add_argument(
        "record", help="JSON file with game, players, seed, config, actions, deal_key ('-' = stdin)"
    ).complete = FILE  # type: ignore[attr-defined]
    p.add_argument("--steps", action="store_true", help="print every action as it is replayed")
    add_json(p, "print the result as one JSON document")
    p.add_argument("--state", action="store_true", help="add the final state's JSON form (implies --json)")
    p.set_defaults(func=run)


def load_record(path: str) -> dict[str, Any]:
    """The record at `path` (or stdin), checked field by field; BadConfig says what is wrong."""
    name = "standard input" if path == "-" else path
    if path == "-":
        raw = sys.stdin.buffer.read()
    else:
        with open(path, "rb") as fh:
            raw = fh.read()
    first = raw.strip().splitlines()[0] if raw.strip() else b""
    if not first:
        raise BadConfig(f"{name} is empty: give a replay record (`cultists simulate --json --actions`)")
    try:
        record = orjson.loads(first)
    except orjson.JSONDecodeError as exc:
        raise BadConfig(f"{name} is not a JSON replay record: {exc}") from None
    if not isinstance(record, dict):
        raise BadConfig(f"{name} holds JSON but not a replay record (an object with {', '.join(REQUIRED)})")
    missing = [k for k in REQUIRED if k not in record]
    if missing:
        raise BadConfig(f"{name}: the replay record lacks {', '.join(missing)}")
    _check_shape(name, record)
    return record


def _check_shape(name: str, record: dict[str, Any]) -> None:
    """Each field of the kind replay needs, so a corrupted record is one clear line."""
    if not isinstance(record["game"], str):
        raise BadConfig(f"{name}: 'game' must be a game's name, not {record['game']!r}")
    if type(record["seed"]) is not int:
        raise BadConfig(f"{name}: 'seed' must be a whole number, not {record['seed']!r}")
    players = record.get("players")
    if players is not None and type(players) is not int:
        raise BadConfig(f"{name}: 'players' must be a whole number, not {players!r}")
    config = record.get("config")
    if config is not None and not isinstance(config, dict):
        raise BadConfig(f"{name}: 'config' must be an object of config fields, not {config!r}")
    key = record.get("deal_key")
    if key is not None and not (isinstance(key, str) and len(key) == 64 and _is_hex(key)):
        raise BadConfig(f"{name}: 'deal_key' must be the table's 64 hex digits, not {str(key)[:70]!r}")
    actions = record["actions"]
    if not isinstance(actions, list):
        raise BadConfig(f"{name}: 'actions' must be a list of [seat, action] pairs")
    for n, pair in enumerate(actions):
        if not (isinstance(pair, list) and len(pair) == 2 and all(type(v) is int for v in pair)):
            raise BadConfig(
                f"{name}: action {n} is {orjson.dumps(pair).decode()[:60]}, not a [seat, action] pair "
                "of whole numbers: the record is corrupted"
            )


def _is_hex(text: str) -> bool:
    try:
        bytes.fromhex(text)
    except ValueError:
        return False
    return True


def _deal_key(record: dict[str, Any]) -> bytes | None:
    """A finished live table's deal key (docs/fairness.md); None: a seeded deal."""
    key = record.get("deal_key")
    return bytes.fromhex(key) if key else None


def _shuffle(record: dict[str, Any]) -> str | None:
    """How the record's game was dealt: a keyed sweep deal names it, any other record was
    dealt by Fisher-Yates (docs/fairness.md, "Coupled deals")."""
    shuffle = record.get("shuffle")
    if shuffle is not None and shuffle not in SHUFFLES:
        raise BadConfig(f"the record's shuffle must be one of {', '.join(SHUFFLES)}, got {shuffle!r}")
    return shuffle


def run(args: argparse.Namespace) -> int:
    record = load_record(args.record)
    try:
        spec = load_game(record["game"])
    except KeyError:
        raise BadConfig(f"unknown game {record['game']!r} in the record") from None
    players = record.get("players") or spec.default_players
    config = spec.make_config(record.get("config") or {})
    if args.steps:
        state = spec.new_state(config, players, record["seed"], _deal_key(record), _shuffle(record))
        for n, (seat, action) in enumerate(record["actions"]):
            try:
                legal = seat in state.to_act() and action in state.legal_actions(seat)
                label = state.action_label(action) if legal else f"action {action}"
                print(f"{n:5d}  seat {seat}: {label}")
                state.apply(seat, action)
            except IllegalAction as exc:
                raise _not_legal(args.record, n, seat, action, exc) from None
    else:
        try:
            state = replay(
                spec, config, players, record["seed"], record["actions"], _deal_key(record), _shuffle(record)
            )
        except IllegalAction as exc:
            n, seat, action = _first_illegal(spec, config, players, record)
            raise _not_legal(args.record, n, seat, action, exc) from None
    result = {
        "game": spec.name,
        "seed": record["seed"],
        "terminal": state.is_terminal(),
        "winners": state.winners() if state.is_terminal() else [],
        "turns": state.turn,
        "decisions": state.decisions,
    }
    if args.state:
        result["state"] = state.to_json()
    if args.json or args.state:
        sys.stdout.buffer.write(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
        return 0
    if not result["terminal"]:
        outcome = "the game is not over"
    elif result["winners"]:
        outcome = "won by seat " + ", ".join(str(w) for w in result["winners"])
    else:
        outcome = "a draw"
    print(
        f"{spec.title}, {players} players, seed {record['seed']}: {len(record['actions'])} actions replayed "
        f"and legal, {result['turns']} turns, {outcome}"
    )
    return 0


def _first_illegal(spec: Any, config: Any, players: int, record: dict[str, Any]) -> tuple[int, int, int]:
    """Where in the record replay stopped (replayed again, one action at a time)."""
    state = spec.new_state(config, players, record["seed"], _deal_key(record), _shuffle(record))
    for n, (seat, action) in enumerate(record["actions"]):
        try:
            state.apply(seat, action)
        except IllegalAction:
            return n, seat, action
    return len(record["actions"]), -1, -1


def _not_legal(path: str, n: int, seat: int, action: int, exc: Exception) -> BadConfig:
    return BadConfig(
        f"{'standard input' if path == '-' else path}: action {n} (seat {seat}, action {action}) is not "
        f"legal there: {exc}; the record is corrupted, or from rules that have changed since"
    )
