"""The Streamable HTTP client transport against servers played by hand.

Each test serves a small WSGI application with werkzeug's threaded server on 127.0.0.1
and drives :class:`~mcp_sync.Client` (or the transport itself) against it. The
application records every HTTP request it receives, so the tests assert on the wire as
the server saw it: methods, headers and bodies, each body checked against the 2025-03-26
schema. Nothing sleeps: streams that must stay open block on queues that the test (or
the server's shutdown) feeds, and every wait is bounded.
"""

from __future__ import annotations

import json
import logging
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import requests
from werkzeug.wrappers import Response as WsgiResponse

from mcp_sync import Client, Context, ProtocolVersionError, Server
from mcp_sync.errors import ConnectionClosed, ConnectionLost, InvalidParams, SessionExpired
from mcp_sync.jsonrpc import Batch, Request, Response
from mcp_sync.protocol._sse import format_event
from mcp_sync.transports.http_client import HttpClientTransport, HttpError
from mcp_sync.transports.http_server import serve_http
from tests.http_client_helpers import (
    BOTH,
    WAIT,
    FakeServer,
    Play,
    Seen,
    json_reply,
    open_client,
    posted_methods,
    result,
    serving,
    sse_body,
)


@pytest.fixture
def serve() -> Iterator[Callable[[Any], FakeServer]]:
    """Starts a Play, an OldServer or a plain handler; stops them all after the test."""
    yield from serving()


# --- POSTs and their answers ---------------------------------------------------------------


@pytest.mark.timeout(30)
@pytest.mark.parametrize("mode", ["json", "sse"])
def test_each_message_is_its_own_post_with_the_right_headers_http_5_6_7_11_31(
        serve: Any, mode: str) -> None:
    """HTTP-5, HTTP-6, HTTP-7, HTTP-11, HTTP-29, HTTP-31, AMBIG-12: one POST per message,
    Accept naming both types, a JSON Content-Type; the session id and the negotiated
    version on every POST after initialize; both reply styles understood."""
    server = serve(Play(mode))
    with open_client(server.url) as client:
        assert client.protocol_version == "2025-03-26"
        assert [tool.name for tool in client.list_tools()] == ["echo"]
        assert client.call_tool("echo", {"text": "Zürich ✓"}).content[0].text \
            == '{"text": "Zürich ✓"}'
        client.ping()
        transport = client._engine.transport
        assert isinstance(transport, HttpClientTransport)
        assert transport.session_id == "s-1"
    posts = server.requests("POST")
    assert posted_methods(server) == ["initialize", "notifications/initialized",
                                      "tools/list", "tools/call", "ping"]
    for seen in posts:
        assert seen.header("Accept") == BOTH
        assert seen.header("Content-Type") == "application/json"
    first, *later = posts
    assert first.header("Mcp-Session-Id") is None
    assert first.header("MCP-Protocol-Version") is None
    for seen in later:
        assert seen.header("Mcp-Session-Id") == "s-1"
        assert seen.header("MCP-Protocol-Version") == "2025-03-26"
    server.check_bodies()


@pytest.mark.timeout(30)
def test_progress_on_the_post_stream_arrives_before_the_result_http_13_ambig_13(
        serve: Any) -> None:
    """HTTP-10, HTTP-13, AMBIG-13: progress events precede the result on the POST's
    stream; events with another name or with empty data are skipped."""
    play = Play("sse")

    def tool(message: dict[str, Any]) -> Any:
        token = message["params"]["_meta"]["progressToken"]
        progress = [{"jsonrpc": "2.0", "method": "notifications/progress",
                     "params": {"progressToken": token, "progress": n, "total": 3}}
                    for n in (1, 2, 3)]
        body = (b"id: p:0\ndata:\n\n"  # a priming event: an id, empty data
                + format_event("not json at all", event="keepalive")
                + b": a comment\n\n"
                + sse_body(progress, 1, "p")
                + sse_body([result(message, {"content": [{"type": "text", "text": "done"}]})],
                           4, "p"))
        return WsgiResponse(body, mimetype="text/event-stream")

    play.tool = tool
    server = serve(play)
    reports: list[tuple[float, float | None]] = []
    with open_client(server.url) as client:
        answer = client.call_tool("slow", on_progress=lambda p, t, m: reports.append((p, t)))
        assert list(reports) == [(1, 3), (2, 3), (3, 3)]
        assert answer.content[0].text == "done"
    server.check_bodies()


