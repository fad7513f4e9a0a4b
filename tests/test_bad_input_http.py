"""Bad input thrown at the Streamable HTTP server.

The same bodies as the stdio and memory table, POSTed inside a session; then what only
HTTP has: methods, ``Accept``, ``Content-Type``, ``Origin``, session ids, the protocol
version header, bodies that are too large or shorter than their ``Content-Length``.
Status codes are checked in-process with werkzeug's test client; truncated bodies and
large messages go over a real socket on 127.0.0.1. After every case a ping in the same
session must still be answered.
"""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from werkzeug.test import TestResponse

from mcp_sync import Client
from mcp_sync.errors import McpError, RequestTimeout
from mcp_sync.transports.http_server import StreamableHttpApp, make_wsgi_app, serve_http
from tests.bad_input_support import (
    INITIALIZE,
    LARGE_TEXT,
    Case,
    Expect,
    answer_like,
    call_like,
    check_frames,
    expect_for,
    make_server,
    request,
    server_cases,
    text_of,
)
from tests.http_server_helpers import HEADERS, WsgiPeer, parse_sse
from tests.strategies import frame_bytes, json_values, strict_json

pytestmark = pytest.mark.timeout(30)

PROPERTY = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
PING = request("http-ping", "ping")


@pytest.fixture(params=[True, False], ids=["json", "sse"])
def app(request: pytest.FixtureRequest) -> Iterator[StreamableHttpApp]:
    with make_wsgi_app(make_server(), json_response=request.param) as app:
        yield app


@pytest.fixture
def peer(app: StreamableHttpApp) -> WsgiPeer:
    peer = WsgiPeer(app)
    peer.initialize()
    return peer


def answers(response: TestResponse) -> list[Any]:
    """The JSON-RPC messages of a POST answer, SSE or JSON, arrays flattened."""
    content_type = response.headers.get("Content-Type", "")
    if content_type.startswith("text/event-stream"):
        values = [json.loads(event.data) for event in parse_sse(response.get_data())
                  if event.data]
    elif content_type.startswith("application/json"):
        values = [json.loads(response.get_data())]
    else:
        assert not response.get_data(), response.get_data()
        return []
    flat: list[Any] = []
    for value in values:
        flat.extend(value if isinstance(value, list) else [value])
    return flat


def still_serves(peer: WsgiPeer) -> None:
    """PING-2: the session answers a ping after the case."""
    response = peer.post(PING)
    assert response.status_code == 200, response.get_data()
    assert answers(response) == [{"jsonrpc": "2.0", "id": "http-ping", "result": {}}]


def error_body(response: TestResponse, status: int) -> dict[str, Any]:
    """HTTP-9, AMBIG-3: an HTTP error carries a JSON-RPC error object as its body."""
    assert response.status_code == status, (response.status_code, response.get_data())
    assert response.headers["Content-Type"].startswith("application/json")
    body: dict[str, Any] = json.loads(response.get_data())
    assert body["jsonrpc"] == "2.0" and set(body) == {"jsonrpc", "id", "error"}, body
    assert isinstance(body["error"]["code"], int) and isinstance(body["error"]["message"], str)
    assert not -32099 <= body["error"]["code"] <= -32020, body  # read as 2026 by new clients
    return body


def check_post(response: TestResponse, status: int, expect: Expect, what: Any) -> None:
    """The status, and the JSON-RPC answers of the body against ``expect``."""
    flat = Expect(expect.replies)
    if status == 400:
        body = error_body(response, 400)
        if expect.replies and not expect.batch:
            check_frames([body], flat, what)
        else:
            assert body["error"]["code"] in (-32700, -32600, -32602), body
        return
    assert response.status_code == status, (what, response.status_code, response.get_data())
    check_frames(answers(response), flat, what)
    if status == 202:
        assert response.get_data() == b""


# --- the table of bodies ------------------------------------------------------------------------


@pytest.mark.parametrize("case", [
    pytest.param(case, id=f"{case.name}[{case.ids.replace(' ', ',')},HTTP-8,HTTP-9,HTTP-10]")
    for case in server_cases()])
