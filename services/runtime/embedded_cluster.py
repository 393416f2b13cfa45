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
from dataclasses import dataclass, field
from pathlib import Path

import redis

from .embedded_redis import redis_argv
from .ports import free_port, wait_for_port

SLOTS = 16384


@dataclass
class ClusterNode:
    port: int
    bus_port: int
    directory: Path
    process: subprocess.Popen | None = None

    def start(self, persist: bool) -> None:
        args = [
            *redis_argv(self.port, self.directory, persist),
            "--cluster-enabled", "yes",
            "--cluster-config-file", "nodes.conf",
            "--cluster-port", str(self.bus_port),
            "--cluster-node-timeout", "2000",
            # A cluster missing a master still answers for the slots it has: a node's
            # restart makes only its own tables unavailable (503), not every table.
            "--cluster-require-full-coverage", "no",
        ]  # fmt: skip
        self.process = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
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
    clients: list[redis.Redis] = field(default_factory=list)

    @property
    def url(self) -> str:
        """Any node names the cluster; the client finds the rest."""
        return f"redis://127.0.0.1:{self.nodes[0].port}/0"

    def node_client(self, index: int) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.nodes[index].port)

    def wait_ok(self, timeout: float = 30.0) -> None:
        """Until every node says the cluster is whole (all slots served, all nodes known)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                states = [self.node_client(i).cluster("info") for i in range(len(self.nodes))]
                if all(
                    s.get("cluster_state") == "ok" and int(s.get("cluster_known_nodes", 0)) == len(self.nodes)
                    for s in states
                ):
                    return
            except redis.RedisError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the embedded Redis Cluster did not come up (cluster_state never ok)")
            time.sleep(0.1)

    def restart(self, index: int, kill: bool = True) -> None:
        """Stop one node (SIGKILL by default) and start it again from its own files."""
        node = self.nodes[index]
        node.stop(kill=kill)
        node.start(self.persist)
        self.wait_ok()

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
        fresh = not any((n.directory / "nodes.conf").exists() for n in nodes)
        for node in nodes:
            node.start(persist)
        if fresh:
            _form(cluster)
        cluster.wait_ok()
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _form(cluster: EmbeddedCluster) -> None:
    """Split the slots evenly and introduce every node to the first."""
    n = len(cluster.nodes)
    for i in range(n):
        first, last = i * SLOTS // n, (i + 1) * SLOTS // n - 1
        cluster.node_client(i).execute_command("CLUSTER", "ADDSLOTSRANGE", first, last)
    head = cluster.node_client(0)
    for node in cluster.nodes[1:]:
        head.execute_command("CLUSTER", "MEET", "127.0.0.1", node.port, node.bus_port)
