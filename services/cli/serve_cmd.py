"""`cultists serve <game>`: run one game's engine as a gRPC service until SIGTERM."""

from __future__ import annotations

import argparse

from .common import add_game_argument


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run a game's rules engine as a gRPC service")
    add_game_argument(p)
    p.add_argument("--port", type=int, default=50051)
    p.add_argument("--host", default="127.0.0.1", help="address to bind ([::] in containers)")
    p.add_argument("--metrics-port", type=int, default=None, help="Prometheus /metrics port")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from services.engines.core.server import serve_forever  # grpc only when serving

    serve_forever(args.game, args.port, args.host, args.metrics_port)
    return 0
