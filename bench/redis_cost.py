"""Redis commands and Redis CPU per human move, on one Redis and on a 3-master cluster.

Issue 28 item 3: a move must cost at most 8 Redis commands, those run inside Lua included,
and at most 0.08 ms of Redis CPU; item 4: a live table at most 8 KB of Redis (MEMORY
USAGE of its record, log and actions, SAMPLES 0), read after every move of every table,
so the target is checked at each table's largest (near its end, a game's bytes grow with
its log and moves), with the mean over the tables at the end of the run beside it.
Measured from Redis's own accounting around each of a known number of moves: `INFO
commandstats` before and after it (calls and usec per command, Lua's inner calls counted
separately from the EVALSHA that ran them) and `INFO cpu` (the server process's CPU,
summed over the cluster's masters).

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

commandstats' usec is wall time inside each call, so a loaded machine (other processes
on Redis's core, its caches cold between one client's requests) inflates it, and a rare
call preempted mid-way adds milliseconds to a mean of microseconds. So the moves are
played in ROUNDS rounds and the figure is the median of the rounds' means, with each
round's mean, the median move's and the load average beside it. The three measurements
(one Redis, the cluster, one Redis with the rate limits) take their rounds in turn, round
1 of each, then round 2 of each, ..., so a load that comes and goes during the run falls
on all of them alike, where one measurement after another put the load of one stretch of
the run on one of them only (2026-12-05: the cluster's figure 1.6 times the single's
when measured after it with the load rising; 1.2 times when their rounds alternated).
And for comparison a
run of QUIET_MOVES moves with no readings between them, timed by the server processes'
own CPU (/proc/<pid>/schedstat: the main thread's nanoseconds on a CPU, so time spent
preempted is not counted; it does count everything else Redis did, the lookups between
moves, reading and writing sockets, its timers), an upper bound of another kind.

The largest live table is measured for every game: the run's tables are Crazy Cultists,
and PER_GAME tables of each other game are played to their end on the one Redis, read
after every move.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any, cast

import redis

from bench.load import load_average
from services.engines.core.server import start_engine
from services.engines.registry import available_games
from services.gateway import create_app
from services.platform.keys import actions_key, log_chunks_key, log_key, table_key
from services.platform.settings import Settings
from services.runtime.embedded_cluster import start_cluster
from services.runtime.embedded_redis import start_redis

GAME = "crazy_cultists"
TABLES = 20
MOVES = 2000
ROUNDS = 5
QUIET_MOVES = 1000
PER_GAME = 2
TARGET_COMMANDS = 8.0
TARGET_CPU_MS = 0.08
TARGET_TABLE_BYTES = 8192


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
        for name, row in cast("dict[str, Any]", node.info("commandstats")).items():
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


def _reference(nodes: list[redis.Redis], calls: int = 2000) -> dict[str, float]:
    """How fast this Redis runs now: usec per call of a PING and of an HGETALL of a small
    hash, in a tight loop (tens of nanoseconds' work each on a quiet core), so runs on a
    quiet and a loaded machine can be told apart."""
    node = nodes[0]
    for i in range(1000):  # a key this node holds (a cluster's node answers MOVED for others)
        key = f"bench:reference:{i}"
        try:
            node.hset(key, mapping={f"f{j}": "v" * 20 for j in range(40)})
            break
        except redis.ResponseError:
            continue
    node.config_resetstat()
    for _ in range(calls):
        node.ping()
        node.hgetall(key)
    stats = cast("dict[str, Any]", node.info("commandstats"))
    node.delete(key)
    return {name: float(stats[f"cmdstat_{name}"]["usec_per_call"]) for name in ("ping", "hgetall")}


def _thread_cpu(pids: list[int]) -> float:
    """Seconds the servers' main threads have been on a CPU (schedstat's first field)."""
    return sum(int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) for pid in pids) / 1e9


def _cpu(nodes: list[redis.Redis]) -> float:
    return sum(
        float(i["used_cpu_user"]) + float(i["used_cpu_sys"])
        for i in (cast("dict[str, Any]", n.info("cpu")) for n in nodes)
    )


Seats = tuple[str, list[str], dict]  # a table's id, its seats' tokens, the last /legal answer


def _open(client: Any, game: str) -> Seats:
    tid = client.post("/api/tables", json={"game": game, "players": 4}).get_json()["table"]
    tokens = [client.post(f"/api/tables/{tid}/seats/{s}").get_json()["token"] for s in range(4)]
    return tid, tokens, {"legal_actions": []}


def _ready(client: Any, entry: Seats, game: str, renew: bool = True) -> Seats | None:
    """The table with a seat to move and its legal actions: the lookups a client makes when
    the last answer was not its turn (a finished table: a new one, or None)."""
    tid, tokens, legal = entry
    while not legal["legal_actions"]:
        table = client.get(f"/api/tables/{tid}").get_json()
        if table["status"] != "playing":
            if not renew:
                return None
            tid, tokens, legal = _open(client, game)
            continue
        token = tokens[table["to_act"][0]]
        legal = client.get(
            f"/api/tables/{tid}/legal", headers={"Authorization": f"Bearer {token}"}
        ).get_json()
    return tid, tokens, legal


def _move(client: Any, entry: Seats, pick: random.Random) -> Seats:
    tid, tokens, legal = entry
    body = {"action": pick.choice(legal["legal_actions"])["id"], "version": legal["version"]}
    reply = client.post(
        f"/api/tables/{tid}/actions", json=body, headers={"Authorization": f"Bearer {tokens[legal['seat']]}"}
    )
    assert reply.status_code == 200, reply.get_json()
    return tid, tokens, reply.get_json()


def _measure(store: Any, engines: dict, limits: bool) -> Generator[None, None, dict[str, Any]]:
    """One store's measurement, as a generator the driver (`run`) steps: set up, then one
    step per round of MOVES // ROUNDS moves, the rounds of every measurement taken in turn so
    each sees the machine as the others do (module docstring), then the rest, its result
    the generator's return value."""
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
    platform = app.extensions["cultists"]
    pick = random.Random(5)
    seats = [_open(client, GAME) for _ in range(TABLES)]
    nodes = _nodes(store)
    sent = _tap(platform.redis)
    reference = _reference(nodes)
    moves = 0
    largest: dict[str, Any] = {"bytes": 0}
    totals: dict[str, Any] = {}
    server_cpu = seconds = 0.0
    yield
    load = load_average()
    size = MOVES // ROUNDS
    for _ in range(ROUNDS):
        cpu = _cpu(nodes)  # per round: another measurement's rounds may share this server
        started = time.perf_counter()
        for turn in range(size):
            i = turn % len(seats)
            # The lookups first, outside the readings: they are not a move's.
            entry = _ready(client, seats[i], GAME)
            assert entry is not None
            before = _stats(nodes)  # around the move only
            sent_before = dict(sent)
            seats[i] = _move(client, entry, pick)
            sent_after = dict(sent)
            after = _stats(nodes)
            moves += 1
            _add(totals, before, after, {k: n - sent_before.get(k, 0) for k, n in sent_after.items()})
            # Outside the move's readings: the table's bytes at this version.
            largest = max(largest, _table_bytes(platform.redis, seats[i][0]), key=lambda r: r["bytes"])
        seconds += time.perf_counter() - started
        server_cpu += _cpu(nodes) - cpu
        yield
    quiet = _quiet(client, seats, nodes, store.pids, pick)
    # SAMPLES 0: every field and list entry measured (the default samples 5 of them and
    # scales up, which swings by KBs where one field is the state and the rest are tiny).
    memory = [_table_bytes(platform.redis, t)["bytes"] for t, _, _ in seats]
    # Then every table of the run to its end (no readings: its bytes only), so the largest
    # is a table's largest, which comes near its end, not wherever the run stopped.
    largest = max(largest, _play_out(client, platform.redis, seats, pick), key=lambda r: r["bytes"])
    largest["game"] = GAME
    by_game = {GAME: largest["bytes"]}
    for game in available_games() if not limits else []:
        found = {**_largest_of(client, platform.redis, game, pick), "game": game} if game != GAME else largest
        by_game[game] = found["bytes"]
        largest = max(largest, found, key=lambda r: r["bytes"])
    platform.close()
    return {
        **_summary(totals, moves, seconds, server_cpu),
        **quiet,
        "load_average_at_start": load,
        "reference_usec_per_call": reference,
        "load_average_after_moves": load_average(),
        "live_table_bytes_mean": round(sum(memory) / len(memory)),
        # The largest any table of any game was at any version (its keys' bytes, which of
        # them, its game and version).
        "live_table_bytes_max": largest["bytes"],
        "live_table_largest": largest,
        # The largest table of each game, any version (the other games: PER_GAME tables each).
        "live_table_bytes_max_by_game": by_game,
    }


