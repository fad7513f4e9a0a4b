"""``subscriptions/listen`` (MCP 2026-07-28) on the server, in memory and over stdio.

Raw JSON-RPC: a modern client opens listen streams naming the kinds of change it wants;
every message the server writes is checked against schema-2026-07-28.json (DES-19).
Requirements are the schema's definitions (SubscriptionsListenRequest, SubscriptionFilter,
SubscriptionsAcknowledgedNotification, SubscriptionsListenResult, CancelledNotification)
and the spec's "Subscriptions" page (SEP-2575).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from mcp_sync import Context, Server
from tests.conftest import EXAMPLES, HERE
from tests.helpers import RawChild, RawPeer, load_module
from tests.server_support import (
    MODERN,
    RecordingTransport,
    modern_peer,
    modern_request,
    request,
)
from tests.wire_schema import message_errors

changing = load_module(HERE / "servers" / "changing_server.py")

SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"


def checked(message: dict[str, Any], answers: str | None = None) -> dict[str, Any]:
    errors = message_errors(message, MODERN, answers=answers)
    assert not errors, (message, errors)
    return message


def listen(request_id: Any, **notifications: Any) -> dict[str, Any]:
    return modern_request("subscriptions/listen", {"notifications": notifications},
                          request_id=request_id)


def call(request_id: Any, tool: str, **arguments: Any) -> dict[str, Any]:
    return modern_request("tools/call", {"name": tool, "arguments": arguments},
                          request_id=request_id)


class Listener:
    """A raw modern client: what the server wrote, sorted into answers by id and
    notifications by subscription id, each checked against the 2026-07-28 schema."""

    def __init__(self, peer: RawPeer) -> None:
        self.peer = peer
        self.methods: dict[Any, str] = {}
        self.answers: dict[Any, dict[str, Any]] = {}
        self.streams: dict[Any, list[dict[str, Any]]] = {}
        self.untagged: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        if "id" in message:
            self.methods[message["id"]] = message["method"]
        self.peer.send(message)

    def _take_one(self) -> None:
        message = self.peer.receive()
        if "id" in message:
            self.answers[message["id"]] = checked(message, self.methods.get(message["id"]))
            return
        checked(message)
        tag = message.get("params", {}).get("_meta", {}).get(SUBSCRIPTION_ID)
        if tag is None:
            self.untagged.append(message)
        else:
            self.streams.setdefault(tag, []).append(message)

    def answer(self, request_id: Any) -> dict[str, Any]:
        while request_id not in self.answers:
            self._take_one()
        return self.answers.pop(request_id)

    def result(self, request_id: Any) -> Any:
        answer = self.answer(request_id)
        assert "result" in answer, answer
        return answer["result"]

    def stream(self, subscription_id: Any, count: int) -> list[dict[str, Any]]:
        """The first ``count`` messages tagged with ``subscription_id``."""
        while len(self.streams.get(subscription_id, [])) < count:
            self._take_one()
        return self.streams[subscription_id][:count]

    def opened(self, request_id: Any, **notifications: Any) -> dict[str, Any]:
        """Open a listen stream; its acknowledgement's params."""
        self.send(listen(request_id, **notifications))
        ack = self.stream(request_id, 1)[0]
        assert ack["method"] == ACKNOWLEDGED
        params: dict[str, Any] = ack["params"]
        return params

    def nothing_more(self) -> bool:
        return self.peer.nothing_more()


@pytest.fixture
def server() -> Server:
    return changing.make_server()


@pytest.fixture
def client(server: Server) -> Iterator[Listener]:
    with modern_peer(server) as (peer, _):
        yield Listener(peer)


# --- opening a stream ---------------------------------------------------------------------


def test_the_acknowledgement_comes_first_and_names_the_honoured_subset(
        client: Listener) -> None:
    """SubscriptionsAcknowledgedNotification: the first message tagged with the
    subscription's id, carrying the subset of the filter the server honours."""
    params = client.opened(1, toolsListChanged=True, promptsListChanged=True,
                           resourcesListChanged=True, resourceSubscriptions=["notes://a"])
    assert params["notifications"] == {
        "toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True,
        "resourceSubscriptions": ["notes://a"]}
    assert params["_meta"] == {SUBSCRIPTION_ID: 1}