@pytest.mark.timeout(30)
def test_a_dropped_stream_is_resumed_with_last_event_id_http_26_27(serve: Any) -> None:
    """HTTP-26, HTTP-27, AMBIG-16: the POST's stream ends after one event; the client GETs
    with ``Last-Event-ID`` (and the session id), and the replayed answer completes the call.
    The server's ``retry:`` sets the wait before reconnecting."""
    play = Play("sse")
    pending: dict[str, Any] = {}

    def tool(message: dict[str, Any]) -> Any:
        pending["call"] = message
        token = message["params"]["_meta"]["progressToken"]
        first = sse_body([{"jsonrpc": "2.0", "method": "notifications/progress",
                           "params": {"progressToken": token, "progress": 1}}], 1, "call")
        return WsgiResponse(b"retry: 20\n" + first, mimetype="text/event-stream")

    def get(seen: Seen) -> WsgiResponse:
        if seen.header("Last-Event-ID") != "call:1":
            return WsgiResponse(status=405)
        answer = result(pending["call"], {"content": [{"type": "text", "text": "resumed"}]})
        return WsgiResponse(sse_body([answer], 2, "call"), mimetype="text/event-stream")

    play.tool, play.get = tool, get
    server = serve(play)
    progress: list[float] = []
    with open_client(server.url) as client:
        answer = client.call_tool("slow", on_progress=lambda p, t, m: progress.append(p))
        assert answer.content[0].text == "resumed"
        assert progress == [1]
    resumes = [seen for seen in server.requests("GET") if seen.header("Last-Event-ID")]
    assert len(resumes) == 1
    assert resumes[0].header("Last-Event-ID") == "call:1"
    assert resumes[0].header("Mcp-Session-Id") == "s-1"
    assert resumes[0].header("Accept") == "text/event-stream"


@pytest.mark.timeout(30)
def test_a_silent_stream_is_resumed_after_the_read_timeout_http_16_26(serve: Any) -> None:
    """HTTP-16, HTTP-26: a stream that falls silent beyond ``read_timeout`` is treated as
    broken (not as a cancellation) and resumed from its last event id."""
    play = Play("sse")
    pending: dict[str, Any] = {}

    def tool(message: dict[str, Any]) -> Any:
        assert play.server is not None
        pending["call"] = message
        _, body = play.server.stream(iter([b"id: quiet:1\ndata:\n\n"]))
        return WsgiResponse(body, mimetype="text/event-stream")  # then nothing, ever

    def get(seen: Seen) -> WsgiResponse:
        if seen.header("Last-Event-ID") != "quiet:1":
            return WsgiResponse(status=405)
        answer = result(pending["call"], {"content": [{"type": "text", "text": "late"}]})
        return WsgiResponse(sse_body([answer], 2, "quiet"), mimetype="text/event-stream")

    play.tool, play.get = tool, get
    server = serve(play)
    with open_client(server.url, read_timeout=0.5, reconnect_delay=0.01) as client:
        assert client.call_tool("slow").content[0].text == "late"
    assert [seen.header("Last-Event-ID") for seen in server.requests("GET")
            if seen.header("Last-Event-ID")] == ["quiet:1"]


@pytest.mark.timeout(30)
def test_a_stream_that_cannot_be_resumed_fails_the_call_at_once(serve: Any) -> None:
    """HTTP-26: without an event id there is nothing to resume from, so the call fails
    with a clear HttpError instead of waiting for its whole timeout."""
    play = Play("sse")
    play.tool = lambda message: WsgiResponse(b"", mimetype="text/event-stream")
    server = serve(play)
    with open_client(server.url, timeout=60) as client:
        started = time.monotonic()
        with pytest.raises(HttpError, match="ended the event stream"):
            client.call_tool("gone")
        assert time.monotonic() - started < 10
        client.ping()  # the session is fine


@pytest.mark.timeout(30)
def test_server_request_on_a_post_stream_is_answered_by_post_http_7_13(serve: Any) -> None:
    """HTTP-7, HTTP-13: the server asks the client something on the call's stream; the
    client's answer is a POST of its own, and the stream then carries the result."""
    play = Play("sse")

    def tool(message: dict[str, Any]) -> Any:
        assert play.server is not None
        feed, body = play.server.stream(iter([sse_body([
            {"jsonrpc": "2.0", "id": "srv-1", "method": "ping"}])]))

        def finish() -> None:
            answer = play.client_answers.get(timeout=WAIT)
            feed.put(sse_body([result(message, {"content": [
                {"type": "text", "text": json.dumps(answer)}]})]))
            feed.put(None)

        threading.Thread(target=finish, name="test:finish-call").start()
        return WsgiResponse(body, mimetype="text/event-stream")

    play.tool = tool
    server = serve(play)
    with open_client(server.url) as client:
        text = client.call_tool("asks").content[0].text
    assert json.loads(text) == {"jsonrpc": "2.0", "id": "srv-1", "result": {}}
    server.check_bodies()


