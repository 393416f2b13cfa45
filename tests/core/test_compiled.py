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
from services.engines.registry import GAME_MODULES

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


# Runs in a child whose build record says rules.py of Crazy Cultists changed since the
# build; loads a game and prints how the engines run, then runs `cultists status`.
_STALE = r"""
import sys
import services.engines as e
from services.engines import source_hash, _module_source
e._built_hashes = {name: source_hash(_module_source(name)) for name in ("services.engines.core.game", "services.engines.core.rng")}
e._built_hashes["services.engines.crazy_cultists.rules"] = "edited since"
from services.engines.registry import load_game
load_game("crazy_cultists"), load_game("trash_cult")
print(e.build_state())
from services.cli.main import main
main(["status", "--redis-url", sys.argv[1], "--gateway", "http://" + sys.argv[2]])
"""


def test_a_stale_build_says_so_once_at_start_and_in_status() -> None:
    """Changed since the build, the engines run from source (correct, but slower): one line
    on stderr when the first engine module loads says so and how to fix it, and `cultists
    status` prints "interpreted: build stale" (a note: not a part that is down)."""
    from services.runtime.ports import free_port

    nowhere = f"127.0.0.1:{free_port()}"
    env = {k: v for k, v in os.environ.items() if k != "CULTISTS_PURE_PYTHON"}
    env.update({f"ENGINE_ADDR_{g.upper()}": nowhere for g in GAME_MODULES})
    done = subprocess.run(
        [sys.executable, "-c", _STALE, f"redis://{nowhere}/0", nowhere],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    stale = [line for line in done.stderr.splitlines() if "build stale" in line]
    if _built():  # the line comes when a built module would have loaded, and is refused
        assert len(stale) == 1 and "crazy_cultists.rules" in stale[0] and "make compile" in stale[0], (
            done.stderr
        )
    out = done.stdout.splitlines()
    assert out[0] == "interpreted: build stale (crazy_cultists.rules)"
    row = next(line for line in out if line.startswith("engines build"))
    assert "interpreted: build stale (crazy_cultists.rules)" in row and "DOWN" not in row


def test_build_state_names_the_pure_python_switch() -> None:
    env = {**os.environ, "CULTISTS_PURE_PYTHON": "1"}
    done = subprocess.run(
        [sys.executable, "-c", "import services.engines as e; print(e.build_state())"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.strip() == "interpreted: CULTISTS_PURE_PYTHON=1" and "stale" not in done.stderr


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


def test_each_pxd_declares_exactly_its_state_class_fields() -> None:
    """A compiled state class's attributes are its `.pxd`'s; clone and to_json copy its
    `FIELDS`. The `.pxd` block is written from `FIELDS` before every build; checked here
    without one, so a field added to `FIELDS` alone (which would work from source and raise
    AttributeError compiled) fails this test on any machine."""
    from deploy.compile_engines import FIELDS_BEGIN, field_blocks, state_fields

    blocks = field_blocks()
    games = {Path(m).parent.name for m in MODULES if m.endswith("/rules.py")}
    assert {p.parent.name for p in blocks} == games
    for pxd, written in blocks.items():
        assert pxd.read_text() == written, f"{pxd}: run `python deploy/compile_engines.py --fields`"
        cls = next(
            line.split()[2].partition("(")[0]
            for line in written.splitlines()
            if line.startswith("cdef class")
        )
        fields = state_fields(pxd.with_suffix(".py"), cls)
        assert fields and FIELDS_BEGIN.format(cls=cls) in written
        declared = [
            line.split()[-1] for line in written.splitlines() if line.startswith("    cdef public object ")
        ]
        assert set(fields) <= set(declared), pxd


def test_a_field_added_to_fields_alone_is_written_into_the_pxd_block() -> None:
    from deploy.compile_engines import FIELDS_BEGIN, FIELDS_END, field_block

    begin = FIELDS_BEGIN.format(cls="S")
    pxd = f"cdef class S(State):\n    cdef public tuple kind\n    {begin}\n    cdef public object a\n    {FIELDS_END}\n    cpdef f(self)\n"
    written = field_block(pxd, "S", ("a", "b"))
    assert written == pxd.replace("object a\n", "object a\n    cdef public object b\n")
    assert field_block(written, "S", ("b",)) == pxd.replace("object a\n", "object b\n")
    with pytest.raises(ValueError, match="no block"):
        field_block("cdef class S(State):\n    cdef public object a\n", "S", ("a",))


def _cdef_constants(pxd: Path) -> set[str]:
    """Public module-level names a `.pxd` declares `cdef <type> A, B` (C variables)."""
    names: set[str] = set()
    for line in pxd.read_text().splitlines():
        line = line.split("#")[0].rstrip()
        if line.startswith("cdef ") and not line.startswith(("cdef class ", "cdef inline ")):
            first, *rest = line.split(",")
            found = [first.split()[-1], *(n.strip() for n in rest)]
            names.update(n for n in found if not n.startswith("_"))
    return names


def _published(source: Path) -> dict[str, str]:
    """keyword -> the name it is given, of a module-level `globals().update(...)`."""
    import ast

    out: dict[str, str] = {}
    for node in ast.parse(source.read_text()).body:
        call = node.value if isinstance(node, ast.Expr) else None
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "update"
            and isinstance(call.func.value, ast.Call)
            and getattr(call.func.value.func, "id", None) == "globals"
        ):
            out.update({k.arg: getattr(k.value, "id", "?") for k in call.keywords if k.arg})
    return out


def test_every_public_cdef_constant_is_published_as_a_module_attribute() -> None:
    """A name a `.pxd` declares `cdef` at module level is a C variable compiled, absent from
    the module (`rules.PLAY` would raise AttributeError); each public one is published by
    its module's `globals().update(NAME=NAME, ...)`, checked here without a build."""
    checked = 0
    for module in MODULES:
        source = ROOT / module
        pxd = source.with_suffix(".pxd")
        wanted = _cdef_constants(pxd) if pxd.exists() else set()
        published = _published(source)
        assert set(published) == wanted, module
        assert all(k == v for k, v in published.items()), module
        checked += len(wanted)
    assert checked >= 20  # Crazy Cultists' card kinds, PLAY and NO_TARGET at least


def _cimported(pxd: Path) -> set[str]:
    """Names a `.pxd` takes with `from X cimport A, B`."""
    if not pxd.exists():
        return set()
    return {
        name.strip()
        for line in pxd.read_text().splitlines()
        if line.startswith("from ") and " cimport " in line
        for name in line.split(" cimport ", 1)[1].split(",")
    }


_NAMES = r"""
import importlib, json, sys
out = {}
for module in json.loads(sys.argv[1]):
    m = importlib.import_module(module)
    out[module] = [m.__file__.rpartition(".")[2], sorted(n for n in vars(m) if not n.startswith("_"))]
print(json.dumps(out))
"""


def _names(pure: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "CULTISTS_PURE_PYTHON"}
    if pure:
        env["CULTISTS_PURE_PYTHON"] = "1"
    modules = [m.removesuffix(".py").replace("/", ".") for m in MODULES]
    done = subprocess.run(
        [sys.executable, "-c", _NAMES, json.dumps(modules)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.skipif(not _built(), reason="engines not compiled here (no C compiler or Cython)")
def test_compiled_modules_have_the_public_names_of_their_source() -> None:
    compiled, source = _names(pure=False), _names(pure=True)
    for module, (kind, names) in compiled.items():
        assert kind == "so" and source[module][0] == "py", module
        # `annotations` is `from __future__ import annotations`' marker, which Cython keeps
        # as a compiler directive rather than a module attribute; a name the `.pxd`
        # cimports (the `State` type a state class extends) is bound at C level and stays
        # an attribute of the module it comes from.
        cimported = _cimported(ROOT / (module.replace(".", "/") + ".pxd"))
        wanted = set(source[module][1]) - {"annotations"} - cimported
        found = set(names) - cimported
        assert found == wanted, f"{module}: {wanted ^ found}"
    from services.engines.crazy_cultists import rules

    assert {"PLAY", "NO_TARGET", "POLYMORPHIZATION"} <= set(compiled[rules.__name__][1])
