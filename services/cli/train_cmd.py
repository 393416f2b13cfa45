"""`cultists train GAME`: train the `policy` bot by imitation, resumable, with progress bars.

Games are played by the teacher bot (`--teacher`, default `heuristic`; an IS-MCTS spec such
as `ismcts:iterations=180,depth=6,rollout=heuristic,prior=1` for a stronger one) at every
seat; each decision with a choice becomes one example: the seat's encoded view (the seat's
redacted view only), the teacher's action and the legal actions of that decision. The
examples of each `--chunk` of games are saved under the checkpoint directory as they are
played. Then a small MLP (numpy, Adam) is fitted for `--epochs` passes with a softmax over
the *legal* actions only: the net is never taught to rank moves it cannot make, which is
what the ladder asks of it (pick the best legal move). After every chunk and every epoch the
progress (games done, epochs done, the net and its optimiser state) is written to the
checkpoint, so an interrupted run started again resumes there; a run with more `--games`
than its checkpoint adds games and trains on all of them. At the end the weights are
exported as the numpy-only `.npz` the `policy` bot loads (`--out`, default the game's
shipped file), with the feature scaling folded into the first layer.
"""

from __future__ import annotations

import argparse
import pickle
import random
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn

from services.engines.action_space import ActionTable
from services.engines.core.bots import make_bot
from services.engines.core.config import parse_set_options
from services.engines.core.errors import BadConfig
from services.engines.core.policy import PolicyBot, encoder_for, weights_path
from services.engines.core.pools import pool_context
from services.engines.registry import load_game

from .common import add_game_argument
from .options import add_jobs, command, positive_int
from .progress import LineProgress

BATCH = 256


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
        "--chunk", type=positive_int, default=25, metavar="N", help="games per saved chunk and checkpoint"
    )
    p.add_argument("--teacher", default="heuristic", help="the bot imitated (default: heuristic)")
    p.add_argument(
        "--student",
        type=Path,
        default=None,
        metavar="WEIGHTS",
        help="DAgger: a policy weights file that plays about half the moves of the new games"
        " (the teacher still labels every decision)",
    )
    p.add_argument(
        "--init",
        type=Path,
        default=None,
        metavar="WEIGHTS",
        help="start the net from this policy weights file (e.g. the shipped one) instead of at"
        " random: a stronger teacher's labels then refine what the net already plays",
    )
    p.add_argument("--hidden", type=positive_int, default=128, help="hidden units")
    p.add_argument("--epochs", type=positive_int, default=40, help="passes over all examples")
    p.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate")
    p.add_argument(
        "--players",
        type=positive_int,
        default=None,
        metavar="N",
        help="seats per teacher game (default: the game's most); train at the seat count you play",
    )
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a config field of the teacher games (repeatable), e.g. --set two_players=true",
    )
    p.add_argument("--seed", type=int, default=0, help="game i uses seed SEED+i")
    add_jobs(p, "processes playing teacher games", default=1)
    p.add_argument("--checkpoint", type=Path, default=None, help="checkpoint file (default .train/GAME.pkl)")
    p.add_argument("--out", type=Path, default=None, help="weights file (default: the shipped one)")
    p.set_defaults(func=run)


def examples(
    game: str,
    teacher: str,
    seed: int,
    table: ActionTable,
    players: int | None = None,
    config: Any = None,
    student: Path | None = None,
) -> tuple[list[np.ndarray], list[int], list[list[int]]]:
    """One teacher game at `players` seats (default the config's most): (views, action
    columns, legal columns per decision).

    The seat count matters: a net taught only at the most seats meets other situations in
    the 2-seat ladders it is judged by (fewer rivals, longer turns of its own).

    With a `student` weights file (DAgger), every decision is still labelled with the
    teacher's move, but the student's own move is played at about half of them: the
    examples then cover the positions the net itself reaches, where its mistakes put it,
    and not only the teacher's."""
    spec = load_game(game)
    players = players or spec.max_players
    state = spec.new_state(config, players, seed)
    bots = [make_bot(spec, teacher, seed * 31 + s) for s in range(players)]
    students = [PolicyBot(spec, seed * 37 + s, weights=student) for s in range(players)] if student else []
    coin = random.Random(seed ^ 0xDA66E2)
    encoder = encoder_for(game)
    xs, ys, legals = [], [], []
    while not state.is_terminal():
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        action = bots[seat].choose(state, seat, legal)
        if len(legal) > 1:
            xs.append(encoder.dense(state, seat))
            rel = encoder.relative or (lambda _state, _seat, a: a)
            ys.append(table.to_index(rel(state, seat, action)))
            legals.append([table.to_index(rel(state, seat, a)) for a in legal])
            if students and coin.random() < 0.5:
                action = students[seat].choose(state, seat, legal)
        state.apply(seat, action, legal)
    return xs, ys, legals