def test_kinds_the_server_cannot_send_are_left_out_of_the_acknowledgement() -> None:
    """SubscriptionsAcknowledgedNotificationParams.notifications: "if the client
    requested an unsupported type ... it is omitted from this set"."""
    server = Server("tools only")

    @server.tool()
    def one() -> int:
        return 1

    with modern_peer(server) as (peer, _):
        client = Listener(peer)
        params = client.opened("x", toolsListChanged=True, promptsListChanged=True,
                               resourceSubscriptions=["notes://a"])
        assert params["notifications"] == {"toolsListChanged": True}


def test_a_server_with_nothing_that_changes_acknowledges_an_empty_filter() -> None:
    """SEP-2575: listen is served whatever the server registered; the acknowledgement
    then honours nothing (and no change is ever sent)."""
    server = Server("static", logging=False)
    with modern_peer(server) as (peer, _):
        client = Listener(peer)
        assert client.opened(3, toolsListChanged=True)["notifications"] == {}


def test_discover_promises_list_changed_and_subscribe(client: Listener) -> None:
    """server/discover: the modern capabilities promise what listen streams deliver."""
    client.send(modern_request("server/discover", request_id=9))
    capabilities = client.result(9)["capabilities"]
    assert capabilities["tools"] == {"listChanged": True}
    assert capabilities["prompts"] == {"listChanged": True}
    assert capabilities["resources"] == {"listChanged": True, "subscribe": True}


@pytest.mark.parametrize("notifications", [None, [], {"toolsListChanged": "yes"},
                                           {"resourceSubscriptions": "notes://a"},
                                           {"resourceSubscriptions": [1]}])
def test_a_malformed_filter_is_invalid_params(client: Listener, notifications: Any) -> None:
    """SubscriptionsListenRequestParams: ``notifications`` is a required
    SubscriptionFilter; anything else is -32602 and no stream opens."""
    params = {} if notifications is None else {"notifications": notifications}
    client.send(modern_request("subscriptions/listen", params, request_id=4))
    assert client.answer(4)["error"]["code"] == -32602
    client.send(call(5, "grow", name="later"))
    client.result(5)
    assert client.nothing_more()


def test_listen_in_a_legacy_session_is_method_not_found() -> None:
    """COEX-7 and the era table: a legacy session has no subscriptions/listen."""
    with modern_peer(changing.make_server()) as (peer, _):
        peer.handshake()
        answer = peer.call(request("subscriptions/listen",
                                   {"notifications": {"toolsListChanged": True}}, 2))
        assert answer["error"]["code"] == -32601


# --- what a stream carries ----------------------------------------------------------------


def test_changes_reach_the_stream_tagged_with_its_id(client: Listener) -> None:
    """"Receiving Notifications": every notification on the stream carries the listen
    request's id in _meta["io.modelcontextprotocol/subscriptionId"]."""
    client.opened("sub", toolsListChanged=True, promptsListChanged=True,
                  resourcesListChanged=True)
    client.send(call(1, "grow", name="sprout"))
    client.send(call(2, "add_note", name="memo"))
    client.send(call(3, "publish", uri="notes://b"))
    for request_id in (1, 2, 3):
        client.result(request_id)
    changes = client.stream("sub", 4)[1:]
    assert sorted(change["method"] for change in changes) == [
        "notifications/prompts/list_changed", "notifications/resources/list_changed",
        "notifications/tools/list_changed"]
    assert all(change["params"]["_meta"] == {SUBSCRIPTION_ID: "sub"} for change in changes)
    assert client.untagged == []


