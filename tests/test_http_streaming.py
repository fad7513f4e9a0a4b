"""The Streamable HTTP server over real sockets: streams, resumption, disconnects, load.

Each test serves on 127.0.0.1 with :func:`serve_http` and talks to it with ``requests``;
one ``requests.Session`` per thread. Blocking tools wait on Events the test controls.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import requests

from mcp_sync import Context
from mcp_sync.protocol._sse import SseEvent
from mcp_sync.transports.http_server import MemoryEventStore, serve_http
from tests.http_server_helpers import (
    HEADERS,
    INITIALIZE,
    INITIALIZED,
    FakeClock,
    Gate,
    call,
    checked,
    make_server,
    read_events,
)

TIMEOUT = (5, 20)  # connect, read: a hang fails the test instead of eating its timeout


class HttpPeer:
    """One client session over real HTTP, with its own connection pool."""

    def __init__(self, url: str, session_id: str | None = None) -> None:
        self.url = url
        self.http = requests.Session()
        self.session_id = session_id
        self._forks: list[HttpPeer] = []

    def fork(self) -> HttpPeer:
        """Another peer in the same MCP session, with connections of its own."""
        peer = HttpPeer(self.url, self.session_id)
        self._forks.append(peer)
        return peer

    def headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        headers = dict(HEADERS)
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        headers.update(extra or {})
        return headers

    def post(self, body: Any, *, stream: bool = False,
             headers: dict[str, str] | None = None) -> requests.Response:
        return self.http.post(self.url, data=json.dumps(body), headers=self.headers(headers),
                              stream=stream, timeout=TIMEOUT)

    def get(self, headers: dict[str, str] | None = None) -> requests.Response:
        return self.http.get(self.url, headers=self.headers(
            {"Accept": "text/event-stream", **(headers or {})}), stream=True, timeout=TIMEOUT)

    def initialize(self, capabilities: dict[str, Any] | None = None) -> None:
        message = json.loads(json.dumps(INITIALIZE))
        message["params"]["capabilities"] = capabilities or {}
        response = self.post(message)
        assert response.status_code == 200, response.text
        self.session_id = response.headers["Mcp-Session-Id"]
        assert self.post(INITIALIZED).status_code == 202

    def messages(self, body: Any) -> list[Any]:
        with self.post(body, stream=True) as response:
            assert response.status_code == 200, response.text
            if response.headers["Content-Type"].startswith("application/json"):
                return [checked(response.json())]
            return [checked(json.loads(event.data)) for event in read_events(response)]

    def result(self, body: Any) -> Any:
        answers = [m for m in self.messages(body) if "id" in m and "method" not in m]
        assert len(answers) == 1 and "result" in answers[0], answers
        return answers[0]["result"]

    def delete(self) -> int:
        return self.http.delete(self.url, headers=self.headers(), timeout=TIMEOUT).status_code

    def close(self) -> None:
        for peer in self._forks:
            peer.close()
        self.http.close()


@pytest.fixture
def peers() -> Iterator[Callable[[str], HttpPeer]]:
    made: list[HttpPeer] = []

    def make(url: str) -> HttpPeer:
        peer = HttpPeer(url)
        made.append(peer)
        return peer

    yield make
    for peer in made:
        peer.close()


def data_events(events: Iterator[SseEvent]) -> Iterator[tuple[SseEvent, Any]]:
    for event in events:
        yield event, checked(json.loads(event.data))


class ResultWatchingStore(MemoryEventStore):
    """The default store, telling the test when a response has been stored."""

    def __init__(self) -> None:
        super().__init__()
        self.response_stored = threading.Event()

    def store_event(self, session_id: str, stream_id: str, seq: int, data: str) -> None:
        super().store_event(session_id, stream_id, seq, data)
        if '"result"' in data:
            self.response_stored.set()


# --- the GET stream --------------------------------------------------------------------------


@pytest.mark.timeout(30)
def test_list_changed_arrives_on_the_get_stream_http_17_http_19_http_20(peers: Any) -> None:
    """HTTP-17/18/19/20: server notifications come on GET, responses never do."""
    server = make_server()
    with serve_http(server) as handle:
        peer = peers(handle.url)
        peer.initialize()
        with peer.get() as stream:
            assert stream.status_code == 200
            assert stream.headers["Content-Type"].startswith("text/event-stream")
            events = data_events(read_events(stream))
            assert peer.fork().result(call(1, "tools/call", {
                "name": "add", "arguments": {"a": 1, "b": 2}}))["content"][0]["text"] == "3"
            server.add_tool(lambda: "hi", name="greet")
            event, message = next(events)
        assert message == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        assert (event.id or "").startswith("g:")


@pytest.mark.timeout(30)
def test_second_get_takes_over_each_message_on_one_stream_http_22_http_23(peers: Any) -> None:
    """HTTP-22/23: a session's newer GET replaces the older; no message goes to both."""
    server = make_server()
    with serve_http(server) as handle:
        peer = peers(handle.url)
        peer.initialize()
        with peer.get() as first:
            first_events = read_events(first)
            with peer.fork().get() as second:
                assert second.status_code == 200
                assert list(first_events) == []  # the older stream ended, having carried nothing
                server.add_tool(lambda: "hi", name="greet")
                _, message = next(data_events(read_events(second)))
                assert message["method"] == "notifications/tools/list_changed"