@pytest.mark.timeout(30)
def test_batch_is_one_post_and_an_array_answer_is_one_batch_http_7_ambig_11(
        serve: Any) -> None:
    """HTTP-7, BATCH-1, AMBIG-11: a batch goes out as one POST of an array; a JSON array
    answer is read back as one batch."""
    server = serve(Play("json", session=None))
    transport = HttpClientTransport(server.url, listen=False, legacy_fallback=False)
    try:
        transport.write([Request(1, "ping"), Request(2, "tools/list")])
        answer = transport.read()
    finally:
        transport.close()
    assert isinstance(answer, Batch)
    assert [item.id for item in answer.items if isinstance(item, Response)] == [1, 2]
    [seen] = server.requests("POST")
    assert [item["method"] for item in seen.body] == ["ping", "tools/list"]
    server.check_bodies()


@pytest.mark.timeout(30)
@pytest.mark.parametrize("mode", ["json", "sse"])
def test_an_answer_over_max_message_size_fails_the_call(serve: Any, mode: str) -> None:
    """HTTP-10 (no digest ID sets a size bound; the brief does): a body or event larger
    than ``max_message_size`` is refused, not buffered; the call fails with HttpError and
    the session goes on."""
    play = Play(mode)
    play.tool = lambda message: result(message, {"content": [
        {"type": "text", "text": "x" * 20_000}]})
    server = serve(play)
    with open_client(server.url, max_message_size=4096) as client:
        with pytest.raises(HttpError, match="max_message_size"):
            client.call_tool("big")
        client.ping()


@pytest.mark.timeout(30)
def test_http_error_statuses_become_clear_errors_http_9(serve: Any) -> None:
    """HTTP-9: a 4xx/5xx answer fails the call with HttpError carrying the status and the
    JSON-RPC message of the body; an unknown content type is an error too."""
    play = Play("json")
    answers = iter([
        json_reply({"jsonrpc": "2.0", "error": {"code": -32600, "message": "too busy"}},
                   status=503),
        WsgiResponse("<html>", content_type="text/html"),
    ])
    play.tool = lambda message: next(answers)
    server = serve(play)
    with open_client(server.url) as client:
        with pytest.raises(HttpError) as caught:
            client.call_tool("a")
        assert caught.value.status == 503
        assert caught.value.data["status"] == 503
        assert "HTTP 503" in caught.value.message and "too busy" in caught.value.message
        with pytest.raises(HttpError, match="text/html"):
            client.call_tool("b")
        client.ping()


# --- sessions -----------------------------------------------------------------------------


@pytest.mark.timeout(30)
def test_404_expires_the_session_and_the_client_starts_a_new_one_http_34_35(
        serve: Any) -> None:
    """HTTP-34, HTTP-35: a 404 to a POST with our session id fails its call with
    SessionExpired; the client initializes again without any session id, and uses the
    new id from then on."""
    play = Play("json")
    server = serve(play)
    with open_client(server.url) as client:
        client.ping()
        play.sessions += 1  # the server forgets "s-1"; its next session will be "s-1-3"
        with pytest.raises(SessionExpired):
            client.call_tool("echo", {"n": 1})
        assert [tool.name for tool in client.list_tools()] == ["echo"]
    posts = server.requests("POST")
    assert posted_methods(server) == [
        "initialize", "notifications/initialized", "ping", "tools/call",
        "initialize", "notifications/initialized", "tools/list"]
    assert posts[3].header("Mcp-Session-Id") == "s-1"
    assert posts[4].header("Mcp-Session-Id") is None
    assert posts[4].header("MCP-Protocol-Version") is None
    assert [seen.header("Mcp-Session-Id") for seen in posts[5:]] == ["s-1-3", "s-1-3"]
    [delete] = server.requests("DELETE")
    assert delete.header("Mcp-Session-Id") == "s-1-3"


