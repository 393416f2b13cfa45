"""A real Redis Cluster of N masters on loopback, for `cultists run --redis-cluster N` and the
tests: N `redis-server --cluster-enabled yes` processes, the 16,384 slots split evenly, the
nodes introduced to each other, and ready once every node says `cluster_state:ok`.

Built with the cluster's own commands (CLUSTER ADDSLOTSRANGE and CLUSTER MEET, Redis 7),
so it needs nothing but the server binary the single embedded Redis uses. Each node's
cluster bus gets a port of its own (`--cluster-port`), so no port is assumed free.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import redis

from .embedded_redis import redis_argv
from .ports import free_port, wait_for_port

SLOTS = 16384


def node_argv(port: int, bus_port: int, directory: Path, persist: bool) -> list[str]:
    """One cluster node's redis-server command line (the single server's, plus cluster mode)."""
    return [
        *redis_argv(port, directory, persist),
        "--cluster-enabled", "yes",
        "--cluster-config-file", "nodes.conf",
        "--cluster-port", str(bus_port),
        "--cluster-node-timeout", "2000",
        # A cluster missing a master still answers for the slots it has: a node's restart
        # makes only its own tables unavailable (503), not every table.
        "--cluster-require-full-coverage", "no",
        # Kept, every write on disk before it is answered: a node killed and restarted
        # comes back with every move it acknowledged (a laptop's cluster, not a fast one).
        *(["--appendfsync", "always"] if persist else []),
    ]  # fmt: skip


@dataclass
class ClusterNode:
    port: int
    bus_port: int
    directory: Path
    process: subprocess.Popen | None = None

    def argv(self, persist: bool) -> list[str]:
        return node_argv(self.port, self.bus_port, self.directory, persist)

    def start(self, persist: bool) -> None:
        self.process = subprocess.Popen(
            self.argv(persist), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
        )
        wait_for_port(self.port, timeout=15)

    def stop(self, kill: bool = False) -> None:
        if self.process is not None and self.process.poll() is None:
            if kill:
                self.process.kill()
            else:
                self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@dataclass
class EmbeddedCluster:
    nodes: list[ClusterNode]
    workdir: tempfile.TemporaryDirectory | None = None
    persist: bool = False

    @property
    def url(self) -> str:
        """Any node names the cluster; the client finds the rest."""
        return f"redis://127.0.0.1:{self.nodes[0].port}/0"

    def node_client(self, index: int) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.nodes[index].port)

    def wait_ok(self, timeout: float = 30.0) -> None:
        wait_ok([n.port for n in self.nodes], timeout)

    def restart(self, index: int, kill: bool = True) -> None:
        """Stop one node (SIGKILL by default) and start it again from its own files."""
        node = self.nodes[index]
        node.stop(kill=kill)
        node.start(self.persist)
        self.wait_ok()

    def owner_of(self, slot: int) -> int:
        """The index of the master serving `slot` now."""
        for first, last, master, *_replicas in self.node_client(0).execute_command("CLUSTER", "SLOTS"):
            if first <= slot <= last:
                port = int(master[1])
                return next(i for i, n in enumerate(self.nodes) if n.port == port)
        raise LookupError(f"no node serves slot {slot}")

    def migrate_slot(self, slot: int, to: int, batch: int = 50) -> int:
        """Move `slot` and its keys to node `to` while clients keep using it, as
        `redis-cli --cluster reshard` does: the target imports, the source migrates, keys
        go over with MIGRATE a batch at a time (a client meanwhile follows ASK, or gets
        TRYAGAIN for a command whose keys are split), then every node is told the new
        owner, the target first. Returns how many keys moved."""
        source = self.owner_of(slot)
        if source == to:
            return 0
        src, dst = self.node_client(source), self.node_client(to)
        src_id, dst_id = (c.execute_command("CLUSTER", "MYID").decode() for c in (src, dst))
        dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id)
        src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id)
        moved = 0
        while keys := src.execute_command("CLUSTER", "GETKEYSINSLOT", slot, batch):
            src.execute_command("MIGRATE", "127.0.0.1", self.nodes[to].port, "", 0, 10_000, "KEYS", *keys)
            moved += len(keys)
        order = [to, source, *(i for i in range(len(self.nodes)) if i not in (to, source))]
        for i in order:
            self.node_client(i).execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id)
        self.wait_ok()
        return moved

    def add_replica(self, of: int, timeout: float = 30.0) -> int:
        """Start one more node as a replica of master `of`; its index, once it is in sync."""
        root = Path(self.workdir.name) if self.workdir is not None else self.nodes[0].directory.parent
        directory = root / f"node-{len(self.nodes)}"
        directory.mkdir(parents=True, exist_ok=True)
        node = ClusterNode(free_port(), free_port(), directory)
        node.start(self.persist)
        self.nodes.append(node)
        index = len(self.nodes) - 1
        master_id = self.node_client(of).execute_command("CLUSTER", "MYID").decode()
        self.node_client(0).execute_command("CLUSTER", "MEET", "127.0.0.1", node.port, node.bus_port)
        self.wait_ok(timeout)
        self.node_client(index).execute_command("CLUSTER", "REPLICATE", master_id)
        deadline = time.monotonic() + timeout
        while cast(dict, self.node_client(index).info("replication")).get("master_link_status") != "up":
            if time.monotonic() > deadline:
                raise RuntimeError(f"node {index} never synced with master {of}")
            time.sleep(0.1)
        return index

    def failover(self, replica: int, timeout: float = 30.0) -> None:
        """A manual failover (CLUSTER FAILOVER, as an operator runs it): replica `replica`
        takes over its master's slots, the master becomes its replica."""
        self.node_client(replica).execute_command("CLUSTER", "FAILOVER")
        deadline = time.monotonic() + timeout
        while self.node_client(replica).execute_command("ROLE")[0] != b"master":
            if time.monotonic() > deadline:
                raise RuntimeError(f"node {replica} did not take over")
            time.sleep(0.1)
        self.wait_ok(timeout)
        # The promotion reaches the other nodes by gossip, a moment after the replica knows:
        # until then one of them still names the old master for these slots.
        port = self.nodes[replica].port
        taken = [r[:2] for r in self._slots(replica) if int(r[2][1]) == port]
        while not all(
            [r[:2] for r in self._slots(i) if int(r[2][1]) == port] == taken for i in range(len(self.nodes))
        ):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the other nodes never learned that node {replica} took over")
            time.sleep(0.1)

    def _slots(self, index: int) -> list:
        """CLUSTER SLOTS as node `index` sees it, ranges in order."""
        return sorted(self.node_client(index).execute_command("CLUSTER", "SLOTS"), key=lambda r: r[0])

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
        if self.workdir is not None:
            self.workdir.cleanup()


