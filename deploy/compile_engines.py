"""Compile the rules engines and the engine core's hot paths ahead of time, in place.

Cython compiles the *same* `.py` files the interpreter runs (pure-Python mode: no `.pyx`,
no second copy of any rule); the built `.so` sits beside its `.py` and Python's importer
prefers it. A `.pxd` beside a `.py` (Cython's augmenting declarations) may give some of its
names C types where machine arithmetic means exactly what the Python does (core/rng.pxd);
the `.py` still runs unchanged without it. Set `CULTISTS_PURE_PYTHON=1` to run the
interpreted source instead
(services/engines/__init__.py), which is how the equivalence test and the bench compare.

Run by `make install` and the Dockerfile's build stage. Compiling is an optimisation, never
a requirement: where Cython or a C compiler is missing, or a module fails to build, this
prints one line and exits 0, and the interpreted source runs unchanged. Each built module is
also kept in a cache under the user's cache folder, named by everything it is built from
(cache_dir, toolchain_digest), so that a later build, in this tree or in any other (a fresh
clone, a worktree, the image test's build stage), copies in the modules whose source has
not changed instead of compiling them again.
docs/engine-performance.md says why Cython and not mypyc.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: the tree's root, for the registry below
    sys.path.insert(0, str(ROOT))

# The one list of games (importing it loads no engine module, so nothing built is in use here).
from services.engines.registry import GAMES, builtin_games  # noqa: E402

# Module name -> sha256 of the source each .so was built from; services/engines/__init__.py
# runs the source instead of a .so whose source has changed since.
MANIFEST = ROOT / "services" / "engines" / "built.json"

# What a random-play decision, a heuristic sweep game and an IS-MCTS iteration run through.
# Config and CLI modules stay interpreted: they run once per game or process.
MODULES = [
    "services/engines/core/game.py",
    "services/engines/core/rng.py",
    "services/engines/core/decks.py",
    "services/engines/core/bots.py",
    "services/engines/core/play.py",
    "services/engines/core/ismcts.py",
    "services/engines/core/serial.py",
    "services/engines/core/server.py",  # Apply's own work around the rules (issue 18 item 3)
    "services/engines/core/messages.py",
    "services/engines/core/issued.py",
    "services/engines/core/policy.py",  # the `policy` bot's decision (issue 32: its CPU)
    "services/engines/observation.py",  # the view's vector, hashed slots for features.py
    *(
        f"{GAMES[game].module.replace('.', '/')}/{part}.py"
        for game in builtin_games()
        for part in ("rules", "cards", "bots", "features")
        # features.py (the policy's encoder) only where a game has its own
        if part != "features" or (ROOT / GAMES[game].module.replace(".", "/") / "features.py").exists()
    ),
]

# Semantics exactly as interpreted: annotations are not turned into C types (a `float`
# annotation would become a C double, an `int` one would refuse a bool), integers keep
# Python's unbounded arithmetic, and errors carry the same tracebacks.
DIRECTIVES = {
    "language_level": 3,
    "annotation_typing": False,
    "binding": True,
    "embedsignature": False,
    "always_allow_keywords": True,
}

# The tree's own path left out of a built module (the debug information names source files
# relative to it), so a module built in one tree is the very file a build of the same source
# in another makes: what lets the build cache below share modules between trees.
PREFIX_MAP = "-fdebug-prefix-map={root}=." if os.name == "posix" else ""


# A compiled state class's fields are declared in its `.pxd` (they live in the object), and
# listed in its `FIELDS` (what clone, to_json and from_json copy). The `.pxd` block between
# these two lines is written from `FIELDS` (`sync_field_blocks`, run before every build), so
# a field is named once: in `FIELDS`. tests/core/test_compiled.py checks the two agree
# without a build.
FIELDS_BEGIN = "# FIELDS: written from {cls}.FIELDS by deploy/compile_engines.py, never by hand"
FIELDS_END = "# end FIELDS"
_CDEF_CLASS = re.compile(r"^cdef class (\w+)\(", re.M)


def state_fields(source: Path, cls: str) -> tuple[str, ...] | None:
    """`cls.FIELDS` as `source` spells it (a tuple of string literals), read from its syntax
    tree, so no module is imported; None when the class lists no FIELDS of its own."""
    tree = ast.parse(source.read_text(), str(source))
    for node in tree.body:
        if not (isinstance(node, ast.ClassDef) and node.name == cls):
            continue
        for item in node.body:
            target = item.targets[0] if isinstance(item, ast.Assign) and len(item.targets) == 1 else None
            if isinstance(item, ast.AnnAssign):
                target = item.target
            if isinstance(target, ast.Name) and target.id == "FIELDS":
                value = ast.literal_eval(item.value)  # type: ignore[union-attr, arg-type]
                if not (isinstance(value, tuple) and all(isinstance(v, str) for v in value)):
                    raise ValueError(f"{source}: {cls}.FIELDS is not a tuple of names")
                return value
    return None


def field_block(pxd_text: str, cls: str, fields: tuple[str, ...]) -> str:
    """`pxd_text` with `cls`'s FIELDS block rewritten to declare exactly `fields`."""
    begin = FIELDS_BEGIN.format(cls=cls)
    pattern = re.compile(rf"^([ \t]*){re.escape(begin)}\n.*?^[ \t]*{re.escape(FIELDS_END)}\n", re.M | re.S)
    found = pattern.search(pxd_text)
    if found is None:
        raise ValueError(f"cdef class {cls} has no block from {begin!r} to {FIELDS_END!r}")
    indent = found.group(1)
    lines = [f"{indent}{begin}\n", *(f"{indent}cdef public object {name}\n" for name in fields)]
    return pxd_text[: found.start()] + "".join(lines) + f"{indent}{FIELDS_END}\n" + pxd_text[found.end() :]


