"""The `policy` bot: a small trained network over a seat's encoded view, numpy only.

The network (trained by `cultists train GAME`, from the decisions of a stronger bot) maps
the seat's encoded information to one score per engine action id it was trained on; the
bot plays the legal action with the highest score. The encoding is the game's own
`features.py` where its package has one (Tricky Cultists: the trick card by card, seats
counted from the seat to move, services/engines/tricky_cultists/features.py), else
`encode_view(state.view(seat))` (services/engines/observation.py), which Trash Cult's and
Crazy Cultists's `features.observation` compute straight from the state (the same vector,
without building the view); all read only what the seat may see. Inference is numpy only, so the platform runs it with no ML framework: the
first layer adds the rows of the active inputs (a few dozen of the thousand, which is most
of the saving over a full product), the output scores only the legal actions' columns.
Compiled (deploy/compile_engines.py), a decision runs both layers in one C loop over the
net's arrays (`_sparse_scores`, its C types in policy.pxd), straight from the encoder's
lists: at this size numpy's calls cost more than their arithmetic. Interpreted, the same
decision takes numpy's calls (`PolicyNet.numpy_scores_on`); the two give the same scores
up to float32 rounding and the same moves (tests/envs/test_policy_fast.py). The
weights ship in the repository, one `.npz` per game under services/engines/weights/ (arrays
`w0, b0, w1, b1, ...`, the output columns' engine `actions`, `obs_size` and the `encoder`
it was trained on, the view's where the file names none); a file that does not fit its
encoder, or names one the game lacks, is refused in words.

Ties (and legal actions the network has no column for, e.g. an unusually large deck's
extra Toiling Trouble pairs) are broken by the bot's own seeded generator, so a game of
policy bots replays exactly for a seed.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

try:
    import cython as _cython  # type: ignore[import-untyped]
except ImportError:  # interpreted where Cython is not installed: its two directives do nothing
    from types import SimpleNamespace

    def _as_is(flag: bool) -> Callable[[Any], Any]:
        return lambda f: f

    _cython = SimpleNamespace(boundscheck=_as_is, wraparound=_as_is)

from ..registry import has_part, load_part
from .errors import BadConfig
from .game import GameSpec, State

WEIGHTS_DIR = Path(__file__).resolve().parent.parent / "weights"
VIEW = "view"  # the encoder name of the hashed view (observation.py)


def weights_path(game: str) -> Path:
    return WEIGHTS_DIR / f"{game}.npz"


class Encoder:
    """How a policy sees a seat: `active(state, seat)` gives the indices of the non-zero
    inputs and their values (None: all ones; an index given twice: the sum of its values),
    `dense` the whole vector (training). `name` is
    the game's (its own `features.py`) or VIEW (the hashed view, for any game)."""

    def __init__(self, game: str, name: str) -> None:
        self.features: Callable[[State, int], list[int]] | None
        # The action id the net scores for an engine action (seat-relative where the
        # features count seats from the mover); None: the engine's own id.
        self.relative: Callable[[State, int, int], int] | None = None
        # `relative` over a decision's legal moves in one call, (known actions, columns),
        # where the game's features.py has it (Tricky Cultists: compiled beside the features).
        self.columns: (
            Callable[[State, int, list[int], dict[int, int]], tuple[list[int], list[int]]] | None
        ) = None
        # The view's vector straight from the state, as (slots, values), where the game's
        # features.py has it (Trash Cult, Crazy Cultists); None: built from the view.
        self.observation: Callable[[State, int], tuple[list[int], list[float]]] | None = None
        module = load_part(game, "features") if has_part(game, "features") else None
        if name == VIEW:
            from ..observation import OBS_SIZE

            self.name, self.size, self.features = VIEW, OBS_SIZE, None
            self.observation = getattr(module, "observation", None)
        elif name == game and module is not None and hasattr(module, "features"):
            self.name, self.size, self.features = game, int(module.SIZE), module.features
            self.relative = getattr(module, "relative_action", None)
            self.columns = getattr(module, "legal_columns", None)
        else:
            raise BadConfig(f"{game} has no policy encoding {name!r} (it has {', '.join(encodings(game))})")

    def active(self, state: State, seat: int) -> tuple[np.ndarray, np.ndarray | None]:
        if self.features is not None:
            return np.array(self.features(state, seat), dtype=np.intp), None
        if self.observation is not None:
            slots, found = self.observation(state, seat)
            return np.array(slots, dtype=np.intp), np.array(found, dtype=np.float32)
        from ..observation import encode_view

        dense = encode_view(state.view(seat), self.size)
        idx = np.flatnonzero(dense)
        return idx, dense[idx]

    def dense(self, state: State, seat: int) -> np.ndarray:
        idx, values = self.active(state, seat)
        out = np.zeros(self.size, dtype=np.float32)
        if values is None:
            out[idx] = 1.0
        else:
            np.add.at(out, idx, values)  # `observation` may name a slot twice: the sum
        return out