def test_bad_body_gets_its_status_and_answer_and_the_session_lives(
        peer: WsgiPeer, case: Case, wire: Any) -> None:
    """HTTP-8/9/10, AMBIG-3/11 and the digest ids of the case: the body gets 400 with a
    JSON-RPC error (not a message at all), 202 (nothing to answer) or 200 with exactly
    the answers the stdio table expects; then a ping in the same session is answered."""
    raw = case.frame if isinstance(case.frame, bytes) else json.dumps(case.frame).encode()
    with wire.allow_invalid():
        response = peer.post(None, raw=raw)
    check_post(response, case.http, case.expect, case.frame)
    still_serves(peer)


def _http_status(value: Any) -> int:
    """HTTP-8/9/10: 400 for a body that is no message at all, 202 when nothing is owed."""
    if isinstance(value, list):
        expect = expect_for(value)
        if value and not (expect.replies and not expect.batch):
            return 200 if expect.replies else 202
        return 400
    if not isinstance(value, dict):
        return 400
    if not (call_like(value) or answer_like(value)):
        return 400
    return 200 if expect_for(value).replies else 202


@pytest.mark.timeout(60)
def test_any_json_body_gets_the_oracles_answer_http_8_http_9_jsonrpc_12(
        app: StreamableHttpApp, wire: Any) -> None:
    """HTTP-8/9/10, JSONRPC-1…14, BATCH-3/5: any JSON body gets the status and answers
    the oracle predicts; the session serves on."""
    peer = WsgiPeer(app)
    peer.initialize()

    @PROPERTY
    @given(value=json_values() | st.lists(json_values(4), min_size=1, max_size=3))
    def check(value: Any) -> None:
        response = peer.post(value)
        check_post(response, _http_status(value), expect_for(value), value)
        still_serves(peer)

    with wire.allow_invalid():
        check()


@pytest.mark.timeout(60)
def test_any_bytes_body_gets_400_or_the_oracles_answer_http_9_jsonrpc_12(
        app: StreamableHttpApp, wire: Any) -> None:
    """HTTP-9, JSONRPC-12, AMBIG-3: a body that is not UTF-8 JSON is 400 with -32700."""
    peer = WsgiPeer(app)
    peer.initialize()

    @PROPERTY
    @given(data=frame_bytes())
    def check(data: bytes) -> None:
        parsed, value = strict_json(data)
        response = peer.post(None, raw=data)
        if parsed:
            check_post(response, _http_status(value), expect_for(value), value)
        else:
            assert error_body(response, 400)["error"]["code"] == -32700
        still_serves(peer)

    with wire.allow_invalid():
        check()


# --- headers and methods --------------------------------------------------------------------


@pytest.mark.parametrize("method", ["PUT", "PATCH", "TRACE", "PROPFIND"])
def test_other_methods_are_405_with_allow_http_1(peer: WsgiPeer, method: str) -> None:
    """HTTP-1: only GET, POST, DELETE (and OPTIONS) are served: 405 with ``Allow``."""
    response = peer.client.open("/mcp", method=method, headers={
        **HEADERS, "Mcp-Session-Id": peer.session_id or ""}, data=json.dumps(PING))
    assert response.status_code == 405
    assert set(response.headers["Allow"].split(", ")) >= {"GET", "POST", "DELETE"}
    still_serves(peer)


@pytest.mark.parametrize("accept", [
    "text/html", "application/xml", "image/png", "application/json;q=0",
    "text/event-stream;q=0, application/json;q=0"])
def test_unacceptable_accept_is_406_http_6_ambig_12(peer: WsgiPeer, accept: str) -> None:
    """HTTP-6, AMBIG-12: an ``Accept`` naming nothing we can send gets 406."""
    error_body(peer.post(PING, headers={"Accept": accept}), 406)
    still_serves(peer)


@pytest.mark.parametrize("accept", ["", "*/*", "application/*", "application/json"])
def test_missing_or_broad_accept_is_served_http_6_ambig_12(peer: WsgiPeer, accept: str) -> None:
    """HTTP-6 (a client MUST), AMBIG-12: the server is lenient with an absent, wildcard or
    JSON-only ``Accept`` (no header means anything, RFC 9110) and answers the request."""
    headers = {**HEADERS, "Mcp-Session-Id": peer.session_id or ""}
    if accept:
        headers["Accept"] = accept
    else:
        del headers["Accept"]
    response = peer.client.post("/mcp", data=json.dumps(PING), headers=headers, buffered=True)
    assert response.status_code == 200
    assert answers(response)[0]["result"] == {}


@pytest.mark.parametrize("content_type", [
    None, "", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
    "application/jsonx", "text/json", "application/json-patch+json"])
