"""What the stack tests do to a running `cultists run`: HTTP helpers, play, process lookups.

Kept apart from the tests so that test_stack.py reads as the story it checks.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.run_ports import free_run_ports

GAMES = ("crazy_cultists", "trash_cult", "tricky_cultists")
SHORT_GAMES = {  # bot-only games that end in seconds
    "crazy_cultists": {"variant": "beast"},
    "trash_cult": {"max_turns": 30},
    "tricky_cultists": {"rounds": 1},
}


def http(url: str, body: dict | None = None, timeout: float = 10, headers: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        url, data=data, headers={"Content-Type": "application/json", **(headers or {})}
    )
    with urllib.request.urlopen(request, timeout=timeout) as reply:
        return json.loads(reply.read())


# The operator `cultists run` makes from CULTISTS_OPERATOR (docs/cli.md): sweeps over HTTP
# are a designer's or operator's (docs/security.md).
OPERATOR = ("stack-operator", "stack operator passphrase 42")
OPERATOR_ENV = {"CULTISTS_OPERATOR": ":".join(OPERATOR)}
_staff: dict[str, dict[str, str]] = {}


def staff_headers(gateway: str) -> dict[str, str]:
    """A session of the run's operator on `gateway` (signed in once per gateway)."""
    if gateway not in _staff:
        session = http(f"{gateway}/api/sessions", {"username": OPERATOR[0], "password": OPERATOR[1]})
        _staff[gateway] = {"X-Player-Token": session["token"]}
    return _staff[gateway]


def wait(predicate, timeout: float, what: str, interval: float = 0.2):
    """Poll `predicate` every `interval` seconds (short: a part that is up is seen at once;
    what a poll costs is the predicate's own time) until it is true or `timeout` passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = predicate()
        if result:
            return result
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what}")


def _seat_view(gateway: str, table: str, token: str) -> dict | None:
    """The seat's view once it must decide (bots move first where they sit first)."""
    request = urllib.request.Request(
        f"{gateway}/api/tables/{table}/view", headers={"Authorization": f"Bearer {token}"}
    )
    with urllib.request.urlopen(request, timeout=10) as reply:
        view = json.loads(reply.read())
    return view if view["legal_actions"] else None


def _post_status(url: str, body: dict, token: str) -> int:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status
    except urllib.error.HTTPError as exc:
        return exc.code


def _ticket(gateway: str, ticket: dict) -> dict:
    request = urllib.request.Request(
        f"{gateway}/api/matchmaking/tickets/{ticket['ticket']}",
        headers={"Authorization": f"Bearer {ticket['token']}", **ticket.get("session", {})},
    )
    with urllib.request.urlopen(request, timeout=10) as reply:
        return json.loads(reply.read())


def descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def engine_pid(run_pid: int, game: str) -> int:
    """The process of `game`'s engine among the run's children (`cultists serve <game>`)."""
    for pid in descendants(run_pid):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and game.encode() in argv:
            return pid
    raise AssertionError(f"no engine process for {game} under {run_pid}")


@dataclass
class Stack:
    run: subprocess.Popen
    env: dict[str, str]
    ports: dict[str, str]
    facts: dict
    log: Path

    @property
    def gateway(self) -> str:
        return self.facts["gateway_url"]

    @property
    def prometheus(self) -> str:
        return self.facts["prometheus_url"]

    def scraped(self) -> list[str]:
        """Every metrics address the run's Prometheus should scrape."""
        m = self.ports
        return [
            *(f"127.0.0.1:{m[f'ENGINE_METRICS_PORT_{g.upper()}']}" for g in GAMES),
            f"127.0.0.1:{m['GATEWAY_PORT']}",
            f"127.0.0.1:{m['WORKER_METRICS_PORT_SWEEPS']}",
            f"127.0.0.1:{m['WORKER_METRICS_PORT_TABLES']}",
        ]

    def series(self, query: str) -> list[dict]:
        url = f"{self.prometheus}/api/v1/query?" + urllib.parse.urlencode({"query": query})
        return http(url)["data"]["result"]