@pytest.mark.timeout(30)
def test_get_streams_are_bounded_and_other_requests_still_served(peers: Any) -> None:
    """DESIGN "Streams and threads", HTTP-18: GETs beyond the bound get 405; with more
    sessions than threads every call is answered and the host app's own route answers."""
    def host(mcp: Any) -> Any:
        def app(environ: dict[str, Any], start_response: Any) -> Any:
            if environ["PATH_INFO"] == "/health":
                start_response("200 OK", [("Content-Type", "text/plain")])
                return [b"ok"]
            return mcp(environ, start_response)
        return app

    server = make_server()
    with serve_http(server, max_threads=6, max_get_streams=2, wrap=host) as handle:
        sessions = [peers(handle.url) for _ in range(10)]
        for peer in sessions:
            peer.initialize()
        opened = [peer.fork().get() for peer in sessions]
        try:
            statuses = [stream.status_code for stream in opened]
            assert sorted(statuses) == [200, 200] + [405] * 8
            refused = next(stream for stream in opened if stream.status_code == 405)
            assert "GET" not in refused.headers["Allow"]
            assert handle.app.get_stream_count == 2

            def work(index: int) -> str:
                peer = sessions[index].fork()
                try:
                    result = peer.result(call(1, "tools/call", {
                        "name": "add", "arguments": {"a": index, "b": 100}}))
                finally:
                    peer.close()
                return str(result["content"][0]["text"])

            with ThreadPoolExecutor(10) as pool:
                answers = list(pool.map(work, range(10)))
            assert answers == [str(index + 100) for index in range(10)]
            health = requests.get(handle.url.replace("/mcp", "/health"), timeout=TIMEOUT)
            assert (health.status_code, health.text) == (200, "ok")
        finally:
            for stream in opened:
                stream.close()


@pytest.mark.timeout(30)
def test_keepalive_comments_and_idle_get_stream_ends_http_21(peers: Any) -> None:
    """HTTP-21: silent streams get keep-alive comments; an idle GET stream is ended."""
    clock = FakeClock()
    with serve_http(make_server(), keepalive_interval=0.05, get_stream_timeout=30,
                    clock=clock) as handle:
        peer = peers(handle.url)
        peer.initialize()
        with peer.get() as stream:
            chunks = stream.iter_content(chunk_size=None)
            assert next(chunks).startswith(b":")  # sent at once, with the headers
            assert next(chunks) == b": keep-alive\n\n"
            clock.advance(31)
            rest = b"".join(chunks)  # the server ends the stream
            assert set(rest.split(b"\n\n")) <= {b": keep-alive", b""}