def test_the_server_never_sends_kinds_the_client_did_not_ask_for(client: Listener) -> None:
    """SubscriptionFilter: "the server MUST NOT send notification types the client has
    not explicitly requested"."""
    client.opened(1, promptsListChanged=True)
    client.send(call(2, "grow", name="sprout"))
    client.send(call(3, "touch", uri="notes://a"))
    client.send(call(4, "add_note", name="memo"))
    for request_id in (2, 3, 4):
        client.result(request_id)
    changes = client.stream(1, 2)
    assert changes[1]["method"] == "notifications/prompts/list_changed"
    assert client.nothing_more()
    assert len(client.streams[1]) == 2


def test_resource_updates_reach_streams_whose_subscriptions_cover_the_uri(
        server: Server, client: Listener) -> None:
    """ResourceUpdatedNotification: only for URIs the stream subscribed to, or a
    sub-resource of one (the schema: "might be a sub-resource")."""
    client.opened(1, resourceSubscriptions=["notes://a"])
    for uri in ("notes://a", "notes://b", "notes://a/part", "notes://ab"):
        client.send(call(uri, "touch", uri=uri))
    told = {uri: client.result(uri)["structuredContent"]["result"]
            for uri in ("notes://a", "notes://b", "notes://a/part", "notes://ab")}
    assert told == {"notes://a": 1, "notes://b": 0, "notes://a/part": 1, "notes://ab": 0}
    updates = client.stream(1, 3)[1:]
    assert [update["params"]["uri"] for update in updates] == ["notes://a", "notes://a/part"]
    assert all(update["method"] == "notifications/resources/updated" for update in updates)


def test_changes_arrive_in_the_order_they_were_made(server: Server, client: Listener) -> None:
    """Changes made one after another reach a stream in that order."""
    client.opened(1, resourceSubscriptions=["notes://"])
    uris = [f"notes://{n}" for n in range(20)]
    for uri in uris:
        server.notify_resource_updated(uri)
    updates = client.stream(1, 21)[1:]
    assert [update["params"]["uri"] for update in updates] == uris


def test_several_streams_on_one_connection_are_told_apart_by_id(client: Listener) -> None:
    """"Multiple Concurrent Subscriptions": each stream gets what it asked for, tagged
    with its own id."""
    client.opened("tools", toolsListChanged=True)
    client.opened("both", toolsListChanged=True, promptsListChanged=True)
    client.send(call(1, "grow", name="sprout"))
    client.send(call(2, "add_note", name="memo"))
    client.result(1)
    client.result(2)
    assert [m["method"] for m in client.stream("tools", 2)] == [
        ACKNOWLEDGED, "notifications/tools/list_changed"]
    assert sorted(m["method"] for m in client.stream("both", 3)[1:]) == [
        "notifications/prompts/list_changed", "notifications/tools/list_changed"]
    assert client.nothing_more()
    assert len(client.streams["tools"]) == 2


def test_a_change_reaches_the_streams_of_every_connection(server: Server) -> None:
    """A change made once is told to every client listening for it, whatever
    connection it listens on; legacy sessions keep their own list_changed."""
    with modern_peer(server) as (first_peer, _), modern_peer(server) as (second_peer, _), \
            modern_peer(server) as (legacy, _):
        first, second = Listener(first_peer), Listener(second_peer)
        first.opened(1, toolsListChanged=True)
        second.opened(1, toolsListChanged=True)
        legacy.handshake()
        server.add_tool(lambda: 0, name="late")
        for client in (first, second):
            change = client.stream(1, 2)[1]
            assert change["method"] == "notifications/tools/list_changed"
        told = legacy.receive()
        assert told == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


def test_stream_messages_are_related_to_the_listen_request() -> None:
    """Transport.write(related_to=...): the acknowledgement, the changes and the end are
    related to the listen request, so a transport with a stream per request (Streamable
    HTTP) carries them on the listen request's own stream."""
    server = changing.make_server()
    recording: list[RecordingTransport] = []

    def wrap(transport: Any) -> RecordingTransport:
        recording.append(RecordingTransport(transport))
        return recording[0]

    with modern_peer(server, transport_wrapper=wrap) as (peer, _):
        client = Listener(peer)
        client.opened(7, toolsListChanged=True)
        server.add_tool(lambda: 0, name="late")
        client.stream(7, 2)
        assert server.end_listen_streams() == 1
        client.result(7)
    transport = recording[0]
    for method in (ACKNOWLEDGED, "notifications/tools/list_changed",
                   "notifications/cancelled"):
        assert transport.related(method) == [7], method