def encodings(game: str) -> list[str]:
    """The encodings a policy of `game` may be trained on: the game's own first, if any (a
    features.py with only the view's `observation` is the view, computed faster)."""
    own = has_part(game, "features") and hasattr(load_part(game, "features"), "features")
    return [game, VIEW] if own else [VIEW]


_ENCODERS: dict[tuple[str, str], Encoder] = {}


def encoder_for(game: str, name: str | None = None) -> Encoder:
    """The encoder `name` of `game` (default: the game's best, its own features if it has them)."""
    key = (game, name or encodings(game)[0])
    if key not in _ENCODERS:
        _ENCODERS[key] = Encoder(game, key[1])
    return _ENCODERS[key]


class PolicyNet:
    """The network of one weights file: ReLU hidden layers, a linear output."""

    def __init__(self, path: Path, game: str) -> None:
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
        # Files from before the game's own features name no encoder: they take the view.
        self.encoder = encoder_for(game, str(arrays["encoder"]) if "encoder" in arrays else VIEW)
        obs_size = self.encoder.size
        if not self.layers:
            raise BadConfig(f"policy weights {path} hold no layers")
        if stored != obs_size or self.layers[0][0].shape[0] != obs_size:
            raise BadConfig(
                f"policy weights {path} take observations of {self.layers[0][0].shape[0]} numbers"
                f" (obs_size {stored}); this game's {self.encoder.name!r} observation has {obs_size}"
            )
        for i in range(1, depth):
            if self.layers[i][0].shape[0] != self.layers[i - 1][0].shape[1]:
                raise BadConfig(f"policy weights {path}: layer {i} does not follow layer {i - 1}")
        if self.layers[-1][0].shape[1] != len(self.actions):
            raise BadConfig(
                f"policy weights {path}: {self.layers[-1][0].shape[1]} outputs for {len(self.actions)} actions"
            )
        self.column = {a: i for i, a in enumerate(self.actions)}
        # The decision path in as few numpy calls as it can (each costs more than its
        # arithmetic at this size): the first layer's bias is one more input row, always on
        # (`self.on`), which also lights one more hidden unit at 1, so the output layer's
        # bias is one more column of its rows, read only for the legal actions.
        w0, b0 = self.layers[0]
        hidden = w0.shape[1]
        self.w0 = np.zeros((obs_size + 1, hidden + 1), np.float32)
        self.w0[:obs_size, :hidden] = w0
        self.w0[obs_size, :hidden] = b0
        self.w0[obs_size, hidden] = 1.0
        self.on = obs_size
        self.deep = depth > 2
        if self.deep:  # more hidden layers: the plain path after the first
            self.w0 = self.w0[:, :hidden]
        w_out, b_out = self.layers[-1]
        self.out_rows = np.ascontiguousarray(
            np.vstack([w_out, b_out[None, :]]).T if not self.deep else w_out.T, dtype=np.float32
        )

        # Compiled: both layers in `_sparse_scores` (deep nets keep numpy's path), on scratch
        # arrays of this net's (no Python code runs inside the compiled loop, so no other
        # thread can write them meanwhile; interpreted, each call takes its own).
        self.fast = _COMPILED and not self.deep
        self.acc = np.zeros(hidden + 1, np.float64)
        self.unit = np.zeros(hidden + 2, np.float32)

    def hidden(self, idx: np.ndarray | list[int], values: np.ndarray | None) -> np.ndarray:
        """The last hidden layer (with the always-on unit unless deep) for the active inputs
        `idx`, which include `self.on` (values None: ones)."""
        rows = self.w0.take(idx, axis=0)  # take: cheaper than indexing by a list
        x = rows.sum(axis=0) if values is None else values @ rows
        np.maximum(x, 0.0, out=x)
        if self.deep:
            for w, b in self.layers[1:-1]:
                x = x @ w + b
                np.maximum(x, 0.0, out=x)
        return x

    def with_on(self, idx: np.ndarray, values: np.ndarray | None) -> tuple[Any, np.ndarray | None]:
        """`idx` and `values` with the always-on input added."""
        idx = np.append(idx, self.on)
        return idx, None if values is None else np.append(values, np.float32(1.0))

    def scores(self, obs: np.ndarray) -> np.ndarray:
        """Every output's score for a dense observation (tests, the environments)."""
        idx = np.flatnonzero(obs)
        x = self.hidden(*self.with_on(idx, obs[idx]))
        out = self.out_rows @ x
        return out if not self.deep else out + self.layers[-1][1]

    def legal_scores(self, idx: np.ndarray, values: np.ndarray | None, cols: list[int]) -> np.ndarray:
        """The scores of output columns `cols` for the active inputs `idx` (values None: ones)."""
        return self.numpy_scores_on(*self.with_on(idx, values), cols)

    def numpy_scores_on(self, idx: Any, values: np.ndarray | None, cols: list[int]) -> np.ndarray:
        """`legal_scores` for an `idx` (array or list) that already holds `self.on`, in
        numpy's calls (the interpreted decision, deep nets)."""
        out = self.out_rows.take(cols, axis=0) @ self.hidden(idx, values)
        return out if not self.deep else out + self.layers[-1][1][cols]

    def sparse_scores(self, idx: list[int], values: list[float] | None, cols: list[int]) -> list[float]:
        """`numpy_scores_on` as a list, in one compiled loop (`_sparse_scores`); lists in,
        `idx` holding `self.on`; a net of one hidden layer only."""
        if _COMPILED:
            acc, unit = self.acc, self.unit
        else:
            acc, unit = np.zeros_like(self.acc), np.zeros_like(self.unit)
        return _sparse_scores(self.w0, self.out_rows, acc, unit, idx, values, cols)

    def scores_on(self, idx: Any, values: Any, cols: list[int]) -> list[float]:
        """The scores of columns `cols` for an `idx` (list or array) that already holds
        `self.on`, `values` a list, an array or None (ones): the compiled loop where it
        can, else numpy's calls."""
        if self.fast and type(idx) is list and (values is None or type(values) is list):
            return self.sparse_scores(idx, values, cols)
        if type(values) is list:
            values = np.array(values, dtype=np.float32)
        scores: list[float] = self.numpy_scores_on(idx, values, cols).tolist()
        return scores


