"""The threaded engine: many callers, timeouts, cancellation, progress, close, batches.

Most tests wire a real :class:`~mcp_sync.Server` and :class:`~mcp_sync.Client` over an
in-memory pair. Where the wire itself is the subject, a hand-driven peer
(:class:`tests.helpers.RawPeer`) writes frames and reads back exactly what came out; a few
tests drive two bare :class:`~mcp_sync.engine._engine.Engine` objects. Tools synchronise with the
test through Events; nothing sleeps. The one timed wait paces a tool's progress reports,
because LIFECYCLE-11 is about time passing between them.
"""

from __future__ import annotations

import gc
import itertools
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import pytest

from mcp_sync import Client, Context, Server, types
from mcp_sync.engine._engine import Engine, IncomingRequest
from mcp_sync.engine._threads import ThreadGroup
from mcp_sync.errors import (
    ConnectionClosed,
    ConnectionLost,
    InternalError,
    MethodNotFound,
    RequestTimeout,
)
from mcp_sync.jsonrpc import Incoming, Message, Notification, Request
from mcp_sync.protocol._session import Role, Session
from mcp_sync.server import ServerConnection
from mcp_sync.transports.base import Transport
from mcp_sync.transports.memory import MemoryTransport, memory_pair
from tests.helpers import LEGACY_ERA, Callers, Gates, RawPeer

# --- helpers ------------------------------------------------------------------------------


class Recording(Transport):
    """Passes everything through to ``inner`` and keeps what was read and written."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.read_log: list[Incoming] = []
        self.written: list[Message] = []
        self._changed = threading.Condition()

    def read(self) -> Incoming | None:
        incoming = self.inner.read()
        if incoming is not None:
            with self._changed:
                self.read_log.append(incoming)
                self._changed.notify_all()
        return incoming

    def write(self, message: Message | Any, *, related_to: Any = None) -> None:
        self.inner.write(message)
        with self._changed:
            self.written.extend(message if isinstance(message, (list, tuple)) else [message])
            self._changed.notify_all()

    def close(self) -> None:
        self.inner.close()

    def requests_written(self) -> list[Request]:
        with self._changed:
            return [m for m in self.written if isinstance(m, Request)]

    def notifications_written(self, method: str) -> list[Notification]:
        with self._changed:
            return [m for m in self.written
                    if isinstance(m, Notification) and m.method == method]

    def wait_notifications_written(self, method: str, count: int,
                                   timeout: float = 10.0) -> list[Notification]:
        """The ``method`` notifications written, once there are at least ``count`` (or
        ``timeout`` passed). The watchdog fails a timed-out call before it writes the
        cancellation, so a caller's RequestTimeout does not mean the cancel is out yet."""
        with self._changed:
            self._changed.wait_for(
                lambda: len([m for m in self.written if isinstance(m, Notification)
                             and m.method == method]) >= count, timeout)
        return self.notifications_written(method)


@contextmanager
def connected(server: Server, *, client_end: Transport | None = None,
              server_end: Transport | None = None, gates: Gates | None = None,
              **options: Any) -> Iterator[tuple[Client, ServerConnection]]:
    """A Client and the server's side of its connection, both closed at the end
    (after every gate is opened, so that no tool is left holding a worker). A legacy
    session unless ``options`` say otherwise: these tests drive server-to-client requests
    and ping both ways, which exist there."""
    options = {**LEGACY_ERA, **options}
    a, b = memory_pair()
    connection = server.connect(server_end if server_end is not None else b)
    try:
        client = Client(client_end if client_end is not None else a, **options)
    except BaseException:
        connection.close()
        raise
    try:
        yield client, connection
    finally:
        if gates is not None:
            gates.release_all()
        client.close()
        connection.close()


@contextmanager
def raw_client(server: Server) -> Iterator[RawPeer]:
    """A hand-driven client, initialized, on a connection of ``server``."""
    peer = RawPeer()
    connection = server.connect(peer.transport)
    try:
        assert "result" in peer.handshake()
        yield peer
    finally:
        peer.close()
        connection.close()




def _text(result: types.CallToolResult) -> str:
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text


@pytest.fixture
def gates() -> Iterator[Gates]:
    found = Gates()
    yield found
    found.release_all()  # a failed test must not leave a tool blocked


@pytest.fixture
def server(gates: Gates) -> Server:
    """Tools that echo, wait for a gate, wait for cancellation, report progress."""
    made = Server("engine-test", version="1.0.0")

    @made.tool()
    def echo(value: str) -> str:
        return value

    @made.tool()
    def hold(name: str) -> str:
        """Signal that it started, then wait until the test opens the gate."""
        gates.started(name).set()
        gates.release(name).wait(15)
        return f"released {name}"

    @made.tool()
    def fails() -> str:
        raise ValueError("this tool always fails")

    @made.tool()
    def nested(ctx: Context) -> str:
        ctx.send_request("ping", timeout=5)
        return "nested ping answered"

    @made.tool()
    def steps(count: int, ctx: Context) -> str:
        for i in range(1, count + 1):
            ctx.report_progress(i / 4, count / 4, f"step {i}")
        return "done"

    return made


