"""The Redis session store against a real ``redis-server`` (started by the fixture;
skipped where it is not installed): records, events, claims and messages, and two
applications of one process sharing sessions through it. The same across processes is in
tests/interop/test_scaleout_redis.py.
"""

from __future__ import annotations

import json
import queue
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest
import requests

from mcp_sync import Client, types
from mcp_sync.transports.http_server import (
    RedisSessionStore,
    SessionRecord,
    SessionStoreError,
    serve_http,
    session_store_from_env,
)
from tests.helpers import EXAMPLES, LEGACY_ERA, load_module
from tests.http_server_helpers import (
    INITIALIZE,
    INITIALIZED,
    WsgiPeer,
    call,
    parse_sse,
    read_events,
)
from tests.scaleout_helpers import RedisServer, free_port, two_servers_behind_a_proxy
from tests.scaleout_helpers import redis_server as redis_server  # the fixture

everything = load_module(EXAMPLES / "everything_server.py", "everything_for_redis")

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def store(redis_server: RedisServer) -> Iterator[RedisSessionStore]:
    store = RedisSessionStore.from_url(redis_server.url)
    try:
        yield store
    finally:
        store.close()


def test_records_claims_counters_and_events_round_trip(store: RedisSessionStore) -> None:
    record = SessionRecord(session_id="s1", protocol_version="2025-06-18",
                           client_capabilities={"roots": {}}, log_level="debug",
                           subscriptions=("file:///a",), created=1.0, last_seen=2.0)
    assert store.load("s1") is None
    store.save(record, 60)  # only replaces a record that exists
    assert store.load("s1") is None
    store.create(record, 60)
    assert store.load("s1") == record
    assert store.end("s1") is True and store.end("s1") is False
    assert store.load("s1") is None
    store.claim("get:s1", "p1", 60)
    assert store.holder("get:s1") == "p1" and store.holder("get:s2") is None
    store.release("get:s1", "p2")  # not its claim
    assert store.holder("get:s1") == "p1"
    store.release("get:s1", "p1")
    assert store.holder("get:s1") is None
    for n in range(4):
        store.hold("s1", b"%d" % n, limit=3)
    assert store.take_held("s1") == [b"1", b"2", b"3"] and store.take_held("s1") == []
    assert [store.counter("ids:s1") for _ in range(3)] == [1, 2, 3]
    events = store.event_store
    for seq in (1, 2, 3):
        events.store_event("s1", "p1", seq, json.dumps({"n": seq}))
    assert [e.seq for e in events.events_after("s1", "p1", 1) or []] == [2, 3]
    assert events.events_after("s1", "p9", 0) is None  # HTTP-28: unknown stream
    events.forget_session("s1")
    assert events.events_after("s1", "p1", 0) is None


def test_evicted_events_make_earlier_positions_unresumable_ambig_16(
        redis_server: RedisServer) -> None:
    store = RedisSessionStore.from_url(redis_server.url, max_events_per_stream=2)
    try:
        for seq in (1, 2, 3):
            store.event_store.store_event("s", "p1", seq, "{}")
        assert store.event_store.events_after("s", "p1", 0) is None
        assert [e.seq for e in store.event_store.events_after("s", "p1", 1) or []] == [2, 3]
    finally:
        store.close()


def test_messages_reach_the_process_they_are_sent_to(store: RedisSessionStore) -> None:
    received: queue.Queue[tuple[str, bytes]] = queue.Queue()
    assert store.send("p1", "s1", b"nobody") is False
    store.listen("p1", lambda session, payload: received.put((session, payload)))
    try:
        # The listener subscribes on its own thread: send until it hears.
        for _ in range(100):
            if store.send("p1", "s1", b"w{}"):
                break
        assert received.get(timeout=10) == ("s1", b"w{}")
    finally:
        store.stop_listening("p1")


def test_a_lost_redis_is_a_clear_error_never_a_hang() -> None:
    store = RedisSessionStore.from_url(f"redis://127.0.0.1:{free_port()}/0", timeout=1)
    try:
        with pytest.raises(SessionStoreError, match="Redis failed"):
            store.load("s1")
        with everything.make_server().wsgi_app(session_store=store) as app:
            response = WsgiPeer(app).post(call(1, "ping"),
                                          headers={"Mcp-Session-Id": "s1"})
        assert response.status_code == 503
        assert "session store" in response.get_json()["error"]["message"]
    finally:
        store.close()


