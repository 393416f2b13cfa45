"""`cultists replay`: rebuild a game from seed + config + action list (rulings G-2).

Takes the replay record the gateway hands out after a match, or a line of
`cultists simulate --jsonl --actions`, from a file or standard input.
"""

from __future__ import annotations

import argparse
import sys

import orjson

from services.engines.core.errors import BadConfig
from services.engines.core.play import replay
from services.engines.registry import load_game


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay", help="rebuild a game from its record and print how it went")
    p.add_argument("record", help="JSON file with game, players, seed, config, actions ('-' = stdin)")
    p.add_argument("--steps", action="store_true", help="print every action as it is replayed")
    p.add_argument("--state", action="store_true", help="print the final state's JSON form")
    p.set_defaults(func=run)


def load_record(path: str) -> dict:
    if path == "-":
        raw = sys.stdin.buffer.read()
    else:
        with open(path, "rb") as fh:
            raw = fh.read()
    try:
        record = orjson.loads(raw.strip().splitlines()[0] if raw.strip() else b"")
    except orjson.JSONDecodeError as exc:
        raise BadConfig(f"replay record is not JSON: {exc}") from None
    missing = [k for k in ("game", "seed", "actions") if k not in record]
    if missing:
        raise BadConfig(f"replay record lacks {', '.join(missing)}")
    return record


def run(args: argparse.Namespace) -> int:
    record = load_record(args.record)
    try:
        spec = load_game(record["game"])
    except KeyError:
        raise BadConfig(f"unknown game {record['game']!r}") from None
    players = record.get("players") or spec.default_players
    config = spec.make_config(record.get("config") or {})
    if args.steps:
        state = spec.new_state(config, players, record["seed"])
        for n, (seat, action) in enumerate(record["actions"]):
            print(f"{n:5d}  seat {seat}: {state.action_label(action)}")
            state.apply(seat, action)
    else:
        state = replay(spec, config, players, record["seed"], record["actions"])
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
    sys.stdout.buffer.write(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
    return 0
