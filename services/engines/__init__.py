"""The rules engines and their shared core.

`make install` compiles the hot modules with Cython in place (deploy/compile_engines.py);
the importer then prefers each built `.so` over its `.py`. `CULTISTS_PURE_PYTHON=1` makes
every module under this package load from its `.py` source instead, so the compiled and
interpreted engines can be compared on the same machine (tests/core/test_compiled.py,
`make bench`). Both run the same source: there is no second copy of any rule.

A built module whose `.py` has changed since it was compiled (a rule edited since the last
`make install`: the build records each source's hash in `built.json`) is ignored and the
source runs, so an edit always takes effect, compiled or not.
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
_built_hashes: dict[str, str] | None = None


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


def _compiled_is_current(fullname: str, source: str) -> bool:
    """Whether the built module was compiled from this very source text."""
    global _built_hashes
    if _built_hashes is None:
        try:
            with open(BUILT_MANIFEST) as f:
                _built_hashes = json.load(f)
        except (OSError, ValueError):
            _built_hashes = {}
    return _built_hashes.get(fullname) == source_hash(source)


class _SourceFirst:
    """A meta-path finder for `services.engines.*`: the `.py` source in pure-Python mode or
    where the built module is stale; otherwise None, and the normal importer picks the
    `.so`."""

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
                if not built or _compiled_is_current(fullname, source):
                    return None
            return importlib.util.spec_from_file_location(fullname, source)
        return None


def compiled() -> bool:
    """True when the rules engines run as compiled extension modules."""
    from .core import game

    return not (game.__file__ or "").endswith(".py")


if _SourceFirst not in sys.meta_path:
    sys.meta_path.insert(0, _SourceFirst)  # type: ignore[arg-type]
