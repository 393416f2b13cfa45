"""The gateway as it runs in production: gunicorn with deploy/gunicorn.conf.py, several
gevent workers, metrics in multiprocess mode, live event streams over real sockets."""

from __future__ import annotations

import contextlib
import fcntl
import html
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from urllib.parse import quote

import pytest

from services.engines.registry import available_games, load_game
from services.gateway.pages.history import sentence
from services.runtime.ports import free_port, wait_for_port
from tests.support.celery_worker import ROOT

from .conftest import LiveStore, bearer, engine_env
from .support import two_player_config

GAME = available_games()[0]
TWO = two_player_config(GAME)  # its tables here seat 2


METRICS_TOKEN = "gunicorn-test-scrape-token"


def _answering(url: str, timeout: float) -> None:
    """The master listens at once; its workers load the app for seconds more (many on a
    busy machine): a test starts once a request is answered."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=10):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@contextlib.contextmanager
def serve(
    live_store: LiveStore, engines: dict, tmp_path, workers: int = 2, extra_env: dict[str, str] | None = None
) -> Iterator[tuple[str, subprocess.Popen]]:
    port, metrics_port = free_port(), free_port()
    env = {
        **os.environ, **engine_env(engines), **live_store.env(), "GATEWAY_PORT": str(port),
        "GATEWAY_METRICS_PORT": str(metrics_port), "GATEWAY_METRICS_HOST": "127.0.0.1",
        "GATEWAY_WORKERS": str(workers), "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"),
        "GATEWAY_STREAM_HEARTBEAT_SECONDS": "0.5", "GATEWAY_METRICS_TOKEN": METRICS_TOKEN,
        **(extra_env or {}),
    }  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "services.gateway:create_app()"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        wait_for_port(port, timeout=30)
        _answering(f"http://127.0.0.1:{port}/healthz", timeout=60)
        wait_for_port(metrics_port, timeout=30)
        proc.metrics_url = f"http://127.0.0.1:{metrics_port}/metrics"  # type: ignore[attr-defined]
        yield f"http://127.0.0.1:{port}", proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture()
def gunicorn(live_store, engines, tmp_path):
    with serve(live_store, engines, tmp_path) as served:
        yield served


def call(url: str, method: str = "GET", body: dict | None = None, headers: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    if data is not None:
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=10) as reply:
        return json.loads(reply.read())


def open_table(base: str) -> tuple[str, list[str]]:
    """A 2-seat table with both seats taken: its id and the seats' tokens."""
    tid = call(f"{base}/api/tables", "POST", {"game": GAME, "players": 2, "config": TWO})["table"]
    return tid, [call(f"{base}/api/tables/{tid}/seats/{s}", "POST", {})["token"] for s in (0, 1)]


def first_move(base: str, tid: str, tokens: list[str]) -> dict:
    """The seat to act makes its first legal move; the move's result."""
    seat = call(f"{base}/api/tables/{tid}/view")["to_act"][0]
    mine = call(f"{base}/api/tables/{tid}/view", headers=bearer(tokens[seat]))
    return call(
        f"{base}/api/tables/{tid}/actions", "POST",
        {"action": mine["legal_actions"][0]["id"], "version": mine["version"]}, bearer(tokens[seat]),
    )  # fmt: skip


