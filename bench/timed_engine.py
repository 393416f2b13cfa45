"""An engine process, exactly as `cultists serve` runs it, that also keeps every RPC's
server-side time (the span the engine's own `cultists_engine_rpc_duration_seconds` times,
whose buckets are too coarse for a p99 ratio) and writes them to a JSON file when it stops.

`python -m bench.timed_engine GAME PORT OUT.json`; stop it with SIGTERM.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from typing import Any

from services.engines.core import metrics


class _Recorder:
    """Stands in for the RPC histogram: same `labels(...).observe(seconds)` interface."""

    def __init__(self) -> None:
        self.samples: dict[str, list[float]] = defaultdict(list)

    def labels(self, game: str, method: str) -> Any:
        record = self.samples[method].append

        class _Timer:
            observe = staticmethod(record)

        return _Timer


def main(argv: list[str]) -> int:
    game, port, out = argv[0], int(argv[1]), argv[2]
    recorder = _Recorder()
    metrics.RPC_SECONDS = recorder  # type: ignore[assignment]  # before server.py binds it
    from services.engines.core.server import serve_forever

    serve_forever(game, port, "127.0.0.1", None)
    with open(out, "w") as f:
        json.dump(recorder.samples, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