@pytest.mark.timeout(30)
def test_close_deletes_the_session_with_user_headers_http_32_auth_11(serve: Any) -> None:
    """HTTP-31, HTTP-32, AUTH-11: user headers go on every POST, GET and DELETE; closing
    sends DELETE with the session id."""
    play = Play("json")
    server = serve(play)
    headers = {"Authorization": "Bearer t0ken", "X-Trace": "abc"}
    with open_client(server.url, headers=headers) as client:
        client.ping()
        server.wait_for(lambda seen: any(s.method == "GET" for s in seen))
    [delete] = server.requests("DELETE")
    assert delete.header("Mcp-Session-Id") == "s-1"
    assert delete.header("MCP-Protocol-Version") == "2025-03-26"
    assert {seen.method for seen in server.seen} == {"POST", "GET", "DELETE"}
    for seen in server.seen:
        assert seen.header("Authorization") == "Bearer t0ken"
        assert seen.header("X-Trace") == "abc"


@pytest.mark.timeout(30)
def test_a_version_we_do_not_speak_deletes_the_session_version_4(serve: Any) -> None:
    """VERSION-4: a result naming a version we cannot speak ends the connection: the
    session is deleted and nothing else (no initialized) is sent."""
    server = serve(Play("json", version="2030-01-01"))
    with pytest.raises(ProtocolVersionError):
        open_client(server.url)
    assert [(seen.method, seen.body and seen.body.get("method")) for seen in server.seen] \
        == [("POST", "initialize"), ("DELETE", None)]
    assert server.seen[1].header("Mcp-Session-Id") == "s-1"


@pytest.mark.timeout(30)
def test_a_delete_refused_with_405_is_fine_http_32(serve: Any) -> None:
    """HTTP-32: a server may refuse DELETE with 405; closing still ends cleanly."""
    play = Play("json")
    base = play.handle
    play.handle = lambda seen: (WsgiResponse(status=405) if seen.method == "DELETE"  # type: ignore[method-assign]
                                else base(seen))
    server = serve(play)
    client = open_client(server.url)
    client.ping()
    client.close()
    assert client.closed
    assert len(server.requests("DELETE")) == 1


@pytest.mark.timeout(30)
def test_cookies_reach_every_later_request_from_every_thread(serve: Any) -> None:
    """HTTP-31, DESIGN.md "HTTP" (sticky routing): a cookie set at initialize is sent by
    every sender thread, the GET listener and the DELETE, though no two share a Session."""
    play = Play("json")
    base = play.handle

    def handle(seen: Seen) -> WsgiResponse:
        response = base(seen)
        if seen.method == "POST" and seen.body.get("method") == "initialize":
            response.set_cookie("route", "node-7")
        return response

    play.handle = handle  # type: ignore[method-assign]
    server = serve(play)
    with open_client(server.url) as client:
        futures = [client.call_tool_async("echo", {"n": n}) for n in range(8)]
        for future in futures:
            future.result(WAIT)
        server.wait_for(lambda seen: any(s.method == "GET" for s in seen))
    later = server.seen[1:]
    assert {seen.method for seen in later} == {"POST", "GET", "DELETE"}
    for seen in later:
        assert seen.header("Cookie") == "route=node-7", (seen.method, seen.body)


@pytest.mark.timeout(30)
def test_a_server_without_sessions_gets_no_session_header_and_no_delete(serve: Any) -> None:
    """HTTP-29 (MAY): without an id at initialize, none is sent and nothing is deleted."""
    server = serve(Play("sse", session=None))
    with open_client(server.url) as client:
        client.ping()
    assert all(seen.header("Mcp-Session-Id") is None for seen in server.seen)
    assert server.requests("DELETE") == []


# --- the GET stream ------------------------------------------------------------------------


@pytest.mark.timeout(30)
def test_get_405_means_no_stream_and_is_not_retried_http_17_18(serve: Any) -> None:
    """HTTP-17, HTTP-18: after initialized the client GETs with Accept text/event-stream
    and the session id; a 405 is accepted once and for all."""
    server = serve(Play("json"))
    with open_client(server.url, reconnect_delay=0.01) as client:
        server.wait_for(lambda seen: any(s.method == "GET" for s in seen))
        for n in range(3):
            client.ping()
            assert client.call_tool("echo", {"n": n}).content[0].text == json.dumps({"n": n})
    [get] = server.requests("GET")
    assert get.header("Accept") == "text/event-stream"
    assert get.header("Mcp-Session-Id") == "s-1"
    assert get.header("MCP-Protocol-Version") == "2025-03-26"
    methods = [(seen.method, seen.body and seen.body.get("method")) for seen in server.seen]
    assert methods.index(("GET", None)) > methods.index(
        ("POST", "notifications/initialized"))


