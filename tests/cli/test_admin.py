"""`cultists admin` on a real Redis: the first operator is made from the command line
(password from standard input, never an argument), roles are granted and taken back, and
bad input changes nothing (exit status 2, one line)."""

from __future__ import annotations

import io
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from services.cli.main import main as cli
from services.platform.errors import PlatformError
from services.platform.players import PlayerBook

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "tall ships sail at dawn"


@pytest.fixture()
def book(redis_client) -> PlayerBook:
    return PlayerBook(redis_client, 3600)


def _name() -> str:
    return f"admin-{secrets.token_hex(4)}"


def test_create_user_as_a_real_process_reads_the_password_from_stdin(redis_url, book):
    name = _name()
    done = subprocess.run(
        [sys.executable, "-m", "services.cli.main", "admin", "create-user", name, "--role", "operator",
         "--password-stdin", "--redis-url", redis_url],
        input=PASSWORD + "\n", capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"{name}: player" in done.stdout and "operator, designer, player" in done.stdout
    session = book.login(name, PASSWORD)
    assert session["roles"] == ["operator", "designer", "player"]


def test_grant_gives_and_takes_back_a_role(redis_url, book, monkeypatch, capsys):
    name = _name()
    monkeypatch.setattr(sys, "stdin", io.StringIO(PASSWORD + "\n"))
    assert cli(["admin", "create-user", name, "--password-stdin", "--redis-url", redis_url]) == 0
    assert book.by_username(name).roles == ["player"]
    assert cli(["admin", "grant", name, "designer", "--redis-url", redis_url]) == 0
    assert book.by_username(name).roles == ["designer", "player"]
    assert cli(["admin", "grant", name, "player", "--redis-url", redis_url]) == 0
    assert book.by_username(name).roles == ["player"]
    assert "roles player" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "stdin", "words"),
    [
        (["grant", "nobody-here-7", "designer"], "", "no account 'nobody-here-7'"),
        (["grant", "someone", "king"], "", "invalid choice: 'king'"),
        (["create-user", "x", "--password-stdin"], PASSWORD, "'username' is 3 to 32"),
        (["create-user", "shortpass-user", "--password-stdin"], "short", "'password' is"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(redis_url, redis_client, monkeypatch, capsys, argv, stdin, words):
    keys = redis_client.dbsize()
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin + "\n"))
    assert cli(["admin", *argv, "--redis-url", redis_url]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert redis_client.dbsize() == keys


def test_a_taken_name_is_refused_and_the_account_kept(redis_url, book, monkeypatch, capsys):
    name = _name()
    book.create_account(name, PASSWORD, "designer")
    monkeypatch.setattr(sys, "stdin", io.StringIO("another password 123\n"))
    assert cli(["admin", "create-user", name, "--password-stdin", "--redis-url", redis_url]) == 2
    assert "is taken" in capsys.readouterr().err
    assert book.login(name, PASSWORD)["roles"] == ["designer", "player"]
    with pytest.raises(PlatformError):
        book.login(name, "another password 123")
