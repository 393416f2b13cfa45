"""The one `celery worker` command line, for everything that starts a worker as a process.

`cultists run`, the benches and the tests' worker fixture start the same worker the
containers run (deploy/), so a flag added for one (no gossip, no mingle: a worker must
start in a second and must not wait on its peers) reaches all of them."""

from __future__ import annotations

import sys


def worker_argv(queues: str, *, name: str, concurrency: int = 2, loglevel: str = "INFO") -> list[str]:
    """Run `workers.app` consuming `queues` (comma-separated) as node `name` (`%h` is the host)."""
    return [
        sys.executable, "-m", "celery", "-A", "workers.app", "worker", "-Q", queues,
        "-c", str(concurrency), "-n", name, "--without-gossip", "--without-mingle", "--loglevel", loglevel,
    ]  # fmt: skip