# --- many callers -------------------------------------------------------------------------


@pytest.mark.timeout(60)
def test_32_threads_1000_calls_each_answer_to_its_caller_jsonrpc_4_jsonrpc_13(
        server: Server) -> None:
    """JSONRPC-13, JSONRPC-4: one Client shared by 32 threads; 1,000 calls pipelined,
    every answer matched to the call that asked (by id only), no id used twice."""
    a, b = memory_pair()
    recording = Recording(a)
    calls = 1000
    counter = itertools.count()
    mismatches: list[tuple[str, str]] = []
    errors: list[BaseException] = []
    done: list[int] = []
    lock = threading.Lock()
    start = threading.Barrier(32, timeout=10)

    with connected(server, client_end=recording, server_end=b) as (client, _):

        def caller(thread: int) -> None:
            try:
                start.wait()
                while (n := next(counter)) < calls:
                    value = f"thread {thread} call {n} ✓"
                    got = _text(client.call_tool("echo", {"value": value}, timeout=20))
                    with lock:
                        done.append(n)
                        if got != value:
                            mismatches.append((value, got))
            except BaseException as exc:
                with lock:
                    errors.append(exc)

        threads = [threading.Thread(target=caller, args=(i,), name=f"test:caller-{i}")
                   for i in range(32)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(50)
        assert not any(thread.is_alive() for thread in threads)

    assert not errors
    assert not mismatches
    assert sorted(done) == list(range(calls))
    ids = [request.id for request in recording.requests_written()]
    assert len(ids) == calls + 1  # and initialize
    assert len(set(ids)) == len(ids)


@pytest.mark.timeout(20)
def test_fast_call_finishes_before_slow_call_jsonrpc_13(server: Server, gates: Gates) -> None:
    """JSONRPC-13: responses may come in any order; a fast call does not queue behind
    a slow one sent first."""
    with connected(server, gates=gates, timeout=10) as (client, _):
        slow = client.call_tool_async("hold", {"name": "slow"})
        assert gates.started("slow").wait(5)
        assert _text(client.call_tool("echo", {"value": "fast"})) == "fast"
        assert not slow.done()
        gates.release("slow").set()
        assert _text(slow.result(5)) == "released slow"


# --- timeouts and cancellation ------------------------------------------------------------


@pytest.mark.timeout(20)
def test_timeout_cancels_at_the_server_lifecycle_9_lifecycle_10_cancel_1() -> None:
    """LIFECYCLE-9/10, CANCEL-1: a call whose per-call timeout passes raises
    RequestTimeout; the server reads notifications/cancelled naming that request, and
    the handler's ctx.cancelled becomes true."""
    seen: dict[str, Any] = {}
    finished = threading.Event()
    made = Server("cancel-test")

    @made.tool()
    def block(ctx: Context) -> str:
        seen["request_id"] = ctx.request_id
        seen["woken"] = ctx.wait_cancelled(10)
        seen["cancelled"] = ctx.cancelled
        finished.set()
        return "too late"

    a, b = memory_pair()
    server_side = Recording(b)
    with connected(made, client_end=a, server_end=server_side, timeout=30) as (client, _):
        began = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("block", timeout=0.3)
        assert 0.3 <= time.monotonic() - began < 5
        assert finished.wait(5)
        assert seen["woken"] is True and seen["cancelled"] is True
        cancels = [m for m in server_side.read_log if isinstance(m, Notification)
                   and m.method == "notifications/cancelled"]
        assert len(cancels) == 1
        assert cancels[0].params is not None
        assert cancels[0].params["requestId"] == seen["request_id"]
        client.ping()  # the connection is still good


@pytest.mark.timeout(20)
def test_cancelled_request_gets_no_response_cancel_4_cancel_5_cancel_8(gates: Gates) -> None:
    """CANCEL-4: the cancelled request is never answered; CANCEL-5/8: cancels for
    unknown or finished ids, or without a requestId, are ignored silently."""
    made = Server("cancel-test", max_workers=1)
    seen: dict[str, bool] = {}

    @made.tool()
    def block(ctx: Context) -> str:
        gates.started("block").set()
        seen["cancelled"] = ctx.wait_cancelled(10)
        return "must not be sent"

    @made.tool()
    def echo(value: str) -> str:
        return value

    with raw_client(made) as peer:
        peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "block", "arguments": {}}})
        assert gates.started("block").wait(5)
        peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 1, "reason": "the user changed their mind"}})
        # One worker: call 2 runs only once call 1 has been finished, with or without
        # an answer, so the next frame shows whether call 1 was answered.
        peer.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                   "params": {"name": "echo", "arguments": {"value": "next"}}})
        answer = peer.receive()
        assert answer["id"] == 2
        assert answer["result"]["content"][0]["text"] == "next"
        assert seen["cancelled"] is True
        for bad in ({}, {"requestId": 1}, {"requestId": 99}, {"requestId": None},
                    {"requestId": 2, "reason": "already answered"}):
            peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": bad})
        peer.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
        assert peer.receive() == {"jsonrpc": "2.0", "id": 3, "result": {}}


