"""Faults inside one connection: blocked handlers, failing callbacks, close from anywhere.

Client and Server run in-process over a memory pair, so what is measured is the engine
itself. Handlers synchronise with the test through Events; nothing sleeps. Where a test
shows a limit the library does not have yet, it is marked ``xfail(strict=True)`` with
the bug in its reason (see docs/reliability.md for the bounds as they are).
"""

from __future__ import annotations

import json
import logging
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from mcp_sync import Client, Context, Server, types
from mcp_sync.errors import (
    ConnectionClosed,
    ConnectionLost,
    InternalError,
    RequestTimeout,
)
from mcp_sync.jsonrpc import Incoming, Message, Notification
from mcp_sync.server import ServerConnection
from mcp_sync.transports.base import Transport
from mcp_sync.transports.memory import memory_pair
from tests.conftest import python_command
from tests.helpers import LEGACY_ERA, Callers, Gates, RawPeer

#: Text that must never reach a peer: it would tell it how the program is built.
LEAK_MARKERS = ("Traceback", 'File "', ".py", "/work/", "site-packages")




@pytest.fixture
def gates() -> Iterator[Gates]:
    found = Gates()
    yield found
    found.release_all()  # a failed test must not leave a handler blocked


@contextmanager
def connected(server: Server, *, gates: Gates | None = None, server_end: Transport | None = None,
              wrap_server_end: Callable[[Transport], Transport] | None = None,
              **options: Any) -> Iterator[tuple[Client, ServerConnection]]:
    """A Client and the server's side of its connection, both closed at the end.
    ``wrap_server_end`` wraps the server's end of the pair before it is connected. A legacy
    session unless ``options`` say otherwise (server-to-client requests exist there)."""
    options = {**LEGACY_ERA, **options}
    a, pair_end = memory_pair()
    b: Transport = pair_end if wrap_server_end is None else wrap_server_end(pair_end)
    connection = server.connect(server_end if server_end is not None else b)
    try:
        client = Client(a, **options)
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


class SeesCancels(Transport):
    """A server's end that notes when it has read a ``notifications/cancelled``."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.cancel_read = threading.Event()

    def read(self) -> Incoming | None:
        incoming = self.inner.read()
        if isinstance(incoming, Notification) and incoming.method == "notifications/cancelled":
            self.cancel_read.set()
        return incoming

    def write(self, message: Message | Any, *, related_to: Any = None) -> None:
        self.inner.write(message)

    def close(self) -> None:
        self.inner.close()


def text_of(result: types.CallToolResult) -> str:
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text


def assert_no_leak(wire_text: str) -> None:
    """No stack trace, source path or install path in what went to a peer (ERR-1)."""
    for marker in LEAK_MARKERS:
        assert marker not in wire_text, f"{marker!r} sent to the peer: {wire_text[:2000]}"


# --- a handler that blocks forever -----------------------------------------------------------


@pytest.mark.timeout(20)
def test_blocked_handler_times_out_and_is_told_lifecycle_9_cancel_1_cancel_4(
        gates: Gates) -> None:
    """LIFECYCLE-9, CANCEL-1/4: a handler that never returns: the caller's timeout fires
    with RequestTimeout on schedule, and the handler observes the cancellation."""
    made = Server("blocked")
    seen: dict[str, bool] = {}

    @made.tool()
    def forever(ctx: Context) -> str:
        gates.started("forever").set()
        seen["cancelled"] = ctx.wait_cancelled(15)
        seen["flag"] = ctx.cancelled
        gates.release("forever").set()
        return "too late"

    with connected(made, timeout=10) as (client, _):
        began = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("forever", timeout=0.3)
        elapsed = time.monotonic() - began
        assert 0.3 <= elapsed < 5.0  # at its own deadline, not the client's 10 s default
        assert gates.release("forever").wait(5)
        assert seen == {"cancelled": True, "flag": True}
        client.ping()


#: A program whose tool never returns: the call times out, both ends close, and the
#: program ends (it prints "closed" first, to show how far it got).
STUCK_FOREVER = """
import threading
from mcp_sync import Client, Server
from mcp_sync.errors import RequestTimeout
from mcp_sync.transports.memory import memory_pair

server = Server("stuck")
never = threading.Event()

@server.tool()
def stuck() -> str:
    never.wait()  # ignores cancellation, for good
    return "never"

a, b = memory_pair()
connection = server.connect(b)
client = Client(a, timeout=10)
try:
    client.call_tool("stuck", timeout=0.2)
except RequestTimeout:
    pass
