"""The Cython-compiled engines play exactly as the interpreted source does.

`make install` compiles the engines' hot modules from the same `.py` files
(deploy/compile_engines.py). The same seeds are played in two fresh interpreters, one on
the built modules and one forced onto the source (`CULTISTS_PURE_PYTHON=1`), and every
state, every legal-action list, every chosen action and every final result must be
byte-identical, for all three games, with random, heuristic and IS-MCTS bots (the last two
run compiled code of their own).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from deploy.compile_engines import MODULES

ROOT = Path(__file__).resolve().parents[2]

# Runs in a child interpreter: prints, per game, a digest of the whole play-through and
# which files the engine modules were loaded from.
_PLAY = r"""
import hashlib, json, sys
import orjson
from services.engines.core.bots import make_bot
from services.engines.core.play import bot_seed
from services.engines.registry import available_games, load_game
import services.engines.core.game as game_module

out = {"game_module": game_module.__file__, "games": {}}
for name in available_games():
    spec = load_game(name)
    digest = hashlib.sha256()
    runs = [("random", n, seed) for n in range(spec.min_players, spec.max_players + 1) for seed in range(6)]
    runs += [("heuristic", spec.default_players, seed) for seed in range(3)]
    runs += [("ismcts:iterations=12", spec.default_players, 0)]
    for bot, players, seed in runs:
        # CC-2: Crazy Cultists at 2 players only behind its sweep switch.
        config = {"two_players": True} if name == "crazy_cultists" and players == 2 else None
        state = spec.new_state(config, players, seed)
        bots = [make_bot(spec, bot, bot_seed(seed, i)) for i in range(players)]
        steps = 0
        while not state.is_terminal() and steps < 400:
            seats = list(state.to_act())
            seat = seats[0]
            legal = state.legal_actions(seat)
            action = bots[seat].choose(state, seat, legal) if len(legal) > 1 else legal[0]
            digest.update(orjson.dumps([seats, legal, action]))
            digest.update(orjson.dumps(state.to_json(), option=orjson.OPT_SORT_KEYS))
            state.apply(seat, action)
            steps += 1
        digest.update(orjson.dumps([state.to_json(), state.winners(), state.returns()], option=orjson.OPT_SORT_KEYS))
    out["games"][name] = {"digest": digest.hexdigest(), "rules_file": sys.modules[type(state).__module__].__file__}
print(json.dumps(out))
"""


def _play(pure: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "CULTISTS_PURE_PYTHON"}
    if pure:
        env["CULTISTS_PURE_PYTHON"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", _PLAY], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _built() -> bool:
    return all(list((ROOT / m).parent.glob(Path(m).stem + ".*.so")) for m in MODULES)


@pytest.mark.skipif(
    not _built(), reason="engines not compiled here (no C compiler or Cython): nothing to compare"
)
def test_compiled_and_interpreted_engines_play_byte_identical_games() -> None:
    compiled, interpreted = _play(pure=False), _play(pure=True)
    # Each side really ran what it claims to: built modules against the source.
    assert compiled["game_module"].endswith(".so")
    assert interpreted["game_module"].endswith(".py")
    assert set(compiled["games"]) == {"crazy_cultists", "trash_cult", "tricky_cultists"}
    for name, result in compiled["games"].items():
        assert result["rules_file"].endswith(".so"), name
        assert interpreted["games"][name]["rules_file"].endswith(".py"), name
        assert result["digest"] == interpreted["games"][name]["digest"], f"{name}: compiled play differs"


def test_pure_python_switch_loads_every_engine_module_from_source() -> None:
    """With the switch on, no built module is used, so a machine without a compiler runs
    exactly what the comparison above runs on the interpreted side."""
    env = {**os.environ, "CULTISTS_PURE_PYTHON": "1"}
    code = (
        "import sys; from services.engines.registry import available_games, load_game\n"
        "[load_game(g) for g in available_games()]\n"
        "import services.engines.core.ismcts\n"
        "from services.engines import compiled\n"
        "mods = [m.__file__ for n, m in sys.modules.items() if n.startswith('services.engines.')]\n"
        "print(compiled(), sorted(f for f in mods if not f.endswith('.py')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "[]"]


# Runs in a child with built.json's record replaced by the JSON in argv[1] (None: no
# record at all), then imports the core and a game's rules; prints where each came from.
_LOAD = r"""
import json, sys
import services.engines as e
record = json.loads(sys.argv[1])
if record is None:
    e.BUILT_MANIFEST = "/nonexistent/built.json"
else:
    e._built_hashes = {name: e.source_hash(e._module_source(name)) for name in record["current"]}
    e._built_hashes.update(record["stale"])
import services.engines.core.game as g, services.engines.core.rng as r
import services.engines.tricky_cultists.rules as t
print(*(m.__file__.rpartition(".")[2] for m in (g, r, t)))
"""


def _load(record: dict | None) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "CULTISTS_PURE_PYTHON"}
    done = subprocess.run(
        [sys.executable, "-c", _LOAD, json.dumps(record)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


_CORE_AND_TRICKY = [
    "services.engines.core.game",
    "services.engines.core.rng",
    "services.engines.tricky_cultists.rules",
    # The compiled rules cimport the agenda kind from the compiled cards (cards.pxd).
    "services.engines.tricky_cultists.cards",
]


@pytest.mark.skipif(not _built(), reason="engines not compiled here (no C compiler or Cython)")
def test_a_current_build_loads_compiled() -> None:
    assert _load({"current": _CORE_AND_TRICKY, "stale": {}}) == ["so", "so", "so"]


@pytest.mark.skipif(not _built(), reason="engines not compiled here (no C compiler or Cython)")
def test_one_module_edited_since_the_build_runs_every_module_from_source() -> None:
    """A rules edit after `make install` must take effect, not be shadowed by a stale .so;
    and since a game's compiled state class is laid out on the compiled `State`
    (game.pxd, rules.pxd), no built module may load beside a changed one either: the
    child pretends rng.py (or the game's .pxd) changed since the build, and the untouched
    modules run from source too."""
    rng_edited = {"current": _CORE_AND_TRICKY[::2], "stale": {"services.engines.core.rng": "edited since"}}
    assert _load(rng_edited) == ["py", "py", "py"]
    rules_edited = {"current": _CORE_AND_TRICKY[:2], "stale": {"services.engines.tricky_cultists.rules": "x"}}
    assert _load(rules_edited) == ["py", "py", "py"]


@pytest.mark.skipif(not _built(), reason="engines not compiled here (no C compiler or Cython)")
def test_no_build_record_runs_every_module_from_source() -> None:
    assert _load(None) == ["py", "py", "py"]


def test_the_build_hash_covers_the_pxd() -> None:
    """An edit to a module's Cython declarations (its `.pxd`: the layout of its extension
    types) makes the build stale, as an edit to its `.py` does."""
    import hashlib

    from services.engines import _module_source, source_hash

    for name in ("services.engines.core.game", "services.engines.tricky_cultists.rules"):
        path = Path(_module_source(name))
        pxd = path.with_suffix(".pxd")
        assert pxd.exists(), name
        both = hashlib.sha256(path.read_bytes() + pxd.read_bytes()).hexdigest()
        assert source_hash(str(path)) == both != hashlib.sha256(path.read_bytes()).hexdigest()