@pytest.mark.timeout(20)
def test_progress_extends_the_deadline_up_to_the_hard_maximum_lifecycle_11_progress_8(
        ) -> None:
    """LIFECYCLE-11, PROGRESS-8: progress every 50 ms keeps a 0.4 s call alive well past
    0.4 s, but the client's max_timeout (1.5 s) still ends it with RequestTimeout."""
    made = Server("progress-test")
    outcome: dict[str, Any] = {}
    finished = threading.Event()

    @made.tool()
    def forever(ctx: Context) -> str:
        reported = 0
        # The 50 ms wait stands for work between reports; a cancellation wakes it.
        while not ctx.wait_cancelled(0.05):
            reported += 1
            ctx.report_progress(reported)
        outcome["reported"] = reported
        finished.set()
        return "cancelled"

    progress: list[float] = []
    with connected(made, timeout=30, max_timeout=1.5) as (client, _):
        began = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("forever", timeout=0.4,
                             on_progress=lambda value, total, message: progress.append(value))
        elapsed = time.monotonic() - began
        assert finished.wait(5)
    assert 1.5 <= elapsed < 4.0
    assert len(progress) >= 5
    assert progress == sorted(progress)


@pytest.mark.timeout(20)
def test_progress_callbacks_in_order_before_the_result_progress_3_progress_4(
        server: Server) -> None:
    """PROGRESS-3/4: fractional progress with total and message reaches the callback in
    order, every report before call_tool returns, on none of the reader's threads."""
    seen: list[tuple[float, float | None, str | None]] = []
    threads: set[str] = set()

    def on_progress(progress: float, total: float | None, message: str | None) -> None:
        threads.add(threading.current_thread().name)
        seen.append((progress, total, message))

    with connected(server, timeout=10) as (client, _):
        for _ in range(3):
            seen.clear()
            result = client.call_tool("steps", {"count": 40}, on_progress=on_progress)
            assert _text(result) == "done"
            assert seen == [(i / 4, 10.0, f"step {i}") for i in range(1, 41)]
    assert not any(name.endswith(":reader") for name in threads)


@pytest.mark.timeout(20)
def test_progress_never_follows_the_answer_progress_6() -> None:
    """PROGRESS-6: a thread of the tool's reporting progress while the tool returns;
    once the answer is on the wire, no progress for that token follows it."""
    made = Server("progress-test")
    stopped = threading.Event()

    @made.tool()
    def racing(ctx: Context) -> str:
        first = threading.Event()

        def report() -> None:
            value = 0
            while True:
                value += 1
                if not ctx.report_progress(value) and value > 1:
                    break
                first.set()
            stopped.set()

        threading.Thread(target=report, name="test:progress-reporter", daemon=True).start()
        first.wait(5)
        return "answered"

    with raw_client(made) as peer:
        for round_ in range(20):
            stopped.clear()
            request_id = f"call-{round_}"
            peer.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                       "params": {"name": "racing", "arguments": {},
                                  "_meta": {"progressToken": request_id}}})
            assert stopped.wait(5)  # the reporter saw that the request was answered
            peer.send({"jsonrpc": "2.0", "id": f"ping-{round_}", "method": "ping"})
            frames = []
            while True:
                frame = peer.receive()
                frames.append(frame)
                if frame.get("id") == f"ping-{round_}":
                    break
            answered = [i for i, f in enumerate(frames) if f.get("id") == request_id]
            assert len(answered) == 1
            after = frames[answered[0] + 1:]
            assert not [f for f in after if f.get("method") == "notifications/progress"]


# --- failures inside handlers --------------------------------------------------------------


@pytest.mark.timeout(20)
def test_failing_handlers_leave_the_connection_up_tools_6_jsonrpc_12() -> None:
    """JSONRPC-12, TOOLS-6: a tool that raises is an error result; a handler that raises
    a plain exception (even SystemExit) is -32603; the connection serves on."""
    made = Server("fail-test")

    @made.tool()
    def fails() -> str:
        raise ValueError("this tool always fails")

    @made.tool()
    def exits() -> str:
        raise SystemExit(3)

    with connected(made, timeout=10) as (client, connection):
        result = client.call_tool("fails")
        assert result.is_error is True
        assert "this tool always fails" in _text(result)
        client.ping()
        with pytest.raises(InternalError):
            client.call_tool("exits", timeout=5)
        client.ping()
        connection.ping()
        assert _text(client.call_tool("fails")).startswith("Error")


@pytest.mark.timeout(20)
def test_raw_engine_handler_raising_plain_exception_is_internal_error_jsonrpc_12() -> None:
    """JSONRPC-12: a request handler raising anything but RpcError answers -32603 and
    the engine keeps serving."""

    def handle(incoming: IncomingRequest) -> dict[str, Any] | None:
        if incoming.method == "boom":
            raise RuntimeError("handler bug")
        return {"method": incoming.method}

    with engine_pair(handle) as (client, _):
        with pytest.raises(InternalError):
            client.request("boom", timeout=5).result(5)
        assert client.request("work", timeout=5).result(5) == {"method": "work"}
        assert client.request("ping", timeout=5).result(5) == {}


