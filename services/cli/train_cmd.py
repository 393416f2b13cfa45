"""`cultists train GAME`: train the `policy` bot by imitation, resumable, with a progress bar.

Games are played by the teacher bot (`--teacher`, default `heuristic`) at every seat; each
decision with a choice becomes one example, the seat's encoded view (the seat's redacted
view only) labelled with the action taken. A small MLP (scikit-learn, from the `rl`
extra) learns them in chunks of `--chunk` games with `partial_fit`; after each chunk the
model and the count of games done are written to `--checkpoint`, so an interrupted run
started again resumes there. At the end the weights are exported as the numpy-only `.npz`
the `policy` bot loads (`--out`, default the shipped file of the game).
"""

from __future__ import annotations

import argparse
import pickle
from pathlib import Path
from typing import Any

import numpy as np
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from services.engines.action_space import ActionTable
from services.engines.core.bots import make_bot
from services.engines.core.errors import BadConfig
from services.engines.core.policy import weights_path
from services.engines.observation import OBS_SIZE, encode_view
from services.engines.registry import load_game

from .common import add_game_argument
from .options import command, positive_int


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "train",
        "train the policy bot by imitation of a teacher bot",
        description=__doc__.split("\n\n", 1)[1],
        environment=[],
    )
    add_game_argument(p)
    p.add_argument("--games", type=positive_int, default=300, metavar="N", help="teacher games in all")
    p.add_argument(
        "--chunk", type=positive_int, default=25, metavar="N", help="games per training step and checkpoint"
    )
    p.add_argument("--teacher", default="heuristic", help="the bot imitated (default: heuristic)")
    p.add_argument("--hidden", type=positive_int, default=64, help="hidden units")
    p.add_argument(
        "--players",
        type=positive_int,
        default=None,
        metavar="N",
        help="seats per teacher game (default: the game's most); train at the seat count you play",
    )
    p.add_argument("--seed", type=int, default=0, help="game i uses seed SEED+i")
    p.add_argument("--checkpoint", type=Path, default=None, help="checkpoint file (default .train/GAME.pkl)")
    p.add_argument("--out", type=Path, default=None, help="weights file (default: the shipped one)")
    p.set_defaults(func=run)


def examples(
    game: str, teacher: str, seed: int, table: ActionTable, players: int | None = None
) -> tuple[list[np.ndarray], list[int]]:
    """One teacher game at `players` seats (default the config's most): (views, action columns).

    The seat count matters: a net taught only at the most seats meets other situations in
    the 2-seat ladders it is judged by (fewer rivals, longer turns of its own)."""
    spec = load_game(game)
    players = players or spec.max_players
    state = spec.new_state(None, players, seed)
    bots = [make_bot(spec, teacher, seed * 31 + s) for s in range(players)]
    xs, ys = [], []
    while not state.is_terminal():
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        action = bots[seat].choose(state, seat, legal)
        if len(legal) > 1:
            xs.append(encode_view(state.view(seat)))
            ys.append(table.to_index(action))
        state.apply(seat, action, legal)
    return xs, ys


def run(args: argparse.Namespace) -> int:
    try:
        from sklearn.neural_network import MLPClassifier
    except ImportError:
        raise BadConfig("cultists train needs the rl extra: pip install -e '.[rl]'") from None
    spec = load_game(args.game)
    make_bot(spec, args.teacher, 0)
    if args.players is not None and not spec.min_players <= args.players <= spec.max_players:
        raise BadConfig(
            f"--players {args.players}: {spec.title} seats {spec.min_players} to {spec.max_players}"
        )
    table = ActionTable(args.game, spec.make_config(), spec.max_players)
    checkpoint = args.checkpoint or Path(".train") / f"{args.game}.pkl"
    out = args.out or weights_path(args.game)
    done, model = 0, None
    if checkpoint.is_file():
        with checkpoint.open("rb") as f:  # our own file, written below
            saved = pickle.load(f)
        done, model = saved["games_done"], saved["model"]
    if model is None:
        model = MLPClassifier(
            hidden_layer_sizes=(args.hidden,), learning_rate_init=1e-3, random_state=args.seed
        )
    classes = np.arange(len(table))
    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn()]
    with Progress(*columns) as progress:
        task = progress.add_task(
            f"{spec.title}: teacher games", total=args.games, completed=min(done, args.games)
        )
        while done < args.games:
            xs: list[np.ndarray] = []
            ys: list[int] = []
            for g in range(done, min(done + args.chunk, args.games)):
                gx, gy = examples(args.game, args.teacher, args.seed + g, table, args.players)
                xs += gx
                ys += gy
                progress.update(task, advance=1)
            for _ in range(3):
                model.partial_fit(np.stack(xs), np.array(ys), classes=classes)
            done = min(done + args.chunk, args.games)
            checkpoint.parent.mkdir(parents=True, exist_ok=True)
            tmp = checkpoint.with_suffix(".tmp")
            with tmp.open("wb") as f:
                pickle.dump({"games_done": done, "model": model}, f)
            tmp.replace(checkpoint)
    export(model, table, out)
    print(f"{spec.title}: {done} teacher games; weights written to {out}")
    return 0


def export(model: Any, table: ActionTable, out: Path) -> None:  # an MLPClassifier (untyped)
    """The numpy-only form the policy bot loads: w0, b0, ..., the output columns' engine
    action ids (the classes the model has seen, in its column order) and obs_size."""
    arrays: dict[str, np.ndarray] = {}
    for i, (w, b) in enumerate(zip(model.coefs_, model.intercepts_, strict=True)):
        arrays[f"w{i}"] = w.astype(np.float32)
        arrays[f"b{i}"] = b.astype(np.float32)
    arrays["actions"] = np.array([table.ids[int(c)] for c in model.classes_], dtype=np.int64)
    arrays["obs_size"] = np.array(OBS_SIZE)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, **arrays)  # type: ignore[arg-type]  # numpy's stub: a name could be allow_pickle
