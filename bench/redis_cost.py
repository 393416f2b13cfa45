"""Redis commands and Redis CPU per human move, on one Redis and on a 3-master cluster.

Issue 28 item 3: a move must cost at most 8 Redis commands, those run inside Lua included,
and at most 0.08 ms of Redis CPU; item 4: a live table at most 8 KB of Redis (MEMORY
USAGE of its record, log and actions, SAMPLES 0), read after every move of every table,
so the target is checked at each table's largest (near its end, a game's bytes grow with
its log and moves), with the mean over the tables at the end of the run beside it. Measured from Redis's own accounting over a known number
of moves: `CONFIG RESETSTAT`, then moves, then `INFO commandstats` (calls and usec per
command, Lua's inner calls counted separately from the EVALSHA that ran them) and `INFO
cpu` (the server process's CPU, summed over the cluster's masters).

A script's `usec` in commandstats already holds the time of the commands it ran, and those
commands are counted again under their own names, so adding every command's `usec` counted
a move's Lua time twice. The Redis CPU per move is the time of the commands the gateway
sent (an EVALSHA with everything inside it, an HGETALL, ...): the gateway's client is
tapped to count what it sends by name, and the rest of each name's calls (those run
inside Lua) are left out of the time, at that name's mean time per call. The commands
counted per move are all of them, those inside Lua included, as the target says.

The moves are real: the gateway app (Flask's test client, no HTTP server: the commands
are the same), real engines over gRPC, tables of humans only (no bot task, so no Celery
traffic), each move sent with the legal actions the last move's answer carried (one
request per move, as a client does). Rate limits are off in the first row (they are
counters of their own, per address and player: the third row shows what they add).
"""

from __future__ import annotations

import random
import time
from typing import Any

import redis

from services.engines.core.server import start_engine
from services.engines.registry import available_games
from services.gateway import create_app
from services.platform.keys import actions_key, log_key, table_key
from services.platform.settings import Settings
from services.runtime.embedded_cluster import start_cluster
from services.runtime.embedded_redis import start_redis

GAME = "crazy_cultists"
TABLES = 20
MOVES = 2000
TARGET_COMMANDS = 8.0
TARGET_CPU_MS = 0.08


def _nodes(store: Any) -> list[redis.Redis]:
    if hasattr(store, "nodes"):
        return [store.node_client(i) for i in range(len(store.nodes))]
    return [redis.Redis.from_url(store.url)]


# The readings' own commands, never counted as a move's.
READING = ("info", "config|resetstat", "config")


def _stats(nodes: list[redis.Redis]) -> tuple[dict[str, int], dict[str, float]]:
    """Calls and usec per command, over every node."""
    calls: dict[str, int] = {}
    usec: dict[str, float] = {}
    for node in nodes:
        for name, row in node.info("commandstats").items():
            command = name.removeprefix("cmdstat_")
            if command in READING:
                continue
            calls[command] = calls.get(command, 0) + int(row["calls"])
            usec[command] = usec.get(command, 0.0) + float(row["usec"])
    return calls, usec


def _tap(client: Any) -> dict[str, int]:
    """Count, by name, the commands `client` sends itself (not those its scripts run)."""
    sent: dict[str, int] = {}
    send = client.execute_command

    def counted(*args: Any, **options: Any) -> Any:
        name = str(args[0]).lower()
        sent[name] = sent.get(name, 0) + 1
        return send(*args, **options)

    client.execute_command = counted
    return sent


def _cpu(nodes: list[redis.Redis]) -> float:
    return sum(float(i["used_cpu_user"]) + float(i["used_cpu_sys"]) for i in (n.info("cpu") for n in nodes))


