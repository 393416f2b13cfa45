"""A night of the nightly suite: run it, compare it with the last stored night, store it.

`cultists nightly` and the beat task (`tasks.run_nightly` → `tasks.finish_night`) run the
same steps here: build the suite (`nightly.standard_suite`, with `--set` overrides), play
every game's sweep (in-process or on Celery), turn each finished sweep into a
`drift.NightGame`, then `close_night`: compare with the latest stored night in one BH
family (`drift.compare_nights`) and store tonight.

Nights are stored as files under the data folder, `DIR/nightly/<night id>/`: per game
`<game>.json.gz` (aggregates and the layout of the per-game outcomes) and
`<game>.outcomes.jsonl.gz` (each cell's blocks of outcomes as bit masks, one a line, so a
night is written and read back a block at a time), and `drift.json`.
Night ids are UTC timestamps, so the latest is the last in name order. A night run with
`--set` overrides is a *preview*: it is stored (with "-preview" in its id) and compared
like any other, but never becomes the night the next one is compared with.
"""

from __future__ import annotations

import gzip
import logging
import os
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from services.engines.core.config import config_to_dict, parse_set_options
from services.engines.core.errors import BadConfig
from services.engines.registry import available_games, load_game

from .drift import DriftSettings, NightGame, compare_nights
from .nightly import standard_suite
from .outcomes import HeldOutcomes, Layout, OutcomeBlock, OutcomeSource, SweepOutcomes, from_chunk_results
from .spec import SweepSpec, parse_spec, parse_stored_spec

if TYPE_CHECKING:
    from .store import SweepStore

NIGHTLY_FOLDER = "nightly"
log = logging.getLogger(__name__)


def parse_overrides(items: Iterable[str]) -> dict[str, dict[str, Any]]:
    """`GAME:FIELD=VALUE` options -> {game: {field: value}}; a bad one raises BadConfig."""
    out: dict[str, list[str]] = {}
    games = set(available_games())
    for item in items:
        game, sep, rest = item.partition(":")
        if not sep or "=" not in rest:
            raise BadConfig(f"--set {item!r}: expected GAME:FIELD=VALUE, e.g. crazy_cultists:threshold=12")
        if game not in games:
            raise BadConfig(
                f"--set {item!r}: no installed game {game!r} (installed: {', '.join(sorted(games))})"
            )
        out.setdefault(game, []).append(rest)
    typed = {}
    for game, values in out.items():
        given = parse_set_options(values)
        # Through the game's own config: an unknown field or a bad value is refused here,
        # and the stored night records the values as the game reads them (2, not "2").
        config = config_to_dict(load_game(game).make_config(given))
        typed[game] = {name: config[name] for name in given}
    return typed


def suite(
    games: int | None = None,
    seed: int | None = None,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
    only: Iterable[str] | None = None,
) -> list[SweepSpec]:
    """Tonight's sweeps: the standard suite, with a game's overrides applied to all its cells.

    Each overridden spec is parsed again, so a wrong field or value is refused here, before
    anything runs. `only` limits the suite to some games (tests, benches).
    """
    overrides = overrides or {}
    wanted = set(only) if only is not None else None
    out = []
    for spec in standard_suite(games, seed):
        if wanted is not None and spec.game not in wanted:
            continue
        extra = overrides.get(spec.game)
        if extra:
            data = spec.to_dict()
            data["config"] = {**data.get("config", {}), **extra}
            data["name"] = f"{data['name']} with {', '.join(f'{k}={v}' for k, v in extra.items())}"
            spec = parse_spec(data)
        out.append(spec)
    return out


def night_game(spec: SweepSpec, summary: dict[str, Any], results: Iterable[dict[str, Any]]) -> NightGame:
    """A sweep of the suite run in-process, as the drift comparison reads it: its chunk
    results (in memory anyway) turned into bit masks by cell label."""
    labels = {c.index: c.label for c in spec.cells()}
    outcomes = from_chunk_results(spec, results)
    return NightGame(spec.game, summary["aggregates"], {labels[i]: o for i, o in outcomes.items()})


def night_game_of_sweep(store: SweepStore, sweep_id: str, summary: dict[str, Any]) -> NightGame:
    """A finished sweep of the suite on Celery: its outcomes stay in Redis and are read a
    few chunks at a time whenever the night is compared or stored (`SweepOutcomes`)."""
    spec = parse_stored_spec(summary["spec"])
    return NightGame(spec.game, summary["aggregates"], SweepOutcomes(store, sweep_id, spec))


class StoredOutcomes(OutcomeSource):
    """A stored night's outcomes: `<game>.outcomes.jsonl.gz`, one block a line in (cell
    label, first seed) order, read line by line; the layout comes from `<game>.json.gz`."""

    def __init__(self, path: Path, layout: dict[str, list[list[int]]]) -> None:
        self.path = path
        self._layout = {label: [(int(s), int(g)) for s, g in blocks] for label, blocks in layout.items()}

    def layout(self) -> dict[str, Layout]:
        return self._layout

    def blocks(self) -> Iterator[tuple[str, OutcomeBlock]]:
        with gzip.open(self.path, "rb") as lines:
            for line in lines:
                data = orjson.loads(line)
                yield data["cell"], OutcomeBlock.from_dict(data)


def nightly_dir(data: str | Path | None = None) -> Path:
    """Where nights are stored: `DATA/nightly` for `--data DATA`, else $CULTISTS_NIGHTLY_DIR,
    else `nightly/` in the platform's data folder ($CULTISTS_DATA, default var/)."""
    if data is not None:
        return Path(data) / NIGHTLY_FOLDER
    if os.environ.get("CULTISTS_NIGHTLY_DIR"):
        return Path(os.environ["CULTISTS_NIGHTLY_DIR"])
    from services.runtime.topology import data_dir

    return data_dir() / NIGHTLY_FOLDER