def test_wrong_content_type_is_415_ambig_12(peer: WsgiPeer, content_type: str | None) -> None:
    """AMBIG-12: a body that is not ``application/json`` gets 415 and is not served."""
    headers = {**HEADERS, "Mcp-Session-Id": peer.session_id or ""}
    if content_type is None:
        del headers["Content-Type"]
    else:
        headers["Content-Type"] = content_type
    response = peer.client.post("/mcp", data=json.dumps(PING), headers=headers, buffered=True)
    error_body(response, 415)
    still_serves(peer)


@pytest.mark.parametrize("origin", [
    "http://evil.example", "null", "", "http://localhost.evil.example",
    "http://127.0.0.1.nip.io", "http://localhost:80@evil.example", "http://localhost:",
    "file://", "http://[::1].evil.example:80", "ftp://localhost:21",
    "http://localhost:8000/path", "http://localhost:8000 http://evil.example",
    "http://localhost:\u00b2",  # a non-ASCII digit is no port
])
def test_bad_origin_is_403_http_2_ambig_14(peer: WsgiPeer, origin: str) -> None:
    """HTTP-2, AMBIG-14: an Origin that is not a loopback page is refused with 403, for
    POST, GET and DELETE alike; the session is untouched."""
    session = {"Mcp-Session-Id": peer.session_id or ""}
    error_body(peer.post(PING, headers={"Origin": origin}), 403)
    assert peer.client.get("/mcp", headers={
        "Accept": "text/event-stream", "Origin": origin, **session}).status_code == 403
    assert peer.client.delete("/mcp", headers={"Origin": origin, **session}).status_code == 403
    still_serves(peer)


@pytest.mark.parametrize("session_id", [
    "nope", "", " ", "x" * 10_000, "\x7f\x80\xff", "../../etc/passwd", "%00",
    "0" * 43, "null"])
def test_unknown_or_garbage_session_id_is_404_http_34_ambig_15(
        peer: WsgiPeer, session_id: str) -> None:
    """HTTP-34, AMBIG-15: any id naming no session gets 404, on POST, GET and DELETE
    alike; the real session is untouched."""
    headers = {"Mcp-Session-Id": session_id}
    error_body(peer.post(PING, headers=headers), 404)
    error_body(peer.client.get("/mcp", headers={"Accept": "text/event-stream", **headers}),
               404)
    error_body(peer.client.delete("/mcp", headers=headers), 404)
    still_serves(peer)


@pytest.mark.parametrize("body", [
    PING, request(1, "tools/list"), request(2, "bogus/method"),
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 3, "result": {}}, [PING]])
def test_missing_session_id_is_400_http_33(peer: WsgiPeer, body: Any) -> None:
    """HTTP-33, AMBIG-15: without ``Mcp-Session-Id`` anything but initialize is 400 (an
    unknown method's error says -32601, so newer clients fall back); GET and DELETE too."""
    response = peer.post(body, session=False)
    error = error_body(response, 400)
    if isinstance(body, dict) and body.get("method") == "bogus/method":
        assert error["error"]["code"] == -32601 and error["id"] == 2
    assert peer.client.get("/mcp", headers={"Accept": "text/event-stream"}).status_code == 400
    assert peer.client.delete("/mcp").status_code == 400
    still_serves(peer)


@pytest.mark.parametrize("version", [
    "1999-01-01", "", "garbage", "2025-03-26, 2024-11-05", "2025-3-26", "2026-07-28"])
def test_unsupported_protocol_version_header_is_400_version_6(
        peer: WsgiPeer, version: str) -> None:
    """VERSION-6, DESIGN (2025-06-18 header): a version header naming no version
    we speak is 400 with a JSON-RPC error carrying the request's id; GET and DELETE
    too; the session goes on."""
    body = error_body(peer.post(request(7, "tools/list"),
                                headers={"MCP-Protocol-Version": version}), 400)
    assert body["id"] == 7 and body["error"]["code"] == -32600
    session = {"Mcp-Session-Id": peer.session_id or "", "MCP-Protocol-Version": version}
    assert peer.client.get("/mcp", headers={
        "Accept": "text/event-stream", **session}).status_code == 400
    assert peer.client.delete("/mcp", headers=session).status_code == 400
    still_serves(peer)


