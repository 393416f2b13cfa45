"""The rules engines and their shared core.

`make install` compiles the hot modules with Cython in place (deploy/compile_engines.py);
the importer then prefers each built `.so` over its `.py`. `CULTISTS_PURE_PYTHON=1` makes
every module under this package load from its `.py` source instead, so the compiled and
interpreted engines can be compared on the same machine (tests/core/test_compiled.py,
`make bench`). Both run the same source: there is no second copy of any rule.

The build is used whole or not at all. Compiled modules share C-level layouts: a game's
compiled state class extends the compiled `core.game.State` (their `.pxd` files), so a
rules module built against one layout of `State` must never load beside another. If any
module's `.py` or `.pxd` differs from what the last build compiled (`built.json` records
each one's hash), or the record is missing, every module runs from its source: an edited
rule always takes effect, and no mix of builds (or of built and source) is ever loaded.
A stale build says so, in one line on stderr when the first engine module loads, and in
`cultists status` ("interpreted: build stale"): it runs correctly, but at interpreted speed.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from types import ModuleType

PURE_PYTHON_ENV = "CULTISTS_PURE_PYTHON"


_PURE = os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0")
BUILT_MANIFEST = os.path.join(os.path.dirname(__file__), "built.json")
_built_hashes: dict[str, str] | None = None  # built.json, read once
_build_current: bool | None = None  # _build_is_current(), decided once


def source_hash(path: str) -> str:
    """What a build records of a module's source: its `.py`, and the Cython declarations
    beside it (`.pxd`, which type some of its locals) where it has them, so an edit to
    either makes the built module stale (deploy/compile_engines.py writes these)."""
    digest = hashlib.sha256()
    for part in (path, path.removesuffix(".py") + ".pxd"):
        if part == path or os.path.exists(part):
            with open(part, "rb") as f:
                digest.update(f.read())
    return digest.hexdigest()


def _module_source(fullname: str) -> str:
    """The `.py` of a module under this package's root (where `services/` lives)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(root, *fullname.split(".")) + ".py"


def _read_manifest() -> dict[str, str]:
    global _built_hashes
    if _built_hashes is None:
        try:
            with open(BUILT_MANIFEST) as f:
                _built_hashes = json.load(f)
        except (OSError, ValueError):
            _built_hashes = {}
    return _built_hashes if type(_built_hashes) is dict else {}


def stale_modules() -> list[str]:
    """The modules of the last build whose source (or `.pxd`) has changed since it was
    compiled, or that are gone; empty when the build is current or there is none."""
    return sorted(
        name
        for name, digest in _read_manifest().items()
        if not os.path.exists(_module_source(name)) or source_hash(_module_source(name)) != digest
    )


def _build_is_current() -> bool:
    """Whether every module of the last build still has the very source (and `.pxd`) it
    was compiled from; decided once per process, before the first built module loads.
    A stale build prints the one line that says so, then."""
    global _build_current
    if _build_current is None:
        stale = stale_modules()
        _build_current = bool(_read_manifest()) and not stale
        if stale:
            sys.stderr.write(_stale_line(stale) + "\n")
    return _build_current


def _stale_line(stale: list[str]) -> str:
    names = ", ".join(name.removeprefix(__name__ + ".") for name in stale[:3])
    more = f" and {len(stale) - 3} more" if len(stale) > 3 else ""
    return (
        f"engines: build stale ({names}{more} changed since it was compiled); running the "
        "interpreted source, correct but slower: run `make compile`"
    )


class _SourceFirst:
    """A meta-path finder for `services.engines.*`: the `.py` source in pure-Python mode,
    when the build is not current as a whole, or for a built module the build did not
    record; otherwise None, and the normal importer picks the `.so`."""

    @staticmethod
    def find_spec(
        fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(__name__ + ".") or not path:
            return None
        leaf = fullname.rpartition(".")[2]
        for folder in path:
            source = os.path.join(folder, leaf + ".py")
            if not os.path.exists(source):
                continue
            if not _PURE:
                built = any(
                    os.path.exists(os.path.join(folder, leaf + suffix))
                    for suffix in importlib.machinery.EXTENSION_SUFFIXES
                )
                if not built or (_build_is_current() and fullname in (_built_hashes or {})):
                    return None
            return importlib.util.spec_from_file_location(fullname, source)
        return None


def compiled() -> bool:
    """True when the rules engines run as compiled extension modules."""
    from .core import game

    return not (game.__file__ or "").endswith(".py")


def build_state() -> str:
    """How this process runs the engines, in the words `cultists status` prints:
    "compiled", or "interpreted: " and why (the switch, a stale build, no build)."""
    if compiled():
        return "compiled"
    if _PURE:
        return f"interpreted: {PURE_PYTHON_ENV}=1"
    stale = stale_modules()
    if stale:
        return f"interpreted: build stale ({', '.join(n.removeprefix(__name__ + '.') for n in stale)})"
    return "interpreted: not built (no C compiler or Cython at install; `make compile`)"


if _SourceFirst not in sys.meta_path:
    sys.meta_path.insert(0, _SourceFirst)
