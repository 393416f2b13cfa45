"""A tune's life in Redis: spec, progress, the driver's lease, its sweeps, summary and plots.

The API (`services/gateway/tunes_api.py`) writes a tune here and queues its driver task;
the driver (`tasks.drive`, on the `tunes` queue) reads the spec, writes progress as it goes
and the summary (with the report's PNGs) at the end. Nothing a tune needs lives only in
a worker's memory, so any gateway answers for any tune and a driver that dies can be
replaced (see `tasks.py`).

Keys (`cultists:tune:<id>:...`):

- `meta`    hash: status, created/started/finished, budget, spent, trials, phase, best,
            confirm progress, error, drivers (how many driver runs started)
- `spec`    the tune spec as JSON (as given, validated)
- `sweeps`  hash: digest of an evaluation sweep's spec -> its sweep id. A driver started
            again replays the (deterministic) search and finds each evaluation it already
            queued here, so it waits for or reads those games instead of playing them again.
- `driver`  the driver's lease: a token with a short expiry, renewed while it runs
- `summary` the JSON summary when done; `plots` hash: PNG name -> bytes

`cultists:tunes` (sorted by creation time) lists every tune; `cultists:tunes:active`
the queued and running ones (what the reconciler looks at).
"""

from __future__ import annotations

import json
import time
from typing import Any

import orjson

from services.runtime.redis_client import connect
from services.runtime.redis_types import RedisClient

PREFIX = "cultists:tune:"
# The global lists have a hash tag of their own; a tune's keys share its id's (key()), so
# the store runs on one Redis or a Redis Cluster alike.
INDEX = "cultists:{tunes}"
ACTIVE_SET = "cultists:{tunes}:active"
ACTIVE = ("queued", "running")
FINISHED = ("done", "failed", "cancelled")
KEEP_SECONDS = 30 * 24 * 3600