def _measure(store: Any, engines: dict, limits: bool) -> dict[str, Any]:
    settings = Settings(
        redis_url=store.url,
        redis_cluster=hasattr(store, "nodes"),
        broker_url=store.broker_url,
        engine_addresses={g: f"127.0.0.1:{e.port}" for g, e in engines.items()},
        # The limits' counters, at the default's two windows but high enough that this
        # one client is never refused (what is counted is their commands).
        rate_limit_address="100000/second;1000000/minute" if limits else "",
        rate_limit_player="100000/second;1000000/minute" if limits else "",
        rate_limit_guest="100000/minute" if limits else "",
        max_waiting_tables=0,  # one client opens every table
        dispatch_tasks=False,
    )
    app = create_app(settings)
    client = app.test_client()
    pick = random.Random(5)
    seats: list[tuple[str, list[str], dict]] = []
    for _ in range(TABLES):
        tid = client.post("/api/tables", json={"game": GAME, "players": 4}).get_json()["table"]
        tokens = [client.post(f"/api/tables/{tid}/seats/{s}").get_json()["token"] for s in range(4)]
        seat = client.get(f"/api/tables/{tid}").get_json()["to_act"][0]
        legal = client.get(f"/api/tables/{tid}/legal", headers={"Authorization": f"Bearer {tokens[seat]}"})
        seats.append((tid, tokens, legal.get_json()))
    nodes = _nodes(store)
    sent = _tap(app.extensions["cultists"].redis)
    for node in nodes:
        node.config_resetstat()
    moves = 0
    largest: dict[str, Any] = {"bytes": 0}
    cpu = _cpu(nodes)
    started = time.perf_counter()
    while moves < MOVES:
        for i, (tid, tokens, legal) in enumerate(seats):
            if moves >= MOVES:
                break
            if not legal["legal_actions"]:
                # Another seat must decide: what its own last answer (or /legal) said.
                table = client.get(f"/api/tables/{tid}").get_json()
                if table["status"] != "playing":
                    new = client.post("/api/tables", json={"game": GAME, "players": 4}).get_json()["table"]
                    tokens = [
                        client.post(f"/api/tables/{new}/seats/{s}").get_json()["token"] for s in range(4)
                    ]
                    tid = new
                    table = client.get(f"/api/tables/{tid}").get_json()
                seat = table["to_act"][0]
                legal = client.get(
                    f"/api/tables/{tid}/legal", headers={"Authorization": f"Bearer {tokens[seat]}"}
                ).get_json()
                seats[i] = (tid, tokens, legal)
                continue
            seat = legal["seat"]
            body = {"action": pick.choice(legal["legal_actions"])["id"], "version": legal["version"]}
            before = _stats(nodes)  # around the move only: the lookups above are not a move's
            sent_before = dict(sent)
            reply = client.post(
                f"/api/tables/{tid}/actions", json=body, headers={"Authorization": f"Bearer {tokens[seat]}"}
            )
            sent_after = dict(sent)
            after = _stats(nodes)
            assert reply.status_code == 200, reply.get_json()
            seats[i] = (tid, tokens, reply.get_json())
            moves += 1
            _add(before, after, {k: n - sent_before.get(k, 0) for k, n in sent_after.items()})
            # Outside the move's readings: the table's bytes at this version.
            largest = max(
                largest, _table_bytes(app.extensions["cultists"].redis, tid), key=lambda r: r["bytes"]
            )
    seconds = time.perf_counter() - started
    server_cpu = _cpu(nodes) - cpu
    platform = app.extensions["cultists"]
    # SAMPLES 0: every field and list entry measured (the default samples 5 of them and
    # scales up, which swings by KBs where one field is the state and the rest are tiny).
    memory = [_table_bytes(platform.redis, t)["bytes"] for t, _, _ in seats]
    # Then every table of the run to its end (no readings: its bytes only), so the largest
    # is a table's largest, which comes near its end, not wherever the run stopped.
    largest = max(largest, _play_out(client, platform.redis, seats, pick), key=lambda r: r["bytes"])
    platform.close()
    return {
        **_summary(moves, seconds, server_cpu),
        "live_table_bytes_mean": round(sum(memory) / len(memory)),
        # The largest any table was at any version (its keys' bytes, which of them, its moves).
        "live_table_bytes_max": largest["bytes"],
        "live_table_largest": largest,
    }


def _play_out(client: Any, store: Any, seats: list[tuple[str, list[str], dict]], pick: random.Random) -> dict:
    """Play each table on to its end as the run played it; the largest any was meanwhile."""
    largest: dict[str, Any] = {"bytes": 0}
    for tid, tokens, legal in seats:
        while True:
            if not legal["legal_actions"]:
                table = client.get(f"/api/tables/{tid}").get_json()
                if table["status"] != "playing":
                    break
                token = tokens[table["to_act"][0]]
                legal = client.get(f"/api/tables/{tid}/legal", headers={"Authorization": f"Bearer {token}"})
                legal = legal.get_json()
                continue
            body = {"action": pick.choice(legal["legal_actions"])["id"], "version": legal["version"]}
            reply = client.post(
                f"/api/tables/{tid}/actions",
                json=body,
                headers={"Authorization": f"Bearer {tokens[legal['seat']]}"},
            )
            assert reply.status_code == 200, reply.get_json()
            legal = reply.get_json()
            largest = max(largest, _table_bytes(store, tid), key=lambda r: r["bytes"])
    return largest


def _table_bytes(client: Any, table_id: str) -> dict[str, Any]:
    """A table's Redis bytes now: its record, log and actions keys (SAMPLES 0: every
    field and list entry measured; the default samples 5 of them and scales up, which
    swings by KBs where one field is the state and the rest are tiny)."""
    keys = {"record": table_key(table_id), "log": log_key(table_id), "actions": actions_key(table_id)}
    parts = {name: client.memory_usage(key, samples=0) or 0 for name, key in keys.items()}
    version = client.hget(table_key(table_id), "version")
    return {"bytes": sum(parts.values()), **parts, "version": int(version or 0)}