@_cython.boundscheck(False)
@_cython.wraparound(False)
def _sparse_scores(
    w0: Any, out_rows: Any, acc: Any, unit: Any, idx: list[int], values: list[float] | None, cols: list[int]
) -> list[float]:
    """The scores of rows `cols` of `out_rows` (float32, an output's weights over the hidden
    units) after the ReLU of the sum of rows `idx` of `w0` (float32), row idx[k] times
    values[k] (None: ones); `acc` (float64, w0's width) and `unit` (float32, one more) are
    scratch. numpy's path in one loop: the sums in double, the hidden units and the scores
    rounded to float32 as numpy's float32 products give them; the same arithmetic compiled
    or not (every product in double, in the same order). Its C types are in policy.pxd;
    every index is checked here, so the loops need no checks of their own."""
    rows = w0.shape[0]
    width = w0.shape[1]
    outs = out_rows.shape[0]
    n = len(idx)
    m = len(cols)
    if out_rows.shape[1] != width or acc.shape[0] < width or unit.shape[0] <= width:
        raise ValueError(f"policy arrays do not fit: {width} hidden units")
    if values is not None and len(values) != n:
        raise ValueError(f"{len(values)} values for {n} inputs")
    scores = [0.0] * m
    for j in range(width):
        acc[j] = 0.0
    for k in range(n):
        i = idx[k]
        if i < 0 or i >= rows:
            raise IndexError(f"input {i} is not one of the net's {rows}")
        v = 1.0 if values is None else float(values[k])
        if v == 1.0:
            for j in range(width):
                acc[j] += float(w0[i, j])
        else:
            for j in range(width):
                acc[j] += v * float(w0[i, j])
    for j in range(width):
        unit[j] = acc[j]  # float32
        if unit[j] < 0.0:
            unit[j] = 0.0
    for k in range(m):
        c = cols[k]
        if c < 0 or c >= outs:
            raise IndexError(f"column {c} is not one of the net's {outs}")
        s = 0.0
        for j in range(width):
            s += float(out_rows[c, j]) * float(unit[j])
        unit[width] = s  # float32
        scores[k] = float(unit[width])
    return scores


