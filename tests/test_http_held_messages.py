"""Messages the server writes while no stream of the session can carry them are held.

In JSON mode a request's progress, log messages and requests to the client can only
travel on the session's GET stream; written before the client opens it, they must wait
in the session's queue for that GET (HTTP-19, PROGRESS-4). In SSE mode the same holds
for a message related to a request whose POST stream is gone.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from mcp_sync import Context
from mcp_sync.jsonrpc import Notification, Request
from mcp_sync.server.http._session import SessionTransport
from mcp_sync.transports.http_server import serve_http
from tests.http_server_helpers import Gate, call, checked, make_server, read_events
from tests.test_http_streaming import HttpPeer


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


def messages(response: Any) -> Iterator[Any]:
    for event in read_events(response):
        yield checked(json.loads(event.data))


@pytest.mark.timeout(30)
def test_json_mode_progress_written_before_the_get_waits_for_it_http_19_progress_4(
        peers: Any) -> None:
    """HTTP-10, HTTP-19, PROGRESS-4: progress a tool reports before the client has opened
    its GET stream arrives on that stream once it opens, before the call's answer."""
    gate = Gate()
    with serve_http(make_server(gate), json_response=True) as handle, \
            ThreadPoolExecutor(1) as pool:
        peer = peers(handle.url)
        peer.initialize()
        pending = pool.submit(peer.fork().messages, call(7, "tools/call", {
            "name": "wait", "arguments": {}, "_meta": {"progressToken": "early"}}))
        try:
            assert gate.reached.wait(5)  # the progress has been written
            with peer.get() as stream:
                assert stream.status_code == 200
                progress = next(messages(stream))
        finally:
            gate.opened.set()
        [answer] = pending.result(20)
    assert progress["method"] == "notifications/progress"
    assert progress["params"] == {"progressToken": "early", "progress": 1, "total": 2}
    assert answer["result"]["content"] == [{"type": "text", "text": "released"}]


@pytest.mark.timeout(10)
def test_json_answer_waits_until_related_messages_are_written_http_19_progress_4() -> None:
    """HTTP-19, PROGRESS-4: a JSON answer is held until the GET stream's consumer has
    written the progress related to it (it asks for more only after writing), so that the
    progress is on the wire first; with nobody reading, the answer does not wait."""
    transport = SessionTransport("s")
    try:
        opened = transport.open_stream([Request(1, "tools/call", {"name": "t"})], sse=False)
        progress = Notification("notifications/progress",
                                {"progressToken": 1, "progress": 1})
        transport.write(progress, related_to=1)
        assert transport.wait_related_written(opened.stream, 0)  # no reader: held, no wait
        token = transport.attach(transport.standalone)
        assert not transport.wait_related_written(opened.stream, 0)
        chunk, ended = transport.next_chunk(transport.standalone, token, 5, None)
        assert b"notifications/progress" in chunk and not ended
        assert not transport.wait_related_written(opened.stream, 0)  # handed, not written
        transport.write(Notification("notifications/tools/list_changed"))
        chunk, _ = transport.next_chunk(transport.standalone, token, 5, None)
        assert b"list_changed" in chunk
        assert transport.wait_related_written(opened.stream, 0)
    finally:
        transport.close()


@pytest.mark.timeout(30)
def test_sse_mode_progress_after_the_post_stream_dropped_is_resumable_http_16_http_26(
        peers: Any) -> None:
    """HTTP-16, HTTP-26, HTTP-27: progress a tool reports after the client dropped the
    call's POST stream is kept on that stream and arrives on resumption, before the
    answer."""
    reached, reported, release = threading.Event(), threading.Event(), threading.Event()
    server = make_server()

    @server.tool()
    def twice(ctx: Context) -> str:
        """Report progress, wait, report again, wait."""
        ctx.report_progress(1, 2)
        reached.wait(10)
        ctx.report_progress(2, 2)
        reported.set()
        release.wait(10)
        return "twice"

    with serve_http(server) as handle:
        peer = peers(handle.url)
        peer.initialize()
        response = peer.post(call(4, "tools/call", {
            "name": "twice", "arguments": {}, "_meta": {"progressToken": "t"}}), stream=True)
        first = next(read_events(response))
        response.close()  # the POST stream is gone before the second progress
        reached.set()
        assert reported.wait(10)
        with peer.fork().get({"Last-Event-ID": first.id or ""}) as resumed:
            assert resumed.status_code == 200
            events = messages(resumed)
            second = next(events)
            release.set()
            rest = list(events)
    assert second["params"] == {"progressToken": "t", "progress": 2, "total": 2}
    assert rest[-1]["result"]["content"] == [{"type": "text", "text": "twice"}]
