"""Requests whose head is too long, or unreadable, get the API's JSON error from the gateway
as it runs in production (gunicorn with its gevent worker), never gunicorn's HTML 400: a
request line past 4,094 bytes is 414, a header field or header count past its bound 431,
both from the app (its limits) and from the worker (past gunicorn's own, higher, limits);
TRACE is 405 with `Allow`. Sent over a raw socket, byte for byte as a client would."""

from __future__ import annotations

import json
import socket
from urllib.parse import urlsplit

import pytest

from services.gateway.request_bounds import MAX_HEADER_FIELD, MAX_HEADER_FIELDS, MAX_REQUEST_LINE

from .conftest import LiveStore
from .test_gunicorn import serve


@pytest.fixture(scope="module")
def base(redis_url, engines, tmp_path_factory):
    """One gunicorn on one Redis: a request's head is read before any store is touched."""
    single = LiveStore("single", redis_url, False, redis_url)
    with serve(single, engines, tmp_path_factory.mktemp("heads"), workers=1) as (url, _proc):
        yield url


def send(base: str, head: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send `head` (a whole request without a body) and read the reply to its end."""
    where = urlsplit(base)
    with socket.create_connection((where.hostname, where.port), timeout=20) as sock:
        sock.sendall(head)
        chunks = []
        while True:
            try:
                part = sock.recv(65536)
            except ConnectionResetError:  # the server closed after answering
                break
            if not part:
                break
            chunks.append(part)
            raw = b"".join(chunks)
            if b"\r\n\r\n" in raw:
                top, _, body = raw.partition(b"\r\n\r\n")
                length = next(
                    (int(v) for k, _, v in (h.partition(b":") for h in top.split(b"\r\n")[1:])
                     if k.strip().lower() == b"content-length"), None,
                )  # fmt: skip
                if length is not None and len(body) >= length:
                    break
    top, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    lines = top.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(lines[0].split()[1]), headers, body


def request(path: str, method: str = "GET", extra: list[str] = ()) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", *extra, "Connection: close"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def expect_error(reply: tuple[int, dict[str, str], bytes], status: int, code: str) -> dict:
    got, headers, body = reply
    assert got == status, (got, body[:300])
    assert headers["content-type"].startswith("application/json"), headers
    error = json.loads(body)["error"]
    assert error["code"] == code and error["message"], error
    return error


def path_of_line(length: int) -> str:
    """A path to /api/games whose request line (`GET <path> HTTP/1.1`) is `length` bytes."""
    stem = "/api/games?q="
    return stem + "x" * (length - len("GET  HTTP/1.1") - len(stem))


def test_a_request_line_at_the_bound_is_served_and_past_it_is_414(base):
    assert len(request(path_of_line(MAX_REQUEST_LINE)).split(b"\r\n")[0]) == MAX_REQUEST_LINE
    status, _headers, body = send(base, request(path_of_line(MAX_REQUEST_LINE)))
    assert status == 200 and "games" in json.loads(body)
    # Past the API's bound, inside gunicorn's: the app's answer, with the headers every answer has.
    reply = send(base, request(path_of_line(MAX_REQUEST_LINE + 1)))
    error = expect_error(reply, 414, "request_line_too_long")
    assert str(MAX_REQUEST_LINE) in error["message"]
    assert reply[1]["x-content-type-options"] == "nosniff" and "content-security-policy" in reply[1]
    # Past gunicorn's own limit too: the worker's answer, the same shape.
    expect_error(send(base, request(path_of_line(20_000))), 414, "request_line_too_long")


def test_header_fields_too_long_or_too_many_are_431(base):
    at_bound = "X-Long: " + "y" * (MAX_HEADER_FIELD - len("X-Long: "))
    status, _h, _b = send(base, request("/api/games", extra=[at_bound]))
    assert status == 200
    expect_error(send(base, request("/api/games", extra=[at_bound + "y"])), 431, "headers_too_large")
    expect_error(
        send(base, request("/api/games", extra=["X-Long: " + "y" * 40_000])), 431, "headers_too_large"
    )
    many = [f"X-Field-{i}: 1" for i in range(MAX_HEADER_FIELDS + 5)]
    expect_error(send(base, request("/api/games", extra=many)), 431, "headers_too_large")
    # Past gunicorn's own count its C parser stops reading (a parse error, not a limit it
    # names): still the API's JSON, as a 400 `malformed` or a 431.
    status, headers, body = send(base, request("/api/games", extra=[f"X-Field-{i}: 1" for i in range(400)]))
    assert status in (400, 431) and headers["content-type"] == "application/json", (status, body[:200])
    assert json.loads(body)["error"]["code"] in ("malformed", "headers_too_large")


def test_an_unreadable_request_is_a_json_400(base):
    expect_error(send(base, b"NOT A REQUEST LINE AT ALL\r\n\r\n"), 400, "malformed")


def test_trace_is_405_with_allow(base):
    status, headers, body = send(base, request("/api/games", "TRACE"))
    assert status == 405 and json.loads(body)["error"]["code"] == "method_not_allowed"
    assert {"GET", "HEAD", "OPTIONS"} <= {m.strip() for m in headers["allow"].split(",")}
    assert "TRACE" not in headers["allow"]


def test_every_operation_documents_both_bounds(base):
    status, _h, body = send(base, request("/api/openapi.json"))
    assert status == 200
    doc = json.loads(body)
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            assert "request_line_too_long" in op["responses"]["414"]["x-error-codes"], (method, path)
            assert "headers_too_large" in op["responses"]["431"]["x-error-codes"], (method, path)