def field_blocks() -> dict[Path, str]:
    """Every compiled module's `.pxd`, as it reads with each state class's FIELDS block
    written from that class's `FIELDS` (a `.pxd` with no such class is left out)."""
    out: dict[Path, str] = {}
    for module in MODULES:
        source = ROOT / module
        pxd = source.with_suffix(".pxd")
        if not pxd.exists():
            continue
        text = pxd.read_text()
        for cls in _CDEF_CLASS.findall(text):
            fields = state_fields(source, cls)
            if fields:
                out[pxd] = text = field_block(text, cls, fields)
    return out


def sync_field_blocks() -> list[Path]:
    """Rewrite each `.pxd` whose FIELDS block differs from its class's `FIELDS`; returns
    the files rewritten."""
    changed = []
    for pxd, text in field_blocks().items():
        if pxd.read_text() != text:
            pxd.write_text(text)
            changed.append(pxd)
    return changed


def built_files() -> list[Path]:
    """Every file this script makes: the generated C and the extension modules."""
    out: list[Path] = []
    for module in MODULES:
        src = ROOT / module
        out += [
            src.with_suffix(".c"),
            *src.parent.glob(src.stem + ".*.so"),
            *src.parent.glob(src.stem + ".*.pyd"),
        ]
    out.append(MANIFEST)
    return [p for p in out if p.exists()]


def clean() -> None:
    for path in built_files():
        path.unlink()


# Built modules kept between builds, one per module, under the user's cache folder (never in
# the checkout: a fresh clone, a worktree and the image test's build stage all share it).
# An entry is named by everything its .so is made from: the module's source and `.pxd`
# (source_hash, as built.json records it), every `.pxd` of the tree (what it may cimport),
# the compile settings below, and the toolchain (Cython's version, the Python its headers
# and ABI are of, the C compiler's version and flags). A change to any of them misses, and
# that module alone is compiled; an unchanged module is copied in, byte for byte what
# compiling it would make. CULTISTS_ENGINE_CACHE names another folder, or `off` for none.
CACHE_ENV = "CULTISTS_ENGINE_CACHE"
CACHE_DAYS = 30  # an entry no build has used for this long is removed


def cache_dir() -> Path | None:
    chosen = os.environ.get(CACHE_ENV, "")
    if chosen == "off":
        return None
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cultists" / "engines"