@pytest.mark.timeout(30)
def test_sweep_ends_idle_get_streams_http_21(peers: Any) -> None:
    """HTTP-21: the periodic sweep ends GET streams idle beyond get_stream_timeout."""
    clock = FakeClock()
    with serve_http(make_server(), keepalive_interval=60, get_stream_timeout=30,
                    clock=clock) as handle:
        peer = peers(handle.url)
        peer.initialize()
        with peer.get() as stream:
            events = read_events(stream)
            clock.advance(31)
            handle.app.sweep()
            assert list(events) == []


@pytest.mark.timeout(30)
def test_get_stream_resumes_after_last_event_id_http_26_http_27(peers: Any) -> None:
    """HTTP-26/27: a GET with Last-Event-ID gets what followed that event on the GET stream."""
    server = make_server()
    with serve_http(server) as handle:
        peer = peers(handle.url)
        peer.initialize()
        with peer.get() as stream:
            server.add_tool(lambda: 1, name="one")
            first, _ = next(data_events(read_events(stream)))
        server.add_tool(lambda: 2, name="two")
        server.add_tool(lambda: 3, name="three")
        with peer.fork().get({"Last-Event-ID": first.id or ""}) as resumed:
            events = data_events(read_events(resumed))
            replayed = [next(events), next(events)]
        assert [event.id for event, _ in replayed] == ["g:2", "g:3"]
        assert {message["method"] for _, message in replayed} == {
            "notifications/tools/list_changed"}


@pytest.mark.timeout(30)
def test_json_mode_sends_related_messages_on_the_get_stream_http_10_http_19(peers: Any) -> None:
    """HTTP-10/19: in JSON mode the POST body holds only the response; progress goes on GET."""
    with serve_http(make_server(), json_response=True) as handle:
        peer = peers(handle.url)
        peer.initialize()
        with peer.get() as stream:
            events = data_events(read_events(stream))
            [answer] = peer.fork().messages(call(3, "tools/call", {
                "name": "progress", "arguments": {"steps": 2}, "_meta": {"progressToken": 3}}))
            assert answer["result"]["content"] == [{"type": "text", "text": "done"}]
            progress = [next(events)[1], next(events)[1]]
        assert [m["params"]["progress"] for m in progress] == [1, 2]


# --- POST streams -----------------------------------------------------------------------


@pytest.mark.timeout(30)
@pytest.mark.parametrize("release_first", [False, True], ids=["live", "replayed"])
def test_dropped_post_stream_resumes_with_the_response_http_16_http_26_27_28(
        peers: Any, release_first: bool) -> None:
    """HTTP-16/26/27/28: a dropped POST stream is no cancellation; resuming it with
    Last-Event-ID delivers the response (live, or replayed from the store) and nothing
    of another stream."""
    gate = Gate()
    store = ResultWatchingStore()
    with serve_http(make_server(gate), event_store=store) as handle:
        peer = peers(handle.url)
        peer.initialize()
        response = peer.post(call(5, "tools/call", {
            "name": "wait", "arguments": {}, "_meta": {"progressToken": "w"}}), stream=True)
        first, progress = next(data_events(read_events(response)))
        assert progress["params"]["progressToken"] == "w"
        assert gate.reached.wait(5)
        response.close()  # the connection drops mid-call
        other = peer.fork().messages(call(6, "tools/call", {
            "name": "progress", "arguments": {"steps": 2}, "_meta": {"progressToken": "o"}}))
        assert other[-1]["id"] == 6
        if release_first:
            gate.opened.set()
            assert store.response_stored.wait(5)
        with peer.fork().get({"Last-Event-ID": first.id or ""}) as resumed:
            assert resumed.status_code == 200
            if not release_first:
                gate.opened.set()
            replayed = [message for _, message in data_events(read_events(resumed))]
    assert replayed[-1] == {"jsonrpc": "2.0", "id": 5,
                            "result": {"content": [{"type": "text", "text": "released"}]}}
    assert all(m.get("params", {}).get("progressToken") != "o" for m in replayed)
    assert gate.finished.is_set() and not gate.cancelled