def test_the_environment_names_the_store(redis_server: RedisServer,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCP_SYNC_STORE", raising=False)
    assert session_store_from_env() is None
    monkeypatch.setenv("MCP_SYNC_STORE", redis_server.url)
    store = session_store_from_env()
    assert isinstance(store, RedisSessionStore)
    store.close()
    monkeypatch.setenv("MCP_SYNC_STORE", "memcached://x")
    with pytest.raises(ValueError, match="redis://"):
        session_store_from_env()


def _apps(stack: ExitStack, redis_url: str, count: int = 2) -> list[Any]:
    apps = []
    for _ in range(count):
        store = RedisSessionStore.from_url(redis_url)
        stack.callback(store.close)
        apps.append(stack.enter_context(everything.make_server().wsgi_app(
            session_store=store)))
    return apps


def test_a_stream_resumes_on_another_application_http_26(redis_server: RedisServer) -> None:
    with ExitStack() as stack:
        app_a, app_b = _apps(stack, redis_server.url)
        peer_a = WsgiPeer(app_a)
        peer_a.initialize()
        answer = peer_a.post(call(2, "tools/call", {
            "name": "long_running", "arguments": {"steps": 3},
            "_meta": {"progressToken": "t"}}))
        events = [event for event in parse_sse(answer.get_data()) if event.data]
        assert len(events) >= 2 and events[0].id
        peer_b = WsgiPeer(app_b)
        replayed = peer_b.client.get("/mcp", headers={
            "Accept": "text/event-stream", "Mcp-Session-Id": peer_a.session_id or "",
            "Last-Event-ID": events[0].id or ""}, buffered=True)
        assert replayed.status_code == 200
        assert [e.data for e in parse_sse(replayed.get_data()) if e.data] == [
            e.data for e in events[1:]]


def test_delete_ends_the_session_on_every_application(redis_server: RedisServer) -> None:
    with ExitStack() as stack:
        app_a, app_b = _apps(stack, redis_server.url)
        peer_a = WsgiPeer(app_a)
        peer_a.initialize()
        peer_b = WsgiPeer(app_b)
        peer_b.session_id = peer_a.session_id
        assert peer_b.result(call(2, "ping")) == {}
        headers = {"Mcp-Session-Id": peer_a.session_id or ""}
        assert peer_b.client.delete("/mcp", headers=headers).status_code == 204
        for peer in (peer_a, peer_b):
            assert peer.post(call(3, "ping")).status_code == 404
            assert peer.client.delete("/mcp", headers=headers).status_code == 404


def test_one_client_through_a_proxy_without_affinity(redis_server: RedisServer) -> None:
    logs: list[Any] = []
    with ExitStack() as stack:
        proxy, url = two_servers_behind_a_proxy(stack, everything.make_server, redis_server.url)

        def answer(request: Any) -> dict[str, Any]:
            return {"action": "accept", "content": {"name": "Ada"}}

        with Client.http(url, elicitation_handler=answer, on_log=logs.append,
                         **LEGACY_ERA) as client:
            results = [client.call_tool("add", {"a": a, "b": a}) for a in range(4)]
            assert [_text(result) for result in results] == ["0", "2", "4", "6"]
            for _ in range(3):
                assert _text(client.call_tool("ask")) == "Hello, Ada!"
            client.call_tool("log", {"level": "error", "message": "seen"})
        (session_id,) = proxy.session_ids()
        assert proxy.backends_of(session_id) == {0, 1}
    assert [entry.data for entry in logs] == ["seen"]


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.parametrize("get_first", [True, False])
def test_a_message_for_the_get_stream_reaches_the_host_holding_it_http_19(
        redis_server: RedisServer, get_first: bool) -> None:
    """Sent while the GET stream is open on the other host, or while none is open: then
    it waits in the store for the next one."""
    servers = [everything.make_server(), everything.make_server()]
    with ExitStack() as stack:
        urls = []
        for server in servers:
            store = RedisSessionStore.from_url(redis_server.url)
            stack.callback(store.close)
            urls.append(stack.enter_context(serve_http(server, session_store=store)).url)
        headers = {"Accept": "application/json, text/event-stream",
                   "Content-Type": "application/json"}
        started = requests.post(urls[0], json=INITIALIZE, headers=headers, timeout=10)
        headers["Mcp-Session-Id"] = started.headers["Mcp-Session-Id"]
        requests.post(urls[0], json=INITIALIZED, headers=headers, timeout=10)

        def open_stream() -> requests.Response:
            stream = stack.enter_context(requests.get(
                urls[0], stream=True, timeout=(5, 20),
                headers={**headers, "Accept": "text/event-stream"}))
            assert stream.status_code == 200
            return stream

        stream = open_stream() if get_first else None
        subscribed = requests.post(urls[1], json=call(2, "resources/subscribe",
                                                      {"uri": "static://hello"}),
                                   headers=headers, timeout=10)
        assert subscribed.status_code == 200
        # The second server has the session's only subscriber; the GET stream is on the
        # first. The notification crosses over (HTTP-19: unrelated messages on the GET).
        assert servers[1].notify_resource_updated("static://hello") == 1
        for event in read_events(stream or open_stream()):
            if event.data:
                assert json.loads(event.data) == {
                    "jsonrpc": "2.0", "method": "notifications/resources/updated",
                    "params": {"uri": "static://hello"}}
                break


# --- announcements to every process ------------------------------------------------------------


def test_an_announcement_reaches_every_listener_once_listen_returns(
        redis_server: RedisServer) -> None:
    """SessionStore.announce: every process listening hears it, the announcer's own
    included, as soon as listen() has returned (no retry: the subscription is
    confirmed by then, so a change announced right after a listen stream opens is not
    lost)."""
    stores = [RedisSessionStore.from_url(redis_server.url) for _ in range(2)]
    heard: list[queue.Queue[tuple[str, bytes]]] = [queue.Queue(), queue.Queue()]
    try:
        for index, store in enumerate(stores):
            store.listen(f"p{index}", lambda session, payload, i=index: heard[i].put(
                (session, payload)))
        stores[1].announce(b"n{}")
        assert [received.get(timeout=10) for received in heard] == [("", b"n{}")] * 2
    finally:
        for index, store in enumerate(stores):
            store.stop_listening(f"p{index}")
            store.close()
