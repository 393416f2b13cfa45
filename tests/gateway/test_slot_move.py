"""A table's slot moves to another node of a Redis Cluster while a seat's stream is open,
and moves go on being made: the stream misses none of them. The slot moves both ways a
cluster moves one: a reshard to another master, and a failover to the master's replica.

Against the gateway as it runs (gunicorn, gevent) on a 3-master cluster of this module's
own (the session's cluster keeps its layout for the other tests). The slot is resharded
as `redis-cli --cluster reshard` does it (IMPORTING / MIGRATING, MIGRATE of its keys, then
SETSLOT NODE everywhere: EmbeddedCluster.migrate_slot), or a replica started for the
table's master takes over (CLUSTER FAILOVER), while a second thread keeps moving. Either
way Redis tells the old owner's subscribers their shard channel is gone (SUNSUBSCRIBE), the
gateway ends that stream, and the client reconnects with Last-Event-ID as an EventSource
does: every entry of the table's log arrives exactly once, in order, and the updates go
on arriving after the move. A move that met the slot mid-move got a 503 (TRYAGAIN) and
was sent again, as a client does with a 503.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request

import pytest
import redis

from services.runtime.embedded_cluster import EmbeddedCluster, start_cluster

from .conftest import LiveStore, bearer
from .test_gunicorn import call, open_table, serve

MOVES_BEFORE, MOVES_AFTER = 4, 6


@pytest.fixture(scope="module")
def own_cluster() -> EmbeddedCluster:
    cluster = start_cluster(3)
    try:
        yield cluster
    finally:
        cluster.stop()


class Follower:
    """A seat's stream, read as an EventSource reads it: on a cut, reconnect with the last id."""

    def __init__(self, base: str, table: str, token: str) -> None:
        self.url = f"{base}/api/tables/{table}/events/stream"
        self.token = token
        self.log_ids: list[int] = []
        self.versions: list[int] = []  # the version each state and update carried
        self.connects = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        last: str | None = None
        while not self.done.is_set():
            headers = bearer(self.token)
            if last is not None:
                headers["Last-Event-ID"] = last
            try:
                with urllib.request.urlopen(
                    urllib.request.Request(self.url, headers=headers), timeout=30
                ) as s:
                    self.connects += 1
                    event, data, ident = None, None, None
                    for raw in s:
                        line = raw.decode().rstrip("\n")
                        if line.startswith("id: "):
                            ident = line[4:]
                        elif line.startswith("event: "):
                            event = line[7:]
                        elif line.startswith("data: "):
                            data = line[6:]
                        elif line == "":
                            if event == "log" and ident is not None:
                                self.log_ids.append(int(ident))
                                last = ident
                            elif event in ("state", "update") and data:
                                self.versions.append(json.loads(data)["version"])
                            elif event == "end":
                                return
                            event, data, ident = None, None, None
                        if self.done.is_set():
                            return
            except (OSError, urllib.error.URLError):
                time.sleep(0.2)  # the server cut it mid-read: reconnect, as an EventSource does


def move_once(base: str, table: str, tokens: list[str]) -> int | None:
    """The seat to act makes its first legal move, sent again on a 503 or a lost race;
    the version after it, or None once the game is over."""
    deadline = time.monotonic() + 60
    while True:
        try:
            public = call(f"{base}/api/tables/{table}/view")
            if public.get("status") == "finished" or not public["to_act"]:
                return None
            seat = public["to_act"][0]
            mine = call(f"{base}/api/tables/{table}/view", headers=bearer(tokens[seat]))
            body = {"action": mine["legal_actions"][0]["id"], "version": mine["version"]}
            return call(f"{base}/api/tables/{table}/actions", "POST", body, bearer(tokens[seat]))["version"]
        except urllib.error.HTTPError as exc:
            if exc.code not in (409, 503) or time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.mark.parametrize("move", ["reshard", "failover"])
def test_a_stream_misses_no_move_while_its_tables_slot_moves(move, own_cluster, redis_url, engines, tmp_path):
    store = LiveStore("cluster", own_cluster.url, True, redis_url)
    with serve(store, engines, tmp_path, workers=1) as (base, _proc):
        table, tokens = open_table(base)
        client = redis.RedisCluster.from_url(own_cluster.url)
        slot = client.keyslot(f"gw:{{t:{table}}}:state")
        source = own_cluster.owner_of(slot)
        # The new owner: another master (a reshard), or a replica of this one (a failover).
        target = (source + 1) % 3 if move == "reshard" else own_cluster.add_replica(source)
        follower = Follower(base, table, tokens[0])
        follower.thread.start()
        try:
            versions = [v for v in (move_once(base, table, tokens) for _ in range(MOVES_BEFORE)) if v]
            # Moves keep coming while the slot and its keys go over.
            moving = threading.Event()
            during: list[int] = []

            def keep_moving() -> None:
                while not moving.is_set():
                    version = move_once(base, table, tokens)
                    if version is None:
                        return
                    during.append(version)

            mover = threading.Thread(target=keep_moving, daemon=True)
            mover.start()
            if move == "reshard":
                assert own_cluster.migrate_slot(slot, target) > 0, "the table's keys went over"
            else:
                own_cluster.failover(target)
            moving.set()
            mover.join(timeout=90)
            assert own_cluster.owner_of(slot) == target
            for _ in range(MOVES_AFTER):
                version = move_once(base, table, tokens)
                if version is not None:
                    versions.append(version)
            versions += during
            # Every entry of the log reaches the stream, once and in order.
            final = call(f"{base}/api/tables/{table}/events?after=-1&limit=1000")
            last_id = final["events"][-1]["id"]
            deadline = time.monotonic() + 30
            while (not follower.log_ids or follower.log_ids[-1] < last_id) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert follower.log_ids == list(range(follower.log_ids[0], last_id + 1)), follower.log_ids
            assert follower.log_ids[0] == 0
            # The move ended the stream on the old owner; it resumed and heard the later moves.
            assert follower.connects >= 2, "the slot move reached the stream"
            # ... and the table as it stands now (a resumed stream's `state`, or an update).
            deadline = time.monotonic() + 30
            while max(follower.versions) < max(versions) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert max(follower.versions) == max(versions), (follower.versions, versions)
        finally:
            follower.done.set()
            client.close()
