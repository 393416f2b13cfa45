"""`cultists serve <game>`: run one game's engine as a gRPC service until SIGTERM.

Both ports are checked before anything starts: a port already in use is refused in one
line naming what holds it (exit status 2), never shared: gRPC's SO_REUSEPORT, which lets
two servers listen on one port and split its connections, is off unless `--reuse-port`
asks for it (several replicas behind one port on purpose).
"""

from __future__ import annotations

import argparse
import ipaddress

from services.runtime.ports import PortUse, check_ports, refuse_busy

from .common import add_game_argument
from .options import command


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "serve",
        "run a game's rules engine as a gRPC service",
        description=__doc__.split("\n\n", 1)[1],
        environment=[
            "CULTISTS_PURE_PYTHON",
            "ENGINE_MAX_BOT_ITERATIONS",
            "ENGINE_MAX_BOT_MS",
            "ENGINE_GRACE_SECONDS",
        ],
    )
    add_game_argument(p)
    p.add_argument("--port", type=int, default=50051, help="gRPC port")
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind: an IPv4 or IPv6 address (0.0.0.0 or [::] in containers)",
    )
    p.add_argument("--metrics-port", type=int, default=None, help="Prometheus /metrics port (default: none)")
    p.add_argument(
        "--reuse-port",
        action="store_true",
        help="share the gRPC port with other servers already on it (SO_REUSEPORT)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    wanted = [] if args.reuse_port or not args.port else [PortUse("gRPC", args.port, None)]
    if args.metrics_port:
        wanted.append(PortUse("metrics", args.metrics_port, None))
    refuse_busy(
        check_ports(wanted, _probe_host(args.host)),
        "stop what holds it, or pick another with --port / --metrics-port",
    )

    from services.engines.core.server import serve_forever  # grpc only when serving

    serve_forever(args.game, args.port, args.host, args.metrics_port, reuse_port=args.reuse_port)
    return 0


def _probe_host(host: str) -> str:
    """Where to try the ports: the address given (IPv4 or IPv6, so a replica on [::1]:P is
    not refused because another holds 127.0.0.1:P), else loopback (a port held on loopback
    blocks the wildcard address too, and names need no second probe)."""
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return "127.0.0.1"
    return "127.0.0.1" if address.is_unspecified else str(address)