@pytest.mark.timeout(20)
def test_an_answered_call_is_not_kept_by_its_deadline() -> None:
    """The watchdog's heap outlives answered calls; it must not keep their answers alive
    (a client making calls of 10,000 items each once held 64 answers: 200 MB)."""
    with engine_pair(lambda incoming: {"method": incoming.method}) as (client, _):
        futures = [client.request("work", timeout=60) for _ in range(3)]
        assert [f.result(5) for f in futures] == [{"method": "work"}] * 3
        gone = [weakref.ref(f) for f in futures]
        del futures
        gc.collect()
        assert [ref() for ref in gone] == [None, None, None]


# --- the peer goes away, or we close ---------------------------------------------------------


@pytest.mark.timeout(20)
@pytest.mark.parametrize("how", ["transport", "connection"])
def test_peer_dying_mid_call_is_connection_lost_within_a_second_shutdown_5(
        server: Server, gates: Gates, how: str) -> None:
    """SHUTDOWN-5: the server end goes away while a call waits: the caller has
    ConnectionLost within a second, and later calls fail at once."""
    a, b = memory_pair()
    with connected(server, client_end=a, server_end=b, gates=gates,
                   timeout=30) as (client, connection):
        future = client.call_tool_async("hold", {"name": "dying"})
        assert gates.started("dying").wait(5)
        # The server's close() joins its workers, and this one is held at its gate: close
        # from another thread, as a server shutting down would.
        closer = threading.Thread(target=b.close if how == "transport" else connection.close,
                                  name="test:server-closer")
        began = time.monotonic()
        closer.start()
        with pytest.raises(ConnectionLost):
            future.result(timeout=1.0)
        assert time.monotonic() - began < 1.0
        gates.release_all()
        closer.join(10)
        with pytest.raises(ConnectionLost):
            client.ping()
        assert client.closed


@pytest.mark.timeout(20)
def test_close_from_another_thread_fails_ten_calls_in_flight_shutdown_5(
        server: Server, gates: Gates) -> None:
    """SHUTDOWN-5: close() from another thread while ten calls wait: every caller has
    ConnectionClosed (we closed, so not ConnectionLost)."""
    with connected(server, gates=gates, timeout=30) as (client, _):
        callers = Callers(10, lambda n: _text(client.call_tool("hold", {"name": f"call-{n}"})))
        for n in range(10):
            assert gates.started(f"call-{n}").wait(5)
        closer = threading.Thread(target=client.close, name="test:closer")
        closer.start()
        closer.join(10)
        assert not closer.is_alive()
        assert callers.join(5)
        assert len(callers.outcomes) == 10
        assert all(isinstance(outcome, ConnectionClosed)
                   for outcome in callers.outcomes), callers.outcomes
        with pytest.raises(ConnectionClosed):
            client.ping()
        client.close()  # idempotent


@pytest.mark.timeout(20)
def test_close_inside_a_notification_callback_does_not_deadlock_shutdown_5(
        server: Server) -> None:
    """SHUTDOWN-5: closing the client from its own notification callback returns and
    ends it."""
    holder: list[Client] = []
    closed = threading.Event()

    def on_notification(method: str, params: dict[str, Any]) -> None:
        holder[0].close()
        closed.set()

    with connected(server, on_notification=on_notification, timeout=10) as (client, _):
        holder.append(client)
        server.add_tool(lambda: "x", name="added")  # broadcasts tools/list_changed
        assert closed.wait(10)
        assert client.closed
        with pytest.raises(ConnectionClosed):
            client.ping()


@pytest.mark.timeout(20)
def test_close_inside_a_progress_callback_does_not_deadlock_shutdown_5(
        server: Server) -> None:
    """SHUTDOWN-5, PROGRESS-3: closing the client from a progress callback fails the
    call with ConnectionClosed."""
    with connected(server, timeout=10) as (client, _):
        with pytest.raises(ConnectionClosed):
            client.call_tool("steps", {"count": 5},
                             on_progress=lambda *args: client.close())
        assert client.closed


@pytest.mark.timeout(20)
def test_close_inside_a_tool_handler_does_not_deadlock_shutdown_5() -> None:
    """SHUTDOWN-5: a tool that closes its own connection, or the very client calling
    it: both return, and the caller learns which side ended it."""
    made = Server("closing")
    holder: dict[str, Any] = {}
    returned = threading.Event()

    @made.tool()
    def hang_up() -> str:
        holder["connection"].close()
        returned.set()
        return "never delivered"

    @made.tool()
    def close_caller() -> str:
        holder["client"].close()
        returned.set()
        return "never delivered"

    with connected(made, timeout=10) as (client, connection):
        holder["connection"] = connection
        with pytest.raises(ConnectionLost):
            client.call_tool("hang_up")
        assert returned.wait(5)
    returned.clear()
    with connected(made, timeout=10) as (client, connection):
        holder["client"] = client
        with pytest.raises(ConnectionClosed):
            client.call_tool("close_caller")
        assert returned.wait(5)
        assert connection.wait_closed(5)


