"""The Client against scripted fake servers: handshake, versions, errors, async calls."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from mcp_sync import Client, ProtocolVersionError, RequestTimeout, Server, types
from mcp_sync.errors import ConnectionClosed, InternalError, MethodNotFound, RpcError
from mcp_sync.testing import open_client
from mcp_sync.transports.base import Transport
from tests.conftest import validator
from tests.helpers import FakeServer, RawPeer, Script, answer_initialize, initialize_result


@pytest.fixture
def fake() -> Iterator[Callable[[Script], FakeServer]]:
    servers: list[FakeServer] = []

    def start(script: Script) -> FakeServer:
        server = FakeServer(script)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.peer.close()
        server.thread.join(10)


def test_initialize_request_and_initialized_lifecycle_2_4(fake: Any) -> None:
    """LIFECYCLE-2/4, VERSION-1: clientInfo, our newest version, then initialized."""
    seen: dict[str, Any] = {}

    def script(peer: RawPeer) -> None:
        seen["initialize"] = answer_initialize(peer, initialize_result(instructions="hi"))
        seen["next"] = peer.receive()
        ping = peer.receive()
        peer.send({"jsonrpc": "2.0", "id": ping["id"], "result": {}})

    server = fake(script)
    with Client(server.peer.transport, name="my-app", version="3.1") as client:
        assert client.instructions == "hi"
        assert client.server_info == types.Implementation(name="fake", version="1")
        client.ping()
    server.finish()
    initialize = seen["initialize"]
    assert not list(validator("InitializeRequest").iter_errors(initialize))
    assert initialize["params"]["protocolVersion"] == "2025-11-25"
    assert initialize["params"]["clientInfo"] == {"name": "my-app", "version": "3.1"}
    assert seen["next"] == {"jsonrpc": "2.0", "method": "notifications/initialized"}


def test_unsupported_version_disconnects_version_4(fake: Any) -> None:
    """VERSION-4: a result with a version we do not speak closes the connection and
    nothing else is sent (no initialized)."""
    def script(peer: RawPeer) -> None:
        answer_initialize(peer, initialize_result("2030-01-01"))
        with pytest.raises(EOFError):
            peer.receive()

    server = fake(script)
    with pytest.raises(ProtocolVersionError, match="2030-01-01") as caught:
        Client(server.peer.transport)
    assert caught.value.offered == "2030-01-01"
    server.finish()


def test_version_error_response_is_a_version_error_version_5(fake: Any) -> None:
    """VERSION-5, AMBIG-2: a -32602 error listing supported versions is a version error."""
    def script(peer: RawPeer) -> None:
        request = peer.receive()
        peer.send({"jsonrpc": "2.0", "id": request["id"], "error": {
            "code": -32602, "message": "Unsupported protocol version",
            "data": {"supported": ["2099-01-01"], "requested": "2025-03-26"}}})
        with pytest.raises(EOFError):
            peer.receive()

    server = fake(script)
    with pytest.raises(ProtocolVersionError):
        Client(server.peer.transport)
    server.finish()


def test_initialize_timeout_closes_without_cancel_cancel_3(fake: Any) -> None:
    """CANCEL-3: initialize is never cancelled; a silent server is disconnected."""
    frames: list[Any] = []

    def script(peer: RawPeer) -> None:
        frames.append(peer.receive())
        with pytest.raises(EOFError):
            while True:
                frames.append(peer.receive())

    server = fake(script)
    with pytest.raises(RequestTimeout):
        Client(server.peer.transport, timeout=0.3)
    server.finish()
    assert [frame["method"] for frame in frames] == ["initialize"]


def test_server_error_becomes_typed_exception_jsonrpc_12(fake: Any) -> None:
    def script(peer: RawPeer) -> None:
        answer_initialize(peer, initialize_result())
        peer.receive()  # initialized
        for code in (-32601, -32603, -32001):
            request = peer.receive()
            peer.send({"jsonrpc": "2.0", "id": request["id"],
                       "error": {"code": code, "message": f"code {code}", "data": [1]}})

    server = fake(script)
    with Client(server.peer.transport) as client:
        with pytest.raises(MethodNotFound):
            client.send_request("x/one")
        with pytest.raises(InternalError):
            client.send_request("x/two")
        with pytest.raises(RpcError) as caught:
            client.send_request("x/three")
        assert caught.value.code == -32001
        assert caught.value.data == [1]
    server.finish()


def test_responses_in_any_order_and_in_batches_batch_6(fake: Any) -> None:
    """JSONRPC-13, BATCH-6: answers are matched by id, in any order, even in one array."""
    def script(peer: RawPeer) -> None:
        answer_initialize(peer, initialize_result())
        peer.receive()  # initialized
        first, second, third = peer.receive(), peer.receive(), peer.receive()
        peer.send({"jsonrpc": "2.0", "id": third["id"], "result": {"n": 3}})
        peer.send([{"jsonrpc": "2.0", "id": second["id"], "result": {"n": 2}},
                   {"jsonrpc": "2.0", "id": first["id"], "result": {"n": 1}}])

    server = fake(script)
    with Client(server.peer.transport) as client:
        futures = [client.send_request_async(f"x/{n}") for n in (1, 2, 3)]
        assert [future.result(5)["n"] for future in futures] == [1, 2, 3]
    server.finish()


def test_close_fails_waiting_calls_with_connection_closed(fake: Any) -> None:
    """SHUTDOWN-5: close() wakes every waiting caller at once."""
    got_request = threading.Event()

    def script(peer: RawPeer) -> None:
        answer_initialize(peer, initialize_result())
        peer.receive()  # initialized
        peer.receive()
        got_request.set()
        with pytest.raises(EOFError):
            peer.receive(10)

    server = fake(script)
    client = Client(server.peer.transport)
    future = client.send_request_async("x/never")
    assert got_request.wait(5)
    client.close()
    with pytest.raises(ConnectionClosed):
        future.result(5)
    with pytest.raises(ConnectionClosed):
        client.ping()
    server.finish()


def test_notifications_reach_the_callback_in_order(fake: Any) -> None:
    received: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()

    def script(peer: RawPeer) -> None:
        answer_initialize(peer, initialize_result())
        peer.receive()  # initialized
        for n in range(20):
            peer.send({"jsonrpc": "2.0", "method": "notifications/message",
                       "params": {"level": "info", "data": n}})
        ping = peer.receive()
        peer.send({"jsonrpc": "2.0", "id": ping["id"], "result": {}})

    server = fake(script)
    with Client(server.peer.transport,
                on_notification=lambda method, params: received.put((method, params))) as client:
        client.ping()
        data = [received.get(timeout=5)[1]["data"] for _ in range(20)]
    assert data == list(range(20))
    server.finish()


def test_server_requests_the_client_does_not_serve_get_method_not_found(fake: Any) -> None:
    """CAPS-7, ROOTS-5: a client without roots or sampling answers them with -32601."""
    answers: list[Any] = []

    def script(peer: RawPeer) -> None:
        answer_initialize(peer, initialize_result())
        peer.receive()  # initialized
        for method in ("roots/list", "sampling/createMessage", "elicitation/create"):
            answers.append(peer.call({"jsonrpc": "2.0", "id": method, "method": method}))
        answers.append(peer.call({"jsonrpc": "2.0", "id": "p", "method": "ping"}))

    server = fake(script)
    with Client(server.peer.transport):
        server.finish()
    assert [answer["error"]["code"] for answer in answers[:3]] == [-32601] * 3
    assert answers[3] == {"jsonrpc": "2.0", "id": "p", "result": {}}


def test_call_tool_async_with_user_executor() -> None:
    server = Server("s")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    with ThreadPoolExecutor(1, thread_name_prefix="user-executor") as executor, \
            open_client(server, callback_executor=executor) as client:
        where: list[str] = []
        done = threading.Event()
        future = client.call_tool_async("add", {"a": 1, "b": 2})
        future.add_done_callback(lambda f: (where.append(threading.current_thread().name),
                                            done.set()))
        assert future.result(5).content == [types.TextContent(text="3")]
        assert done.wait(5)
    assert where[0].startswith("user-executor")


def test_call_tool_async_errors_arrive_on_the_future() -> None:
    server = Server("s")

    @server.tool()
    def one() -> int:
        return 1

    with open_client(server) as client:
        future = client.call_tool_async("missing")
        with pytest.raises(RpcError, match="Unknown tool"):
            future.result(5)


def test_send_request_async_callbacks_never_run_on_the_reader() -> None:
    """The reader never runs user code: a done-callback may even block on another call."""
    server = Server("s")
    with open_client(server) as client:
        nested: list[Any] = []
        done = threading.Event()

        def callback(future: Any) -> None:
            nested.append(threading.current_thread().name)
            client.ping(timeout=2)  # would deadlock if we were on the reader thread
            done.set()

        client.send_request_async("ping").add_done_callback(callback)
        assert done.wait(5)
        assert "reader" not in nested[0]


def test_shut_down_callback_executor_still_completes_the_future() -> None:
    server = Server("s")

    @server.tool()
    def one() -> int:
        return 1

    executor = ThreadPoolExecutor(1)
    executor.shutdown()
    with open_client(server, callback_executor=executor) as client, pytest.raises(RpcError):
        client.call_tool_async("nope").result(5)


class ExpiringTransport(Transport):
    """Wraps a memory transport the way an HTTP transport reports a 404 for our session:
    an answer with code -32000 becomes the local SessionExpired error."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def read(self) -> Any:
        from mcp_sync.errors import SessionExpired
        from mcp_sync.jsonrpc import ErrorResponse

        incoming = self.inner.read()
        if isinstance(incoming, ErrorResponse) and incoming.code == -32000:
            return ErrorResponse(incoming.id, SessionExpired("404"))
        return incoming

    def write(self, message: Any, *, related_to: Any = None) -> None:
        self.inner.write(message)

    def close(self) -> None:
        self.inner.close()


