"""Redis key names shared by more than one module, in a module that imports nothing.

The gateway's modules import one way: API blueprints -> services (tables, tickets,
players, ratings) -> store and clients (store, engines, dispatch) -> leaves (keys,
metrics, errors, settings). Metrics read a few facts straight from Redis (open tables,
queued tickets); their key names live here, so metrics need not import the services that
write them (which in turn record into metrics).
"""

from __future__ import annotations

OPEN_TABLES = "gw:tables:open"
LIVE_TABLES = "gw:tables:live"
QUEUES = "gw:mm:queues"


def queue_key(game: str, players: int) -> str:
    """Queued matchmaking tickets of one game and table size (a zset by time queued)."""
    return f"gw:mm:{game}:{players}"
