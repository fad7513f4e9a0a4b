"""``serve_http`` refuses a request whose body's extent is ambiguous (RFC 9112 6.3).

Two parties that read the same bytes as different requests (a proxy in front and the
server behind) are how requests are smuggled: each refusal here is a 4xx, and the
server serves the next, well-formed request as ever. Raw bytes over a socket on
127.0.0.1.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from mcp_sync import Client
from mcp_sync.transports.http_server import HttpServerHandle, serve_http
from tests.http_server_helpers import INITIALIZE, exchange_raw, make_server

pytestmark = pytest.mark.timeout(30)

BODY = json.dumps(INITIALIZE).encode()


@pytest.fixture
def served() -> Iterator[HttpServerHandle]:
    with serve_http(make_server()) as handle:
        yield handle


def _head(port: int, *fields: str) -> bytes:
    lines = ["POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}",
             "Accept: application/json, text/event-stream", "Content-Type: application/json",
             *fields, "", ""]
    return "\r\n".join(lines).encode("latin-1")


def _chunked(body: bytes) -> bytes:
    return b"%x\r\n%b\r\n0\r\n\r\n" % (len(body), body)


def _exchange(handle: HttpServerHandle, data: bytes) -> bytes:
    return exchange_raw(handle.host, handle.port, data)


def _status(received: bytes) -> int:
    assert received.startswith((b"HTTP/1.0 ", b"HTTP/1.1 ")), received[:200]
    return int(received.split(b" ", 2)[1])


def _ambiguous(port: int) -> dict[str, bytes]:
    return {
        "two different Content-Length fields":
            _head(port, f"Content-Length: {len(BODY)}", f"Content-Length: {len(BODY) + 5}")
            + BODY + b"x" * 5,
        "one Content-Length field with two values":
            _head(port, f"Content-Length: {len(BODY)}, {len(BODY) + 5}") + BODY + b"x" * 5,
        "a signed Content-Length":
            _head(port, f"Content-Length: +{len(BODY)}") + BODY,
        "Content-Length with Transfer-Encoding: chunked":
            _head(port, f"Content-Length: {len(BODY)}", "Transfer-Encoding: chunked")
            + _chunked(BODY),
        "a chunk size that is no hex number":
            _head(port, "Transfer-Encoding: chunked") + b"zz\r\n" + BODY + b"\r\n0\r\n\r\n",
        "a negative chunk size":
            _head(port, "Transfer-Encoding: chunked") + b"-5\r\nhello\r\n0\r\n\r\n",
        "a transfer coding other than chunked last":
            _head(port, "Transfer-Encoding: chunked, gzip") + BODY,
        "a head of 320 KB":
            _head(port, "X-Padding: " + "a" * 320_000, f"Content-Length: {len(BODY)}") + BODY,
    }


CASES = list(_ambiguous(0))


@pytest.mark.parametrize("case", CASES)
def test_ambiguous_framing_is_refused_and_the_next_request_served(
        served: HttpServerHandle, case: str) -> None:
    received = _exchange(served, _ambiguous(served.port)[case])
    assert 400 <= _status(received) < 500 or _status(received) == 501, received[:200]
    assert b'"protocolVersion"' not in received  # the application never saw it
    with Client.http(served.url, timeout=10) as client:
        assert client.call_tool("add", {"a": 2, "b": 3}).content[0].text == "5"


def test_nothing_follows_a_refusal_on_its_connection(served: HttpServerHandle) -> None:
    """A second request smuggled behind an ambiguous first is never answered."""
    smuggled = _head(served.port, f"Content-Length: {len(BODY)}") + BODY
    first = _head(served.port, "Content-Length: 5", "Transfer-Encoding: chunked") \
        + _chunked(b"hello")
    received = _exchange(served, first + smuggled)
    assert 400 <= _status(received) < 500
    assert received.count(b"HTTP/1.") == 1


def test_well_framed_bodies_are_served(served: HttpServerHandle) -> None:
    """The same body by length and by chunks (the control for the cases above)."""
    for data in (_head(served.port, f"Content-Length: {len(BODY)}") + BODY,
                 _head(served.port, "Transfer-Encoding: chunked") + _chunked(BODY)):
        received = _exchange(served, data)
        assert _status(received) == 200, received[:200]
        assert b'"protocolVersion"' in received