def start_cluster(masters: int = 3, data_dir: Path | None = None, persist: bool = False) -> EmbeddedCluster:
    """Start `masters` nodes on free loopback ports and make them one cluster."""
    if not 1 <= masters <= 16:
        raise ValueError("an embedded cluster has 1 to 16 masters")
    workdir = None if data_dir is not None else tempfile.TemporaryDirectory(prefix="cultists-cluster-")
    root = Path(data_dir) if data_dir is not None else Path(workdir.name)  # type: ignore[union-attr]
    nodes = []
    for i in range(masters):
        directory = root / f"node-{i}"
        directory.mkdir(parents=True, exist_ok=True)
        nodes.append(ClusterNode(free_port(), free_port(), directory))
    cluster = EmbeddedCluster(nodes, workdir, persist)
    try:
        for node in nodes:
            node.start(persist)
        form([(n.port, n.bus_port) for n in nodes])
        cluster.wait_ok()
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _info(client: redis.Redis) -> dict[str, str]:
    """CLUSTER INFO, as redis-py parses it (its types allow an awaitable: not from this client)."""
    return cast(dict[str, str], client.cluster("info"))


def form(nodes: list[tuple[int, int]]) -> None:
    """Make fresh nodes ((port, bus port) each) one cluster: split the slots evenly and
    introduce every node to the first. Nodes that already are one (restarted from their
    nodes.conf) are left as they are."""
    clients = [redis.Redis(host="127.0.0.1", port=port) for port, _ in nodes]
    if any(int(_info(c).get("cluster_slots_assigned", 0)) for c in clients):
        return
    n = len(nodes)
    for i, client in enumerate(clients):
        first, last = i * SLOTS // n, (i + 1) * SLOTS // n - 1
        client.execute_command("CLUSTER", "ADDSLOTSRANGE", first, last)
    for port, bus_port in nodes[1:]:
        clients[0].execute_command("CLUSTER", "MEET", "127.0.0.1", port, bus_port)


def wait_ok(ports: list[int], timeout: float = 30.0) -> None:
    """Until every node says the cluster is whole (all slots served, all nodes known)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            states = [_info(redis.Redis(host="127.0.0.1", port=p)) for p in ports]
            if all(
                s.get("cluster_state") == "ok" and int(s.get("cluster_known_nodes", 0)) == len(ports)
                for s in states
            ):
                return
        except redis.RedisError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError("the embedded Redis Cluster did not come up (cluster_state never ok)")
        time.sleep(0.1)