def _quiet(
    client: Any, seats: list[Seats], nodes: list[redis.Redis], pids: list[int], pick: random.Random
) -> dict:
    """QUIET_MOVES moves with no reading between them, timed by the servers' own CPU."""
    calls0, _ = _stats(nodes)
    cpu0 = _thread_cpu(pids)
    moves = 0
    while moves < QUIET_MOVES:
        for i in range(len(seats)):
            entry = _ready(client, seats[i], GAME)
            assert entry is not None
            seats[i] = _move(client, entry, pick)
            moves += 1
    cpu = _thread_cpu(pids) - cpu0
    calls1, _ = _stats(nodes)
    calls = sum(calls1.values()) - sum(calls0.values())  # (_stats leaves the readings out)
    return {
        # The servers' main threads' CPU per move: the move's commands and the lookups
        # between moves, with Redis's socket and timer work, so an upper bound, in CPU time
        # (not wall time: a preempted command costs only what it ran).
        "process_cpu_ms_per_move": round(1000 * cpu / moves, 4),
        "process_cpu_commands_per_move": round(calls / moves, 2),
        "process_cpu_moves": moves,
    }


def _play_out(client: Any, store: Any, seats: list[Seats], pick: random.Random) -> dict:
    """Play each table on to its end as the run played it; the largest any was meanwhile."""
    largest: dict[str, Any] = {"bytes": 0}
    for entry in seats:
        while (ready := _ready(client, entry, GAME, renew=False)) is not None:
            entry = _move(client, ready, pick)
            largest = max(largest, _table_bytes(store, entry[0]), key=lambda r: r["bytes"])
    return largest


