"""The one way the platform connects to Redis: a single server, or a Redis Cluster.

`REDIS_CLUSTER=true` with `REDIS_URL` naming any node of a cluster makes every store of
live play (tables, indexes, tickets, ratings, players and sessions) use redis-py's
`RedisCluster`, which finds the other nodes and sends each command to the node that owns
its key's slot; without it a single Redis is used exactly as before. The code above is
the same either way: every key names its hash tag (keys.py), and no script or
transaction touches two tags.
"""

from __future__ import annotations

from typing import Any

import redis
from redis.cluster import RedisCluster


def connect(url: str, cluster: bool, max_connections: int = 1000, wait_seconds: float = 10.0) -> Any:
    """A client for `url`. Single: a blocking pool of at most `max_connections`, where a
    request waits up to `wait_seconds` for a connection, then fails (503). Cluster: that
    many connections per node."""
    if cluster:
        return RedisCluster.from_url(url, max_connections=max_connections, health_check_interval=30)
    return redis.Redis(
        connection_pool=redis.BlockingConnectionPool.from_url(
            url, max_connections=max_connections, timeout=wait_seconds, health_check_interval=30
        )
    )


def is_cluster(client: Any) -> bool:
    return isinstance(client, RedisCluster)


def drop_idle_connections(client: Any) -> None:
    """Close the connections `client`'s pools hold unused (those in use stay): a pool
    keeps every connection it ever opened, and one used only in bursts need not."""
    if is_cluster(client):
        for node in client.get_nodes():
            if node.redis_connection is not None:
                node.redis_connection.connection_pool.disconnect(inuse_connections=False)
        return
    client.connection_pool.disconnect(inuse_connections=False)