# Whether this module runs compiled (`_sparse_scores` a C function, not a Python one).
_COMPILED = type(_sparse_scores).__name__ != "function"


_NETS: dict[tuple[str, str], PolicyNet] = {}


def load_net(game: str, path: Path | None = None) -> PolicyNet:
    """The network for `game` (cached per file): the shipped weights unless `path`."""
    where = path or weights_path(game)
    key = (game, str(where))
    if key not in _NETS:
        _NETS[key] = PolicyNet(where, game)
    return _NETS[key]


class PolicyBot:
    """Plays the legal action the trained network scores highest (PARAMS: none; a table or
    ladder names `policy` and gets the shipped weights, never a file of its own choosing)."""

    name = "policy"
    PARAMS: dict[str, Any] = {}

    def __init__(self, spec: GameSpec, seed: int = 0, weights: Path | None = None) -> None:
        self.net = load_net(spec.name, weights)
        self.encoder = self.net.encoder
        self.rng = random.Random(seed)

    def choose(self, state: State, seat: int, legal: list[int]) -> int:
        if len(legal) == 1:
            return legal[0]
        column = self.net.column
        encoder = self.encoder
        relative = encoder.relative
        if encoder.columns is not None:
            known, cols = encoder.columns(state, seat, legal, column)
        elif relative is None:
            known = [a for a in legal if a in column]
            cols = [column[a] for a in known]
        else:
            known, cols = [], []
            for a in legal:
                c = column.get(relative(state, seat, a))
                if c is not None:
                    known.append(a)
                    cols.append(c)
        if not known:
            return self.rng.choice(legal)
        if encoder.features is not None:  # ones: the list itself, with the always-on input
            idx: Any = encoder.features(state, seat)
            idx.append(self.net.on)
            values: Any = None
        elif encoder.observation is not None:  # lists, with the always-on input
            idx, values = encoder.observation(state, seat)
            idx.append(self.net.on)
            values.append(1.0)
        else:
            idx, values = self.net.with_on(*encoder.active(state, seat))
        scores = self.net.scores_on(idx, values, cols)
        best = max(scores)
        picks = [a for a, s in zip(known, scores, strict=True) if s == best]
        return picks[0] if len(picks) == 1 else self.rng.choice(picks)