@pytest.mark.timeout(20)
def test_close_is_idempotent_from_many_threads_at_once_shutdown_5() -> None:
    """SHUTDOWN-5: close() from several threads at once: each returns, all is joined."""
    made = Server("close-test")
    with connected(made, timeout=10) as (client, connection):
        client.ping()
        go = threading.Barrier(6, timeout=5)

        def close(target: Callable[[], None]) -> None:
            go.wait()
            target()

        closers = [threading.Thread(target=close, args=(target,), name=f"test:closer-{i}")
                   for i, target in enumerate([client.close, connection.close] * 3)]
        for thread in closers:
            thread.start()
        for thread in closers:
            thread.join(10)
        assert not any(thread.is_alive() for thread in closers)
        assert client.closed and connection.closed


# --- requests in both directions ----------------------------------------------------------


@pytest.mark.timeout(20)
def test_nested_request_while_the_client_waits_jsonrpc_15(server: Server) -> None:
    """JSONRPC-15: a tool pings the client while the client waits on tools/call."""
    with connected(server, timeout=10) as (client, _):
        assert _text(client.call_tool("nested")) == "nested ping answered"
        futures = [client.call_tool_async("nested") for _ in range(8)]
        assert [_text(f.result(10)) for f in futures] == ["nested ping answered"] * 8


@pytest.mark.timeout(20)
def test_handlers_run_on_workers_never_on_the_reader_jsonrpc_15() -> None:
    """DESIGN "Threads": the reader parses and hands on, and never runs user code, so a
    handler that blocks never stops it: the client's ping is answered meanwhile."""
    served_on: list[str] = []
    release = threading.Event()
    made = Server("one-reader", version="1.0.0")

    @made.tool()
    def where() -> str:
        served_on.append(threading.current_thread().name)
        return "here"

    @made.tool()
    def block() -> str:
        served_on.append(threading.current_thread().name)
        release.wait(10)
        return "released"

    with connected(made, timeout=10) as (client, _):
        for _ in range(20):
            assert _text(client.call_tool("where")) == "here"
        blocked = client.call_tool_async("block")
        client.ping(timeout=5)
        assert _text(client.call_tool("where", timeout=5)) == "here"
        release.set()
        assert _text(blocked.result(10)) == "released"
    assert len(served_on) == 22
    assert all(":worker-" in name and not name.endswith(":reader") for name in served_on)


@pytest.mark.timeout(20)
def test_ping_both_ways_even_while_a_tool_runs_ping_1_ping_2(
        server: Server, gates: Gates) -> None:
    """PING-1/2: client → server and server → client, answered at once even while a
    tool is busy; an unserved request from the server gets -32601."""
    with connected(server, gates=gates, timeout=10) as (client, connection):
        client.ping()
        connection.ping(timeout=5)
        busy = client.call_tool_async("hold", {"name": "busy"})
        assert gates.started("busy").wait(5)
        client.ping(timeout=5)
        connection.ping(timeout=5)
        with pytest.raises(MethodNotFound):
            connection.send_request("bogus/method", timeout=5)
        gates.release("busy").set()
        assert _text(busy.result(5)) == "released busy"


# --- batches and bad frames ------------------------------------------------------------------