_totals: dict[str, Any] = {}


def _add(
    before: tuple[dict[str, int], dict[str, float]],
    after: tuple[dict[str, int], dict[str, float]],
    sent: dict[str, int],
) -> None:
    """One move's share: the difference of the readings around it; its time, only that of
    the commands the gateway sent (module docstring: a script's time holds its inner ones)."""
    calls0, usec0 = before
    calls1, usec1 = after
    counted = _totals.setdefault("calls", {})
    for command, n in calls1.items():
        calls = n - calls0.get(command, 0)
        counted[command] = counted.get(command, 0) + calls
        if calls:
            direct = min(calls, sent.get(command, 0))
            spent = usec1.get(command, 0.0) - usec0.get(command, 0.0)
            _totals["usec"] = _totals.get("usec", 0.0) + spent * direct / calls
            # What Redis's own sum says (every name's time, Lua's inner calls twice).
            _totals["usec_all"] = _totals.get("usec_all", 0.0) + spent
            by_name = _totals.setdefault("usec_by", {})
            by_name[command] = by_name.get(command, 0.0) + spent


def _summary(moves: int, seconds: float, server_cpu: float) -> dict[str, Any]:
    calls = {k: v for k, v in _totals.pop("calls", {}).items() if v}
    usec = _totals.pop("usec", 0.0)
    usec_all = _totals.pop("usec_all", 0.0)
    usec_by = _totals.pop("usec_by", {})
    total = sum(calls.values())
    return {
        "moves": moves,
        "commands_per_move": round(total / moves, 2),
        "by_command_per_move": {k: round(v / moves, 2) for k, v in sorted(calls.items())},
        # Time Redis spent executing the move's commands (commandstats' usec): its CPU for them.
        "redis_cpu_ms_per_move": round(usec / moves / 1000, 4),
        # Every command name's usec added up, as this bench once reported it: a script's
        # inner commands counted twice (inside their EVALSHA's time and under their names).
        "usec_sum_all_names_ms_per_move": round(usec_all / moves / 1000, 4),
        # Each name's time per move (an EVALSHA's holds those of the commands it ran).
        "usec_per_move_by_command": {k: round(v / moves, 2) for k, v in sorted(usec_by.items()) if v},
        # The server process's whole CPU over the run, per move: also the lookups between
        # moves, the readings and the event loop, so an upper bound.
        "server_cpu_ms_per_move_upper_bound": round(1000 * server_cpu / moves, 4),
        "seconds": round(seconds, 1),
    }


class _Single:
    def __init__(self) -> None:
        self.server = start_redis()
        self.url = self.broker_url = self.server.url

    def stop(self) -> None:
        self.server.stop()


class _Cluster:
    def __init__(self) -> None:
        self.cluster = start_cluster(3)
        self.broker = start_redis()
        self.url, self.broker_url = self.cluster.url, self.broker.url
        self.nodes = self.cluster.nodes

    def node_client(self, index: int) -> redis.Redis:
        return self.cluster.node_client(index)

    def stop(self) -> None:
        self.cluster.stop()
        self.broker.stop()


def run() -> dict[str, Any]:
    engines = {g: start_engine(g) for g in available_games()}
    out: dict[str, Any] = {"game": GAME, "players": 4, "tables": TABLES}
    try:
        for name, make in (("single", _Single), ("cluster", _Cluster)):
            store = make()
            try:
                out[name] = _measure(store, engines, limits=False)
                if name == "single":
                    out["single_with_rate_limits"] = _measure(store, engines, limits=True)
            finally:
                store.stop()
    finally:
        for engine in engines.values():
            engine.stop(grace=0)
    out["targets"] = (
        {
            f"live table <= 8 KB of Redis at its largest ({kind})": out[kind]["live_table_bytes_max"] <= 8192
            for kind in ("single", "cluster")
        }
        | {
            f"commands per move <= {TARGET_COMMANDS:g} ({kind})": out[kind]["commands_per_move"]
            <= TARGET_COMMANDS
            for kind in ("single", "cluster")
        }
        | {
            f"Redis CPU per move <= {TARGET_CPU_MS} ms ({kind})": out[kind]["redis_cpu_ms_per_move"]
            <= TARGET_CPU_MS
            for kind in ("single", "cluster")
        }
    )
    for kind in ("single", "cluster", "single_with_rate_limits"):
        row = out[kind]
        print(f"  {kind:<24} {row['commands_per_move']:>5} commands/move  {row['redis_cpu_ms_per_move']:.4f} ms CPU/move"
              f"  {row['by_command_per_move']}")  # fmt: skip
    return out
