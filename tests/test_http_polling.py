"""SSE polling on Streamable HTTP (2025-11-25): priming events, ``retry:``, the server
hanging up before the response, and the client coming back with GET + ``Last-Event-ID``.

The server side is driven in-process (werkzeug's test client) and over real sockets; the
client side against our own server and against a server played by hand.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from werkzeug.wrappers import Response as WsgiResponse

from mcp_sync import Client, Context, testing
from mcp_sync.errors import RequestTimeout
from mcp_sync.protocol._sse import SseEvent
from mcp_sync.transports.http_server import make_wsgi_app, serve_http
from tests.helpers import LEGACY_ERA
from tests.http_client_helpers import FakeServer, Seen, open_client, result, serving
from tests.http_server_helpers import Gate, WsgiPeer, call, checked, make_server, parse_sse

NEWEST = "2025-11-25"
WAIT = 10.0


@pytest.fixture
def serve() -> Iterator[Callable[[Any], FakeServer]]:
    yield from serving()


def polling_server(gate: Gate) -> Any:
    """The test server plus ``two_step``: progress, wait for the gate, progress, answer."""
    server = make_server(gate)

    @server.tool()
    def two_step(ctx: Context) -> str:
        """Report progress, wait for the gate, report again, answer."""
        ctx.report_progress(1, 2, "before")
        gate.reached.set()
        gate.opened.wait(30)
        ctx.report_progress(2, 2, "after")
        return "done"

    @server.tool()
    def hang_up(ctx: Context) -> str:
        """End this call's SSE response, then report progress and answer."""
        ctx.report_progress(1, 2, "before")
        ended = ctx.close_sse_stream()
        ctx.report_progress(2, 2, f"ended={ended}")
        return "answered after the hang-up" if ended else "answered"

    @server.tool()
    def slow(seconds: float, ctx: Context) -> str:
        """Take ``seconds`` (or until cancelled) to answer."""
        ctx.wait_cancelled(seconds)
        return "slow done"

    return server


def newest_peer(app: Any) -> WsgiPeer:
    peer = WsgiPeer(app)
    peer.initialize(protocolVersion=NEWEST)
    return peer


def post_events(peer: WsgiPeer, message: dict[str, Any],
                version: str = NEWEST) -> tuple[bytes, list[SseEvent]]:
    response = peer.post(message, headers={"MCP-Protocol-Version": version})
    assert response.status_code == 200, response.get_data()
    assert response.headers["Content-Type"].startswith("text/event-stream")
    body = response.get_data()
    return body, parse_sse(body)


def get_events(peer: WsgiPeer, last_event_id: str | None = None,
               version: str = NEWEST) -> tuple[bytes, list[SseEvent]]:
    headers = {"Accept": "text/event-stream", "Mcp-Session-Id": peer.session_id or "",
               "MCP-Protocol-Version": version}
    if last_event_id is not None:
        headers["Last-Event-ID"] = last_event_id
    response = peer.client.get("/mcp", headers=headers, buffered=True)
    assert response.status_code == 200, response.get_data()
    body = response.get_data()
    return body, parse_sse(body)


def data_messages(events: list[SseEvent]) -> list[Any]:
    return [checked(json.loads(event.data)) for event in events if event.data]