def test_body_over_max_body_size_is_413_http_9() -> None:
    """HTTP-9: a body over ``max_body_size`` gets 413 with a JSON-RPC error; the session
    lives; a body exactly at the limit is served."""
    with make_wsgi_app(make_server(), json_response=True, max_body_size=1000) as app:
        peer = WsgiPeer(app)
        peer.initialize()
        big = json.dumps(request(1, "tools/call", {"name": "echo",
                                                   "arguments": {"text": "x" * 2000}}))
        error_body(peer.post(None, raw=big.encode()), 413)

        still_serves(peer)
        fits = request(2, "tools/call", {"name": "echo", "arguments": {"text": ""}})
        padding = 1000 - len(json.dumps(fits))
        fits["params"]["arguments"]["text"] = "y" * padding
        assert len(json.dumps(fits)) == 1000
        assert answers(peer.post(fits))[0]["result"]["content"][0]["text"] == "y" * padding


# --- over a real socket -----------------------------------------------------------------------


def _raw_post(port: int, session_id: str, body: bytes, length: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Accept: application/json, text/event-stream\r\n"
            f"Content-Type: application/json\r\nMcp-Session-Id: {session_id}\r\n"
            f"Content-Length: {length}\r\n\r\n").encode()
    sock.sendall(head + body)
    return sock


def _status_or_closed(sock: socket.socket) -> int | None:
    """The status of the answer on ``sock``; None if the server closed it unanswered."""
    data = b""
    while b"\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            return None
        data += chunk
    return int(data.split(b" ", 2)[1])


def _session(url: str) -> str:
    answer = requests.post(url, json=INITIALIZE, headers=HEADERS, timeout=10)
    assert answer.status_code == 200
    session_id = answer.headers["Mcp-Session-Id"]
    requests.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                  headers={**HEADERS, "Mcp-Session-Id": session_id}, timeout=10)
    return session_id


def _ping_over_http(url: str, session_id: str) -> None:
    answer = requests.post(url, json=PING, headers={**HEADERS, "Mcp-Session-Id": session_id},
                           timeout=10)
    assert answer.status_code == 200
    assert '"result":{}' in answer.text


def test_body_shorter_than_content_length_then_closed_is_400_http_9() -> None:
    """HTTP-9: a body that ends (the client half-closes) before its Content-Length is
    answered 400 or the connection is closed, at once; the server serves others."""
    with serve_http(make_server(), json_response=True) as handle:
        session_id = _session(handle.url)
        sock = _raw_post(handle.port, session_id, json.dumps(PING).encode()[:20], 1000)
        with sock:
            sock.shutdown(socket.SHUT_WR)
            assert _status_or_closed(sock) in (400, None)
        _ping_over_http(handle.url, session_id)


def test_body_shorter_than_content_length_held_open_ends_http_9() -> None:
    """HTTP-9: a client that sends part of its body and then nothing must not hold its
    request forever: after ``io_timeout`` (here 0.5 s; the socket waits up to 10 s) it is
    answered 400 or the connection closed. Others are served meanwhile."""
    with serve_http(make_server(), json_response=True, io_timeout=0.5) as handle:
        session_id = _session(handle.url)
        sock = _raw_post(handle.port, session_id, json.dumps(PING).encode()[:20], 1000)
        with sock:
            _ping_over_http(handle.url, session_id)  # others are served meanwhile
            sock.settimeout(10.0)
            try:
                status = _status_or_closed(sock)
            except TimeoutError:
                pytest.fail("the server still waits for the rest of the body")
            assert status in (400, None)


def test_chunked_body_over_max_body_size_is_413_http_9() -> None:
    """HTTP-9: a chunked body (no Content-Length) is cut off at ``max_body_size`` with
    413, never buffered whole; the server serves on."""
    with serve_http(make_server(), json_response=True, max_body_size=1000) as handle:
        session_id = _session(handle.url)
        sock = socket.create_connection(("127.0.0.1", handle.port), timeout=5)
        with sock:
            chunk = b"x" * 600
            # One write: the server may answer before it has read everything.
            sock.sendall((f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{handle.port}\r\n"
                          "Accept: application/json, text/event-stream\r\n"
                          f"Content-Type: application/json\r\nMcp-Session-Id: {session_id}"
                          "\r\nTransfer-Encoding: chunked\r\n\r\n").encode()
                         + b"%x\r\n%s\r\n" % (len(chunk), chunk) * 4 + b"0\r\n\r\n")
            assert _status_or_closed(sock) == 413
        _ping_over_http(handle.url, session_id)


