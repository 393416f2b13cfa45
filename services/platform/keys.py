"""Every Redis key of live play, in a module that imports nothing.

One layout serves one Redis and a Redis Cluster alike (architecture decision 6). The part
of a key between braces is its hash tag: Redis Cluster places a key by its tag alone, so
every key of one thing (a table, a matchmaking queue, a player) lands in one slot, and a
script or transaction over that thing never crosses slots. A write that concerns two
things (a table and the index that lists it) is two steps, ordered so that a crash
between them leaves something the reconciler repairs (store.py), never a table nobody
can find.

    per table             gw:{t:<id>}              hash     the record (store.py's docstring)
                          gw:{t:<id>}:log          list     public event log: its newest lines
                          gw:{t:<id>}:logz         list     its older lines, sealed in chunks
                          gw:{t:<id>}:actions      list     [seat, action] pairs
                          gw:{t:<id>}:updates      channel  sharded pub/sub: a nudge per change
                          gw:{t:<id>}:chat         list     the table chat's newest messages
                          gw:{t:<id>}:chat:n       string   the chat's last message id
                          gw:{t:<id>}:chat:<s>:rate string  seat s's messages this window
    per index shard       gw:{ix:<n>}:open         zset     waiting tables by time opened
    (a table's shard      gw:{ix:<n>}:live         zset     tables being played, by time opened
    from its id)          gw:{ix:<n>}:deadlines    zset     live table -> its earliest deadline
                          gw:{ix:<n>}:finished     zset     finished tables in Redis, by end
                          gw:{ix:<n>}:rate         set      finished rated tables not yet rated
    per game              gw:{r:<game>}            hash     ratings: player -> "mu sigma"
                          gw:{r:<game>}:settled    set      tables already counted in them
    per queue             gw:{mm:<game>:<n>}       zset     queued tickets by time queued
                          gw:{mm:<game>:<n>}:t:<id> hash    a ticket
                          gw:{mm:<game>:<n>}:t:<id>:updates channel  its changes (sharded)
                          gw:{mm:<game>:<n>}:lock  string   one matching pass at a time
                          gw:{mm:<game>:<n>}:seat  hash     table id -> a formed table not yet
                                                            written (written by the reconciler)
    per player            gw:{p:<id>}              hash     the player
                          gw:{p:<id>}:sessions     set      session digests (to revoke them all)
                          gw:{p:<id>}:ticket       string   the player's one queued ticket
                          gw:{s:<digest>}          string   a session -> player id
                          gw:{d:<digest>}          string   a guest device -> player id
                          gw:{u:<name>}            string   a username -> player id
                          gw:{u:<name>}:failures   hash     failed sign-ins of that name
    per table owner       gw:{own:<owner>}:waiting zset     an owner's waiting tables (table_caps.py)
    the few global ones   gw:{mm}:queues           set      "game:players" of every queue used
                          gw:{metrics}:time_to_match hash   time-to-match histogram counters
                          gw:{archive}:plan        hash     the archiver's batch in flight
                          gw:{secrets}:read_links  string   the key signing designers' report links
"""

from __future__ import annotations

import zlib

# Index shards: a fixed number, so a table's shard never moves. 16 spread over any
# cluster up to 16 masters; each shard's lists hold 1/16 of the tables.
INDEX_SHARDS = 16


def table_key(table_id: str) -> str:
    return f"gw:{{t:{table_id}}}"


def log_key(table_id: str) -> str:
    return f"gw:{{t:{table_id}}}:log"


def log_chunks_key(table_id: str) -> str:
    """The log's sealed chunks (packing.LOG_BLOCK lines each), the lines before `:log`'s."""
    return f"gw:{{t:{table_id}}}:logz"


def actions_key(table_id: str) -> str:
    return f"gw:{{t:{table_id}}}:actions"


def chat_key(table_id: str) -> str:
    return f"gw:{{t:{table_id}}}:chat"


def chat_count_key(table_id: str) -> str:
    return f"gw:{{t:{table_id}}}:chat:n"


def chat_rate_key(table_id: str, seat: int) -> str:
    return f"gw:{{t:{table_id}}}:chat:{seat}:rate"


def updates_channel(table_id: str) -> str:
    return f"gw:{{t:{table_id}}}:updates"


def shard_of(table_id: str) -> int:
    """A table's index shard: a hash of its id (ids are random, so shards fill evenly)."""
    return zlib.crc32(table_id.encode()) % INDEX_SHARDS


def index_key(shard: int, name: str) -> str:
    """One of a shard's indexes: open, live, deadlines, finished, rate."""
    return f"gw:{{ix:{shard}}}:{name}"


def ratings_key(game: str) -> str:
    return f"gw:{{r:{game}}}"


def settled_key(game: str) -> str:
    return f"gw:{{r:{game}}}:settled"


def queue_key(game: str, players: int) -> str:
    """Queued matchmaking tickets of one game and table size (a zset by time queued)."""
    return f"gw:{{mm:{game}:{players}}}"


def ticket_key(game: str, players: int, ticket_id: str) -> str:
    return f"{queue_key(game, players)}:t:{ticket_id}"


def ticket_channel(game: str, players: int, ticket_id: str) -> str:
    return f"{queue_key(game, players)}:t:{ticket_id}:updates"


def queue_lock_key(game: str, players: int) -> str:
    return f"{queue_key(game, players)}:lock"


def forming_key(game: str, players: int) -> str:
    return f"{queue_key(game, players)}:seat"


QUEUES = "gw:{mm}:queues"
TIME_TO_MATCH_KEY = "gw:{metrics}:time_to_match"
ARCHIVE_PLAN = "gw:{archive}:plan"
READ_LINK_SECRET = "gw:{secrets}:read_links"


def player_key(player_id: str) -> str:
    return f"gw:{{p:{player_id}}}"


def sessions_key(player_id: str) -> str:
    return f"gw:{{p:{player_id}}}:sessions"


def held_key(player_id: str) -> str:
    """The one ticket a player may have queued at a time."""
    return f"gw:{{p:{player_id}}}:ticket"


def session_key_of(digest: str) -> str:
    return f"gw:{{s:{digest}}}"


def device_key_of(digest: str) -> str:
    return f"gw:{{d:{digest}}}"


def username_key(username: str) -> str:
    return f"gw:{{u:{username.lower()}}}"


def failures_key(username: str) -> str:
    """Failed sign-ins by that name (the login throttle): beside the name, in its slot."""
    return f"gw:{{u:{username.lower()}}}:failures"