def tool_call(request_id: Any, name: str, arguments: dict[str, Any] | None = None,
              token: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return call(request_id, "tools/call", params)


# --- the server ------------------------------------------------------------------------------


def test_a_post_stream_opens_with_a_priming_event_v1125_12_v1125_17() -> None:
    """V1125-12: in a 2025-11-25 session the first event of a POST's stream has an id
    and empty data; V1125-17/DES-8: every id names its stream (``<stream>:<seq>``)."""
    with make_wsgi_app(polling_server(Gate())) as app:
        peer = newest_peer(app)
        _, events = post_events(peer, tool_call(1, "progress", {"steps": 2}, token="t"))
    first = events[0]
    assert first.data == "" and first.retry == 1000  # sse_retry's default, V1125-14
    assert first.id is not None and re.fullmatch(r"p\d+:0", first.id)
    stream = first.id.split(":")[0]
    assert [event.id for event in events[1:]] == [f"{stream}:{n}" for n in (1, 2, 3)]
    messages = data_messages(events)
    assert [m.get("method") for m in messages] == ["notifications/progress"] * 2 + [None]
    assert messages[-1]["result"]["content"][0]["text"] == "done"


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18"])
def test_older_sessions_get_no_priming_no_retry_and_no_hang_up_nambig_6(version: str) -> None:
    """NAMBIG-6, DES-8: a session at an older version gets its events as before, even
    with ``sse_poll_after`` set: no empty event, no ``retry:``, and a slow call is
    answered on its own POST's stream."""
    with make_wsgi_app(polling_server(Gate()), sse_poll_after=0.05, sse_retry=0.01) as app:
        peer = WsgiPeer(app)
        peer.initialize(protocolVersion=version)
        body, events = post_events(peer, tool_call(1, "slow", {"seconds": 0.3}), version)
    assert b"retry:" not in body
    assert all(event.data for event in events)
    assert [m["result"]["content"][0]["text"] for m in data_messages(events)] == ["slow done"]


def test_the_server_hangs_up_and_the_stream_goes_on_v1125_13_14_15_http_27() -> None:
    """V1125-13/14/15: with ``sse_poll_after`` the server ends the POST's response before
    the answer, ``retry:`` last; the logical stream goes on. V1125-17: GET with the
    last event id of that POST's stream gets the rest (HTTP-27/28): the progress sent
    after the hang-up and the response, each exactly once."""
    gate = Gate()
    with make_wsgi_app(polling_server(gate), sse_poll_after=0.05, sse_retry=0.02) as app:
        peer = newest_peer(app)
        body, events = post_events(peer, tool_call(7, "two_step", token="tok"))
        assert body.endswith(b"retry: 20\n\n")
        assert events[0].data == "" and events[0].id is not None
        stream = events[0].id.split(":")[0]
        received = data_messages(events)
        assert not [m for m in received if m.get("id") == 7]  # not answered yet
        assert gate.reached.wait(WAIT)
        gate.opened.set()  # progress 2 and the answer come after the hang-up
        last_id = events[-1].id
        deadline = time.monotonic() + WAIT
        while not any(m.get("id") == 7 for m in received) and time.monotonic() < deadline:
            body, events = get_events(peer, last_id)
            assert all(event.id is None or event.id.startswith(f"{stream}:")
                       for event in events)
            received += data_messages(events)
            if not any(m.get("id") == 7 for m in received):
                assert body.endswith(b"retry: 20\n\n")
            last_id = events[-1].id if events else last_id
    progress = [m["params"]["message"] for m in received
                if m.get("method") == "notifications/progress"]
    assert progress == ["before", "after"]
    answers = [m for m in received if m.get("id") == 7]
    assert [a["result"]["content"][0]["text"] for a in answers] == ["done"]


def test_the_get_stream_is_hung_up_with_retry_and_keeps_what_came_meanwhile_v1125_16() -> None:
    """V1125-16: the standalone GET stream is ended the same way (``retry:`` last, no
    priming event); what the server sends while no GET is open waits for the next one."""
    server = polling_server(Gate())
    with make_wsgi_app(server, sse_poll_after=0.05, sse_retry=0.03) as app:
        peer = newest_peer(app)
        body, events = get_events(peer)
        assert body.endswith(b"retry: 30\n\n")
        assert not events  # nothing to say, and no priming event on a GET stream
        server.add_tool(lambda: "new", name="added")  # tools/list_changed, no GET open
        body, events = get_events(peer)
        assert [m["method"] for m in data_messages(events)] == [
            "notifications/tools/list_changed"]
        assert events[0].id is not None and events[0].id.startswith("g:")
        assert app.session_count == 1


def test_a_tool_ends_its_own_response_v1125_13_15() -> None:
    """V1125-13/15: ``ctx.close_sse_stream()`` ends the call's SSE response before its
    answer, ``retry:`` last; the progress and the answer that follow come by GET with
    ``Last-Event-ID``."""
    with make_wsgi_app(polling_server(Gate()), sse_retry=0.02) as app:
        peer = newest_peer(app)
        body, events = post_events(peer, tool_call(3, "hang_up", token="h"))
        assert body.endswith(b"retry: 20\n\n")
        received = data_messages(events)
        assert not [m for m in received if m.get("id") == 3]
        _, resumed = get_events(peer, events[-1].id)
    received += data_messages(resumed)
    assert [m["params"]["message"] for m in received
            if m.get("method") == "notifications/progress"] == ["before", "ended=True"]
    assert [m["result"]["content"][0]["text"] for m in received if m.get("id") == 3] == [
        "answered after the hang-up"]


@pytest.mark.parametrize("json_response", [False, True])
def test_close_sse_stream_does_nothing_where_it_cannot_nambig_6(json_response: bool) -> None:
    """NAMBIG-6: in a 2025-03-26 session (or with JSON answers) the response is not
    ended early: the call is answered on its POST as before."""
    with make_wsgi_app(polling_server(Gate()), json_response=json_response) as app:
        version = NEWEST if json_response else "2025-03-26"
        peer = WsgiPeer(app)
        peer.initialize(protocolVersion=version)
        messages = peer.request(tool_call(4, "hang_up", token="h"),
                                headers={"MCP-Protocol-Version": version})
    assert [m["result"]["content"][0]["text"] for m in messages if m.get("id") == 4] == [
        "answered"]


def test_close_sse_stream_does_nothing_over_a_memory_connection() -> None:
    """Without Streamable HTTP there is no response to end: the call goes on as usual."""
    with testing.open_client(polling_server(Gate())) as client:
        assert client.call_tool("hang_up", {}).content[0].text == "answered"


def test_polling_options_are_checked() -> None:
    with pytest.raises(ValueError, match="sse_poll_after"):
        make_wsgi_app(make_server(), sse_poll_after=0)
    with pytest.raises(ValueError, match="sse_retry"):
        make_wsgi_app(make_server(), sse_retry=-1)


# --- our client against our server -----------------------------------------------------------


class Recorder:
    """WSGI middleware noting the method and ``Last-Event-ID`` of every request."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None]] = []
        self.changed = threading.Condition()

    def wrap(self, app: Any) -> Any:
        def recorded(environ: dict[str, Any], start_response: Any) -> Any:
            with self.changed:
                self.seen.append((environ["REQUEST_METHOD"], environ.get("HTTP_LAST_EVENT_ID")))
                self.changed.notify_all()
            return app(environ, start_response)
        return recorded

    def wait_for(self, predicate: Callable[[list[tuple[str, str | None]]], bool]) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: predicate(self.seen), WAIT)


def resumed_post_streams(seen: list[tuple[str, str | None]]) -> list[str]:
    return [last for method, last in seen if method == "GET" and last and last[0] == "p"]


def test_our_client_polls_our_server_for_a_slow_call_v1125_13_17() -> None:
    """V1125-13/17: our server hangs up on a slow call; our client comes back with GET
    and the POST stream's last event id, and gets the progress sent after the hang-up
    and the result. The call's own timeout is untouched by the polling."""
    gate = Gate()
    server = polling_server(gate)
    recorder = Recorder()

    def release_once_resumed() -> None:  # the tool goes on only once the client came back
        if recorder.wait_for(lambda seen: bool(resumed_post_streams(seen))):
            gate.opened.set()

    progress: list[tuple[float, str | None]] = []
    waiter = threading.Thread(target=release_once_resumed, name="test:resumed")
    with serve_http(server, sse_poll_after=0.1, sse_retry=0.02, wrap=recorder.wrap) as handle, \
            Client.http(handle.url, timeout=WAIT, **LEGACY_ERA) as client:
        waiter.start()
        try:
            answer = client.call_tool("two_step", {}, on_progress=lambda p, t, m:
                                      progress.append((p, m)))
        finally:
            gate.opened.set()
            waiter.join(WAIT)
    assert answer.content[0].text == "done"
    assert progress == [(1, "before"), (2, "after")]
    assert re.fullmatch(r"p\d+:\d+", resumed_post_streams(recorder.seen)[0])


def test_our_client_resumes_after_a_tool_ends_its_response_v1125_13_17() -> None:
    """V1125-13/17: the tool ends its own response; our client waits ``retry:`` and takes
    the rest by GET with the POST stream's last event id."""
    recorder = Recorder()
    progress: list[str | None] = []
    with serve_http(polling_server(Gate()), sse_retry=0.02, wrap=recorder.wrap) as handle, \
            Client.http(handle.url, timeout=WAIT, **LEGACY_ERA) as client:
        answer = client.call_tool("hang_up", {}, on_progress=lambda p, t, m:
                                  progress.append(m))
    assert answer.content[0].text == "answered after the hang-up"
    assert progress == ["before", "ended=True"]
    assert resumed_post_streams(recorder.seen)


def test_our_client_reopens_the_hung_up_get_stream_v1125_16() -> None:
    """V1125-16: the GET stream the server ends with ``retry:`` is reopened by the
    client, and a notification sent meanwhile reaches it."""
    server = polling_server(Gate())
    recorder = Recorder()
    changed = threading.Event()
    with serve_http(server, sse_poll_after=0.1, sse_retry=0.02, wrap=recorder.wrap) as handle, \
            Client.http(handle.url, timeout=WAIT,
                        on_list_changed=lambda kind: changed.set(), **LEGACY_ERA) as client:
        assert recorder.wait_for(lambda seen: sum(m == "GET" for m, _ in seen) >= 3)
        server.add_tool(lambda: "new", name="added")
        assert changed.wait(WAIT)
        assert "added" in {tool.name for tool in client.list_tools()}


# --- our client against a server played by hand ------------------------------------------------


def played(on_get: Callable[[Seen], WsgiResponse],
           on_call: Callable[[Seen], WsgiResponse] | None = None
           ) -> Callable[[Seen], WsgiResponse]:
    """A 2025-11-25 server played by hand: it answers initialize, accepts notifications
    and DELETE; GETs and other requests are the test's (``on_call`` None: 202)."""
    def handle(seen: Seen) -> WsgiResponse:
        if seen.method == "DELETE":
            return WsgiResponse(status=204)
        if seen.method == "GET":
            return on_get(seen)
        if seen.body.get("method") == "initialize":
            return WsgiResponse(json.dumps(result(seen.body, {
                "protocolVersion": NEWEST, "capabilities": {"tools": {}},
                "serverInfo": {"name": "scripted", "version": "1"}})),
                headers={"Mcp-Session-Id": "s-1"}, mimetype="application/json")
        if "id" not in seen.body or on_call is None:
            return WsgiResponse(status=202)
        return on_call(seen)
    return handle


def test_client_skips_priming_and_waits_retry_before_resuming_v1125_12_14(serve: Any) -> None:
    """V1125-12: an empty-data event is skipped; V1125-14: after ``retry: 300`` and a
    hang-up the client waits at least 300 ms before its GET with ``Last-Event-ID``."""
    hung_up: list[float] = []
    resumed_at: list[float] = []

    def body(seen: Seen) -> Iterator[bytes]:
        yield b"id: c:0\ndata: \n\n"
        yield b'id: c:1\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/' \
              b'message","params":{"level":"info","data":"working"}}\n\n'
        hung_up.append(time.monotonic())
        yield b"retry: 300\n\n"

    def get(seen: Seen) -> WsgiResponse:
        if seen.header("Last-Event-ID") is None:
            return WsgiResponse(status=405)
        resumed_at.append(time.monotonic())
        answer = result(pending[0], {"content": [{"type": "text", "text": "polled"}]})
        return WsgiResponse(f"id: c:2\ndata: {json.dumps(answer)}\n\n",
                            mimetype="text/event-stream")

    def call(seen: Seen) -> WsgiResponse:
        pending.append(seen.body)
        return WsgiResponse(body(seen), mimetype="text/event-stream")

    pending: list[Any] = []
    logs: list[Any] = []
    server = serve(played(get, call))
    with open_client(server.url, on_log=logs.append) as client:
        answer = client.call_tool("echo", {})
    assert answer.content[0].text == "polled"
    assert [log.data for log in logs] == ["working"]
    gets = [s for s in server.requests("GET") if s.header("Last-Event-ID")]
    assert [s.header("Last-Event-ID") for s in gets] == ["c:1"]
    assert resumed_at[0] - hung_up[0] >= 0.3


def test_a_post_stream_of_only_a_priming_event_is_resumed_v1125_17(serve: Any) -> None:
    """V1125-17: a stream that brought nothing but the priming event is resumed from it."""
    def get(seen: Seen) -> WsgiResponse:
        if seen.header("Last-Event-ID") != "only:0":
            return WsgiResponse(status=405)
        answer = result(pending[0], {"content": [{"type": "text", "text": "late"}]})
        return WsgiResponse(f"id: only:1\ndata: {json.dumps(answer)}\n\n",
                            mimetype="text/event-stream")

    def call(seen: Seen) -> WsgiResponse:
        pending.append(seen.body)
        return WsgiResponse(b"id: only:0\ndata: \n\nretry: 10\n\n", mimetype="text/event-stream")

    pending: list[Any] = []
    server = serve(played(get, call))
    with open_client(server.url) as client:
        assert client.call_tool("echo", {}).content[0].text == "late"


def test_endless_polling_is_bounded_by_the_callers_timeout_v1125_13(serve: Any) -> None:
    """A server that hangs up with ``retry:`` on every poll and never answers keeps the
    client polling (no failure), until the call's own timeout: then the call raises
    RequestTimeout and the server is sent the cancellation."""
    polls = threading.Semaphore(0)

    def get(seen: Seen) -> WsgiResponse:
        if seen.header("Last-Event-ID") is None:
            return WsgiResponse(status=405)
        polls.release()
        return WsgiResponse(b": still working\n\nretry: 5\n\n", mimetype="text/event-stream")

    def call(seen: Seen) -> WsgiResponse:
        return WsgiResponse(b"id: e:0\ndata: \n\nretry: 5\n\n", mimetype="text/event-stream")

    server = serve(played(get, call))
    with open_client(server.url, max_reconnects=2) as client:
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("echo", {}, timeout=2.0)
        assert time.monotonic() - started < 2.0 + WAIT
        server.wait_for(lambda seen: any(
            s.method == "POST" and s.body.get("method") == "notifications/cancelled"
            for s in seen))
    # More polls than max_reconnects: a poll the server asked for is no failure.
    assert sum(polls.acquire(timeout=0) for _ in range(4)) == 4


def test_the_listener_waits_retry_before_reopening_the_get_stream_v1125_16(serve: Any) -> None:
    """V1125-16, V1125-14: a GET stream the server ends after ``retry: 300`` is reopened
    no sooner than 300 ms later, with the last event id it carried."""
    hung_up: list[float] = []
    reopened: list[float] = []

    def first_stream() -> Iterator[bytes]:
        yield (b'id: g:1\ndata: {"jsonrpc":"2.0","method":"notifications/tools/'
               b'list_changed"}\n\n')
        hung_up.append(time.monotonic())
        yield b"retry: 300\n\n"

    def get(seen: Seen) -> WsgiResponse:
        if not hung_up:
            return WsgiResponse(first_stream(), mimetype="text/event-stream")
        reopened.append(time.monotonic())
        return WsgiResponse(status=405)  # no more streams: the listener stops

    changed = threading.Event()
    server = serve(played(get))
    with open_client(server.url, on_list_changed=lambda kind: changed.set()):
        assert changed.wait(WAIT)
        server.wait_for(lambda seen: sum(s.method == "GET" for s in seen) >= 2)
    gets = server.requests("GET")
    assert [s.header("Last-Event-ID") for s in gets[:2]] == [None, "g:1"]
    assert reopened[0] - hung_up[0] >= 0.3
