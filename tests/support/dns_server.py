"""A real DNS server on a loopback UDP port that answers a few names with several records,
as the cluster's DNS answers a k8s headless Service (one A or AAAA record per ready pod).

Tests cannot edit the machine's own resolver (/etc/hosts, resolv.conf), and `localhost`
often resolves to one address only; gRPC's DNS resolver (c-ares) takes a server in the
target's authority instead: `dns://127.0.0.1:<port>/<name>:<grpc port>` asks this server,
over the wire, exactly what it asks the cluster's. The protocol part is the small subset
RFC 1035 needs for that: one question per query, A and AAAA answers, NXDOMAIN for other
names, an empty answer (NODATA) for other types of a known name (gRPC also asks for SRV and
TXT records). Every query is kept, so a test can show the name was really looked up.
"""

from __future__ import annotations

import ipaddress
import socket
import struct
import threading
from collections.abc import Iterable

_A, _AAAA = 1, 28
_NXDOMAIN = 3
_TTL = 1  # seconds: a resolver asking again sees a changed set of records at once


class DnsServer:
    """Answers `records` (name -> IP addresses) on 127.0.0.1:`port` until `stop()`."""

    def __init__(self, records: dict[str, Iterable[str]]) -> None:
        self.records = {_name(n): [ipaddress.ip_address(ip) for ip in ips] for n, ips in records.items()}
        self.queries: list[tuple[str, int]] = []  # (name, type) of every query answered
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.bind(("127.0.0.1", 0))
        # Closing a socket does not wake a thread blocked reading it: the reader looks at
        # the stop flag between short waits instead.
        self._sock.settimeout(0.1)
        self._stopped = threading.Event()
        self.port: int = self._sock.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, name="dns-server", daemon=True)
        self._thread.start()

    def target(self, name: str, port: int) -> str:
        """The gRPC target resolving `name` through this server."""
        return f"dns://127.0.0.1:{self.port}/{name}:{port}"

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(timeout=5)
        self._sock.close()

    def _serve(self) -> None:
        while not self._stopped.is_set():
            try:
                query, peer = self._sock.recvfrom(4096)
            except TimeoutError:
                continue
            try:
                answer = self._answer(query)
            except (IndexError, struct.error, UnicodeDecodeError):
                continue  # not a query this server understands: no answer, the client retries
            try:
                self._sock.sendto(answer, peer)
            except OSError:
                continue  # the asker is gone: it asks again or gives up

    def _answer(self, query: bytes) -> bytes:
        ident, flags = struct.unpack("!HH", query[:4])
        pos, labels = 12, []
        while query[pos]:
            size = query[pos]
            labels.append(query[pos + 1 : pos + 1 + size].decode("ascii"))
            pos += 1 + size
        qtype = struct.unpack("!H", query[pos + 1 : pos + 3])[0]
        question = query[12 : pos + 5]  # the name, its type and class, echoed back
        name = _name(".".join(labels))
        self.queries.append((name, qtype))
        known = self.records.get(name)
        # Each answer names the question's name by a pointer to it (0xC00C: offset 12).
        answers = [
            struct.pack("!HHHIH", 0xC00C, qtype, 1, _TTL, len(ip.packed)) + ip.packed
            for ip in known or ()
            if (ip.version == 4 and qtype == _A) or (ip.version == 6 and qtype == _AAAA)
        ]
        # A response (QR), the query's opcode and recursion-desired bit, authoritative,
        # recursion available; NXDOMAIN for a name this server does not hold.
        reply_flags = 0x8000 | (flags & 0x7900) | 0x0400 | 0x0080 | (0 if known is not None else _NXDOMAIN)
        header = struct.pack("!HHHHHH", ident, reply_flags, 1, len(answers), 0, 0)
        return header + question + b"".join(answers)


def _name(name: str) -> str:
    return name.lower().rstrip(".")
