"""The data folder is found the same way from any working directory: CULTISTS_DATA, else
the running platform's (a run registers itself while it holds its folder's lock), else the
per-user default; nothing is created by looking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from services.runtime.data_folder import (
    AmbiguousDataFolder,
    data_dir,
    read_run_file,
    register_run,
    running_folders,
    unregister_run,
    user_data_dir,
)
from services.runtime.run_lock import RunLock


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CULTISTS_DATA", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


class Run:
    """What `cultists run` does with its folder: hold the lock, register, write the run file."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.lock = RunLock(folder)
        self.lock.acquire()
        self.entry = register_run(folder)
        (folder / "run.json").write_text(json.dumps({"redis_url": f"redis://{folder.name}"}))

    def stop(self) -> None:
        unregister_run(self.entry)
        self.lock.release()


def test_without_a_run_it_is_the_per_user_default_and_is_not_created(home):
    assert data_dir() == user_data_dir() == home / "xdg" / "cultists"
    assert read_run_file() == {}
    assert not (home / "xdg").exists() and not (home / "var").exists()


def test_cultists_data_wins(home, monkeypatch):
    monkeypatch.setenv("CULTISTS_DATA", "relative/data")
    assert data_dir() == home / "relative" / "data"


def test_a_running_platform_is_found_from_another_directory(home, monkeypatch):
    run = Run(home / "elsewhere" / "data")
    try:
        (home / "somewhere" / "else").mkdir(parents=True)
        monkeypatch.chdir(home / "somewhere" / "else")
        assert data_dir() == home / "elsewhere" / "data"
        assert read_run_file() == {"redis_url": "redis://data"}
    finally:
        run.stop()
    assert data_dir() == user_data_dir()


def test_a_killed_runs_registration_and_run_file_are_not_a_running_platform(home):
    folder = home / "killed"
    run = Run(folder)
    run.lock.release()  # the kernel drops the lock of a run that dies; its files stay
    assert (folder / "run.json").exists() and run.entry.exists()
    assert data_dir() == user_data_dir()
    assert read_run_file(folder) == {}
    assert running_folders() == [] and not run.entry.exists()  # swept


def test_two_running_platforms_are_ambiguous_until_one_is_named(home, monkeypatch):
    first, second = Run(home / "a"), Run(home / "b")
    try:
        with pytest.raises(AmbiguousDataFolder, match="set CULTISTS_DATA"):
            data_dir()
        monkeypatch.setenv("CULTISTS_DATA", str(home / "b"))
        assert read_run_file() == {"redis_url": "redis://b"}
    finally:
        first.stop()
        second.stop()
