"""The `policy` bot: a small trained network over a seat's encoded view, numpy only.

The network (trained by `cultists train GAME`, from the decisions of a stronger bot) maps
`encode_view(state.view(seat))` (services/engines/observation.py: the seat's redacted
view only) to one score per engine action id it was trained on; the bot plays the legal
action with the highest score. Inference is a few matrix products in numpy, so the platform
runs it with no ML framework. The weights ship in the repository, one `.npz` per game under
services/engines/weights/ (arrays `w0, b0, w1, b1, ...`, the output columns' engine
`actions`, and `obs_size`); a file that does not fit the game is refused in words.

Ties (and legal actions the network has no column for, e.g. an unusually large deck's
extra Toiling Trouble pairs) are broken by the bot's own seeded generator, so a game of
policy bots replays exactly for a seed.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np

from .errors import BadConfig
from .game import GameSpec, State

WEIGHTS_DIR = Path(__file__).resolve().parent.parent / "weights"


def weights_path(game: str) -> Path:
    return WEIGHTS_DIR / f"{game}.npz"


class PolicyNet:
    """The network of one weights file: ReLU hidden layers, a linear output."""

    def __init__(self, path: Path, obs_size: int) -> None:
        if not path.is_file():
            raise BadConfig(f"policy weights {path} not found: train them with `cultists train`")
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
        except (OSError, ValueError) as exc:
            raise BadConfig(f"policy weights {path} are unreadable: {exc}") from None
        depth = sum(1 for k in arrays if k.startswith("w"))
        try:
            self.layers = [
                (arrays[f"w{i}"].astype(np.float32), arrays[f"b{i}"].astype(np.float32)) for i in range(depth)
            ]
            self.actions = [int(a) for a in arrays["actions"]]
            stored = int(arrays["obs_size"])
        except KeyError as exc:
            raise BadConfig(f"policy weights {path} lack array {exc.args[0]!r}") from None
        if not self.layers:
            raise BadConfig(f"policy weights {path} hold no layers")
        if stored != obs_size or self.layers[0][0].shape[0] != obs_size:
            raise BadConfig(
                f"policy weights {path} take observations of {self.layers[0][0].shape[0]} numbers"
                f" (obs_size {stored}); this game's observation has {obs_size}"
            )
        for i in range(1, depth):
            if self.layers[i][0].shape[0] != self.layers[i - 1][0].shape[1]:
                raise BadConfig(f"policy weights {path}: layer {i} does not follow layer {i - 1}")
        if self.layers[-1][0].shape[1] != len(self.actions):
            raise BadConfig(
                f"policy weights {path}: {self.layers[-1][0].shape[1]} outputs for {len(self.actions)} actions"
            )
        self.column = {a: i for i, a in enumerate(self.actions)}

    def scores(self, obs: np.ndarray) -> np.ndarray:
        x = obs
        for i, (w, b) in enumerate(self.layers):
            x = x @ w + b
            if i < len(self.layers) - 1:
                np.maximum(x, 0.0, out=x)
        return x


_NETS: dict[tuple[str, str], PolicyNet] = {}


def load_net(game: str, path: Path | None = None) -> PolicyNet:
    """The network for `game` (cached per file): the shipped weights unless `path`."""
    from ..observation import OBS_SIZE

    where = path or weights_path(game)
    key = (game, str(where))
    if key not in _NETS:
        _NETS[key] = PolicyNet(where, OBS_SIZE)
    return _NETS[key]


class PolicyBot:
    """Plays the legal action the trained network scores highest (PARAMS: none; a table or
    ladder names `policy` and gets the shipped weights, never a file of its own choosing)."""

    name = "policy"
    PARAMS: dict[str, Any] = {}

    def __init__(self, spec: GameSpec, seed: int = 0, weights: Path | None = None) -> None:
        self.net = load_net(spec.name, weights)
        self.rng = random.Random(seed)

    def choose(self, state: State, seat: int, legal: list[int]) -> int:
        if len(legal) == 1:
            return legal[0]
        from ..observation import encode_view

        scores = self.net.scores(encode_view(state.view(seat)))
        column = self.net.column
        best, picks = -np.inf, []
        for action in legal:
            i = column.get(action)
            score = float(scores[i]) if i is not None else -np.inf
            if score > best:
                best, picks = score, [action]
            elif score == best:
                picks.append(action)
        return picks[0] if len(picks) == 1 else self.rng.choice(picks)