@pytest.mark.timeout(30)
def test_get_stream_delivers_server_messages_and_is_reopened_http_19_21_26(
        serve: Any) -> None:
    """HTTP-19, HTTP-21, HTTP-22, HTTP-26: notifications on the GET stream reach the
    client; when the server ends the stream the client reopens it with Last-Event-ID."""
    play = Play("json")
    streams: queue.Queue[queue.Queue[bytes | None]] = queue.Queue()

    def get(seen: Seen) -> WsgiResponse:
        assert play.server is not None
        feed, body = play.server.stream()
        streams.put(feed)
        return WsgiResponse(body, mimetype="text/event-stream")

    play.get = get
    server = serve(play)
    notes: queue.Queue[tuple[str, Any]] = queue.Queue()

    def changed(n: int) -> bytes:
        return sse_body([{"jsonrpc": "2.0", "method": "notifications/message",
                          "params": {"level": "info", "data": n}}], n, "get")

    with open_client(server.url, reconnect_delay=0.01,
                     on_notification=lambda method, params: notes.put((method, params))
                     ) as client:
        first = streams.get(timeout=WAIT)
        first.put(changed(1))
        assert notes.get(timeout=WAIT) == ("notifications/message", {"level": "info",
                                                                     "data": 1})
        first.put(None)  # the server ends the stream (HTTP-21)
        second = streams.get(timeout=WAIT)
        second.put(changed(2))
        assert notes.get(timeout=WAIT)[1]["data"] == 2
        client.ping()  # POSTs still flow while the stream is open (HTTP-22)
        started = time.monotonic()
        client.close()  # the listener is blocked reading the open stream
        assert time.monotonic() - started < 3
    gets = server.requests("GET")
    assert [seen.header("Last-Event-ID") for seen in gets[:2]] == [None, "get:1"]


@pytest.mark.timeout(30)
def test_first_requests_wait_for_the_get_stream_to_be_answered_http_17(serve: Any) -> None:
    """HTTP-17, HTTP-19: a server may send a request about a call on the GET stream as
    soon as the call arrives, so the session's first call is posted only once the GET
    stream was answered; a client gives a slow stream a grace period, not forever."""
    play = Play("json")
    held = threading.Event()
    released = threading.Event()
    order: list[str] = []

    def get(seen: Seen) -> WsgiResponse:
        assert play.server is not None
        held.set()
        released.wait(WAIT)
        order.append("GET answered")
        _feed, body = play.server.stream()
        return WsgiResponse(body, mimetype="text/event-stream")

    play.get = get
    server = serve(play)
    with open_client(server.url, reconnect_delay=0.01) as client:
        assert held.wait(WAIT)
        call = client.call_tool_async("echo", {"n": 0})
        with pytest.raises(TimeoutError):
            call.result(timeout=0.3)
        assert not any(seen.body and seen.body.get("method") == "tools/call"
                       for seen in server.requests("POST"))
        order.append("released")
        released.set()
        assert call.result(timeout=WAIT).content
        order.append("answered")
        assert client.call_tool("echo", {"n": 1}).content  # no further wait
    assert order == ["released", "GET answered", "answered"]


@pytest.mark.timeout(30)
def test_a_get_stream_that_never_answers_delays_the_first_call_only_briefly(
        serve: Any) -> None:
    """HTTP-17: a GET the server never answers holds the first call for a grace period
    of a few seconds; after that calls go out as usual."""
    play = Play("json")
    released = threading.Event()

    def get(seen: Seen) -> WsgiResponse:
        released.wait(WAIT)
        return WsgiResponse(status=405)

    play.get = get
    server = serve(play)
    try:
        with open_client(server.url, reconnect_delay=0.01) as client:
            server.wait_for(lambda seen: any(s.method == "GET" for s in seen))
            started = time.monotonic()
            client.ping()
            assert time.monotonic() - started < 5.0
            client.ping()
    finally:
        released.set()


# --- errors, closing and losing the server ----------------------------------------------


@pytest.mark.timeout(30)
@pytest.mark.parametrize(("status", "words"), [(401, "requires authorization"),
                                               (403, "refused access")])
