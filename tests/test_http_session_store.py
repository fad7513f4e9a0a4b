"""Sessions shared through a session store: any application given the same store serves
any request of any session (issue 28, point 4).

Here two applications of one process share a :class:`MemorySessionStore` behind a
round-robin proxy without affinity; tests/interop/test_scaleout_redis.py does the same
with separate processes and Redis.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest
import requests

from mcp_sync import Client, types
from mcp_sync.transports.http_server import MemorySessionStore, SessionRecord, serve_http
from tests.helpers import EXAMPLES, LEGACY_ERA, load_module
from tests.http_server_helpers import (
    HEADERS,
    INITIALIZE,
    INITIALIZED,
    WsgiPeer,
    call,
    read_events,
)
from tests.scaleout_helpers import RoundRobinProxy, serve_proxy

everything = load_module(EXAMPLES / "everything_server.py", "everything_for_store")

pytestmark = pytest.mark.timeout(60)


class Farm:
    """Two servers sharing one store, behind a round-robin proxy."""

    def __init__(self, stack: ExitStack, store: MemorySessionStore) -> None:
        self.handles = [stack.enter_context(serve_http(everything.make_server(),
                                                       session_store=store))
                        for _ in range(2)]
        self.proxy = RoundRobinProxy([handle.url.removesuffix("/mcp")
                                      for handle in self.handles])
        self.url = stack.enter_context(serve_proxy(self.proxy)).url
        for handle in self.handles:  # first: that ends the streams the proxy relays
            stack.callback(handle.close)


@pytest.fixture
def farm() -> Iterator[Farm]:
    with ExitStack() as stack:
        yield Farm(stack, MemorySessionStore())


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def test_a_session_is_served_by_every_application_sharing_the_store(farm: Farm) -> None:
    logs: list[Any] = []

    def answer(request: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Ada"}}

    with Client.http(farm.url, elicitation_handler=answer, on_log=logs.append,
                     **LEGACY_ERA) as client:
        for a in range(6):
            assert _text(client.call_tool("add", {"a": a, "b": 1})) == str(a + 1)
        (session_id,) = farm.proxy.session_ids()
        assert farm.proxy.backends_of(session_id) == {0, 1}
        # The elicitation leaves from the process running the tool; its answer is
        # POSTed through the proxy, to either process.
        for _ in range(3):
            assert _text(client.call_tool("ask")) == "Hello, Ada!"
        client.set_logging_level("warning")
        for _ in range(2):  # the level set on one process holds on the other
            assert _text(client.call_tool("log", {"level": "info", "message": "hidden"})
                         ) == "filtered out by the client's log level"
        assert client.call_tool("log", {"level": "error", "message": "seen"}).is_error is False
    assert [entry.data for entry in logs] == ["seen"]


def test_delete_on_one_application_ends_the_session_on_the_other() -> None:
    store = MemorySessionStore()
    server_a, server_b = everything.make_server(), everything.make_server()
    with server_a.wsgi_app(session_store=store) as app_a, \
            server_b.wsgi_app(session_store=store) as app_b:
        peer_a, peer_b = WsgiPeer(app_a), WsgiPeer(app_b)
        peer_a.initialize()
        peer_b.session_id = peer_a.session_id
        assert peer_b.result(call(2, "tools/call", {"name": "add",
                                                    "arguments": {"a": 2, "b": 3}}))[
            "content"][0]["text"] == "5"
        assert app_b.session_count == 1  # rebuilt from the record
        deleted = peer_a.client.delete("/mcp", headers={"Mcp-Session-Id": peer_a.session_id})
        assert deleted.status_code == 204
        for peer in (peer_a, peer_b):
            assert peer.post(call(3, "ping")).status_code == 404
        assert store.load(peer_a.session_id or "") is None
        assert app_b.session_count == 0


def test_an_expired_record_is_unknown_everywhere() -> None:
    now = [0.0]
    store = MemorySessionStore(clock=lambda: now[0])
    with everything.make_server().wsgi_app(session_store=store,
                                           session_timeout=60) as app_a, \
            everything.make_server().wsgi_app(session_store=store,
                                              session_timeout=60) as app_b:
        peer = WsgiPeer(app_a)
        peer.initialize()
        now[0] += 30
        assert WsgiPeer(app_b).post(call(2, "ping"), headers={
            "Mcp-Session-Id": peer.session_id or ""}).status_code == 200  # renewed
        now[0] += 59
        assert peer.post(call(3, "ping")).status_code == 200
        now[0] += 61
        assert peer.post(call(4, "ping")).status_code == 404
        assert WsgiPeer(app_b).post(call(5, "ping"), headers={
            "Mcp-Session-Id": peer.session_id or ""}).status_code == 404


def test_the_record_holds_what_any_process_needs() -> None:
    store = MemorySessionStore()
    with everything.make_server().wsgi_app(session_store=store) as app:
        peer = WsgiPeer(app)
        peer.initialize()
        peer.result(call(2, "logging/setLevel", {"level": "error"}))
        peer.result(call(3, "resources/subscribe", {"uri": "static://hello"}))
        record = store.load(peer.session_id or "")
    assert isinstance(record, SessionRecord)
    assert record.protocol_version == INITIALIZE["params"]["protocolVersion"]
    assert record.client_info == INITIALIZE["params"]["clientInfo"]
    assert record.log_level == "error" and record.subscriptions == ("static://hello",)
    assert SessionRecord.from_json(record.to_json()) == record
    assert INITIALIZED["method"] == "notifications/initialized"


def test_a_session_store_comes_alone_and_with_sessions() -> None:
    with pytest.raises(ValueError, match="without event_store"):
        everything.make_server().wsgi_app(session_store=MemorySessionStore(),
                                          event_store=MemorySessionStore().event_store)
    with pytest.raises(ValueError, match="stateless"):
        everything.make_server().wsgi_app(session_store=MemorySessionStore(),
                                          stateless=True)


def test_a_request_to_the_client_crosses_processes_both_ways_lifecycle_6() -> None:
    """The client's ``notifications/initialized`` and its answer to an elicitation reach
    another application than the one running the tool: the tool is unblocked (the
    server sends requests only once initialized, LIFECYCLE-6) and gets the answer."""
    store = MemorySessionStore()
    with serve_http(everything.make_server(), session_store=store) as first, \
            serve_http(everything.make_server(), session_store=store) as second:
        initialize = json.loads(json.dumps(INITIALIZE))
        initialize["params"].update(protocolVersion="2025-06-18", capabilities={"elicitation": {}})
        started = requests.post(first.url, json=initialize, headers=HEADERS, timeout=10)
        headers = {**HEADERS, "Mcp-Session-Id": started.headers["Mcp-Session-Id"]}
        assert requests.post(second.url, json=INITIALIZED, headers=headers,
                             timeout=10).status_code == 202
        with requests.post(first.url, json=call(2, "tools/call", {"name": "ask"}),
                           headers=headers, stream=True, timeout=(5, 20)) as answer:
            messages = (json.loads(event.data) for event in read_events(answer)
                        if event.data)
            asked = next(messages)
            assert asked["method"] == "elicitation/create"
            reply = {"jsonrpc": "2.0", "id": asked["id"],
                     "result": {"action": "accept", "content": {"name": "Ada"}}}
            assert requests.post(second.url, json=reply, headers=headers,
                                 timeout=10).status_code == 202
            result = next(messages)
        assert result["id"] == 2
        assert result["result"]["content"][0]["text"] == "Hello, Ada!"


# --- changes announced by one process reach the clients of the others --------------------------

conformance = load_module(EXAMPLES / "conformance_server.py", "conformance_for_store")

MODERN_HEADERS = {**HEADERS, "MCP-Protocol-Version": "2026-07-28"}
MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {}}


def _modern(url: str, method: str, params: dict[str, Any] | None = None,
            **headers: str) -> dict[str, Any]:
    answer = requests.post(url, timeout=10, json=call(
        9, method, {**(params or {}), "_meta": MODERN_META}),
        headers={**MODERN_HEADERS, "Mcp-Method": method, **headers})
    assert answer.status_code == 200, answer.text
    messages = [json.loads(event.data) for event in read_events(answer) if event.data] \
        if answer.headers["Content-Type"].startswith("text/event-stream") else [answer.json()]
    result: dict[str, Any] = messages[-1]["result"]
    return result


def _modern_call(url: str, tool: str) -> dict[str, Any]:
    return _modern(url, "tools/call", {"name": tool, "arguments": {}}, **{"Mcp-Name": tool})


def _listen(stack: ExitStack, url: str, **notifications: bool) -> Iterator[Any]:
    listen = stack.enter_context(requests.post(
        url, stream=True, timeout=(5, 20),
        json=call("L", "subscriptions/listen", {
            "_meta": MODERN_META, "notifications": notifications}),
        headers={**MODERN_HEADERS, "Mcp-Method": "subscriptions/listen"}))
    events = (json.loads(event.data) for event in read_events(listen) if event.data)
    assert next(events)["method"] == "notifications/subscriptions/acknowledged"
    return events


def test_a_list_change_in_one_process_reaches_a_listen_stream_in_another_sep_2575() -> None:
    """subscriptions/listen (SEP-2575) behind a load balancer: the listen stream is open
    on one application, the tool changing the tool list runs on another; the change
    arrives on the stream, tagged with its subscription id, once."""
    store = MemorySessionStore()
    with ExitStack() as stack:
        urls = [stack.enter_context(serve_http(conformance.make_server(),
                                               session_store=store)).url
                for _ in range(2)]
        events = _listen(stack, urls[0], toolsListChanged=True)
        assert "added" in _modern_call(urls[1], "test_trigger_tool_change")["content"][0][
            "text"]
        assert "removed" in _modern_call(urls[1], "test_trigger_tool_change")["content"][0][
            "text"]
        changes = [next(events), next(events)]
        assert [change["method"] for change in changes] == [
            "notifications/tools/list_changed"] * 2
        assert {change["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]
                for change in changes} == {"L"}


def test_a_resource_update_reaches_the_get_stream_of_a_process_that_never_saw_it() -> None:
    """A legacy session's GET stream is open on the first application; the second has
    served a request of the session, the third never has. An update announced on the
    third reaches the subscribed session all the same (read from the store), one
    announced on the second reaches it through that session's own connection, and none
    arrives twice (HTTP-19: unrelated messages go on the GET stream)."""
    store = MemorySessionStore()
    with ExitStack() as stack:
        servers = [everything.make_server() for _ in range(3)]
        urls = [stack.enter_context(serve_http(server, session_store=store)).url
                for server in servers]
        started = requests.post(urls[0], json=INITIALIZE, headers=HEADERS, timeout=10)
        headers = {**HEADERS, "Mcp-Session-Id": started.headers["Mcp-Session-Id"]}
        requests.post(urls[0], json=INITIALIZED, headers=headers, timeout=10)
        stream = stack.enter_context(requests.get(
            urls[0], stream=True, timeout=(5, 20), headers={**headers,
                                                            "Accept": "text/event-stream"}))
        assert stream.status_code == 200
        for uri in ("static://hello", "static://binary"):
            assert requests.post(urls[1], json=call(2, "resources/subscribe", {"uri": uri}),
                                 headers=headers, timeout=10).status_code == 200
        assert servers[2].notify_resource_updated("static://unsubscribed") == 0
        assert servers[2].notify_resource_updated("static://hello") == 0  # told elsewhere
        assert servers[1].notify_resource_updated("static://binary") == 1
        assert servers[2].notify_resource_updated("static://hello") == 0
        updates = (json.loads(event.data)["params"]["uri"] for event in read_events(stream)
                   if event.data)
        assert [next(updates) for _ in range(3)] == [
            "static://hello", "static://binary", "static://hello"]


def test_the_conformance_triggers_leave_every_process_listing_the_same() -> None:
    """examples/conformance_server.py with a session store (restore): each trigger adds
    its tool and removes it again, so that consecutive tools/list agree whichever
    process answers (the tools-list scenario's deterministic-order check); the
    listening clients, on another process, hear both changes."""
    from mcp_sync import Server

    store = MemorySessionStore()
    with ExitStack() as stack:
        urls = []
        for _ in range(2):
            server = Server("triggers", tools=True, prompts=True)
            conformance.add_listen_fixtures(server, restore=True)
            urls.append(stack.enter_context(serve_http(server, session_store=store)).url)
        listed = [[tool["name"] for tool in _modern(url, "tools/list")["tools"]]
                  for url in urls]
        events = _listen(stack, urls[0], toolsListChanged=True)
        assert _modern_call(urls[1], "test_trigger_tool_change")["content"][0]["text"] == (
            "added test_dynamic_tool, then removed test_dynamic_tool")
        assert [next(events)["method"] for _ in range(2)] == [
            "notifications/tools/list_changed"] * 2
        assert [[tool["name"] for tool in _modern(url, "tools/list")["tools"]]
                for url in urls] == listed