@pytest.mark.timeout(30)
def test_resumption_refused_for_unknown_or_malformed_event_ids_http_28(peers: Any) -> None:
    """HTTP-28: only this session's own streams can be resumed."""
    with serve_http(make_server()) as handle:
        peer, other = peers(handle.url), peers(handle.url)
        peer.initialize()
        other.initialize()
        with other.post(call(1, "ping"), stream=True) as response:
            [event] = list(read_events(response))
        for last_event_id in ("garbage", "p99:1", event.id or ""):
            with peer.get({"Last-Event-ID": last_event_id}) as resumed:
                assert resumed.status_code == 400
                assert resumed.json()["error"]["code"] == -32600


@pytest.mark.timeout(30)
def test_cancelled_request_ends_its_stream_without_response_ambig_8_cancel_4(peers: Any) -> None:
    """AMBIG-8, CANCEL-4, HTTP-16: an explicit cancel stops the tool and closes the stream."""
    gate = Gate()
    with serve_http(make_server(gate)) as handle:
        peer = peers(handle.url)
        peer.initialize()
        with peer.post(call(9, "tools/call", {"name": "until_cancelled", "arguments": {}}),
                       stream=True) as response:
            events = read_events(response)
            assert gate.reached.wait(5)
            cancel = peer.fork().post({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                       "params": {"requestId": 9, "reason": "stop"}})
            assert cancel.status_code == 202
            assert list(events) == []
        assert gate.finished.wait(5) and gate.cancelled


@pytest.mark.timeout(30)
def test_unrelated_messages_use_a_post_stream_when_there_is_no_get(peers: Any) -> None:
    """DESIGN "Streams and threads": without a GET stream, the client still hears list_changed
    on the POST stream it is reading (HTTP-23: on that one stream only)."""
    server = make_server()

    @server.tool()
    def grow(ctx: Context) -> str:
        """Register another tool while answering."""
        server.add_tool(lambda: 1, name="grown")
        return "grew"

    with serve_http(server) as handle:
        peer = peers(handle.url)
        peer.initialize()
        messages = peer.messages(call(1, "tools/call", {"name": "grow", "arguments": {}}))
    assert [m.get("method") for m in messages] == ["notifications/tools/list_changed", None]
    assert messages[1]["result"]["content"][0]["text"] == "grew"


@pytest.mark.timeout(30)
@pytest.mark.parametrize("json_response", [False, True], ids=["sse", "json"])
def test_tool_asks_the_client_mid_call_http_13_jsonrpc_15_roots_2(
        peers: Any, json_response: bool) -> None:
    """HTTP-13, JSONRPC-15, ROOTS-2: a tool's request to the client travels on the call's
    stream (on GET in JSON mode); the client's answer, POSTed, gets 202 and the call ends."""
    server = make_server()

    @server.tool()
    def ask(ctx: Context) -> str:
        """List the client's roots."""
        ctx.info("asking for roots")
        return ",".join(root.uri for root in ctx.list_roots())

    def answer(request: dict[str, Any]) -> None:
        assert request["method"] == "roots/list"
        response = peer.fork().post({"jsonrpc": "2.0", "id": request["id"],
                                     "result": {"roots": [{"uri": "file:///work"}]}})
        assert response.status_code == 202

    with serve_http(server, json_response=json_response) as handle:
        peer = peers(handle.url)
        peer.initialize({"roots": {}})
        body = call(1, "tools/call", {"name": "ask", "arguments": {}})
        if json_response:
            with peer.get() as stream, ThreadPoolExecutor(1) as pool:
                events = data_events(read_events(stream))
                pending = pool.submit(peer.fork().messages, body)
                first = next(events)[1]
                if first.get("method") == "notifications/message":
                    first = next(events)[1]
                answer(first)
                [result] = pending.result(20)
        else:
            with peer.post(body, stream=True) as response:
                events = data_events(read_events(response))
                log_message, request = next(events)[1], next(events)[1]
                assert log_message["method"] == "notifications/message"
                answer(request)
                [result] = [message for _, message in events]
    assert result["id"] == 1
    assert result["result"]["content"] == [{"type": "text", "text": "file:///work"}]