class NightArchive:
    """Stored nights under one folder; see the module doc for the layout."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def night_ids(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and (p / "night.json").exists())

    def latest(self) -> str | None:
        """The latest stored night that was not a preview."""
        ids = [n for n in self.night_ids() if not n.endswith("-preview")]
        return ids[-1] if ids else None

    def latest_by_game(self) -> dict[str, str]:
        """game -> the latest non-preview night that holds it (a night may lack a stuck game)."""
        out: dict[str, str] = {}
        for night_id in reversed([n for n in self.night_ids() if not n.endswith("-preview")]):
            info = orjson.loads((self.root / night_id / "night.json").read_bytes())
            for game in info["games"]:
                out.setdefault(game, night_id)
        return out

    def load(self, night_id: str, games: Iterable[str] | None = None) -> dict[str, NightGame]:
        folder = self.root / night_id
        info = orjson.loads((folder / "night.json").read_bytes())
        out = {}
        for game in info["games"] if games is None else games:
            data = orjson.loads(gzip.decompress((folder / f"{game}.json.gz").read_bytes()))
            # A night stored before the outcomes were bit masks (its cells' games as lists
            # in this file) has none we can pair with: compared from its counts.
            outcomes: OutcomeSource = HeldOutcomes()
            if "layout" in data:
                outcomes = StoredOutcomes(folder / f"{game}.outcomes.jsonl.gz", data["layout"])
            out[game] = NightGame(game, data["aggregates"], outcomes)
        return out

    def save(
        self,
        night_id: str,
        games: Mapping[str, NightGame],
        drift: dict[str, Any],
        info: dict[str, Any],
    ) -> Path:
        folder = self.root / night_id
        folder.mkdir(parents=True, exist_ok=True)
        for game, night in games.items():
            assert isinstance(night.outcomes, OutcomeSource)
            # The outcomes first, streamed a block a line (from Redis, for a Celery night).
            with gzip.open(folder / f"{game}.outcomes.jsonl.gz", "wb", compresslevel=6) as lines:
                for label, block in night.outcomes.blocks():
                    lines.write(orjson.dumps({"cell": label, **block.to_dict()}) + b"\n")
            layout = {label: [list(b) for b in blocks] for label, blocks in night.outcomes.layout().items()}
            data = {"game": game, "aggregates": night.aggregates, "layout": layout}
            (folder / f"{game}.json.gz").write_bytes(gzip.compress(orjson.dumps(data), 6))
        (folder / "drift.json").write_bytes(orjson.dumps(drift, option=orjson.OPT_INDENT_2))
        # night.json last: a night is listed only once everything else is written.
        (folder / "night.json").write_bytes(
            orjson.dumps({**info, "night": night_id, "games": sorted(games)}, option=orjson.OPT_INDENT_2)
        )
        return folder


def new_night_id(preview: bool = False) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return f"{stamp}-preview" if preview else stamp


def close_night(
    archive: NightArchive,
    tonight: Mapping[str, NightGame],
    settings: DriftSettings | None = None,
    info: dict[str, Any] | None = None,
    preview: bool = False,
) -> dict[str, Any]:
    """Compare tonight with the latest stored night, store tonight, return the comparison."""
    info = info or {}
    previous_id = archive.latest()
    sources = {g: n for g, n in archive.latest_by_game().items() if g in tonight}
    previous: dict[str, NightGame] = {}
    for source in sorted(set(sources.values())):
        previous.update(archive.load(source, [g for g, n in sources.items() if n == source]))
    drift = compare_nights(previous, dict(tonight), settings or DriftSettings.from_env())
    for game, part in drift["games"].items():
        part["previous_night"] = sources.get(game)
    night_id = new_night_id(preview)
    drift["night"] = night_id
    drift["previous_night"] = previous_id
    try:
        archive.save(night_id, tonight, drift, {**info, "preview": preview, "previous_night": previous_id})
        drift["stored"] = str(archive.root / night_id)
    except OSError:
        # The comparison still stands (and is exported); the next night compares with an older one.
        log.exception("night %s not stored under %s", night_id, archive.root)
        drift["stored"] = None
    return drift


# What the JSON document keeps of every compared metric, drifted or not.
METRIC_FIELDS = (
    "cell",
    "metric",
    "before",
    "after",
    "difference",
    "p",
    "p_adjusted",
    "mde",
    "drifted",
    "test",
)


def json_document(drift: dict[str, Any]) -> dict[str, Any]:
    """The `cultists nightly --json` document: per game, how many metrics were compared and
    each drift with its cell, metric, before, after and BH-adjusted p (plus its interval)."""
    return {
        "night": drift.get("night"),
        "previous_night": drift.get("previous_night"),
        "family_size": drift.get("family_size", 0),
        "settings": drift.get("settings", {}),
        "games": {
            game: {
                "compared": g["compared"],
                "drifted": [
                    {
                        "cell": d["cell"],
                        "metric": d["metric"],
                        "before": d["before"],
                        "after": d["after"],
                        "difference": d["difference"],
                        "interval": d["interval"],
                        "p_adjusted": d["p_adjusted"],
                        "test": d["test"],
                    }
                    for d in g["drifted"]
                ],
                # every compared metric, drifted or not: raw and adjusted p, and the
                # smallest change the night could have caught (power.py)
                "metrics": [{k: m.get(k) for k in METRIC_FIELDS} for m in g.get("metrics", [])],
                "power": g.get("power", []),
            }
            for game, g in drift["games"].items()
        },
    }