client.close()
connection.close()
print("closed", flush=True)
"""


@pytest.mark.timeout(60)
def test_a_handler_stuck_forever_does_not_keep_the_interpreter_from_exiting() -> None:
    """DESIGN "Threads": worker threads are daemons; close() gives up on a stuck handler
    after its join timeout and the interpreter still exits, with status 0."""
    done = subprocess.run(python_command("-c", STUCK_FOREVER), capture_output=True,
                          text=True, timeout=45, check=False)
    assert (done.returncode, done.stdout) == (0, "closed\n"), done.stderr


@pytest.mark.timeout(30)
def test_blocked_workers_leave_the_rest_serving_jsonrpc_15_ping_2(gates: Gates) -> None:
    """JSONRPC-15, PING-2: with max_workers=4 and three handlers blocked for good (they
    ignore cancellation), the fourth worker answers everything else."""
    made = Server("pool", max_workers=4)

    @made.tool()
    def stuck(name: str) -> str:
        gates.started(name).set()
        gates.release(name).wait(20)
        return name

    @made.tool()
    def echo(value: str) -> str:
        return value

    with connected(made, gates=gates, timeout=10) as (client, _):
        stuck_calls = [client.call_tool_async("stuck", {"name": f"s{i}"}) for i in range(3)]
        for i in range(3):
            assert gates.started(f"s{i}").wait(5)
        values = [f"v{i}" for i in range(40)]
        futures = [client.call_tool_async("echo", {"value": value}) for value in values]
        assert [text_of(future.result(5)) for future in futures] == values
        client.ping(timeout=2)
        gates.release_all()
        assert sorted(text_of(future.result(5)) for future in stuck_calls) == ["s0", "s1", "s2"]


@pytest.mark.timeout(30)
def test_all_workers_blocked_ping_answered_calls_queue_and_time_out_ping_2_lifecycle_9(
        gates: Gates) -> None:
    """PING-2, LIFECYCLE-9, CANCEL-4: with every worker blocked, ping is still answered
    (the reader answers it); a call queues behind the handlers: its timeout still fires,
    it is never run once cancelled, and a queued call with time to spare is answered
    as soon as a worker is free."""
    made = Server("full", max_workers=2)
    ran: list[str] = []

    @made.tool()
    def stuck(name: str) -> str:
        gates.started(name).set()
        gates.release(name).wait(20)
        return name

    @made.tool()
    def echo(value: str) -> str:
        ran.append(value)
        return value

    server_ends: list[SeesCancels] = []

    def wrap(end: Transport) -> Transport:
        server_ends.append(SeesCancels(end))
        return server_ends[0]

    with connected(made, gates=gates, wrap_server_end=wrap, timeout=10) as (client, _):
        first = client.call_tool_async("stuck", {"name": "first"})
        second = client.call_tool_async("stuck", {"name": "second"})
        assert gates.started("first").wait(5) and gates.started("second").wait(5)
        client.ping(timeout=5)  # answered by the reader, not queued behind the workers
        with pytest.raises(RequestTimeout):
            client.call_tool("echo", {"value": "gave up"}, timeout=0.3)
        # The client's watchdog fails the call before it writes the cancel; the cancel
        # must have reached the server before a worker is freed, or the queued call could
        # run for want of it (the ping below is read, and answered, after it).
        assert server_ends[0].cancel_read.wait(5)
        patient = client.call_tool_async("echo", {"value": "waited"}, timeout=10)
        client.ping(timeout=2)  # the patient call has been read and queued by now
        assert not patient.done()
        gates.release("first").set()
        assert text_of(patient.result(5)) == "waited"
        assert text_of(first.result(5)) == "first"
        gates.release("second").set()
        assert text_of(second.result(5)) == "second"
        assert ran == ["waited"]  # the cancelled call never reached its handler


# --- handlers and callbacks that raise ---------------------------------------------------------


def failing_server() -> Server:
    made = Server("raising")

    @made.tool()
    def tool_fails() -> str:
        raise ValueError("tool went wrong")

    @made.resource("res://broken")
    def resource_fails() -> str:
        raise OSError("resource went wrong at /srv/secret/path")

    @made.resource("tpl://{name}/broken")
    def template_fails(name: str) -> str:
        raise KeyError(name)

    @made.prompt(complete=lambda argument, value: (_ for _ in ()).throw(RuntimeError("c")))
    def prompt_fails(topic: str) -> str:
        raise RuntimeError("prompt went wrong")

    return made


@pytest.mark.timeout(30)
def test_server_callbacks_raising_are_errors_without_stack_text_err_1_tools_6(
        wire: Any, caplog: pytest.LogCaptureFixture) -> None:
    """ERR-1, TOOLS-6, JSONRPC-12: a raising tool is an isError result; a raising
    resource, template, prompt or completer is -32603 whose text holds no trace and no
    path; the traceback goes to logging; the reader survives every one (ping after)."""
    caplog.set_level(logging.INFO, logger="mcp_sync")
    with connected(failing_server(), timeout=10) as (client, _):
        result = client.call_tool("tool_fails")
        assert result.is_error is True and "tool went wrong" in text_of(result)
        client.ping()
        for attempt in (lambda: client.read_resource("res://broken"),
                        lambda: client.read_resource("tpl://x/broken"),
                        lambda: client.get_prompt("prompt_fails", {"topic": "t"}),
                        lambda: client.complete("prompt_fails", "topic", "a")):
            with pytest.raises(InternalError) as caught:
                attempt()
            assert caught.value.code == -32603
            client.ping()
    assert_no_leak(json.dumps(wire.sent))
    logged = "\n".join(record.getMessage() for record in caplog.records if record.exc_info)
    for name in ("tool 'tool_fails' raised", "reading resource 'res://broken' failed",
                 "reading resource 'tpl://x/broken' failed", "prompt 'prompt_fails' failed",
                 "completing 'topic' failed"):
        assert name in logged, logged


@pytest.mark.timeout(30)
def test_client_callbacks_raising_never_stop_the_reader_jsonrpc_12_sampling_8(
        wire: Any, caplog: pytest.LogCaptureFixture) -> None:
    """SAMPLING-8, JSONRPC-12: the client's sampling handler raising is -32603 at the
    server, with no trace text; on_log, on_progress, on_resource_updated,
    on_list_changed and on_notification raising are logged and the connection goes on;
    so does a server's on_roots_changed callback and a failing logging handler."""
    made = Server("callbacks")
    roots_changed = threading.Event()
    app_log = logging.getLogger("tests.faults.app")

    class BrokenFormatter(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            raise RuntimeError("formatter went wrong")

    handler = made.logging_handler()
    handler.setFormatter(BrokenFormatter())
    app_log.addHandler(handler)

    @made.on_roots_changed
    def on_roots(connection: ServerConnection) -> None:
        roots_changed.set()
        raise RuntimeError("roots callback went wrong")

    @made.tool()
    def chatty(ctx: Context) -> str:
        ctx.info("a log message")
        ctx.report_progress(1, 2)
        app_log.warning("through the broken handler")
        return "chatted"

    @made.tool()
    def asks(ctx: Context) -> str:
        ctx.sample("hello", max_tokens=5)
        return "sampled"

    @made.resource("res://watched")
    def watched() -> str:
        return "w"

    def boom(*args: Any) -> None:
        raise RuntimeError("client callback went wrong")

    try:
        with connected(made, timeout=10, sampling_handler=boom, on_log=boom,
                       on_resource_updated=boom, on_list_changed=boom, on_notification=boom,
                       roots=[]) as (client, connection):
            client.subscribe_resource("res://watched")
            result = client.call_tool("chatty", on_progress=boom)
            assert text_of(result) == "chatted"
            client.ping()
            result = client.call_tool("asks")
            assert result.is_error is True
            assert "Internal error" in text_of(result)
            assert "went wrong" not in text_of(result)
            client.ping()
            made.notify_resource_updated("res://watched")
            made.add_tool(lambda: "x", name="added")
            client.set_roots(["file:///tmp/faults-root"])
            assert roots_changed.wait(5)
            client.ping()
            connection.ping()
    finally:
        app_log.removeHandler(handler)
    assert_no_leak(json.dumps(wire.sent))
    failures = [r.getMessage() for r in caplog.records if r.exc_info]
    for expected in ("the sampling handler failed", "the on_log callback failed",
                     "the on_resource_updated callback failed",
                     "the on_list_changed callback failed",
                     "the on_notification callback failed", "roots-changed callback"):
        assert any(expected in message for message in failures), (expected, failures)


@pytest.mark.timeout(20)
def test_unknown_request_from_the_server_is_method_not_found_caps_7() -> None:
    """CAPS-7, AMBIG-18: a server request the client does not serve gets -32601 and
    the connection goes on."""
    peer = RawPeer()
    answered = threading.Event()

    def serve() -> None:
        init = peer.receive()
        peer.send({"jsonrpc": "2.0", "id": init["id"], "result": {
            "protocolVersion": "2025-03-26", "capabilities": {},
            "serverInfo": {"name": "raw", "version": "0"}}})
        assert peer.receive()["method"] == "notifications/initialized"
        answered.set()

    thread = threading.Thread(target=serve, name="test:raw-server")
    thread.start()
    client = Client(peer.transport, timeout=5)
    try:
        thread.join(5)
        assert answered.is_set()
        for method in ("elicitation/create", "roots/list", "sampling/createMessage",
                       "tools/call"):
            peer.send({"jsonrpc": "2.0", "id": method, "method": method, "params": {}})
            reply = peer.receive()
            assert reply["id"] == method and reply["error"]["code"] == -32601, reply
    finally:
        client.close()
        peer.close()


# --- close from anywhere -----------------------------------------------------------------------


@pytest.mark.timeout(30)
def test_close_from_another_thread_with_32_calls_in_flight_shutdown_5(gates: Gates) -> None:
    """SHUTDOWN-5: 32 calls in flight (8 running, 24 queued behind them at the server),
    close() from another thread: every caller gets ConnectionClosed, close returns
    within a bound, no thread is left."""
    made = Server("busy", max_workers=8)

    running = threading.Semaphore(0)

    @made.tool()
    def hold(name: str, ctx: Context) -> str:
        gates.started(name).set()
        running.release()
        ctx.wait_cancelled(20)
        return name

    with connected(made, gates=gates, timeout=30) as (client, _):
        callers = Callers(32, lambda n: text_of(client.call_tool("hold", {"name": f"c{n}"})))
        for _ in range(8):
            assert running.acquire(timeout=5)
        client.ping(timeout=5)  # every call has been written and read by now
        assert sum(gates.started(f"c{n}").is_set() for n in range(32)) == 8
        began = time.monotonic()
        closer = threading.Thread(target=client.close, name="test:closer")
        closer.start()
        closer.join(10)
        assert not closer.is_alive()
        assert time.monotonic() - began < 5.0
        assert callers.join(5)
        assert len(callers.outcomes) == 32
        assert all(isinstance(outcome, ConnectionClosed)
                   for outcome in callers.outcomes), callers.outcomes


@pytest.mark.timeout(30)
def test_close_inside_a_progress_callback_with_31_calls_waiting_shutdown_5(
        gates: Gates) -> None:
    """SHUTDOWN-5, PROGRESS-3: the client closing itself from a progress callback (on
    its notifier thread) while 31 other calls wait: close returns, and the call with
    progress and every other caller get ConnectionClosed."""
    made = Server("progress-close", max_workers=40)

    @made.tool()
    def hold(ctx: Context) -> str:
        ctx.wait_cancelled(20)
        return "held"

    @made.tool()
    def reports(ctx: Context) -> str:
        ctx.report_progress(1, 2)
        ctx.wait_cancelled(20)
        return "reported"

    closed = threading.Event()
    with connected(made, gates=gates, timeout=30) as (client, _):
        def on_progress(progress: float, total: float | None, message: str | None) -> None:
            client.close()
            closed.set()

        waiting = [client.call_tool_async("hold") for _ in range(31)]
        client.ping(timeout=5)
        with pytest.raises(ConnectionClosed):
            client.call_tool("reports", on_progress=on_progress)
        assert closed.wait(5)
        for future in waiting:
            with pytest.raises(ConnectionClosed):
                future.result(5)


@pytest.mark.timeout(30)
def test_close_inside_a_sampling_handler_shutdown_5() -> None:
    """SHUTDOWN-5: the client closing itself from its sampling handler: the tool's
    caller gets ConnectionClosed, the handler returns, close does not deadlock."""
    made = Server("sampler")
    holder: list[Client] = []
    returned = threading.Event()

    @made.tool()
    def asks(ctx: Context) -> str:
        ctx.sample("hello")
        return "sampled"

    def sample(params: types.CreateMessageRequestParams) -> dict[str, Any]:
        holder[0].close()
        returned.set()
        return {"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m"}

    with connected(made, timeout=10, sampling_handler=sample) as (client, connection):
        holder.append(client)
        with pytest.raises(ConnectionClosed):
            client.call_tool("asks")
        assert returned.wait(5)
        assert client.closed
        assert connection.wait_closed(5)


@pytest.mark.timeout(30)
def test_server_closing_from_a_tool_with_32_calls_in_flight_shutdown_5(gates: Gates) -> None:
    """SHUTDOWN-5: a tool closes its own connection while 31 other calls wait: every
    caller gets ConnectionLost (the peer went away), nothing deadlocks."""
    made = Server("hangup", max_workers=40)
    holder: list[ServerConnection] = []

    @made.tool()
    def hold(ctx: Context) -> str:
        ctx.wait_cancelled(20)
        return "held"

    @made.tool()
    def hang_up() -> str:
        holder[0].close()
        return "never delivered"

    with connected(made, gates=gates, timeout=30) as (client, connection):
        holder.append(connection)
        futures = [client.call_tool_async("hold") for _ in range(31)]
        client.ping(timeout=5)
        with pytest.raises(ConnectionLost):
            client.call_tool("hang_up")
        for future in futures:
            with pytest.raises(ConnectionLost):
                future.result(5)
        assert connection.wait_closed(5)


# --- what buffers without bound ------------------------------------------------------------------


@pytest.mark.timeout(30)
def test_notifications_behind_a_slow_callback_are_bounded_gen_3() -> None:
    """A client whose on_log callback is stuck: what it queues for it stays bounded
    (10,000 notifications; later ones are dropped and logged), and once the callback is
    free again the ones kept reach it in order, and later ones too."""
    peer = RawPeer()
    release = threading.Event()
    entered = threading.Event()
    second_seen = threading.Event()
    last_seen = threading.Event()
    seen: list[int] = []

    def on_log(params: types.LoggingMessageNotificationParams) -> None:
        entered.set()
        release.wait(20)
        assert isinstance(params.data, int)
        seen.append(params.data)
        if params.data == 1:
            second_seen.set()  # the first has returned: the queue has room again
        if params.data == -1:
            last_seen.set()

    def serve() -> None:
        init = peer.receive()
        peer.send({"jsonrpc": "2.0", "id": init["id"], "result": {
            "protocolVersion": "2025-03-26", "capabilities": {"logging": {}},
            "serverInfo": {"name": "flood", "version": "0"}}})
        peer.receive()

    def note(n: int) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "data": n}}

    thread = threading.Thread(target=serve, name="test:flood-server")
    thread.start()
    client = Client(peer.transport, timeout=5, on_log=on_log)
    try:
        thread.join(5)
        for n in range(20_000):
            peer.send(note(n))
        peer.send({"jsonrpc": "2.0", "id": "after", "method": "ping"})
        assert peer.receive(10) == {"jsonrpc": "2.0", "id": "after", "result": {}}
        assert entered.wait(5)
        release.set()
        assert second_seen.wait(10)
        peer.send(note(-1))  # read after the flood, once the queue has room
        assert last_seen.wait(20)
        assert seen[-1] == -1
        kept = seen[:-1]
        assert kept == sorted(kept) and kept[0] == 0
        assert len(kept) <= 10_001, f"{len(kept)} notifications kept for a stuck callback"
    finally:
        release.set()
        client.close()
        peer.close()