# --- load and shutdown ----------------------------------------------------------------------


@pytest.mark.timeout(60)
def test_hundred_concurrent_sessions_all_answered() -> None:
    """HTTP-29/31/32, JSONRPC-13: 100 sessions at once, each initializing, calling, ending."""
    server = make_server()

    with serve_http(server) as handle:
        def session(index: int) -> tuple[str, int]:
            peer = HttpPeer(handle.url)
            try:
                peer.initialize()
                result = peer.result(call(1, "tools/call", {
                    "name": "add", "arguments": {"a": index, "b": 1}}))
                return result["content"][0]["text"], peer.delete()
            finally:
                peer.close()

        with ThreadPoolExecutor(100) as pool:
            outcomes = list(pool.map(session, range(100)))
        assert outcomes == [(str(index + 1), 204) for index in range(100)]
        assert handle.app.session_count == 0
    assert not server._connections


@pytest.mark.timeout(30)
def test_a_blocking_tool_never_blocks_another_session(peers: Any) -> None:
    """JSONRPC-13, HTTP-14: one session's blocked call leaves the others served."""
    gate = Gate()
    with serve_http(make_server(gate)) as handle:
        blocked, free = peers(handle.url), peers(handle.url)
        blocked.initialize()
        free.initialize()
        with blocked.post(call(1, "tools/call", {"name": "wait", "arguments": {}}),
                          stream=True) as response:
            assert gate.reached.wait(5)
            assert free.result(call(1, "ping")) == {}
            gate.opened.set()
            messages = [m for _, m in data_events(read_events(response))]
        assert messages[-1]["result"]["content"][0]["text"] == "released"


@pytest.mark.timeout(30)
def test_close_ends_every_stream_and_leaves_nothing_shutdown_5(peers: Any) -> None:
    """SHUTDOWN-5: closing the server ends open streams and in-flight calls; the leak
    check then finds no thread, socket or connection left."""
    gate = Gate()
    server = make_server(gate)
    handle = serve_http(server)
    peer = peers(handle.url)
    peer.initialize()
    get = peer.get()
    post = peer.fork().post(call(1, "tools/call", {"name": "until_cancelled", "arguments": {}}),
                            stream=True)
    try:
        assert gate.reached.wait(5)
        handle.close()
        assert list(read_events(get)) == []
        assert [m for _, m in data_events(read_events(post))] == []
        assert gate.finished.wait(5) and gate.cancelled
    finally:
        get.close()
        post.close()
        handle.close()
    assert not server._connections
    with pytest.raises(requests.ConnectionError):
        requests.post(handle.url, json=INITIALIZE, headers=HEADERS, timeout=TIMEOUT)


@pytest.mark.timeout(30)
def test_stateless_mode_over_http(peers: Any) -> None:
    """HTTP-13/18 (stateless): SSE progress and the response; GET gets 405."""
    server = make_server()
    with serve_http(server, stateless=True) as handle:
        peer = peers(handle.url)
        messages = peer.messages(call(1, "tools/call", {
            "name": "progress", "arguments": {"steps": 2}, "_meta": {"progressToken": 1}}))
        assert [m.get("method") for m in messages] == ["notifications/progress"] * 2 + [None]
        with peer.get() as stream:
            assert stream.status_code == 405


@pytest.mark.timeout(30)
def test_stateless_dropped_stream_runs_the_call_to_its_end_http_16(peers: Any) -> None:
    """HTTP-16 in stateless mode: the dropped call still runs to its end, then its
    connection is closed."""
    gate = Gate()
    server = make_server(gate)
    with serve_http(server, stateless=True) as handle:
        peer = peers(handle.url)
        response = peer.post(call(1, "tools/call", {"name": "wait", "arguments": {},
                                                    "_meta": {"progressToken": 1}}), stream=True)
        next(read_events(response))
        response.close()
        gate.opened.set()
        assert gate.finished.wait(5)
        assert not gate.cancelled