# --- how a stream ends --------------------------------------------------------------------


def test_a_cancelled_stream_gets_nothing_more_and_no_answer(
        server: Server, client: Listener) -> None:
    """"Cancellation": the client cancels with notifications/cancelled (stdio); the
    server stops sending and never answers the listen request."""
    client.opened(1, toolsListChanged=True)
    client.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                 "params": {"requestId": 1}})
    client.send(call(2, "grow", name="sprout"))
    client.result(2)
    assert client.nothing_more()
    assert client.streams[1] == client.stream(1, 1)
    assert 1 not in client.answers
    assert server.end_listen_streams() == 0


def test_the_server_ends_a_stream_with_cancelled_then_its_result(
        server: Server, client: Listener) -> None:
    """"Cancellation": the server tearing a stream down sends notifications/cancelled
    naming the listen request, then SubscriptionsListenResult with the subscription id."""
    client.opened("s", toolsListChanged=True)
    client.send(call(1, "end_listening"))
    assert client.result(1)["structuredContent"] == {"result": 1}
    result = client.result("s")
    assert result["resultType"] == "complete"
    assert result["_meta"][SUBSCRIPTION_ID] == "s"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "changing"
    cancelled = client.untagged
    assert [m["method"] for m in cancelled] == ["notifications/cancelled"]
    assert cancelled[0]["params"]["requestId"] == "s"
    server.add_tool(lambda: 0, name="late")
    assert client.nothing_more()
    assert len(client.streams["s"]) == 1


def test_the_stream_bound_refuses_one_more_until_one_ends() -> None:
    """Server(max_listen_streams=...): one stream more than the bound is refused with
    -32603 and no acknowledgement; a stream that ended frees its place."""
    server = changing.make_server(max_listen_streams=2)
    with modern_peer(server) as (peer, _):
        client = Listener(peer)
        client.opened(1, toolsListChanged=True)
        client.opened(2, toolsListChanged=True)
        client.send(listen(3, toolsListChanged=True))
        error = client.answer(3)["error"]
        assert error["code"] == -32603 and "2 subscriptions/listen streams" in error["message"]
        assert 3 not in client.streams
        client.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 1}})
        client.opened(4, toolsListChanged=True)


def test_streams_hold_no_worker_so_calls_are_served_beside_them() -> None:
    """A listen stream is left open without a thread of the request pool: a server
    serving one request at a time still answers calls with many streams open."""
    server = changing.make_server(max_workers=1)
    with modern_peer(server) as (peer, _):
        client = Listener(peer)
        for subscription in range(10):
            client.opened(subscription, toolsListChanged=True)
        client.send(call("grow", "grow", name="sprout"))
        assert client.result("grow")["content"][0]["text"] == "grew sprout"
        for subscription in range(10):
            assert client.stream(subscription, 2)[1]["method"] == (
                "notifications/tools/list_changed")


def test_closing_the_connection_ends_its_streams_and_frees_their_places() -> None:
    """A connection that ends takes its streams with it: later changes go nowhere, and
    the bound counts them no longer."""
    server = changing.make_server(max_listen_streams=1)
    with modern_peer(server) as (peer, connection):
        Listener(peer).opened(1, toolsListChanged=True)
        connection.close()
    assert server.notify_resource_updated("notes://a") == 0
    with modern_peer(server) as (peer, _):
        Listener(peer).opened(1, toolsListChanged=True)