def _largest_of(client: Any, store: Any, game: str, pick: random.Random) -> dict:
    """PER_GAME tables of `game` played to their end: the largest any was at any version."""
    largest: dict[str, Any] = {"bytes": 0}
    for _ in range(PER_GAME):
        entry: Seats | None = _open(client, game)
        while entry is not None and (entry := _ready(client, entry, game, renew=False)) is not None:
            entry = _move(client, entry, pick)
            largest = max(largest, _table_bytes(store, entry[0]), key=lambda r: r["bytes"])
    return largest


def _table_bytes(client: Any, table_id: str) -> dict[str, Any]:
    """A table's Redis bytes now: its record, log, log chunks and actions keys (SAMPLES 0: every
    field and list entry measured; the default samples 5 of them and scales up, which
    swings by KBs where one field is the state and the rest are tiny)."""
    keys = {
        "record": table_key(table_id),
        "log": log_key(table_id),
        "log_chunks": log_chunks_key(table_id),
        "actions": actions_key(table_id),
    }
    parts = {name: client.memory_usage(key, samples=0) or 0 for name, key in keys.items()}
    version = client.hget(table_key(table_id), "version")
    return {"bytes": sum(parts.values()), **parts, "version": int(version or 0)}


def _add(
    totals: dict[str, Any],
    before: tuple[dict[str, int], dict[str, float]],
    after: tuple[dict[str, int], dict[str, float]],
    sent: dict[str, int],
) -> None:
    """One move's share: the difference of the readings around it; its time, only that of
    the commands the gateway sent (module docstring: a script's time holds its inner ones)."""
    calls0, usec0 = before
    calls1, usec1 = after
    counted = totals.setdefault("calls", {})
    direct_usec = 0.0
    for command, n in calls1.items():
        calls = n - calls0.get(command, 0)
        counted[command] = counted.get(command, 0) + calls
        if calls:
            direct = min(calls, sent.get(command, 0))
            spent = usec1.get(command, 0.0) - usec0.get(command, 0.0)
            direct_usec += spent * direct / calls
            # What Redis's own sum says (every name's time, Lua's inner calls twice).
            totals["usec_all"] = totals.get("usec_all", 0.0) + spent
            by_name = totals.setdefault("usec_by", {})
            by_name[command] = by_name.get(command, 0.0) + spent
    totals.setdefault("moves", []).append(direct_usec)