@pytest.mark.timeout(20)
def test_batches_get_one_array_reply_batch_1_batch_5(server: Server) -> None:
    """BATCH-1/5: [ping, tools/list, notification] → one array of 2 responses;
    [n1, n2] → nothing; [] → one -32600 object; [r1, bad, r2] → an array of 3."""
    with raw_client(server) as peer:
        peer.send([{"jsonrpc": "2.0", "id": 1, "method": "ping"},
                   {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                   {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}])
        reply = peer.receive()
        assert isinstance(reply, list) and len(reply) == 2
        by_id = {item["id"]: item for item in reply}
        assert by_id[1]["result"] == {}
        assert "echo" in [tool["name"] for tool in by_id[2]["result"]["tools"]]

        peer.send([{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
                   {"jsonrpc": "2.0", "method": "notifications/bogus"}])
        peer.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
        # The reader handles frames in order: an answer to the batch would come first.
        assert peer.receive() == {"jsonrpc": "2.0", "id": 3, "result": {}}

        peer.send(b"[]")
        error = peer.receive()
        assert isinstance(error, dict)
        assert error["id"] is None and error["error"]["code"] == -32600

        peer.send([{"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"value": "in a batch"}}},
                   {"jsonrpc": "1.0", "id": 5, "method": "ping"},
                   {"jsonrpc": "2.0", "id": 6, "method": "ping"}])
        reply = peer.receive()
        assert isinstance(reply, list) and len(reply) == 3
        by_id = {item["id"]: item for item in reply}
        assert by_id[4]["result"]["content"][0]["text"] == "in a batch"
        assert by_id[5]["error"]["code"] == -32600
        assert by_id[6]["result"] == {}


@pytest.mark.timeout(20)
def test_invalid_json_frames_get_parse_errors_and_serving_goes_on_stdio_8_jsonrpc_12(
        server: Server) -> None:
    """STDIO-8, JSONRPC-12: not JSON, not UTF-8, or a JSON constant: -32700 with a null
    id each time; the connection keeps serving."""
    with raw_client(server) as peer:
        for frame in (b"{bad json", b"\xff\xfe{}", b"NaN", b'{"jsonrpc": "2.0", "id": 1,'):
            peer.send(frame)
            error = peer.receive()
            assert error["id"] is None and error["error"]["code"] == -32700, frame
        peer.send({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert peer.receive() == {"jsonrpc": "2.0", "id": 1, "result": {}}


# --- futures and callbacks ----------------------------------------------------------------


@pytest.mark.timeout(20)
def test_async_callbacks_never_run_on_the_reader_jsonrpc_15(
        server: Server, gates: Gates) -> None:
    """JSONRPC-15: call_tool_async's done-callbacks run off the reader thread, so a slow
    or blocking callback cannot stop the connection reading; failures arrive the same way."""
    names: list[str] = []
    called = threading.Event()

    def callback(future: Future[types.CallToolResult]) -> None:
        names.append(threading.current_thread().name)
        if len(names) == 2:
            called.set()

    with connected(server, gates=gates, timeout=10) as (client, _):
        ok = client.call_tool_async("echo", {"value": "v"})
        ok.add_done_callback(callback)
        late = client.call_tool_async("hold", {"name": "never"}, timeout=0.2)
        late.add_done_callback(callback)
        assert called.wait(10)
        assert _text(ok.result(0)) == "v"
        with pytest.raises(RequestTimeout):
            late.result(0)
    assert not any(name.endswith(":reader") for name in names), names
    assert all(name.startswith("mcp_sync:") for name in names), names


@pytest.mark.timeout(20)
def test_async_callbacks_through_a_user_executor_jsonrpc_15(server: Server) -> None:
    """JSONRPC-15 (DESIGN "Threads"): with callback_executor, futures complete, and
    callbacks run, on the user's executor."""
    names: list[str] = []
    called = threading.Event()

    def callback(done: Future[types.CallToolResult]) -> None:
        names.append(threading.current_thread().name)
        called.set()

    with ThreadPoolExecutor(1, thread_name_prefix="test-gui") as executor, \
            connected(server, timeout=10, callback_executor=executor) as (client, _):
        future = client.call_tool_async("echo", {"value": "via executor"})
        future.add_done_callback(callback)
        assert called.wait(10)
        assert _text(future.result(0)) == "via executor"
    assert names and names[0].startswith("test-gui")


@pytest.mark.timeout(30)
def test_ids_never_reused_after_timeouts_and_errors_jsonrpc_4_cancel_2(
        server: Server, gates: Gates) -> None:
    """JSONRPC-4: ids stay unique across successes, errors, timeouts and cancels;
    CANCEL-2: a cancel names only a request that was sent and is still running."""
    a, b = memory_pair()
    recording = Recording(a)
    with connected(server, client_end=recording, server_end=b, gates=gates,
                   timeout=10) as (client, _):
        for round_ in range(5):
            client.ping()
            with pytest.raises(RequestTimeout):
                client.call_tool("hold", {"name": f"never-{round_}"}, timeout=0.05)
            assert _text(client.call_tool("echo", {"value": "x"})) == "x"
            client.call_tool("fails")
            with pytest.raises(MethodNotFound):
                client.send_request("no/such/method")
        requests = recording.requests_written()
        ids = [request.id for request in requests]
        assert len(ids) == len(set(ids)) == 1 + 5 * 5
        # Five calls timed out; each cancel is written just after its caller was failed.
        cancels = recording.wait_notifications_written("notifications/cancelled", 5)
        timed_out = {request.id for request in requests
                     if request.method == "tools/call"
                     and request.params is not None
                     and str((request.params.get("arguments") or {}).get("name", ""))
                     .startswith("never")}
        assert {c.params["requestId"] for c in cancels if c.params} == timed_out


@pytest.mark.timeout(20)
def test_unencodable_params_raise_at_once_and_are_never_cancelled_cancel_2(
        server: Server, gates: Gates) -> None:
    """CANCEL-2: params that cannot be encoded raise TypeError at the call and leave
    nothing behind: no notifications/cancelled for an id the server never saw."""
    a, b = memory_pair()
    recording = Recording(a)
    with connected(server, client_end=recording, server_end=b, gates=gates,
                   timeout=10) as (client, _):
        with pytest.raises(TypeError):
            client.send_request("ping", {"value": object()}, timeout=0.05)
        # A later deadline: when it has fired, the earlier one has been handled too.
        with pytest.raises(RequestTimeout):
            client.call_tool("hold", {"name": "never"}, timeout=0.2)
        sent_ids = {request.id for request in recording.requests_written()}
        # The watchdog writes the cancel just after failing the call: wait for it.
        cancels = recording.wait_notifications_written("notifications/cancelled", 1)
        assert len(cancels) == 1
        assert all(c.params is not None and c.params["requestId"] in sent_ids
                   for c in cancels)
        client.ping()


class StuckWrites(Recording):
    """Blocks the write of any tools/call whose ``value`` argument is "stick" until
    ``gate`` is set, like a peer that stopped reading."""

    def __init__(self, inner: Transport) -> None:
        super().__init__(inner)
        self.entered = threading.Event()
        self.gate = threading.Event()

    def write(self, message: Message | Any, *, related_to: Any = None) -> None:
        if (isinstance(message, Request) and message.params is not None
                and (message.params.get("arguments") or {}).get("value") == "stick"):
            self.entered.set()
            self.gate.wait(15)
        super().write(message)


@pytest.mark.timeout(20)
def test_a_stuck_write_does_not_stop_timeouts_lifecycle_9_cancel_2(
        server: Server, gates: Gates) -> None:
    """LIFECYCLE-9: while one write is stuck, other calls still time out on schedule:
    the watchdog queues its cancellations instead of waiting to write them, and a new
    call gives up waiting to be sent at its own deadline. CANCEL-2: the queued cancels
    go out once the write finishes, and name only requests that were sent."""
    a, b = memory_pair()
    stuck = StuckWrites(a)
    with connected(server, client_end=stuck, server_end=b, gates=gates,
                   timeout=10) as (client, _):
        early = client.call_tool_async("hold", {"name": "early"}, timeout=0.3)
        later = client.call_tool_async("hold", {"name": "later"}, timeout=0.6)
        assert gates.started("early").wait(5) and gates.started("later").wait(5)
        outcome: list[Any] = []
        writer = threading.Thread(
            target=lambda: outcome.append(client.call_tool("echo", {"value": "stick"})),
            name="test:stuck-writer")
        writer.start()
        try:
            assert stuck.entered.wait(5)
            with pytest.raises(RequestTimeout):
                early.result(2)
            with pytest.raises(RequestTimeout):
                later.result(2)
            began = time.monotonic()
            with pytest.raises(RequestTimeout):
                client.ping(timeout=0.3)
            assert time.monotonic() - began < 2
        finally:
            stuck.gate.set()
            writer.join(5)
        assert _text(outcome[0]) == "stick"
        client.ping()
        held = {request.id for request in stuck.requests_written()
                if request.params is not None
                and (request.params.get("arguments") or {}).get("name") in ("early", "later")}
        cancels = stuck.wait_notifications_written("notifications/cancelled", 2)
        assert len(held) == 2
        assert sorted(str(c.params["requestId"]) for c in cancels if c.params) == sorted(
            str(i) for i in held)


# --- the worker pool ----------------------------------------------------------------------


@pytest.mark.timeout(20)
def test_pool_is_bounded_and_ping_never_waits_for_it_ping_2(gates: Gates) -> None:
    """PING-2, JSONRPC-15: with max_workers=2 and two handlers blocked, ping is still
    answered (by the reader), no third worker thread is started (besides the one
    reading), and a third call waits for a free one."""
    made = Server("pool-test", max_workers=2)

    @made.tool()
    def hold(name: str) -> str:
        gates.started(name).set()
        gates.release(name).wait(10)
        return f"released {name}"

    before = set(threading.enumerate())
    with connected(made, gates=gates, timeout=10) as (client, _):
        first = client.call_tool_async("hold", {"name": "first"})
        second = client.call_tool_async("hold", {"name": "second"})
        assert gates.started("first").wait(5) and gates.started("second").wait(5)
        client.ping(timeout=5)
        third = client.call_tool_async("hold", {"name": "third"})
        client.ping(timeout=5)  # the third request has been read and queued by now
        workers = [t for t in set(threading.enumerate()) - before
                   if t.name.startswith("mcp_sync:server-") and ":worker-" in t.name]
        assert len(workers) == 2
        assert [t for t in set(threading.enumerate()) - before
                if t.name.startswith("mcp_sync:server-") and t.name.endswith(":reader")]
        assert not gates.started("third").is_set()
        assert not third.done()
        gates.release("first").set()
        assert _text(first.result(5)) == "released first"
        assert gates.started("third").wait(5)
        gates.release("second").set()
        gates.release("third").set()
        assert _text(second.result(5)) == "released second"
        assert _text(third.result(5)) == "released third"


@pytest.mark.timeout(20)
def test_threads_are_named_daemons_and_joined_on_close_shutdown_5(server: Server) -> None:
    """SHUTDOWN-5 (DESIGN "Threads"): every thread the library starts is a named daemon,
    and close() joins them all."""
    before = set(threading.enumerate())
    with connected(server, timeout=10) as (client, _):
        client.call_tool("nested")
        client.call_tool("steps", {"count": 2}, on_progress=lambda *args: None)
        started = set(threading.enumerate()) - before
        assert started
        assert all(t.daemon and t.name.startswith("mcp_sync:") for t in started)
    assert not [t for t in started if t.is_alive()]


@pytest.mark.timeout(10)
def test_thread_group_forgets_a_thread_that_could_not_start(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """DESIGN "Threads": when the system is out of threads the error reaches the caller,
    and the group's later join() is not broken by a thread that never ran."""
    group = ThreadGroup("test-group")

    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    with monkeypatch.context() as patch:
        patch.setattr(threading.Thread, "start", refuse)
        with pytest.raises(RuntimeError):
            group.start("never", lambda: None)
    ran = threading.Event()
    group.start("runs", ran.set)
    assert ran.wait(5)
    assert group.join(5) == []


# --- bare engines -------------------------------------------------------------------------


@contextmanager
def engine_pair(handle: Callable[[IncomingRequest], dict[str, Any] | None],
                **options: Any) -> Iterator[tuple[Engine, Engine]]:
    """A client engine and a server engine over memory, initialized."""
    client_end, server_end = memory_pair()
    info = types.Implementation(name="bare", version="0")
    server = Engine(server_end, Session(Role.SERVER, info=info,
                                        capabilities=types.ServerCapabilities(),
                                        served_methods=("boom", "work")),
                    handle_request=handle, name="bare-server", **options)

    def refuse(incoming: IncomingRequest) -> dict[str, Any] | None:
        raise MethodNotFound(f"Method not found: {incoming.method}")

    client = Engine(client_end, Session(Role.CLIENT, info=info,
                                        capabilities=types.ClientCapabilities()),
                    handle_request=refuse, name="bare-client")
    server.start()
    client.start()
    try:
        client.start_request(lambda session: session.initialize_request(), timeout=5).result(5)
        client.notify("notifications/initialized")
        yield client, server
    finally:
        client.close()
        server.close()


@pytest.mark.timeout(20)
def test_bare_engine_close_ends_everything_once_shutdown_5() -> None:
    """SHUTDOWN-5: close() fails pending futures with ConnectionClosed, wait_closed()
    returns, new requests are refused at once, and a second close() is harmless."""
    release = threading.Event()

    def handle(incoming: IncomingRequest) -> dict[str, Any] | None:
        release.wait(10)
        return {}

    try:
        with engine_pair(handle) as (client, server):
            pending = client.request("work", timeout=10)
            client.close()
            with pytest.raises(ConnectionClosed):
                pending.result(1)
            assert client.wait_closed(5)
            with pytest.raises(ConnectionClosed):
                client.request("ping", timeout=5)
            assert server.wait_closed(5)  # the server saw its peer go
            client.close()
            release.set()  # before the server's close joins its worker
    finally:
        release.set()


@pytest.mark.timeout(10)
def test_memory_transport_end_is_sticky_and_reads_can_time_out_gen_3() -> None:
    """GEN-3: the in-memory transport keeps the Transport contract: after the end every
    read returns None at once, writes fail as closed or lost; read_frame can time out."""
    a, b = memory_pair()
    assert isinstance(a, MemoryTransport)
    with pytest.raises(TimeoutError):
        a.read_frame(timeout=0.01)
    b.write(Notification("notifications/initialized"))
    b.close()
    assert a.read() == Notification("notifications/initialized")
    assert a.read() is None
    assert a.read() is None
    assert a.read_frame(timeout=0.01) is None
    with pytest.raises(ConnectionLost):
        a.write(Notification("notifications/initialized"))
    a.close()
    with pytest.raises(ConnectionClosed):
        a.write_frame(b"{}")


# --- requests answered later --------------------------------------------------------------


@pytest.mark.timeout(20)
def test_a_request_left_open_frees_its_worker_and_is_answered_from_another_thread() -> None:
    """A handler that leaves its request open returns its worker to the pool: with one
    worker, other requests are served while it waits; the answer comes when another
    thread gives it, exactly once."""
    opened: list[IncomingRequest] = []
    left = threading.Event()

    def handle(incoming: IncomingRequest) -> dict[str, Any] | None:
        if incoming.method == "boom":  # stands for a long-lived request here
            assert incoming.answer_later(lambda: None)
            opened.append(incoming)
            left.set()
            return None
        return {"method": incoming.method}

    with engine_pair(handle, max_workers=1) as (client, _):
        waiting = client.request("boom", timeout=5)
        assert left.wait(5)
        assert client.request("work", timeout=5).result(5) == {"method": "work"}
        assert not waiting.done()
        answerer = threading.Thread(target=opened[0].answer, args=({"late": True},),
                                    name="test:answerer")
        answerer.start()
        answerer.join(5)
        assert waiting.result(5) == {"late": True}
        opened[0].answer({"again": True})  # a second answer is never sent
        assert client.request("work", timeout=5).result(5) == {"method": "work"}


@pytest.mark.timeout(20)
def test_a_request_left_open_runs_on_cancel_when_cancelled_or_the_connection_ends_cancel_4(
) -> None:
    """CANCEL-4: a request left open that the peer cancels is never answered, and its
    on_cancel runs once; one still open when the connection ends has its on_cancel run
    too."""
    cancelled: list[str] = []
    left = threading.Event()
    opened: list[IncomingRequest] = []

    def handle(incoming: IncomingRequest) -> dict[str, Any] | None:
        name = str(incoming.params.get("name"))
        assert incoming.answer_later(lambda: cancelled.append(name))
        opened.append(incoming)
        left.set()
        return None

    with engine_pair(handle) as (client, _):
        first = client.request("boom", {"name": "first"}, timeout=5)
        assert left.wait(5)
        left.clear()
        assert client.cancel(first)
        client.request("boom", {"name": "second"}, timeout=5)
        assert left.wait(5)
        assert cancelled == ["first"]  # the cancel was read before the second request
        opened[0].answer({"too": "late"})  # nothing is written for a cancelled request
    assert cancelled == ["first", "second"]