@contextmanager
def running_stack(home: Path) -> Iterator[Stack]:
    """`cultists run` on free ports, its Prometheus scraping and evaluating every second and
    holding alerts for 2 s instead of minutes; killed on the way out if still running."""
    ports = free_run_ports()
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "PROMETHEUS_URL")}
    env |= ports | OPERATOR_ENV
    env |= {"CULTISTS_DATA": str(home / "var"), "PROMETHEUS_SCRAPE_INTERVAL": "1s",
            "PROMETHEUS_EVALUATION_INTERVAL": "1s", "PROMETHEUS_ALERT_FOR": "2s"}  # fmt: skip
    log_path = home / "run.log"
    log = open(log_path, "wb")  # noqa: SIM115 - closed below
    run = subprocess.Popen(
        [sys.executable, "-m", "services.cli.main", "run"],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        run_file = home / "var" / "run.json"
        wait(lambda: run_file.exists() or run.poll() is not None, 120, "cultists run to come up")
        assert run.poll() is None, log_path.read_text()[-3000:]
        yield Stack(run, env, ports, json.loads(run_file.read_text()), log_path)
    finally:
        _stop(run)
        log.close()


def _stop(run: subprocess.Popen) -> None:
    """Stop a run the tests did not stop themselves (a failure, a -k selection). Its children
    sit in sessions of their own, so a signal to the run's group never reaches them: ask the
    run to stop them (Ctrl-C), then kill whatever of them is left, by pid."""
    if run.poll() is not None:
        return
    children = descendants(run.pid)
    os.killpg(run.pid, signal.SIGINT)
    try:
        run.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait(timeout=30)
    for pid in children:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def _up(stack: Stack) -> dict[str, str]:
    return {s["metric"]["instance"]: s["value"][1] for s in stack.series("up")}


def _bot_tables(gateway: str) -> list[str]:
    """One short all-bot table per game; their ids."""
    tables = []
    for game in GAMES:
        players = http(f"{gateway}/api/games/{game}")["default_players"]
        body = {"game": game, "players": players, "config": SHORT_GAMES[game],
                "seats": [{"kind": "bot", "bot": "random"}] * players}  # fmt: skip
        tables.append(http(f"{gateway}/api/tables", body)["table"])
    return tables


def wait_finished(gateway: str, tables: list[str]) -> None:
    for table in tables:
        wait(lambda t=table: http(f"{gateway}/api/tables/{t}")["status"] == "finished", 120, f"table {table}")


def play(stack: Stack) -> None:
    """Some of everything the dashboards show: bot games of every game to the end, one
    action the engine refuses, a matchmaking match, and two tiny nightly balance suites
    (chunks and the drift gauges), and an ad hoc sweep held until its progress is scraped."""
    gateway = stack.gateway
    # A rate needs a counter seen before and after it grew: Prometheus first sees every part,
    # then one bot game per game is played, and (once Prometheus has counted those moves)
    # another, so each engine's latency has points whatever the machine's load.
    wait(lambda: all(u == "1" for u in _up(stack).values()) and len(_up(stack)) >= len(stack.scraped()),
         120, "Prometheus to scrape every part")  # fmt: skip
    tables = _bot_tables(gateway)
    wait_finished(gateway, tables)
    seen = 'sum by (game) (cultists_engine_rpc_duration_seconds_count{method="Apply"})'
    wait(lambda: len(stack.series(seen)) == len(GAMES), 60, "Prometheus to count every game's moves")
    tables = _bot_tables(gateway)

    # A human seat sends an action the engine refuses: the gateway counts the engine error.
    human = http(f"{gateway}/api/tables", {"game": "crazy_cultists", "players": 2,
                                          "config": {"two_players": True},  # CC-2's 2-player variant
                                          "seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}]})  # fmt: skip
    token = http(f"{gateway}/api/tables/{human['table']}/seats/0", {})["token"]
    version = wait(lambda: _seat_view(gateway, human["table"], token), 60, "the human seat's turn")["version"]
    refused = _post_status(
        f"{gateway}/api/tables/{human['table']}/actions", {"action": 99999, "version": version}, token
    )
    assert refused == 400

    # Two players queue for the same table size: matched at once (time to match).
    # Matchmaking is rated: each player signs in as a guest first (docs/security.md).
    tickets = []
    for name in ("ann", "bob"):
        guest = http(
            f"{gateway}/api/players/guest", {"device": f"stack-{name}-{time.time_ns()}", "name": name}
        )
        session = {"X-Player-Token": guest["token"]}
        body = {"game": "trash_cult", "players": 2, "player": name}
        tickets.append(
            {**http(f"{gateway}/api/matchmaking/tickets", body, headers=session), "session": session}
        )
    for ticket in tickets:
        wait(lambda t=ticket: _ticket(gateway, t)["status"] == "matched", 60, "the matchmaking pair")

    wait_finished(gateway, tables)

    from celery import Celery

    celery = Celery("stack-test", broker=stack.facts["redis_url"])
    for day in (1, 2):
        before = len(http(f"{gateway}/api/sweeps?limit=100", headers=staff_headers(gateway))["sweeps"])
        celery.send_task(
            "workers.sweeps.tasks.run_nightly", kwargs={"games": 2, "day": day, "poll": 1.0}, queue="sweeps"
        )

        def nightly_done(before=before) -> bool:
            sweeps = http(f"{gateway}/api/sweeps?limit=100", headers=staff_headers(gateway))["sweeps"]
            return len(sweeps) >= before + len(GAMES) and all(s["status"] == "done" for s in sweeps)

        wait(nightly_done, 300, f"night {day}'s suite")
    celery.close()

    # Progress is a gauge of active sweeps only, and a two-game night can start and end
    # between two scrapes. A sweep too long to finish (heuristic bots: minutes) is held until
    # Prometheus has scraped its progress for ten seconds, then cancelled: the panel keeps
    # those points for the range it shows. Seen once was not enough: a series that lives one
    # or two scrapes can fall between two of the panel's 3 s steps (15 minutes, 300 points).
    # 20,000 four-player heuristic games outlast the scrapes by minutes; the request plans
    # 400 chunks, which a loaded machine does well inside its 60 s.
    long = http(f"{gateway}/api/sweeps", {"game": "crazy_cultists", "seed": 5, "games": 20_000, "chunk": 50,
                                          "players": [4], "lineups": ["heuristic"]},
                timeout=60, headers=staff_headers(gateway))["id"]  # fmt: skip
    seen = f'count_over_time(cultists_sweep_progress_ratio{{sweep="{long}"}}[1m]) >= 10'
    wait(lambda: stack.series(seen), 120, "Prometheus to scrape an active sweep's progress for 10 s")
    http(f"{gateway}/api/sweeps/{long}/cancel", {}, headers=staff_headers(gateway))