def test_gunicorn_serves_streams_and_merges_metrics(gunicorn):
    base, proc = gunicorn
    assert call(f"{base}/healthz") == {"status": "ok"}
    tid, tokens = open_table(base)

    lines: list[str] = []
    opened, got_update = threading.Event(), threading.Event()

    def listen():
        with urllib.request.urlopen(f"{base}/api/tables/{tid}/events/stream", timeout=30) as stream:
            for raw in stream:
                opened.set()  # the view subscribed before its first line: no update can slip by
                lines.append(raw.decode())
                if raw.startswith(b"event: update"):
                    got_update.set()
                    return

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    assert opened.wait(10), "the stream opened"
    # other requests are served while the stream is open
    assert first_move(base, tid, tokens)["version"] == 1
    assert got_update.wait(10), "the stream carried the move"
    assert any(line.startswith("id: ") for line in lines)

    for _ in range(6):  # spread requests over both workers
        call(f"{base}/api/games")
    # /metrics: not for anyone on the public port; for the token, or on the internal port.
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{base}/metrics", timeout=10)
    assert refused.value.code == 401
    with urllib.request.urlopen(proc.metrics_url, timeout=10) as internal:
        assert b"cultists_gateway_request_duration_seconds" in internal.read()
    scrape = urllib.request.Request(f"{base}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    with urllib.request.urlopen(scrape, timeout=10) as reply:  # as Prometheus scrapes it
        metrics = reply.read().decode()
    assert (
        'cultists_gateway_request_duration_seconds_count{method="GET",route="/api/games",status="200"} 6.0'
        in metrics
    )
    assert f'cultists_gateway_engine_call_duration_seconds_count{{game="{GAME}",method="Apply"}}' in metrics
    # The gauge counts every table being played in this Redis (earlier test files leave
    # theirs): it says what the lobby says, this test's table among them.
    playing = call(f"{base}/api/tables?status=playing")["total"]
    assert playing >= 1
    assert f'cultists_gateway_open_tables{{status="playing"}} {float(playing)}' in metrics

    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0


def test_many_open_streams_do_not_hold_up_moves(gunicorn):
    """Watchers are cheap: far more streams than the old gthread setting had threads (32),
    and more per worker than redis-py's default pool of 100 connections (each stream holds
    its subscription), stay open; a move is still served, and every stream carries it."""
    base, _ = gunicorn
    tid, tokens = open_table(base)
    watchers = 240
    opened = threading.Barrier(watchers + 1, timeout=30)
    updated = [threading.Event() for _ in range(watchers)]

    def listen(i: int) -> None:
        with urllib.request.urlopen(f"{base}/api/tables/{tid}/events/stream", timeout=30) as stream:
            opened.wait()
            for raw in stream:
                if raw.startswith(b"event: update"):
                    updated[i].set()
                    return

    threads = [threading.Thread(target=listen, args=(i,), daemon=True) for i in range(watchers)]
    for thread in threads:
        thread.start()
    opened.wait()  # every stream is open and being served
    assert first_move(base, tid, tokens)["version"] == 1
    assert all(event.wait(15) for event in updated), "every stream carried the move"


def test_a_long_replay_does_not_stall_its_worker(live_store, engines, tmp_path):
    """Rebuilding a sweep game with thinking bots takes seconds of CPU; on the one worker
    there is, other requests are answered meanwhile (the rebuild runs beside the loop)."""
    with serve(live_store, engines, tmp_path, workers=1) as (base, _):
        url = f"{base}/api/replays?game={GAME}&players=2&seed=3&bots=ismcts:ms=25&config={quote(json.dumps(TWO))}"
        replay: dict = {}
        slow = threading.Thread(target=lambda: replay.update(call(url)), daemon=True)
        slow.start()
        answered = 0
        for _ in range(50):  # a few seconds at most: stops when the replay is there
            if not slow.is_alive():
                break
            assert call(f"{base}/api/games")["games"]
            answered += slow.is_alive()
        slow.join(120)
        assert replay["terminal"] and replay["steps"] > 10
        assert answered >= 3, "requests waited for the replay"


def test_status_reports_every_part_up(gunicorn, live_store, engines, table_worker, monkeypatch, capsys):
    from services.cli.main import main as cultists

    for name, value in engine_env(engines).items():
        monkeypatch.setenv(name, value)
    base, _ = gunicorn
    code = cultists(["status", "--redis-url", live_store.broker_url, "--gateway", base])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "DOWN" not in out and "gateway-tables" in out and "[tables, bots]" in out
    assert all(f"engine {game}" in out for game in engines)


def test_cultists_run_starts_the_gateway_under_gunicorn_with_a_tables_worker_and_beat():
    from services.cli.run_cmd import plan

    specs = {spec.name: spec.argv for spec in plan("redis://127.0.0.1:1/0")}
    gateway = specs["gateway"]
    assert gateway[1:3] == ["-m", "gunicorn"] and os.path.exists(gateway[gateway.index("-c") + 1])
    assert "services.gateway:create_app()" in gateway
    assert specs["tables"][specs["tables"].index("-Q") + 1] == "tables"
    assert "beat" in specs["beat"]


def _get_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as reply:
        return reply.read().decode()


_PANEL = re.compile(r'data-testid="panel"[^>]*?data-version="(\d+)"')
_WORDS = re.compile(r'data-testid="move-words" data-version="(\d+)" data-seat="(-?\d+)"[^>]*>([^<]*)<')


def test_live_panels_tell_their_own_version_during_bot_play(gunicorn, table_worker):
    """Issue 31's bug, over the production server: a live panel with data-version V told
    version V+1's move. Live panels are fetched as fast as they come while three bots and
    the test's own seat play a whole game; each one's last move is then compared with the table's record and event
    log: the seat that made version V, its action's label (public moves) or the log's
    lines of version V, never another version's."""
    base, _ = gunicorn
    game, config = "crazy_cultists", {"variant": "beast"}
    # Seat 0 is the test's own, moving at its own pace: a four-random-bots game could end
    # between two panels of a loaded machine, leaving no race to look at; here the three
    # bots answer each of its moves at once, while the panels are fetched.
    bot = {"kind": "bot", "bot": "random"}
    body = {"game": game, "seats": [{"kind": "human"}, bot, bot, bot], "config": config}
    # Both workers draw a panel first (templates compiled, modules loaded): on a loaded
    # machine a cold first panel took longer than the bots' whole game.
    idle = call(f"{base}/api/tables", "POST", {**body, "seats": [{"kind": "human"}] * 4})["table"]
    for _ in range(6):
        _get_text(f"{base}/tables/{idle}/panel")
    tid = call(f"{base}/api/tables", "POST", {**body, "decision_seconds": 60})["table"]
    mine = bearer(call(f"{base}/api/tables/{tid}/seats/0", "POST", {})["token"])
    # (version, words' version, seat, words) of every live panel fetched: four fetchers at
    # once, so panels are read while moves land (the race the bug lost).
    seen: list[tuple[int, int, int, str]] = []
    pages: list[str] = []
    done = threading.Event()

    def fetch() -> None:
        while not done.is_set():
            try:
                page = _get_text(f"{base}/tables/{tid}/panel")
            except OSError:  # a slow answer on a loaded machine: the fetcher keeps fetching
                continue
            version = int(_PANEL.search(page).group(1))
            found = _WORDS.search(page)
            if version > 0:
                pages.append(page)
                words = html.unescape(found.group(3)).strip() if found else ""
                seen.append(
                    (
                        version,
                        int(found.group(1)) if found else -1,
                        int(found.group(2)) if found else -1,
                        words,
                    )
                )

    fetchers = [threading.Thread(target=fetch, daemon=True) for _ in range(4)]
    for t in fetchers:
        t.start()
    deadline = time.monotonic() + 180
    try:
        while (view := call(f"{base}/api/tables/{tid}/view", headers=mine))["status"] != "finished":
            assert time.monotonic() < deadline, "the game finishes"
            if view["legal_actions"]:
                move = {"action": view["legal_actions"][0]["id"], "version": view["version"]}
                with contextlib.suppress(urllib.error.HTTPError):  # 409: a bot moved first
                    call(f"{base}/api/tables/{tid}/actions", "POST", move, mine)
            time.sleep(0.1)
    finally:
        done.set()
        for t in fetchers:
            t.join(timeout=30)
    assert len({v for v, *_ in seen}) >= 3, f"panels were fetched while the bots moved: {len(seen)}"
    names = json.loads(html.unescape(re.search(r'data-names="([^"]*)"', pages[-1]).group(1)))

    record = call(f"{base}/api/tables/{tid}/replay")
    log = call(f"{base}/api/tables/{tid}/events?limit=1000")["events"]
    spec = load_game(game)
    key = bytes.fromhex(record["deal_key"]) if record.get("deal_key") else None
    state = spec.new_state(spec.make_config(config), 4, record["seed"], key)
    labels: dict[int, str] = {}
    for version, (seat, action) in enumerate(record["actions"], start=1):
        labels[version] = state.action_label(action)
        state.apply(seat, action)
    for version, words_version, seat, words in seen:
        assert words_version == version, f"panel {version} tells the move of version {words_version}"
        assert seat == record["actions"][version - 1][0], f"panel {version} names the seat that moved"
        lines = [e["text"] for e in log if e.get("version") == version]
        told = words == sentence(labels[version], seat, names, -1) or words == "; ".join(lines)
        assert told or (not lines and words == f"{names[seat]} decided"), (
            f"panel {version} says {words!r}: version {version} is {labels[version]!r} / {lines}"
        )


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as children:
        return [int(child) for child in children.read().split()]


def _nice(pid: int, tid: int | None = None) -> int:
    """A thread's niceness (field 19 of /proc/<pid>/task/<tid>/stat)."""
    with open(f"/proc/{pid}/task/{tid or pid}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[16])  # fields after the name start at 3


def _sign_in(base: str, username: str, password: str) -> int:
    request = urllib.request.Request(
        f"{base}/api/sessions",
        data=json.dumps({"username": username, "password": password}).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_passwords_are_hashed_in_a_lower_priority_process_of_their_own(live_store, engines, tmp_path):
    """A worker hashes in a child process of its own session at a lower priority and on
    fewer cores than the worker may use, its own threads all at the usual one, so a flood of bad sign-ins leaves the cores to other
    requests (bench `logins`). Sign-ins are answered through it (201, 401), and a hashing
    process that was killed is started again by the next sign-in."""
    from services.platform.passwords import HASHING_NICE, HASHING_SLOTS, hashing_cores

    with serve(live_store, engines, tmp_path, workers=1) as (base, proc):
        (worker,) = _children(proc.pid)
        guest = call(f"{base}/api/players/guest", "POST", {"device": "d" * 20, "name": "nia"})
        password = "staple moon violet kettle"
        call(
            f"{base}/api/players/me/upgrade", "POST", {"username": "nia-nice", "password": password},
            {"X-Player-Token": guest["token"]},
        )  # fmt: skip
        assert _sign_in(base, "nia-nice", password) == 201
        assert _sign_in(base, "nia-nice", "not the password") == 401
        (hashing,) = _children(worker)
        assert _nice(hashing) == HASHING_NICE
        assert os.getsid(hashing) == hashing != os.getsid(worker)  # a session of its own
        # On HASHING_SLOTS of the worker's cores (Argon2's lane threads inherit it), so a
        # core is left to the event loops wherever there are two or more.
        cores = os.sched_getaffinity(worker)
        assert os.sched_getaffinity(hashing) == hashing_cores(cores)
        if len(cores) > HASHING_SLOTS:
            assert len(os.sched_getaffinity(hashing)) == HASHING_SLOTS < len(cores)
        threads = [int(tid) for tid in os.listdir(f"/proc/{worker}/task")]
        assert {_nice(worker, tid) for tid in threads} == {0}, "a worker thread runs below the loop"
        os.kill(hashing, signal.SIGKILL)
        assert _sign_in(base, "nia-nice", password) == 201
        (again,) = [child for child in _children(worker) if child != hashing]
        assert _nice(again) == HASHING_NICE


def test_sign_ins_past_the_waiting_bound_are_refused_busy_at_once(live_store, engines, tmp_path):
    """With the host's only hashing slot held elsewhere, HASHING_ADMITTED sign-ins of a
    worker wait for it and the next are answered 503 `busy` with Retry-After at once
    (not queued behind them); once the slot is free the waiting ones are checked (401)."""
    from services.gateway.hashing import HASHING_ADMITTED

    slots = tmp_path / "slots"
    slots.mkdir()
    held = os.open(slots / "slot-0", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(held, fcntl.LOCK_EX)  # the one slot, taken by "another worker"
    env = {
        "GATEWAY_HASHING_SLOTS": "1", "GATEWAY_HASHING_SLOTS_DIR": str(slots),
        "GATEWAY_RATE_LIMIT_ADDRESS": "", "GATEWAY_RATE_LIMIT_PLAYER": "", "GATEWAY_RATE_LIMIT_GUEST": "",
    }  # fmt: skip
    answers: dict[int, tuple[int, str | None]] = {}

    def sign_in(n: int) -> None:
        body = json.dumps({"username": f"nobody-{n}", "password": "not the password"}).encode()
        request = urllib.request.Request(
            f"{base}/api/sessions", data=body, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=120) as reply:
                answers[n] = (reply.status, None)
        except urllib.error.HTTPError as exc:
            code = json.loads(exc.read())["error"]["code"]
            answers[n] = (exc.code, exc.headers.get("Retry-After") and code)

    try:
        with serve(live_store, engines, tmp_path, workers=1, extra_env=env) as (base, _proc):
            clients: list[threading.Thread] = []
            # One at a time until one is refused: each that is still waiting after 3 s was
            # admitted (the slot is held), and a refusal comes back at once.
            while not any(status == 503 for status, _ in answers.values()):
                assert len(clients) <= HASHING_ADMITTED + 5, f"never refused: {answers}"
                clients.append(threading.Thread(target=sign_in, args=(len(clients),)))
                clients[-1].start()
                clients[-1].join(timeout=3.0)
            fcntl.flock(held, fcntl.LOCK_UN)
            for client in clients:
                client.join(timeout=120)  # each waiting one is one Argon2 check once freed
            statuses = sorted(answers.values())
            assert len(statuses) == len(clients), answers
            assert [a for a in statuses if a[0] == 401] == [(401, None)] * HASHING_ADMITTED, answers
            assert {a for a in statuses if a[0] != 401} == {(503, "busy")}, answers
    finally:
        os.close(held)