def test_401_and_403_are_clear_errors_and_no_reason_to_try_the_old_transport_ambig_24(
        serve: Any, status: int, words: str) -> None:
    """AMBIG-24, AUTH-5, AUTH-14: 401 or 403 to initialize raises HttpError saying what is
    wrong, with the challenge in its data; no legacy GET probe follows."""
    server = serve(lambda seen: WsgiResponse(
        "no", status=status, headers={"WWW-Authenticate": 'Bearer realm="mcp"'}))
    with pytest.raises(HttpError, match=words) as caught:
        open_client(server.url)
    assert caught.value.status == status
    assert caught.value.data["wwwAuthenticate"] == 'Bearer realm="mcp"'
    assert [seen.method for seen in server.seen] == ["POST"]


@pytest.mark.timeout(30)
def test_session_factory_builds_every_session(serve: Any) -> None:
    """AUTH-1 (auth and transport details are pluggable), HTTP-31: ``session_factory``
    configures every requests.Session the transport uses (senders, listener, DELETE)."""
    built: list[requests.Session] = []

    def factory() -> requests.Session:
        session = requests.Session()
        session.headers["X-Factory"] = "yes"
        built.append(session)
        return session

    server = serve(Play("json"))
    transport = HttpClientTransport(server.url, session_factory=factory)
    with Client(transport, timeout=WAIT) as client:
        client.ping()
        server.wait_for(lambda seen: any(s.method == "GET" for s in seen))
    assert {seen.method for seen in server.seen} == {"POST", "GET", "DELETE"}
    assert all(seen.header("X-Factory") == "yes" for seen in server.seen)
    assert len(built) >= 3  # a sender, the listener and the DELETE at least


