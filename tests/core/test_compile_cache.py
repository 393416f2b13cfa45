"""deploy/compile_engines.py's build cache: a module built once, in any tree, is copied into
the next tree that builds the same source with the same toolchain instead of being compiled
again, and anything it is built from names a different entry.

One tiny module is really compiled (Cython and the C compiler, as `make compile` does), in
a tree of its own under tmp_path, with the cache in another folder there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import deploy.compile_engines as build

MODULE = "pkg/hot.py"
SOURCE = "def twice(x):\n    return 2 * x\n"


def _tree(root: Path, source: str = SOURCE) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / MODULE).write_text(source)
    return root


def _compile_in(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    monkeypatch.setattr(build, "ROOT", root)
    monkeypatch.setattr(build, "MODULES", [MODULE])
    monkeypatch.setattr(build, "MANIFEST", root / "built.json")
    return build.compile_all()


def test_cache_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(build.CACHE_ENV, "off")
    assert build.cache_dir() is None
    monkeypatch.setenv(build.CACHE_ENV, str(tmp_path / "mine"))
    assert build.cache_dir() == tmp_path / "mine"
    monkeypatch.delenv(build.CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert build.cache_dir() == tmp_path / "xdg" / "cultists" / "engines"


def test_an_entry_is_named_by_what_the_module_is_built_from(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("Cython")
    cache = Path("/nowhere")
    chain = build.toolchain_digest()
    entry = build._cache_entry(cache, chain, MODULE, "source-a")
    assert build._cache_entry(cache, chain, MODULE, "source-a") == entry
    assert build._cache_entry(cache, chain, MODULE, "source-b") != entry
    assert build._cache_entry(cache, chain, "pkg/other.py", "source-a") != entry
    monkeypatch.setenv("CFLAGS", "-O0")  # the compiler's flags are part of the toolchain
    assert build._cache_entry(cache, build.toolchain_digest(), MODULE, "source-a") != entry


def test_a_second_tree_copies_the_built_module_in(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pytest.importorskip("Cython")
    monkeypatch.setenv(build.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)  # compile_all changes directory: the test's own is put back
    first = _tree(tmp_path / "first")
    assert _compile_in(first, monkeypatch) == (1, 0)  # compiled
    [built] = (first / "pkg").glob("hot.*.so")
    [entry] = (tmp_path / "cache").glob("*-hot.so")
    assert entry.read_bytes() == built.read_bytes()

    second = _tree(tmp_path / "second")
    assert _compile_in(second, monkeypatch) == (1, 1)  # from the cache, not compiled
    [copied] = (second / "pkg").glob("hot.*.so")
    assert copied.read_bytes() == built.read_bytes()
    assert not (second / "pkg" / "hot.c").exists()  # Cython never ran in the second tree
    # The copied module is the compiled one, and it runs.
    probe = "import pkg.hot as m, sys; assert m.__file__.endswith('.so'), m.__file__; print(m.twice(21))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=second, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "42", done.stderr

    # An edit to the source names another entry: the edited module is compiled, never copied.
    from services.engines import source_hash

    chain = build.toolchain_digest()
    edited = _tree(tmp_path / "third", SOURCE.replace("2 * x", "x + x"))
    assert build._cache_entry(tmp_path / "cache", chain, MODULE, source_hash(str(edited / MODULE))) != entry
