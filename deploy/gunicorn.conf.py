"""Gunicorn settings for the gateway: `gunicorn -c deploy/gunicorn.conf.py 'services.gateway:create_app()'`.

gthread workers, because a server-sent event stream holds its thread for minutes: threads
keep other requests flowing meanwhile, and processes use both cores. Metrics run in
prometheus-client's multiprocess mode: every worker writes its samples to files in
PROMETHEUS_MULTIPROC_DIR and /metrics merges them; the directory is emptied when the
master starts (stale files would double-count) and a dead worker's live gauges dropped.
"""

from __future__ import annotations

import os
import shutil
import tempfile

# Must be set before any worker imports prometheus_client, i.e. here, in the master.
if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="cultists-gateway-metrics-")

bind = os.environ.get("GATEWAY_BIND", f"127.0.0.1:{os.environ.get('GATEWAY_PORT', '8000')}")
worker_class = "gthread"
workers = int(os.environ.get("GATEWAY_WORKERS", str(max(2, os.cpu_count() or 1))))
threads = int(os.environ.get("GATEWAY_THREADS", "16"))
# A stream sends a keep-alive comment every few seconds, far inside this.
timeout = 60
graceful_timeout = 20
keepalive = 5
accesslog = os.environ.get("GATEWAY_ACCESS_LOG") or None
errorlog = "-"
loglevel = os.environ.get("GATEWAY_LOG_LEVEL", "info")


def on_starting(server) -> None:
    directory = os.environ["PROMETHEUS_MULTIPROC_DIR"]
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory, exist_ok=True)


def child_exit(server, worker) -> None:
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def post_worker_init(worker) -> None:
    """Move everything the app loaded (Flask, gRPC, protobuf, the game modules) out of the
    garbage collector's sight: those objects live as long as the worker, yet every full
    collection walked them all again, which was a visible share of a busy worker's CPU."""
    import gc

    gc.freeze()