@pytest.mark.timeout(30)
def test_connection_refused_is_connection_lost() -> None:
    """SHUTDOWN-5: a server that cannot be reached at all ends the connection, and the
    caller gets ConnectionLost at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ConnectionLost, match="cannot reach"):
        open_client(f"http://127.0.0.1:{port}/mcp")


@pytest.mark.timeout(30)
def test_server_gone_mid_session_fails_calls_with_connection_lost(serve: Any) -> None:
    """SHUTDOWN-5: once the server stops answering connections every call fails with
    ConnectionLost and the client reports itself closed."""
    server = serve(Play("json"))
    client = open_client(server.url, listen=False)
    try:
        client.ping()
        server.stop()
        with pytest.raises(ConnectionLost):
            client.ping()
        assert client._engine.wait_closed(WAIT)
        assert client.closed
    finally:
        client.close()


@pytest.mark.timeout(30)
def test_close_interrupts_calls_whose_answer_has_not_begun(serve: Any) -> None:
    """SHUTDOWN-4, SHUTDOWN-5: closing does not wait for a server that has not even sent
    headers; the waiting call fails with ConnectionClosed at once, and close is idempotent
    from any thread."""
    play = Play("json")
    arrived = threading.Event()

    def tool(message: dict[str, Any]) -> Any:
        assert play.server is not None
        feed, _ = play.server.stream()
        arrived.set()
        feed.get(timeout=WAIT)  # never answers before the test ends
        return WsgiResponse(b"")

    play.tool = tool
    server = serve(play)
    client = open_client(server.url, listen=False)
    future = client.call_tool_async("hang")
    assert arrived.wait(WAIT)
    started = time.monotonic()
    closer = threading.Thread(target=client.close, name="test:second-close")
    closer.start()
    client.close()
    closer.join(WAIT)
    assert time.monotonic() - started < 5
    with pytest.raises(ConnectionClosed):
        future.result(WAIT)
    # The server's blocked handler is released by the server's own shutdown.
    server.stop()


@pytest.mark.timeout(30)
def test_close_makes_a_blocked_read_return_none() -> None:
    """SHUTDOWN-4, SHUTDOWN-5: read() blocked on another thread returns None on close;
    writing afterwards raises ConnectionClosed."""
    transport = HttpClientTransport("http://127.0.0.1:9/mcp")
    got: queue.Queue[Any] = queue.Queue()
    reader = threading.Thread(target=lambda: got.put(transport.read()), name="test:reader")
    reader.start()
    transport.close()
    reader.join(WAIT)
    assert got.get(timeout=WAIT) is None
    with pytest.raises(ConnectionClosed):
        transport.write(Request(1, "ping"))
    transport.close()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mode", ["json", "sse"])
def test_concurrent_calls_from_32_threads_are_all_matched(serve: Any, mode: str) -> None:
    """JSONRPC-13: 32 threads share one client over 8 sender threads; every answer
    reaches its own caller."""
    play = Play(mode)
    server = serve(play)
    errors: list[BaseException] = []
    barrier = threading.Barrier(32)

    with open_client(server.url, max_senders=8) as client:
        def worker(n: int) -> None:
            try:
                barrier.wait(WAIT)
                for k in range(4):
                    text = client.call_tool("echo", {"who": n, "k": k}).content[0].text
                    assert json.loads(text) == {"who": n, "k": k}
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(n,), name=f"test:caller-{n}")
                   for n in range(32)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(50)
        assert not errors, errors[:3]
    calls = [seen for seen in server.requests("POST") if seen.body.get("method") == "tools/call"]
    assert len(calls) == 128
    server.check_bodies()


class _KeepAliveHandler(BaseHTTPRequestHandler):
    """Answers MCP POSTs as JSON over HTTP/1.1 connections that stay open (werkzeug's
    development server closes every connection, so it cannot show reuse)."""

    protocol_version = "HTTP/1.1"
    ports: list[int]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.ports.append(self.client_address[1])
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if "id" not in message:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        answer = Play().answer(message)
        body = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.send_response(405)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_DELETE = do_GET


@pytest.mark.timeout(30)
def test_connections_are_kept_alive_between_posts() -> None:
    """HTTP-5, HTTP-22: each message is its own POST, but not its own connection: twenty
    sequential calls travel over one or two kept-alive connections, not twenty."""
    ports: list[int] = []
    handler = type("Handler", (_KeepAliveHandler,), {"ports": ports})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,),
                              name="test:keep-alive-server")
    thread.start()
    try:
        with open_client(f"http://127.0.0.1:{server.server_port}/mcp") as client:
            for _ in range(20):
                client.ping()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(WAIT)
    assert len(ports) == 22
    # One connection for the request lane and one for the notification lane.
    assert len(set(ports)) <= 2, ports


# --- the 2024-11-05 HTTP+SSE transport ----------------------------------------------------


class OldServer:
    """A 2024-11-05 server: GET /mcp opens the event stream, POST /messages?sid= sends."""

    def __init__(self) -> None:
        self.server: FakeServer | None = None
        self.feed: queue.Queue[bytes | None] | None = None

    def start(self) -> FakeServer:
        self.server = FakeServer(self.handle)
        return self.server

    def handle(self, seen: Seen) -> WsgiResponse:
        assert self.server is not None
        if seen.method == "GET" and seen.path == "/mcp":
            self.feed, body = self.server.stream(iter([
                format_event("/messages?sid=abc", event="endpoint")]))
            return WsgiResponse(body, mimetype="text/event-stream")
        if seen.method == "POST" and seen.path == "/messages?sid=abc":
            message = seen.body
            assert self.feed is not None
            if "id" in message and "method" in message:
                self.feed.put(format_event(json.dumps(self.answer(message))))
            return WsgiResponse("Accepted", status=202)
        return WsgiResponse(status=405)

    def answer(self, message: dict[str, Any]) -> dict[str, Any]:
        method = message["method"]
        if method == "initialize":
            return result(message, {"protocolVersion": "2024-11-05", "capabilities": {
                "tools": {}}, "serverInfo": {"name": "old", "version": "0.1"}})
        if method == "tools/call":
            return {"jsonrpc": "2.0", "id": message["id"],
                    "error": {"code": -32602, "message": "no such tool"}}
        return result(message, {"tools": []} if method == "tools/list" else {})


@pytest.mark.timeout(30)
def test_legacy_fallback_to_the_old_http_sse_transport_http_37_38(serve: Any) -> None:
    """HTTP-37, HTTP-38: initialize is refused with 405, the GET finds an old-style stream;
    every message then goes to the endpoint it named and every answer comes on the stream.
    The old server answers 2024-11-05, which the client accepts."""
    old = OldServer()
    server = serve(old)
    with open_client(server.url) as client:
        assert client.protocol_version == "2024-11-05"
        assert client.server_info.name == "old"
        assert client.list_tools() == []
        with pytest.raises(InvalidParams, match="no such tool"):
            client.call_tool("x")
        client.ping()
        transport = client._engine.transport
        assert isinstance(transport, HttpClientTransport) and transport.legacy
    requests_seen = [(seen.method, seen.path) for seen in server.seen]
    assert requests_seen[:3] == [("POST", "/mcp"), ("GET", "/mcp"),
                                 ("POST", "/messages?sid=abc")]
    assert [seen.body["method"] for seen in server.seen[2:]] == [
        "initialize", "notifications/initialized", "tools/list", "tools/call", "ping"]
    assert all(seen.header("Mcp-Session-Id") is None for seen in server.seen)
    assert server.requests("DELETE") == []
    server.check_bodies()


@pytest.mark.timeout(30)
def test_legacy_server_closing_its_stream_loses_the_connection(serve: Any) -> None:
    """HTTP-38: the old transport has no resumption: when the stream ends, so does the
    session, and calls fail with ConnectionLost."""
    old = OldServer()
    server = serve(old)
    client = open_client(server.url)
    try:
        client.ping()
        assert old.feed is not None
        old.feed.put(None)
        assert client._engine.wait_closed(WAIT)
        with pytest.raises(ConnectionLost):
            client.ping()
    finally:
        client.close()


@pytest.mark.timeout(30)
def test_no_old_server_behind_a_404_reports_the_404(serve: Any) -> None:
    """HTTP-37: when the GET probe finds no event stream either, the initialize POST's own
    answer is the error."""
    server = serve(lambda seen: WsgiResponse("nothing here", status=404))
    with pytest.raises(HttpError, match="HTTP 404") as caught:
        open_client(server.url)
    assert caught.value.status == 404
    assert [seen.method for seen in server.seen] == ["POST", "GET"]


@pytest.mark.timeout(30)
def test_legacy_endpoint_on_another_origin_is_refused(serve: Any) -> None:
    """HTTP-38: an endpoint on another host would receive our messages and credentials;
    it is not followed."""
    def handle(seen: Seen) -> WsgiResponse:
        if seen.method == "GET":
            return WsgiResponse(format_event("http://elsewhere.invalid/messages",
                                             event="endpoint"), mimetype="text/event-stream")
        return WsgiResponse(status=405)

    server = serve(handle)
    with pytest.raises(HttpError, match="HTTP 405"):
        open_client(server.url)
    assert [seen.method for seen in server.seen] == ["POST", "GET"]


@pytest.mark.timeout(30)
def test_notification_that_fails_is_logged(serve: Any, caplog: pytest.LogCaptureFixture
                                           ) -> None:
    """HTTP-8, HTTP-9: a notification refused with an error status has no caller to
    fail, so the refusal is logged."""
    play = Play("json")
    base = play.handle

    def handle(seen: Seen) -> WsgiResponse:
        if seen.method == "POST" and seen.body.get("method") == "notifications/example/changed":
            return WsgiResponse("full", status=507)
        return base(seen)

    play.handle = handle  # type: ignore[method-assign]
    server = serve(play)
    with caplog.at_level(logging.WARNING, logger="mcp_sync.http.client"), \
            open_client(server.url) as client:
        client.notify("notifications/example/changed")
        client.ping()
    assert any("HTTP 507" in record.getMessage() for record in caplog.records)


# --- against our own server -----------------------------------------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize("options", [{}, {"json_response": True}, {"stateless": True}],
                         ids=["stream", "json", "stateless"])
def test_against_our_own_http_server_in_each_mode(options: dict[str, Any]) -> None:
    """End to end with mcp_sync's own Streamable HTTP server: calls, progress (on the POST
    stream, or on the GET stream when answers are JSON) and sixteen threads at once.

    HTTP-10, HTTP-11, HTTP-13, HTTP-19, PROGRESS-4, JSONRPC-13.
    """
    server = Server("own", version="1")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    def steps(count: int, ctx: Context) -> str:
        for n in range(count):
            ctx.report_progress(n + 1, count)
        return "done"

    with serve_http(server, **options) as handle, open_client(handle.url) as client:
        reports: list[float] = []
        answer = client.call_tool("steps", {"count": 3},
                                  on_progress=lambda p, t, m: reports.append(p))
        assert answer.content[0].text == "done"
        if options.get("json_response"):
            # Progress then travels on the GET stream, which opens on its own thread after
            # initialization and may not be open yet: what arrives must still be in order.
            assert reports == sorted(set(reports)) and set(reports) <= {1, 2, 3}
        else:
            assert reports == [1, 2, 3]
        errors: list[BaseException] = []

        def worker(n: int) -> None:
            try:
                for k in range(5):
                    assert client.call_tool("add", {"a": n, "b": k}).content[0].text \
                        == str(n + k)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(n,), name=f"test:own-{n}")
                   for n in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(40)
        assert not errors, errors[:3]