class Net:
    """One ReLU hidden layer and a linear output, fitted with a softmax over legal actions."""

    def __init__(self, inputs: int, hidden: int, outputs: int, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.params = [
            (rng.standard_normal((inputs, hidden)) * np.sqrt(2.0 / inputs)).astype(np.float32),
            np.zeros(hidden, np.float32),
            (rng.standard_normal((hidden, outputs)) * np.sqrt(1.0 / hidden)).astype(np.float32),
            np.zeros(outputs, np.float32),
        ]
        self.m = [np.zeros_like(p) for p in self.params]
        self.v = [np.zeros_like(p) for p in self.params]
        self.steps = 0

    @classmethod
    def from_weights(cls, path: Path, table: ActionTable, inputs: int, seed: int) -> Net:
        """A net holding an exported weights file's numbers (`export`'s inverse, with the
        input scaling left in w0); the columns the file lacks start at zero."""
        with np.load(path, allow_pickle=False) as d:
            w0, b0, w1, b1, actions = d["w0"], d["b0"], d["w1"], d["b1"], d["actions"]
            deep = "w2" in d.files
        if w0.shape[0] != inputs or deep:
            raise BadConfig(f"--init {path}: a one-hidden-layer net over {inputs} inputs is needed")
        net = cls(inputs, w0.shape[1], len(table), seed)
        net.params[0][:] = w0
        net.params[1][:] = b0
        cols = [table.to_index(int(a)) for a in actions]
        net.params[2][:] = 0.0
        net.params[2][:, cols] = w1
        net.params[3][cols] = b1
        return net

    def logits(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        w0, b0, w1, b1 = self.params
        h = np.maximum(x @ w0 + b0, 0.0)
        return h, h @ w1 + b1

    def step(self, x: np.ndarray, y: np.ndarray, mask: np.ndarray, lr: float) -> float:
        """One Adam step on a batch; the loss is the mean cross-entropy over legal actions."""
        w1 = self.params[2]
        h, z = self.logits(x)
        z = np.where(mask, z, -1e9)
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z) * mask
        p /= p.sum(axis=1, keepdims=True)
        rows = np.arange(len(y))
        loss = float(-np.log(p[rows, y] + 1e-12).mean())
        g = p
        g[rows, y] -= 1.0
        g /= len(y)
        gw1, gb1 = h.T @ g, g.sum(axis=0)
        gh = (g @ w1.T) * (h > 0)
        gw0, gb0 = x.T @ gh, gh.sum(axis=0)
        self.steps += 1
        b1c, b2c = 1 - 0.9**self.steps, 1 - 0.999**self.steps
        for i, grad in enumerate((gw0, gb0, gw1, gb1)):
            if i in (0, 2):
                grad = grad + 1e-5 * self.params[i]  # a little weight decay
            self.m[i] = 0.9 * self.m[i] + 0.1 * grad
            self.v[i] = 0.999 * self.v[i] + 0.001 * grad * grad
            self.params[i] -= (lr * (self.m[i] / b1c) / (np.sqrt(self.v[i] / b2c) + 1e-8)).astype(np.float32)
        return loss

    def agreement(self, x: np.ndarray, y: np.ndarray, mask: np.ndarray) -> float:
        """Share of decisions where the best-scored legal action is the teacher's."""
        _, z = self.logits(x)
        return float((np.where(mask, z, -np.inf).argmax(axis=1) == y).mean())


def _one(job: tuple[str, str, int, ActionTable, int | None, Any, Path | None]) -> tuple[Any, ...]:
    return examples(*job)


def _play(args: argparse.Namespace, seeds: list[int], table: ActionTable, config: Any) -> Any:
    """The teacher games of `seeds`, in seed order, in `--jobs` processes."""
    jobs = [(args.game, args.teacher, s, table, args.players, config, args.student) for s in seeds]
    if args.jobs == 1:
        yield from map(_one, jobs)
        return
    with ProcessPoolExecutor(args.jobs, mp_context=pool_context(["services.cli.train_cmd"])) as pool:
        yield from pool.map(_one, jobs)


def _chunk_path(checkpoint: Path, start: int) -> Path:
    return checkpoint.with_name(f"{checkpoint.stem}.games-{start:06d}.npz")


def _save(checkpoint: Path, state: dict[str, Any]) -> None:
    checkpoint.parent.mkdir(parents=True, exist_ok=True)
    tmp = checkpoint.with_suffix(".tmp")
    with tmp.open("wb") as f:
        pickle.dump(state, f)
    tmp.replace(checkpoint)


def _load_data(
    checkpoint: Path, chunks: list[int], outputs: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xs, ys, masks = [], [], []
    for start in chunks:
        with np.load(_chunk_path(checkpoint, start)) as d:
            xs.append(d["x"])  # float16 (the hashed counts are small whole numbers) until a batch
            ys.append(d["y"])
            m = np.zeros((len(d["y"]), outputs), dtype=bool)
            m[d["legal_row"], d["legal_col"]] = True
            masks.append(m)
    return np.concatenate(xs), np.concatenate(ys), np.concatenate(masks)


def run(args: argparse.Namespace) -> int:
    spec = load_game(args.game)
    make_bot(spec, args.teacher, 0)
    if args.players is not None and not spec.min_players <= args.players <= spec.max_players:
        raise BadConfig(
            f"--players {args.players}: {spec.title} seats {spec.min_players} to {spec.max_players}"
        )
    config = spec.make_config(parse_set_options(args.overrides))
    spec.new_state(config, args.players or spec.max_players, 0)  # what the rules refuse, before any work
    table = ActionTable(args.game, spec.make_config(), spec.max_players)
    encoder = encoder_for(args.game)
    checkpoint = args.checkpoint or Path(".train") / f"{args.game}.pkl"
    out = args.out or weights_path(args.game)
    saved: dict[str, Any] = {"games_done": 0, "chunks": [], "epochs_done": 0, "net": None}
    if checkpoint.is_file():
        with checkpoint.open("rb") as f:  # our own file, written below
            saved = pickle.load(f)
    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn()]
    with LineProgress(*columns, console=Console(stderr=True)) as progress:
        task = progress.add_task(
            f"{spec.title}: teacher games", total=args.games, completed=min(saved["games_done"], args.games)
        )
        added = False
        while saved["games_done"] < args.games:
            start = saved["games_done"]
            xs: list[np.ndarray] = []
            ys: list[int] = []
            legal_row: list[int] = []
            legal_col: list[int] = []
            seeds = [args.seed + g for g in range(start, min(start + args.chunk, args.games))]
            for gx, gy, gl in _play(args, seeds, table, config):
                base = len(ys)
                for i, cols in enumerate(gl):
                    legal_row += [base + i] * len(cols)
                    legal_col += cols
                xs += gx
                ys += gy
                progress.update(task, advance=1)
            np.savez_compressed(
                _chunk_path(checkpoint, start),
                x=np.stack(xs).astype(np.float16) if xs else np.zeros((0, encoder.size), np.float16),
                y=np.array(ys, dtype=np.int32),
                legal_row=np.array(legal_row, dtype=np.int32),
                legal_col=np.array(legal_col, dtype=np.int32),
            )
            saved["chunks"].append(start)
            saved["games_done"] = min(start + args.chunk, args.games)
            added = True
            _save(checkpoint, saved)
        if added:
            saved["epochs_done"] = 0  # new examples: the epochs count again over all of them
            _save(checkpoint, saved)
        x, y, mask = _load_data(checkpoint, saved["chunks"], len(table))
        if saved["net"] is None and args.init is not None:
            saved["scale"] = np.ones(encoder.size, np.float32)  # the file's w0 has its scaling in it
            saved["net"] = Net.from_weights(args.init, table, encoder.size, args.seed)
        elif saved["net"] is None:
            scale = np.maximum(np.abs(x).max(axis=0).astype(np.float32), 1.0)
            saved["scale"] = scale
            saved["net"] = Net(encoder.size, args.hidden, len(table), args.seed)
        scale, net = saved["scale"], saved["net"]
        held = (
            np.random.default_rng(args.seed).random(len(y)) < 0.1
        )  # held-out decisions, for the agreement figure only
        fit = np.flatnonzero(~held)
        etask = progress.add_task(
            f"{spec.title}: epochs over {len(fit)} examples",
            total=args.epochs,
            completed=saved["epochs_done"],
        )
        while saved["epochs_done"] < args.epochs:
            np.random.default_rng(args.seed + saved["epochs_done"]).shuffle(fit)
            for i in range(0, len(fit), BATCH):
                b = fit[i : i + BATCH]
                net.step(x[b].astype(np.float32) / scale, y[b], mask[b], args.lr)
            saved["epochs_done"] += 1
            _save(checkpoint, saved)
            progress.update(etask, advance=1)
    agree = (
        net.agreement(x[held].astype(np.float32) / scale, y[held], mask[held]) if held.any() else float("nan")
    )
    export(net, scale, table, np.asarray(mask.any(axis=0)), out, encoder.name)
    print(
        f"{spec.title}: {saved['games_done']} teacher games, {len(y)} decisions, {saved['epochs_done']} epochs;"
        f" held-out agreement with the teacher {agree:.1%}; weights written to {out}"
    )
    return 0


def export(
    net: Net, scale: np.ndarray, table: ActionTable, seen: np.ndarray, out: Path, encoder: str
) -> None:
    """The numpy-only form the policy bot loads: w0, b0, w1, b1 (the input scaling folded
    into w0), the output columns' engine action ids, obs_size and the encoder's name. Only the columns of
    actions that were ever legal in the examples are kept (the rest were never trained; the
    bot breaks ties among such actions by its seeded generator), which keeps the games with
    thousands of possible actions under 2 MB."""
    w0, b0, w1, b1 = net.params
    cols = np.flatnonzero(seen)
    arrays = {
        "w0": (w0 / scale[:, None]).astype(np.float32),
        "b0": b0.astype(np.float32),
        "w1": w1[:, cols].astype(np.float32),
        "b1": b1[cols].astype(np.float32),
        "actions": np.array([table.ids[int(c)] for c in cols], dtype=np.int64),
        "obs_size": np.array(w0.shape[0]),
        "encoder": np.array(encoder),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, **arrays)
