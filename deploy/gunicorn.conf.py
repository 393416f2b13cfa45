"""Gunicorn settings for the gateway: `gunicorn -c deploy/gunicorn.conf.py 'services.gateway:create_app()'`.

gevent workers, one process per core: every request spends most of its time waiting on
Redis or an engine, and a server-sent event stream waits for minutes. A greenlet per
connection makes those waits cost nothing: no thread hand-off per request (gthread passed
each one from its polling thread to a pool thread and back, which cost more CPU than
Flask did), no GIL contention, and open streams limited by `worker_connections`, not by a
thread pool. gRPC is told to cooperate with gevent (init_gevent) before the first call;
the gateway does no long CPU work that would hold up other greenlets. Metrics run in
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

bind = [os.environ.get("GATEWAY_BIND", f"127.0.0.1:{os.environ.get('GATEWAY_PORT', '8000')}")]
# An internal port for Prometheus alone (docker-compose, k8s): /metrics answers there
# without a session; it is never published or put behind the ingress (docs/security.md).
if os.environ.get("GATEWAY_METRICS_PORT"):
    bind.append(f"{os.environ.get('GATEWAY_METRICS_HOST', '0.0.0.0')}:{os.environ['GATEWAY_METRICS_PORT']}")
# gevent's worker, answering a request it cannot read in the API's JSON error shape
# (services/runtime/gunicorn_worker.py) rather than gunicorn's HTML 400.
worker_class = "services.runtime.gunicorn_worker.JsonErrorsGeventWorker"
# Above the API's own bounds on a request's head (services/gateway/request_bounds.py: a
# request line of 4,094 bytes, header fields of 8,190, 100 of them), so a head a little
# past those reaches the app and gets its 414/431; past these the worker answers the same.
limit_request_line = 8190  # gunicorn's largest
limit_request_field_size = 16380
limit_request_fields = 200
workers = int(os.environ.get("GATEWAY_WORKERS", str(max(2, os.cpu_count() or 1))))
worker_connections = int(os.environ.get("GATEWAY_WORKER_CONNECTIONS", "1000"))
# A stream sends a keep-alive comment every few seconds, far inside this.
timeout = 60
graceful_timeout = 20
keepalive = 5
accesslog = os.environ.get("GATEWAY_ACCESS_LOG") or None
errorlog = "-"
loglevel = os.environ.get("GATEWAY_LOG_LEVEL", "info")
# Gunicorn's control socket defaults to one path under the home folder, so two gateways
# on one host (tests, the bench, a second instance) fought over it. Each instance gets
# its own, in a private temporary folder, unless GATEWAY_CONTROL_SOCKET names one.
control_socket = os.environ.get("GATEWAY_CONTROL_SOCKET") or os.path.join(
    tempfile.mkdtemp(prefix="cultists-gateway-ctl-"), "gunicorn.ctl"
)


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

    from grpc.experimental import gevent as grpc_gevent

    grpc_gevent.init_gevent()  # after gunicorn's monkey-patching, before any gRPC call
    gc.freeze()
    _end_streams_on_sigterm(worker)


def _end_streams_on_sigterm(worker) -> None:
    """On SIGTERM gunicorn stops accepting and waits up to graceful_timeout for the
    requests in flight, and an event stream lasts minutes: without this every shutdown
    took the whole grace period and then cut the streams off. The process's streams end
    at once instead (their clients reconnect, to another process, from Last-Event-ID),
    and ordinary requests in flight finish as before."""
    import signal

    import gevent

    previous = signal.getsignal(signal.SIGTERM)
    platform = getattr(worker.wsgi, "extensions", {}).get("cultists")

    def on_sigterm(signum, frame) -> None:
        if platform is not None:
            gevent.spawn(platform.streams.close)
        if callable(previous):
            previous(signum, frame)

    signal.signal(signal.SIGTERM, on_sigterm)