def toolchain_digest() -> str:
    """What every built module depends on besides its own source."""
    import importlib.metadata
    import sysconfig

    parts = [
        f"cython {importlib.metadata.version('cython')}",
        f"setuptools {importlib.metadata.version('setuptools')}",
        f"python {sys.version} {sys.implementation.cache_tag}",
        f"directives {sorted(DIRECTIVES.items())!r}",
        f"flags {PREFIX_MAP}",
    ]
    for var in ("EXT_SUFFIX", "CC", "CFLAGS", "CCSHARED", "LDSHARED", "LDFLAGS", "CPPFLAGS", "INCLUDEPY"):
        parts.append(f"sysconfig {var}={sysconfig.get_config_var(var)}")
    for var in ("CC", "CFLAGS", "CPPFLAGS", "LDSHARED", "LDFLAGS", "ARCHFLAGS"):
        parts.append(f"env {var}={os.environ.get(var, '')}")
    compiler = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")[0]
    version = subprocess.run([compiler, "--version"], capture_output=True, text=True, check=True)
    parts.append(f"compiler {compiler}: {version.stdout}")
    include = Path(sysconfig.get_paths()["include"]) / "Python.h"
    parts.append(f"Python.h {hashlib.sha256(include.read_bytes()).hexdigest()}")
    for pxd in sorted((ROOT / "services").rglob("*.pxd")):
        parts.append(f"{pxd.relative_to(ROOT)} {hashlib.sha256(pxd.read_bytes()).hexdigest()}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _cache_entry(cache: Path, toolchain: str, module: str, source: str) -> Path:
    key = hashlib.sha256(f"{toolchain}\n{module}\n{source}".encode()).hexdigest()[:40]
    return cache / f"{key}-{Path(module).stem}.so"


def _copy_atomic(source: Path, dest: Path) -> None:
    """`source` to `dest` (with a fresh modification time) through a temporary file beside
    it: a process that has the old file loaded keeps it, and no one reads a half-written one."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    shutil.copy(source, tmp)
    os.replace(tmp, dest)


def _prune(cache: Path) -> None:
    """Remove the entries (and any temporary file a killed build left) unused for CACHE_DAYS."""
    cutoff = time.time() - CACHE_DAYS * 86400
    for entry in cache.iterdir():
        with contextlib.suppress(OSError):
            if entry.stat().st_mtime < cutoff:
                entry.unlink()


def compile_all() -> tuple[int, int]:
    """Build every module in place; returns how many modules there are and how many of
    them came from the build cache."""
    import sysconfig

    os.chdir(ROOT)
    from services.engines import source_hash

    # Hashed before Cython reads them: a source edited while the build runs then leaves the
    # build stale (said at start), never marked current with the old code in it.
    hashes = {
        module.removesuffix(".py").replace("/", "."): source_hash(str(ROOT / module)) for module in MODULES
    }
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    cache = cache_dir()
    toolchain = toolchain_digest() if cache is not None else ""
    todo: list[str] = []
    stored: list[tuple[Path, Path]] = []  # (built module, its cache entry) to keep once built
    for module in MODULES:
        target = ROOT / (module.removesuffix(".py") + suffix)
        if cache is None:
            todo.append(module)
            continue
        entry = _cache_entry(cache, toolchain, module, hashes[module.removesuffix(".py").replace("/", ".")])
        if entry.is_file():
            _copy_atomic(entry, target)
            with contextlib.suppress(OSError):
                os.utime(entry)  # used now: _prune keeps it
        else:
            todo.append(module)
            stored.append((target, entry))
    if todo:
        _build(todo, force=cache is not None)
    for target, entry in stored:
        with contextlib.suppress(OSError):  # a cache that cannot be written only costs time
            _copy_atomic(target, entry)
    if cache is not None and cache.is_dir():
        _prune(cache)
    MANIFEST.write_text(json.dumps(hashes, indent=1, sort_keys=True) + "\n")
    return len(MODULES), len(MODULES) - len(todo)


def _build(modules: list[str], force: bool) -> None:
    """Cython and the C compiler over `modules`, in place. `force` when they go in the
    cache (each one is a module the cache lacks, stored under the toolchain it is named by),
    so that neither Cython's up-to-date check (a .c newer than its .py, whatever Cython wrote
    it) nor setuptools' (a build/ output newer than its .c, whatever flags made it) skips one."""
    from Cython.Build import cythonize
    from setuptools import Distribution
    from setuptools.command.build_ext import build_ext

    extensions = cythonize(
        modules,
        compiler_directives=DIRECTIVES,
        # A game's .pxd cimports the core's (`State` is an extension type that a game's
        # state class extends): Cython finds `services.engines...` from the tree's root.
        include_path=[str(ROOT)],
        quiet=True,
        nthreads=0,
        force=force,
    )
    for extension in extensions:
        if PREFIX_MAP:
            extension.extra_compile_args.append(PREFIX_MAP.format(root=ROOT))
    dist = Distribution({"ext_modules": extensions, "script_name": "compile_engines.py"})
    cmd = build_ext(dist)
    cmd.inplace = True
    cmd.force = force
    cmd.parallel = os.cpu_count() or 1
    cmd.ensure_finalized()
    cmd.run()


def main(argv: list[str]) -> int:
    if argv[:1] == ["--clean"]:
        clean()
        return 0
    if argv[:1] == ["--fields"]:  # write the .pxd field blocks only (no build)
        for pxd in sync_field_blocks():
            print(f"rewrote the FIELDS block of {pxd.relative_to(ROOT)}")
        return 0
    for pxd in sync_field_blocks():  # before the build, so it compiles the fields FIELDS lists
        print(f"rewrote the FIELDS block of {pxd.relative_to(ROOT)} from its state class's FIELDS")
    # The compiler's chatter goes to a log file, so the install shows one line either way.
    log_path = Path(os.environ.get("TMPDIR", "/tmp")) / "cultists-compile-engines.log"
    saved = os.dup(1), os.dup(2)
    try:
        with open(log_path, "w") as log:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(log.fileno(), 1)
            os.dup2(log.fileno(), 2)
            try:
                count, reused = compile_all()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
    except (Exception, SystemExit) as exc:  # any failure: fall back to the interpreted source
        clean()
        first = (str(exc).strip().splitlines() or [""])[0]
        print(
            f"engines not compiled ({type(exc).__name__}: {first}; see {log_path}); the interpreted source runs"
        )
        return 0
    cached = f"; {reused} of them as built before, from {cache_dir()}" if reused else ""
    print(f"engines compiled: {count} modules (Cython, in place{cached})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