def test_expired_session_is_renewed_and_safe_calls_repeated_http_35(fake: Any) -> None:
    """HTTP-35: after the server forgets the session the client initializes again; a
    list call is repeated once, a tool call raises SessionExpired and is not repeated."""
    from mcp_sync.errors import SessionExpired

    methods: list[str] = []

    def expire(peer: RawPeer) -> None:
        request = peer.receive()
        methods.append(request["method"])
        peer.send({"jsonrpc": "2.0", "id": request["id"],
                   "error": {"code": -32000, "message": "session expired"}})

    def script(peer: RawPeer) -> None:
        answer_initialize(peer, initialize_result())
        peer.receive()  # initialized
        for _ in range(2):
            expire(peer)  # the call meets the expired session
            methods.append(answer_initialize(peer, initialize_result())["method"])
            methods.append(peer.receive()["method"])  # initialized again
        request = peer.receive()  # the repeated tools/list
        methods.append(request["method"])
        peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {"tools": []}})

    server = fake(script)
    with Client(ExpiringTransport(server.peer.transport)) as client:  # type: ignore[arg-type]
        with pytest.raises(SessionExpired):
            client.call_tool("x")
        assert client.list_tools() == []
    server.finish()
    assert methods == ["tools/call", "initialize", "notifications/initialized",
                       "tools/list", "initialize", "notifications/initialized", "tools/list"]