def test_changes_from_many_threads_while_streams_open_and_close() -> None:
    """Changes made on many threads while streams open and are cancelled: every open
    stream is acknowledged before any change, and nothing deadlocks or is lost for the
    streams that stay open."""
    server = changing.make_server()
    with modern_peer(server) as (peer, _):
        client = Listener(peer)
        client.opened("kept", resourceSubscriptions=["notes://"])
        start = threading.Barrier(4)

        def change(worker: int) -> None:
            start.wait(5)
            for n in range(25):
                server.notify_resource_updated(f"notes://{worker}/{n}")

        with ThreadPoolExecutor(4, thread_name_prefix="test:changes") as pool:
            done = [pool.submit(change, worker) for worker in range(4)]
            for churn in range(10):
                client.send(listen(f"churn{churn}", resourceSubscriptions=["notes://"]))
                client.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                             "params": {"requestId": f"churn{churn}"}})
            for future in done:
                future.result(10)
        kept = client.stream("kept", 101)
        assert kept[0]["method"] == ACKNOWLEDGED
        for worker in range(4):
            mine = [m["params"]["uri"] for m in kept[1:]
                    if m["params"]["uri"].startswith(f"notes://{worker}/")]
            assert mine == [f"notes://{worker}/{n}" for n in range(25)]
        for churn in range(10):
            messages = client.streams.get(f"churn{churn}", [])
            assert not messages or messages[0]["method"] == ACKNOWLEDGED


def test_a_tool_may_change_the_lists_it_is_listed_in(client: Listener) -> None:
    """A change made inside a tool call reaches the stream; the call is answered too."""
    client.opened(1, toolsListChanged=True)
    client.send(call(2, "grow", name="sprout"))
    assert client.result(2)["content"][0]["text"] == "grew sprout"
    assert client.stream(1, 2)[1]["method"] == "notifications/tools/list_changed"
    client.send(modern_request("tools/list", request_id=3))
    assert "sprout" in [tool["name"] for tool in client.result(3)["tools"]]


def test_call_hooks_run_around_opening_a_stream() -> None:
    """Server.add_call_hook: a hook encloses the opening of a stream as it does any
    request a handler serves, and sees the request's context."""
    server = changing.make_server()
    seen: list[str | None] = []

    @server.add_call_hook
    def hook(ctx: Context) -> Any:
        import contextlib

        seen.append(ctx.protocol_version)
        return contextlib.nullcontext()

    with modern_peer(server) as (peer, _):
        Listener(peer).opened(1, toolsListChanged=True)
    assert seen == [MODERN]


# --- over stdio ---------------------------------------------------------------------------


@pytest.mark.timeout(60)
def test_listen_over_stdio_from_ack_to_cancel() -> None:
    """stdio: a listen stream in a real child process, a change from a tool call, the
    client's notifications/cancelled, then the server's own teardown of a second stream;
    every line fits the 2026-07-28 schema. The same process then serves a legacy
    session with resources/subscribe as before."""
    child = RawChild([sys.executable, str(HERE / "servers" / "changing_server.py")])
    try:
        child.send(listen(1, toolsListChanged=True))
        ack = checked(child.receive())
        assert ack["method"] == ACKNOWLEDGED and ack["params"]["_meta"] == {SUBSCRIPTION_ID: 1}
        child.send(call(2, "grow", name="sprout"))
        lines = [checked(child.receive()) for _ in range(2)]
        changed = next(line for line in lines if "method" in line)
        assert changed["method"] == "notifications/tools/list_changed"
        assert changed["params"]["_meta"] == {SUBSCRIPTION_ID: 1}
        answer = next(line for line in lines if "id" in line)
        assert answer["id"] == 2 and checked(answer, "tools/call")

        child.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": 1}})
        child.send(listen(3, toolsListChanged=True))
        assert checked(child.receive())["params"]["_meta"] == {SUBSCRIPTION_ID: 3}
        child.send(call(4, "end_listening"))
        ending = [child.receive() for _ in range(3)]
        assert [line.get("method") for line in ending[:2]] == ["notifications/cancelled",
                                                               None]
        assert ending[0]["params"]["requestId"] == 3
        assert ending[1]["id"] == 3 and checked(ending[1], "subscriptions/listen")
        assert ending[2]["id"] == 4
        assert ending[2]["result"]["structuredContent"] == {"result": 1}
    finally:
        child.kill()