# Renew the lease if this driver still holds it, or take it back if it ran out while no one
# else took it (a stalled renewal thread on a loaded machine); never from another driver.
_RENEW = """
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
if not holder then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


def key(tune_id: str, part: str) -> str:
    return f"{PREFIX}{{{tune_id}}}:{part}"


def sweep_digest(sweep_spec: dict[str, Any]) -> str:
    """The same evaluation (same configs, seeds, games) has the same digest on every replay."""
    return json.dumps(sweep_spec, sort_keys=True, default=str)


class TuneStore:
    def __init__(self, client: RedisClient) -> None:
        self.r = client
        self._renew = client.register_script(_RENEW)
        self._release = client.register_script(_RELEASE)

    @classmethod
    def from_url(cls, url: str, cluster: bool = False) -> TuneStore:
        return cls(connect(url, cluster))

    # --- life -----------------------------------------------------------------------------
    def create(self, tune_id: str, spec: dict[str, Any], info: dict[str, Any]) -> None:
        now = time.time()
        # Listed first, then made: a crash between leaves an id the reconciler drops.
        with self.r.pipeline(transaction=False) as lists:
            lists.zadd(INDEX, {tune_id: now})
            lists.sadd(ACTIVE_SET, tune_id)
            lists.execute()
        pipe = self.r.pipeline()
        pipe.set(key(tune_id, "spec"), orjson.dumps(spec))
        pipe.hset(
            key(tune_id, "meta"),
            mapping={"status": "queued", "created": repr(now), "phase": "queued", "spent": 0,
                     "trials": 0, "drivers": 0, **{k: str(v) for k, v in info.items()}},
        )  # fmt: skip
        pipe.execute()

    def exists(self, tune_id: str) -> bool:
        return bool(self.r.exists(key(tune_id, "meta")))

    def meta(self, tune_id: str) -> dict[str, str]:
        return {k.decode(): v.decode() for k, v in self.r.hgetall(key(tune_id, "meta")).items()}

    def spec(self, tune_id: str) -> dict[str, Any]:
        raw = self.r.get(key(tune_id, "spec"))
        if raw is None:
            raise KeyError(f"no tune {tune_id}")
        return orjson.loads(raw)

    def status(self, tune_id: str) -> str | None:
        raw = self.r.hget(key(tune_id, "meta"), "status")
        return raw.decode() if raw is not None else None

    def mark_running(self, tune_id: str) -> int:
        """The driver starts (again); returns how many driver runs this tune has had."""
        pipe = self.r.pipeline()
        pipe.hset(key(tune_id, "meta"), mapping={"status": "running", "started": repr(time.time())})
        pipe.hsetnx(key(tune_id, "meta"), "first_started", repr(time.time()))
        pipe.hincrby(key(tune_id, "meta"), "drivers", 1)
        return int(pipe.execute()[-1])

    def update(self, tune_id: str, **fields: Any) -> None:
        self.r.hset(
            key(tune_id, "meta"),
            mapping={
                k: v if isinstance(v, str | int | float) else orjson.dumps(v) for k, v in fields.items()
            },
        )

    def fail(self, tune_id: str, error: str) -> None:
        self._end(tune_id, "failed", error=error)

    def save_summary(self, tune_id: str, summary: dict[str, Any], plots: dict[str, bytes]) -> None:
        pipe = self.r.pipeline()
        pipe.set(key(tune_id, "summary"), orjson.dumps(summary))
        if plots:
            pipe.hset(key(tune_id, "plots"), mapping=plots)
        pipe.execute()
        best = summary.get("best") or {}
        verdict = (best.get("confirmed") or {}).get("verdict", "none")
        fields: dict[str, Any] = {
            "verdict": verdict,
            "spent": summary["search_games"],
            "trials": summary["trials"],
        }
        if best:
            fields |= {"best": orjson.dumps(best["config"]), "best_score": repr(best["score"])}
        self._end(tune_id, "done", **fields)

    def _end(self, tune_id: str, status: str, **fields: Any) -> None:
        pipe = self.r.pipeline()
        pipe.hset(
            key(tune_id, "meta"),
            mapping={"status": status, "phase": status, "finished": repr(time.time()), **fields},
        )
        for part in ("meta", "spec", "summary", "plots", "sweeps"):
            pipe.expire(key(tune_id, part), KEEP_SECONDS)
        pipe.execute()
        self.r.srem(ACTIVE_SET, tune_id)  # after: a crash between leaves it to the reconciler

    def cancel(self, tune_id: str) -> bool:
        """Stop a queued or running tune (its driver stops at its next look); False if it had
        already finished. The caller cancels its evaluation sweeps (`sweep_ids`)."""
        if self.status(tune_id) not in ACTIVE:
            return False
        self._end(tune_id, "cancelled")
        return True

    def summary(self, tune_id: str) -> dict[str, Any] | None:
        raw = self.r.get(key(tune_id, "summary"))
        return orjson.loads(raw) if raw is not None else None

    def plot(self, tune_id: str, name: str) -> bytes | None:
        return self.r.hget(key(tune_id, "plots"), name)

    def plot_names(self, tune_id: str) -> list[str]:
        return sorted(k.decode() for k in self.r.hkeys(key(tune_id, "plots")))

    def recent(self, limit: int) -> list[str]:
        return [raw.decode() for raw in self.r.zrevrange(INDEX, 0, limit - 1)]

    def active_ids(self) -> list[str]:
        return sorted(raw.decode() for raw in self.r.smembers(ACTIVE_SET))

    # --- the driver's lease ---------------------------------------------------------------
    def claim_driver(self, tune_id: str, token: str, seconds: float) -> bool:
        return bool(self.r.set(key(tune_id, "driver"), token, nx=True, px=int(seconds * 1000)))

    def renew_driver(self, tune_id: str, token: str, seconds: float) -> bool:
        return bool(self._renew(keys=[key(tune_id, "driver")], args=[token, int(seconds * 1000)]))

    def release_driver(self, tune_id: str, token: str) -> None:
        self._release(keys=[key(tune_id, "driver")], args=[token])

    def has_driver(self, tune_id: str) -> bool:
        return bool(self.r.exists(key(tune_id, "driver")))

    # --- evaluation sweeps (resuming) -----------------------------------------------------
    def known_sweep(self, tune_id: str, digest: str) -> str | None:
        raw = self.r.hget(key(tune_id, "sweeps"), digest)
        return raw.decode() if raw is not None else None

    def remember_sweep(self, tune_id: str, digest: str, sweep_id: str) -> None:
        self.r.hset(key(tune_id, "sweeps"), digest, sweep_id)

    def sweep_ids(self, tune_id: str) -> list[str]:
        return [v.decode() for v in self.r.hvals(key(tune_id, "sweeps"))]


class SweepMemo:
    """The evaluation sweeps one tune has queued, found again by their spec (`CeleryRunner`).

    A sweep is reused only while its games can still be read: not failed or cancelled, and
    its chunk results not yet expired (a finished sweep keeps them for days, store.py)."""

    def __init__(self, tunes: TuneStore, tune_id: str) -> None:
        self.tunes, self.tune_id = tunes, tune_id

    def find(self, sweep_spec: dict[str, Any], sweeps: Any) -> str | None:
        sweep_id = self.tunes.known_sweep(self.tune_id, sweep_digest(sweep_spec))
        if sweep_id is None:
            return None
        from services.balance.sweeps.store import key as sweep_key

        status = sweeps.status(sweep_id)
        if status in (None, "failed", "cancelled"):
            return None
        if status == "done" and not sweeps.r.exists(sweep_key(sweep_id, "chunks")):
            return None
        return sweep_id

    def remember(self, sweep_spec: dict[str, Any], sweep_id: str) -> None:
        self.tunes.remember_sweep(self.tune_id, sweep_digest(sweep_spec), sweep_id)