@pytest.mark.timeout(60)
def test_twenty_mebibytes_round_trip_intact_over_http_http_10_http_11() -> None:
    """HTTP-10, HTTP-11: with ``max_body_size`` raised, a 20 MiB argument goes up in one
    POST and its 20 MiB answer comes back, byte for byte (JSON answer mode: the SSE
    mode's parser is quadratic in the event size, see test_bad_input_client.py)."""
    with serve_http(make_server(), json_response=True,
                    max_body_size=64 * 1024 * 1024) as handle, \
            Client.http(handle.url, timeout=50) as client:
        assert text_of(client.call_tool("echo", {"text": LARGE_TEXT})) == LARGE_TEXT
        client.ping()


@pytest.mark.parametrize(("head", "body"), [
    ("Content-Length: abc\r\n", b""),
    ("Content-Length: -5\r\n", b""),
    ("Transfer-Encoding: chunked\r\n", b"ffff\r\n" + json.dumps(PING).encode()),
    ("Transfer-Encoding: chunked\r\n", b"zz\r\n{}\r\n0\r\n\r\n"),
])
def test_malformed_framing_is_400_or_closed_http_9(head: str, body: bytes) -> None:
    """HTTP-9: a Content-Length that is no number, or a chunked body that is cut short
    (the client half-closes) or has a chunk size that is no number, ends at once with
    400 or a closed connection; the server serves on."""
    with serve_http(make_server(), json_response=True) as handle:
        session_id = _session(handle.url)
        sock = socket.create_connection(("127.0.0.1", handle.port), timeout=5)
        with sock:
            sock.sendall((f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{handle.port}\r\n"
                          "Accept: application/json, text/event-stream\r\n"
                          f"Content-Type: application/json\r\nMcp-Session-Id: {session_id}"
                          f"\r\n{head}\r\n").encode() + body)
            sock.shutdown(socket.SHUT_WR)
            assert _status_or_closed(sock) in (400, None)
        _ping_over_http(handle.url, session_id)


@pytest.mark.parametrize("last_event_id", ["garbage", "nostream:5", ":", "x:-1", "\x7f:1"])
def test_bad_last_event_id_is_400_http_26_ambig_16(peer: WsgiPeer, last_event_id: str) -> None:
    """HTTP-26/27, AMBIG-16: a Last-Event-ID that names no stream of the session is 400
    with a JSON-RPC error; the session serves on."""
    response = peer.client.get("/mcp", headers={
        "Accept": "text/event-stream", "Mcp-Session-Id": peer.session_id or "",
        "Last-Event-ID": last_event_id})
    error_body(response, 400)
    still_serves(peer)


@pytest.mark.parametrize("json_response", [True, False], ids=["json", "sse"])
def test_answer_over_the_clients_max_message_size_fails_the_call_http_11(
        json_response: bool, caplog: pytest.LogCaptureFixture) -> None:
    """HTTP-11, JSONRPC-13: an answer larger than the client's ``max_message_size`` is
    not buffered; the call fails with a typed error at once (over HTTP the answer's
    stream tells which call it was) and the client goes on. ``caplog`` keeps every
    record: they must not keep the dropped stream's socket open (the leak check)."""
    with serve_http(make_server(), json_response=json_response) as handle, \
            Client.http(handle.url, timeout=20, max_message_size=4096) as client:
        with pytest.raises(McpError) as raised:
            client.call_tool("echo", {"text": "z" * 10_000}, timeout=20)
        assert not isinstance(raised.value, RequestTimeout), raised.value
        assert text_of(client.call_tool("echo", {"text": "small"})) == "small"
        client.ping()


def test_log_records_of_a_dropped_stream_do_not_hold_the_connection_http_11() -> None:
    """HTTP-11 (nothing leaks): what the client logs when it drops an event stream that
    is too large holds no live exception, so a handler that keeps records (a buffer, a
    queue, a test's capture) cannot keep the stream's socket open."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger = logging.getLogger("mcp_sync")
    handler = Keep(logging.DEBUG)
    old_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        with serve_http(make_server()) as handle, \
                Client.http(handle.url, timeout=20, max_message_size=4096) as client, \
                pytest.raises(McpError):
            client.call_tool("echo", {"text": "z" * 10_000}, timeout=20)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
    held = [record.getMessage() for record in records if any(
        isinstance(arg, BaseException) and arg.__traceback__ is not None
        for arg in (record.args if isinstance(record.args, tuple) else ()))]
    records.clear()
    assert not held, held