@pytest.mark.timeout(60)
def test_legacy_subscriptions_keep_working_beside_listen_streams() -> None:
    """Legacy sessions keep resources/subscribe and its notifications exactly as before,
    while a modern client listens on another connection of the same server."""
    server = changing.make_server()
    with modern_peer(server) as (modern, _), modern_peer(server) as (legacy, _):
        client = Listener(modern)
        client.opened(1, resourceSubscriptions=["notes://a"])
        legacy.handshake()
        assert legacy.call(request("resources/subscribe", {"uri": "notes://a"}, 2)) == {
            "jsonrpc": "2.0", "id": 2, "result": {}}
        assert server.notify_resource_updated("notes://a") == 2
        assert legacy.receive() == {"jsonrpc": "2.0", "method": "notifications/resources/updated",
                                    "params": {"uri": "notes://a"}}
        assert client.stream(1, 2)[1]["params"] == {
            "uri": "notes://a", "_meta": {SUBSCRIPTION_ID: 1}}


def test_the_conformance_fixtures_change_the_lists_a_stream_listens_to() -> None:
    """The server-stateless scenario's listen checks (SEP-2575), in memory: the
    conformance server's trigger tools make tools and prompts list changes, each reaching
    only the stream that asked for its kind."""
    conformance = load_module(EXAMPLES / "conformance_server.py")
    with modern_peer(conformance.make_server()) as (peer, _):
        client = Listener(peer)
        client.opened("tools", toolsListChanged=True)
        client.opened("prompts", promptsListChanged=True)
        for request_id, tool in enumerate(["test_trigger_tool_change",
                                           "test_trigger_prompt_change",
                                           "test_trigger_tool_change"]):
            client.send(call(request_id, tool))
            assert client.result(request_id).get("isError") is not True
        assert [m["method"] for m in client.stream("tools", 3)[1:]] == [
            "notifications/tools/list_changed"] * 2
        assert [m["method"] for m in client.stream("prompts", 2)[1:]] == [
            "notifications/prompts/list_changed"]
        client.send(modern_request("tools/list", request_id="list"))
        names = [tool["name"] for tool in client.result("list")["tools"]]
        assert "test_dynamic_tool" not in names


def test_a_call_hook_failing_the_opening_frees_the_place_of_its_stream() -> None:
    """Server.add_call_hook: a hook that raises when the opening ends fails the listen
    request with -32603 as it fails any request; its stream is gone, so it gets no
    changes and no longer counts against max_listen_streams."""
    import contextlib

    server = changing.make_server(max_listen_streams=1)
    failing = [True]

    @server.add_call_hook
    @contextlib.contextmanager
    def hook(ctx: Context) -> Iterator[None]:
        yield
        if failing.pop() if failing else False:
            raise RuntimeError("the hook failed")

    with modern_peer(server) as (peer, _):
        client = Listener(peer)
        client.send(listen(1, toolsListChanged=True))
        assert client.answer(1)["error"]["code"] == -32603
        server.add_tool(lambda: 0, name="late")
        client.opened(2, toolsListChanged=True)
        server.add_tool(lambda: 0, name="later")
        assert client.stream(2, 2)[1]["method"] == "notifications/tools/list_changed"
        assert [m["method"] for m in client.streams.get(1, [])] in ([], [ACKNOWLEDGED])


def test_an_id_in_use_by_an_open_stream_is_refused(client: Listener) -> None:
    """JSONRPC-4 with "Receiving Notifications": the subscription id is the listen
    request's id, so a second request with the id of an open stream is -32600 and the
    open stream goes on alone."""
    client.opened("same", toolsListChanged=True)
    client.send(listen("same", promptsListChanged=True))
    assert client.answer("same")["error"]["code"] == -32600
    client.send(call(1, "add_note", name="memo"))
    client.send(call(2, "grow", name="sprout"))
    client.result(1)
    client.result(2)
    assert [m["method"] for m in client.stream("same", 2)] == [
        ACKNOWLEDGED, "notifications/tools/list_changed"]
    assert client.nothing_more()
    assert len(client.streams["same"]) == 2
