"""The event store behind resumable SSE streams, and the session transport's routing.

Both are driven directly, without HTTP: the store through its interface, the transport
as the engine and the WSGI threads use it.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from mcp_sync.errors import ConnectionClosed
from mcp_sync.jsonrpc import Notification, Request, Response
from mcp_sync.server.http._session import CannotResume, SessionTransport
from mcp_sync.transports.http_server import MemoryEventStore, StoredEvent, serve_http
from tests.http_server_helpers import make_server, parse_sse

pytestmark = pytest.mark.timeout(30)


def test_replay_returns_only_what_followed_on_that_stream_http_27_http_28() -> None:
    """HTTP-27/28: events after the given one, of that stream only, oldest first."""
    store = MemoryEventStore()
    for seq in (1, 2, 3):
        store.store_event("s", "p1", seq, f"a{seq}")
        store.store_event("s", "p2", seq, f"b{seq}")
    assert store.events_after("s", "p1", 1) == [StoredEvent(2, "a2"), StoredEvent(3, "a3")]
    assert store.events_after("s", "p2", 3) == []
    assert store.events_after("s", "p3", 0) is None
    assert store.events_after("other", "p1", 0) is None


def test_eviction_makes_earlier_positions_unresumable_ambig_16() -> None:
    """AMBIG-16: a bounded buffer; a position whose successors were dropped is refused."""
    store = MemoryEventStore(max_events_per_session=3)
    for seq in range(1, 6):
        store.store_event("s", "g", seq, str(seq))
    assert store.events_after("s", "g", 1) is None  # event 2 is gone
    assert store.events_after("s", "g", 2) == [StoredEvent(3, "3"), StoredEvent(4, "4"),
                                               StoredEvent(5, "5")]


def test_eviction_spans_streams_and_bytes_ambig_16() -> None:
    """AMBIG-16: the bound is per session; the oldest event goes first, whatever its stream."""
    store = MemoryEventStore(max_events_per_session=10, max_bytes_per_session=10)
    store.store_event("s", "p1", 1, "aaaa")
    store.store_event("s", "p2", 1, "bbbb")
    store.store_event("s", "p2", 2, "cccc")  # 12 bytes: p1's event goes
    assert store.events_after("s", "p1", 0) is None
    assert store.events_after("s", "p2", 0) == [StoredEvent(1, "bbbb"), StoredEvent(2, "cccc")]
    store.store_event("s", "p3", 1, "x" * 11)  # larger than the whole budget: not kept
    assert store.events_after("s", "p3", 0) is None
    assert store.events_after("s", "p3", 1) == []


def test_a_stream_emptied_by_eviction_never_replays_with_a_gap() -> None:
    """HTTP-27: after a stream's events were all evicted, a later event does not hide the gap."""
    store = MemoryEventStore(max_events_per_session=1)
    store.store_event("s", "g", 1, "one")
    store.store_event("s", "p1", 1, "other")  # evicts g:1, emptying g's log
    store.store_event("s", "g", 2, "two")  # evicts p1:1
    assert store.events_after("s", "g", 0) is None
    assert store.events_after("s", "g", 1) == [StoredEvent(2, "two")]


def test_forget_session_and_limits() -> None:
    """HTTP-34, AMBIG-16: a session that ended cannot be resumed; bad limits are refused."""
    store = MemoryEventStore()
    store.store_event("s", "g", 1, "x")
    store.forget_session("s")
    store.forget_session("never")
    assert store.events_after("s", "g", 0) is None
    with pytest.raises(ValueError):
        MemoryEventStore(max_events_per_session=-1)


# --- the session transport -------------------------------------------------------------------


def data_of(payloads: list[bytes]) -> list[Any]:
    return [json.loads(event.data) for event in parse_sse(b"".join(payloads))]


def test_transport_routes_each_message_to_one_stream_http_23() -> None:
    """HTTP-13/19/23: responses by id, related messages to their request's stream, the
    rest to the standalone stream, each exactly once."""
    transport = SessionTransport("s", event_store=MemoryEventStore())
    first = transport.open_stream([Request(1, "tools/call")], sse=True).stream
    second = transport.open_stream([Request(2, "tools/call")], sse=True).stream
    transport.write(Notification("notifications/progress", {"progressToken": 1, "progress": 1}),
                    related_to=1)
    transport.write(Notification("notifications/tools/list_changed"))
    transport.write(Response(2, {}))
    transport.write(Response(1, {}))
    transport.write(Response(1, {}))  # a second answer has nowhere to go
    assert [m.get("method", m.get("id")) for m in data_of(transport.take(first))] == [
        "notifications/progress", 1]
    assert [m.get("id") for m in data_of(transport.take(second))] == [2]
    assert [m["method"] for m in data_of(transport.take(transport.standalone))] == [
        "notifications/tools/list_changed"]
    assert first.finished and second.finished
    transport.close()


def test_transport_close_ends_streams_and_reads(wire: Any) -> None:
    """SHUTDOWN-5: close finishes every stream, ends read() and refuses further use."""
    transport = SessionTransport("s")
    stream = transport.open_stream([Request(1, "ping")], sse=True).stream
    token = transport.attach(stream)
    reader_saw: list[Any] = []
    reader = threading.Thread(target=lambda: reader_saw.append(transport.read()))
    reader.start()
    transport.close()
    reader.join(5)
    assert reader_saw == [None]
    assert transport.next_chunk(stream, token, 5.0, None) == (b"", True)
    with pytest.raises(ConnectionClosed):
        transport.write(Response(1, {}))
    with pytest.raises(ConnectionClosed):
        transport.feed(Request(2, "ping"))
    with pytest.raises(ConnectionClosed):
        transport.resume("g", 0)


def test_unresumable_stream_is_refused_http_28() -> None:
    """HTTP-28: a stream that is neither live nor stored cannot be resumed."""
    transport = SessionTransport("s", event_store=MemoryEventStore())
    with pytest.raises(CannotResume):
        transport.resume("p7", 1)
    transport.close()


def test_serve_forever_in_the_foreground_until_closed_http_3() -> None:
    """HTTP-3: loopback is the default address; serve_forever returns once closed."""
    from mcp_sync.server.http._serving import start_server

    handle = start_server(make_server(), "127.0.0.1", 0, path="/mcp", background=False)
    assert handle.host == "127.0.0.1"
    assert handle.url == f"http://127.0.0.1:{handle.port}/mcp"
    runner = threading.Thread(target=handle.serve_forever)
    runner.start()
    handle.close()
    runner.join(5)
    assert not runner.is_alive()
    with serve_http(make_server()) as background:
        assert background.host == "127.0.0.1"
