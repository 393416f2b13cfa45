"""One gRPC channel per engine, balanced over every replica the engine's address names.

Engines are stateless (architecture decision 1): any replica serves any match, so the
client spreads calls over all of them with gRPC's `round_robin` policy instead of the
default `pick_first`, which sends everything to the first address that answers. An address
is one of:

- `host:port`: a DNS name resolved to all its records (a k8s headless Service or a compose
  service with several replicas has one record per replica). gRPC re-resolves the name when
  a replica goes away, so a replaced pod is found without a restart.
- `host:port,host:port,...`: several replicas listed. IP literals stay as they are; names are
  resolved once, here, to all their addresses.
- a full gRPC target (`dns:///...`, `ipv4:...`, `ipv6:...`, `unix:...`): used as given.

Every method of the engine contract is idempotent (`NewGame` with a seed, `View`, `Apply`
on a given state, `SuggestAction` with a seed, `Describe`): the engine keeps nothing between
calls, and the store's compare-and-set decides whether a move lands. So a call that ends
UNAVAILABLE (the replica was killed or is restarting) is retried once, after a short
backoff, and round_robin gives the retry the next ready replica.
"""

from __future__ import annotations

import ipaddress
import json
import socket

import grpc

SERVICE = "cultists.v1.GameEngine"
HEALTH_SERVICE = "grpc.health.v1.Health"

# gRPC's own retry policy: at most one retry, only for UNAVAILABLE (the call never reached
# a live engine, or the engine died under it before answering). maxAttempts counts the
# first attempt. The backoff is short: the retry goes to another replica, not the same one.
_RETRY = {
    "maxAttempts": 2,
    "initialBackoff": "0.05s",
    "maxBackoff": "0.2s",
    "backoffMultiplier": 2,
    "retryableStatusCodes": ["UNAVAILABLE"],
}

SERVICE_CONFIG = json.dumps(
    {
        "loadBalancingConfig": [{"round_robin": {}}],
        "methodConfig": [
            {"name": [{"service": SERVICE}, {"service": HEALTH_SERVICE}], "retryPolicy": _RETRY}
        ],
    }
)

CHANNEL_OPTIONS = [
    ("grpc.service_config", SERVICE_CONFIG),
    ("grpc.enable_retries", 1),
    # Our config above is the one that counts: never look for one in DNS TXT records.
    ("grpc.service_config_disable_resolution", 1),
    # Re-resolve a DNS name soon after a replica goes away (default 30 s).
    ("grpc.dns_min_time_between_resolutions_ms", 1000),
    # An engine that restarts is found again within a second of it listening: gRPC's own
    # reconnect backoff grows to 120 s, which would leave tables stalled long after the
    # engine is back (the retry interval of bot moves is a second, settings.py).
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.min_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 1000),
]

_SCHEMES = ("dns:", "ipv4:", "ipv6:", "unix:", "unix-abstract:")


def engine_target(address: str) -> str:
    """The gRPC target for an engine address (see the module docstring).

    Raises ValueError for an empty address or an entry without a port, so a mistyped
    ENGINE_ADDR_<GAME> is a clear error at the first call instead of a silent pick_first."""
    address = address.strip()
    if address.startswith(_SCHEMES):
        return address
    entries = [e.strip() for e in address.split(",") if e.strip()]
    if not entries:
        raise ValueError("an engine address is empty")
    parsed = [_host_port(e) for e in entries]
    if len(parsed) == 1:
        host, port = parsed[0]
        return f"dns:///{_join(host, port)}"
    v4: list[str] = []
    v6: list[str] = []
    for host, port in parsed:
        for ip in _ips(host):
            (v6 if ":" in ip else v4).append(_join(ip, port))
    # One gRPC target has one scheme: IPv4 replicas when there are any, else IPv6.
    return f"ipv4:{','.join(v4)}" if v4 else f"ipv6:{','.join(v6)}"


def open_channel(address: str) -> grpc.Channel:
    """A round_robin channel over every replica `address` names, retrying once."""
    return grpc.insecure_channel(engine_target(address), options=CHANNEL_OPTIONS)


def _host_port(entry: str) -> tuple[str, int]:
    host, sep, port = entry.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise ValueError(f"engine address {entry!r} is not host:port")
    return host.strip("[]"), int(port)


def _ips(host: str) -> list[str]:
    """`host` itself when it is an IP literal, else every address it resolves to."""
    try:
        return [str(ipaddress.ip_address(host))]
    except ValueError:
        pass
    found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in found))


def _join(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
