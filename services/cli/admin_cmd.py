"""`cultists admin`: accounts and their roles, for whoever runs the platform.

Roles are never granted over the API (no request can raise its own rights): the first
operator, and every designer after, is made here, on a machine that reaches the
platform's Redis.

    cultists admin create-user ada --role operator        # asks for the password
    printf '%s\\n' "$PASSWORD" | cultists admin create-user bo --role designer --password-stdin
    cultists admin grant bo operator                      # `player` takes roles away again

Exit status 2 for a bad name, password or role, or a taken name (nothing is changed).
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys

from services.platform.errors import PlatformError
from services.platform.players import ROLES, PlayerBook
from services.runtime.errors import BadInput

from .common import platform_redis
from .options import command


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "admin",
        "make accounts and grant roles (player, designer, operator)",
        description=__doc__.split("\n\n", 1)[1],
        environment=["REDIS_URL", "REDIS_CLUSTER"],
    )
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    create = actions.add_parser("create-user", help="a new account with a role")
    create.add_argument("name", help="the username (3-32 letters, digits, '_', '.', '-')")
    create.add_argument("--role", choices=ROLES, default="player", help="its role (default: player)")
    create.add_argument(
        "--password-stdin", action="store_true", help="read the password from standard input's first line"
    )
    create.add_argument("--redis-url", help="the platform's Redis (default: the running platform's)")
    create.set_defaults(func=create_user)
    grant = actions.add_parser("grant", help="give an account a role")
    grant.add_argument("name", help="the username")
    grant.add_argument("role", choices=ROLES, help="the role (player: no designer or operator rights)")
    grant.add_argument("--redis-url", help="the platform's Redis (default: the running platform's)")
    grant.set_defaults(func=grant_role)


def _book(explicit: str | None) -> PlayerBook:
    from services.runtime.data_folder import read_run_file
    from services.runtime.redis_client import connect

    url = platform_redis(explicit)
    facts = read_run_file()
    cluster = os.environ.get("REDIS_CLUSTER", "").lower() in ("1", "true", "yes") or (
        url == facts.get("redis_url") and bool(facts.get("redis_cluster"))
    )
    return PlayerBook(connect(url, cluster), 0)


def _password(from_stdin: bool) -> str:
    if from_stdin:
        return sys.stdin.readline().rstrip("\n")
    first = getpass.getpass("password: ")
    if first != getpass.getpass("again: "):
        raise BadInput("admin create-user: the two passwords differ; nothing was changed")
    return first


def _refused(exc: PlatformError) -> BadInput:
    return BadInput(f"admin: {exc.message}; nothing was changed")


def create_user(args: argparse.Namespace) -> int:
    password = _password(args.password_stdin)
    try:
        player = _book(args.redis_url).create_account(args.name, password, args.role)
    except PlatformError as exc:
        raise _refused(exc) from None
    print(f"{player.username}: player {player.id}, roles {', '.join(player.roles)}")
    return 0


def grant_role(args: argparse.Namespace) -> int:
    try:
        player = _book(args.redis_url).grant(args.name, args.role)
    except PlatformError as exc:
        raise _refused(exc) from None
    print(f"{player.username}: roles {', '.join(player.roles)}")
    return 0