@pytest.mark.timeout(30)
def test_requests_queued_behind_blocked_handlers_are_bounded_gen_3(gates: Gates) -> None:
    """A server with every worker blocked: what it queues from one client stays bounded
    (requests beyond the bound answered at once with an error)."""
    made = Server("queue", max_workers=2)

    @made.tool()
    def stuck(name: str) -> str:
        gates.started(name).set()
        gates.release(name).wait(20)
        return name

    peer = RawPeer()
    connection = made.connect(peer.transport)
    try:
        peer.handshake()
        for name in ("a", "b"):
            peer.send({"jsonrpc": "2.0", "id": name, "method": "tools/call",
                       "params": {"name": "stuck", "arguments": {"name": name}}})
            assert gates.started(name).wait(5)
        for n in range(20_000):
            peer.send({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                       "params": {"name": "stuck", "arguments": {"name": "queued"}}})
        peer.send({"jsonrpc": "2.0", "id": "probe", "method": "ping"})
        refused = 0
        while True:  # errors for refused requests come first
            reply = peer.receive(10)
            if reply.get("id") == "probe":
                break
            assert reply["error"]["code"] == -32603, reply
            assert "too many requests" in reply["error"]["message"]
            refused += 1
        queued = 20_000 - refused
        assert queued <= 1000, f"{queued} requests queued behind blocked handlers"
        for name in ("a", "b", "queued"):
            gates.release(name).set()
        answered = {peer.receive(10)["id"] for _ in range(queued + 2)}
        assert answered == {"a", "b", *range(queued)}  # each one kept was served
    finally:
        gates.release_all()
        peer.close()
        connection.close()