def _summary(totals: dict[str, Any], moves: int, seconds: float, server_cpu: float) -> dict[str, Any]:
    calls = {k: v for k, v in totals.pop("calls", {}).items() if v}
    per_move: list[float] = totals.pop("moves", [])
    usec = sum(per_move)
    size = max(1, len(per_move) // ROUNDS)
    rounds = [statistics.fmean(per_move[i : i + size]) / 1000 for i in range(0, size * ROUNDS, size)]
    usec_all = totals.pop("usec_all", 0.0)
    usec_by = totals.pop("usec_by", {})
    total = sum(calls.values())
    return {
        "moves": moves,
        "commands_per_move": round(total / moves, 2),
        "by_command_per_move": {k: round(v / moves, 2) for k, v in sorted(calls.items())},
        # Time Redis spent executing the move's commands (commandstats' usec): the median
        # of ROUNDS rounds' means (module docstring), each round's, the mean of all moves
        # and the median move's.
        "redis_cpu_ms_per_move": round(statistics.median(rounds), 4),
        "redis_cpu_ms_per_move_rounds": [round(r, 4) for r in rounds],
        "redis_cpu_ms_per_move_mean": round(usec / moves / 1000, 4),
        "redis_cpu_ms_median_move": round(statistics.median(per_move) / 1000, 4),
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
        self.pids = [self.server.process.pid]

    def stop(self) -> None:
        self.server.stop()


class _Cluster:
    def __init__(self) -> None:
        self.cluster = start_cluster(3)
        self.broker = start_redis()
        self.url, self.broker_url = self.cluster.url, self.broker.url
        self.nodes = self.cluster.nodes
        self.pids = [n.process.pid for n in self.cluster.nodes if n.process is not None]

    def node_client(self, index: int) -> redis.Redis:
        return self.cluster.node_client(index)

    def stop(self) -> None:
        self.cluster.stop()
        self.broker.stop()


def run() -> dict[str, Any]:
    engines = {g: start_engine(g) for g in available_games()}
    out: dict[str, Any] = {"game": GAME, "players": 4, "tables": TABLES}
    stores: list[Any] = []
    try:
        stores = [_Single(), _Cluster()]
        single, cluster = stores
        measurements = {
            "single": _measure(single, engines, limits=False),
            "cluster": _measure(cluster, engines, limits=False),
            "single_with_rate_limits": _measure(single, engines, limits=True),
        }
        for measurement in measurements.values():
            next(measurement)  # set up
        for _ in range(ROUNDS):  # round by round, in turn: the same machine for each
            for measurement in measurements.values():
                next(measurement)
        for name, measurement in measurements.items():
            try:
                next(measurement)
            except StopIteration as done:
                out[name] = done.value
            else:
                raise AssertionError(f"{name}: more rounds than ROUNDS")
    finally:
        for store in stores:
            store.stop()
        for engine in engines.values():
            engine.stop(grace=0)
    out["targets"] = (
        {
            f"live table <= 8 KB of Redis at its largest, every game ({kind})": (
                out[kind]["live_table_bytes_max"] <= TARGET_TABLE_BYTES
            )
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
        print(f"  {'':<24} rounds {row['redis_cpu_ms_per_move_rounds']} ms, median move "
              f"{row['redis_cpu_ms_median_move']} ms, process CPU {row['process_cpu_ms_per_move']} ms/move, "
              f"largest table {row['live_table_bytes_max_by_game']} B")  # fmt: skip
    for name, met in out["targets"].items():
        print(f"  {name}: {'met' if met else 'TARGET MISSED'}")
    return out
