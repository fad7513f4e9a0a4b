"""The request line and header fields as ``serve_http``'s server reads them.

The answers owed to a client whose head is wrong, and the forms of a right one that are
easy to get wrong. Raw sockets on 127.0.0.1 throughout. (Ambiguous framing of the body:
test_http_framing.py.)
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest

from mcp_sync.transports.http_server import HttpServerHandle, serve_http
from tests.http_server_helpers import INITIALIZE, exchange_raw, make_server

pytestmark = pytest.mark.timeout(30)

BODY = json.dumps(INITIALIZE).encode()


@pytest.fixture
def served() -> Iterator[HttpServerHandle]:
    with serve_http(make_server()) as handle:
        yield handle


def _exchange(handle: HttpServerHandle, head: bytes, body: bytes = b"") -> bytes:
    """Send ``head`` and ``body``, half-close, and read all the server says."""
    return exchange_raw(handle.host, handle.port, head + body)


def _status(received: bytes) -> bytes:
    """The status code of the first answer in ``received`` (HTTP/1.0 or 1.1)."""
    assert received.startswith((b"HTTP/1.0 ", b"HTTP/1.1 ")), received[:200]
    return received.split(b" ", 2)[1]


def _post_head(port: int, *fields: str, request_line: str = "POST /mcp HTTP/1.1") -> bytes:
    lines = [request_line, f"Host: 127.0.0.1:{port}", *fields, ""]
    return ("\r\n".join(lines) + "\r\n").encode("latin-1")


def _initialize_head(port: int, *fields: str, request_line: str = "POST /mcp HTTP/1.1") -> bytes:
    return _post_head(port, "Content-Type: application/json",
                      f"Content-Length: {len(BODY)}", *fields, request_line=request_line)


def test_a_well_formed_head_is_served(served: HttpServerHandle) -> None:
    received = _exchange(served, _initialize_head(
        served.port, "Accept: application/json, text/event-stream"), BODY)
    assert received.startswith(b"HTTP/1.1 200 ")
    assert b'"protocolVersion"' in received


def test_a_folded_field_is_one_field(served: HttpServerHandle) -> None:
    # An obsolete line fold continues the field above it: the Accept value here names
    # both types only once the two lines are read as one.
    received = _exchange(served, _initialize_head(
        served.port, "Accept: application/json,", "\ttext/event-stream"), BODY)
    assert received.startswith(b"HTTP/1.1 200 ")
    assert b"Content-Type: text/event-stream" in received


def test_field_names_are_read_without_regard_to_case(served: HttpServerHandle) -> None:
    head = _post_head(served.port, "content-type: application/json",
                      f"CONTENT-LENGTH: {len(BODY)}",
                      "aCCEPT: application/json, text/event-stream")
    assert _exchange(served, head, BODY).startswith(b"HTTP/1.1 200 ")


@pytest.mark.parametrize("request_line", [
    "POST /mcp HTTP/1.x",
    "POST /mcp HTTP/12345678901.1",
    "POST /mcp FTP/1.1",
    "POST /mcp HTTP/1.1 extra",
    "POST",
])
def test_a_bad_request_line_is_refused(served: HttpServerHandle, request_line: str) -> None:
    received = _exchange(served, _initialize_head(served.port, request_line=request_line), BODY)
    assert _status(received) == b"400"


@pytest.mark.parametrize("field", [
    "No colon here",
    "Space-Before-Colon : value",
    ": no name",
    " folded first line",
])
def test_a_bad_header_line_is_refused(served: HttpServerHandle, field: str) -> None:
    request_line = "POST /mcp HTTP/1.1"
    head = f"{request_line}\r\n{field}\r\nHost: 127.0.0.1:{served.port}\r\n\r\n".encode()
    received = _exchange(served, head)
    assert _status(received) == b"400"
    assert b"Connection: close" in received


def test_a_field_line_too_long_is_431(served: HttpServerHandle) -> None:
    head = _initialize_head(served.port, "X-Long: " + "a" * 70_000)
    received = _exchange(served, head, BODY)
    assert _status(received) == b"431"


def test_a_head_over_64_kib_in_many_fields_is_431(served: HttpServerHandle) -> None:
    fields = [f"X-Field-{n}: {'v' * 1000}" for n in range(70)]
    received = _exchange(served, _initialize_head(served.port, *fields), BODY)
    assert _status(received) == b"431"


def test_a_hundred_fields_are_fine(served: HttpServerHandle) -> None:
    fields = [f"X-Field-{n}: {n}" for n in range(96)]
    fields.append("Accept: application/json, text/event-stream")
    received = _exchange(served, _initialize_head(served.port, *fields), BODY)
    assert received.startswith(b"HTTP/1.1 200 "), received[:200]


def test_a_path_starting_with_two_slashes_stays_a_path(served: HttpServerHandle) -> None:
    received = _exchange(served, _initialize_head(
        served.port, "Accept: application/json, text/event-stream",
        request_line="POST //mcp HTTP/1.1"), BODY)
    assert received.startswith(b"HTTP/1.1 200 ")  # //mcp is /mcp, never a host "mcp"


def test_an_http_1_0_request_is_answered_and_closed(served: HttpServerHandle) -> None:
    received = _exchange(served, _initialize_head(
        served.port, "Accept: application/json", request_line="POST /mcp HTTP/1.0"), BODY)
    assert _status(received) == b"200"
    assert b"Connection: close" in received
    assert b'"protocolVersion"' in received


def test_expect_100_continue_gets_one_interim_answer(served: HttpServerHandle) -> None:
    head = _initialize_head(served.port, "Accept: application/json", "Expect: 100-continue")
    with socket.create_connection((served.host, served.port), timeout=10) as sock:
        sock.sendall(head)
        interim = b""
        while not interim.endswith(b"\r\n\r\n"):
            chunk = sock.recv(1)
            assert chunk, interim
            interim += chunk
        assert interim == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(BODY)
        sock.shutdown(socket.SHUT_WR)
        rest = b""
        while chunk := sock.recv(65536):
            rest += chunk
    assert rest.startswith(b"HTTP/1.1 200 ")
    assert b"100 Continue" not in rest