def test_renewed_session_gets_log_level_and_subscriptions_back_http_35(fake: Any) -> None:
    """HTTP-35, LOGGING-3, RESOURCES-7: a new session starts with the server's defaults,
    so the client asks again for its log level and its live subscriptions; a
    subscription that meets the expiry is made in the new session."""
    seen: list[tuple[str, Any]] = []

    def answer(peer: RawPeer, expire: bool = False) -> None:
        request = peer.receive()
        seen.append((request["method"], request.get("params")))
        if expire:
            peer.send({"jsonrpc": "2.0", "id": request["id"],
                       "error": {"code": -32000, "message": "session expired"}})
        else:
            peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {}})

    def renew(peer: RawPeer) -> None:
        seen.append(("initialize", None))
        answer_initialize(peer, initialize_result(capabilities=capabilities))
        seen.append((peer.receive()["method"], None))

    capabilities = {"logging": {}, "resources": {"subscribe": True}}

    def script(peer: RawPeer) -> None:
        answer_initialize(peer, initialize_result(capabilities=capabilities))
        peer.receive()  # initialized
        for _ in range(4):  # setLevel, subscribe a, subscribe b, unsubscribe b
            answer(peer)
        answer(peer, expire=True)  # subscribe c meets the expired session
        renew(peer)
        for _ in range(3):  # setLevel and subscribe a restored, subscribe c repeated
            answer(peer)

    server = fake(script)
    with Client(ExpiringTransport(server.peer.transport)) as client:  # type: ignore[arg-type]
        client.set_logging_level("error")
        client.subscribe_resource("file:///a")
        client.subscribe_resource("file:///b")
        client.unsubscribe_resource("file:///b")
        client.subscribe_resource("file:///c")
    server.finish()
    assert seen[4:] == [
        ("resources/subscribe", {"uri": "file:///c"}),
        ("initialize", None), ("notifications/initialized", None),
        ("logging/setLevel", {"level": "error"}),
        ("resources/subscribe", {"uri": "file:///a"}),
        ("resources/subscribe", {"uri": "file:///c"})]
