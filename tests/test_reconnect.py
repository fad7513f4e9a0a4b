"""A long-lived client that loses its server: ``reconnect=True`` serves the next call.

As a Flask or Django app holding one module-level client meets it: the stdio server is
killed, the HTTP server stops and starts again on its port. Calls in flight at the loss
fail at once and are never repeated; the loss is logged at WARNING. PING-3 allows the
client to try to reconnect; the new connection starts with ``initialize``
(LIFECYCLE-1).
"""

from __future__ import annotations

import atexit
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_sync import Client, Server
from mcp_sync.errors import ConnectionClosed, ConnectionLost, HttpError
from mcp_sync.server import ServerConnection
from mcp_sync.transports.base import Transport
from mcp_sync.transports.http_server import serve_http
from mcp_sync.transports.memory import memory_pair
from tests.conftest import EXAMPLES, HERE, _children
from tests.helpers import LEGACY_ERA, load_module
from tests.http_server_helpers import Gate, make_server

FAULT_SERVER = [sys.executable, str(HERE / "servers" / "fault_server.py")]


class Pids:
    """A progress callback that keeps the process id the fault server reports."""

    def __init__(self) -> None:
        self.seen: list[int] = []
        self.reported = threading.Semaphore(0)

    def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        assert message is not None
        self.seen.append(int(message))
        self.reported.release()

    def next(self) -> int:
        assert self.reported.acquire(timeout=10)
        return self.seen[-1]


class Losses(logging.Handler):
    """Counts the client's WARNING that it lost its server, for a test to wait on."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen = threading.Semaphore(0)

    def emit(self, record: logging.LogRecord) -> None:
        if "lost the connection" in record.getMessage():
            self.seen.release()

    def wait(self) -> None:
        assert self.seen.acquire(timeout=10), "the loss was not logged"


@pytest.fixture
def losses() -> Iterator[Losses]:
    handler = Losses()
    logger = logging.getLogger("mcp_sync.client")
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records
            if record.name == "mcp_sync.client" and record.levelno == logging.WARNING]


# --- stdio ------------------------------------------------------------------------------------


@pytest.mark.timeout(40)
def test_killed_stdio_server_is_started_again_for_the_next_call_ping_3(
        caplog: pytest.LogCaptureFixture, losses: Losses) -> None:
    """PING-3, SHUTDOWN-5: the server is killed while a call runs; that call fails at
    once, the loss is logged at WARNING, and the next call starts a new server and is
    answered. The dead server is reaped (the leak check finds no child left)."""
    caplog.set_level(logging.WARNING, "mcp_sync.client")
    pids = Pids()
    with Client.stdio(FAULT_SERVER, reconnect=True, timeout=20, close_timeout=1.0) as client:
        future = client.call_tool_async("block", on_progress=pids)
        first = pids.next()
        os.kill(first, signal.SIGKILL)
        began = time.monotonic()
        with pytest.raises(ConnectionLost):
            future.result(10)
        assert time.monotonic() - began < 5.0
        assert not client.closed  # it will reconnect
        losses.wait()

        assert client.call_tool("echo", {"text": "again"}).content[0].text == "again"

        client.call_tool_async("block", on_progress=pids)
        assert pids.next() != first  # a new server process
    lost = [text for text in warnings_of(caplog) if "lost the connection" in text]
    assert lost and "reconnects" in lost[0]


@pytest.mark.timeout(40)
def test_without_reconnect_the_loss_is_logged_and_the_client_stays_closed(
        caplog: pytest.LogCaptureFixture, losses: Losses) -> None:
    """Without reconnect=True a lost server closes the client for good, as before, but
    the loss is now logged at WARNING (it used to be silent)."""
    caplog.set_level(logging.WARNING, "mcp_sync.client")
    pids = Pids()
    with Client.stdio(FAULT_SERVER, timeout=20, close_timeout=1.0) as client:
        future = client.call_tool_async("block", on_progress=pids)
        os.kill(pids.next(), signal.SIGKILL)
        with pytest.raises(ConnectionLost):
            future.result(10)
        with pytest.raises(ConnectionLost):
            client.call_tool("echo", {"text": "again"})
        assert client.closed
    assert any("closed for good" in text for text in warnings_of(caplog))


# --- HTTP -------------------------------------------------------------------------------------


@pytest.mark.timeout(60)
def test_http_server_restarted_on_its_port_serves_the_next_call_ping_3() -> None:
    """PING-3, HTTP-35: the HTTP server stops: the call in flight fails at once, the next
    finds nobody listening (ConnectionLost). The server starts again on the same port,
    and the next call is answered, in a new session."""
    gate = Gate()
    server = make_server(gate)
    handle = serve_http(server, keepalive_interval=0.1)
    port = handle.port
    restarted = None
    try:
        with Client.http(handle.url, reconnect=True, timeout=20, read_timeout=5) as client:
            assert client.call_tool("echo", {"message": "one"}).content[0].text == "one"
            future = client.call_tool_async("until_cancelled")
            assert gate.reached.wait(5)
            handle.close()
            began = time.monotonic()
            with pytest.raises((HttpError, ConnectionLost)):
                future.result(10)
            assert time.monotonic() - began < 5.0
            with pytest.raises(ConnectionLost):
                client.call_tool("echo", {"message": "nobody there"})

            restarted = serve_http(server, port=port)
            assert client.call_tool("echo", {"message": "two"}).content[0].text == "two"
            assert client.list_tools()
    finally:
        handle.close()
        if restarted is not None:
            restarted.close()


@pytest.mark.timeout(60)
def test_killed_http_server_fails_the_calls_in_flight_at_once_shutdown_5(
        losses: Losses) -> None:
    """SHUTDOWN-5: the HTTP server process is killed while a call waits on its stream:
    resuming the stream finds nobody listening, so the call fails with ConnectionLost
    at once rather than after every resumption attempt; the loss is logged."""
    process = subprocess.Popen([*FAULT_SERVER, "http"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        pids = Pids()
        with Client.http(url, reconnect=True, timeout=30, **LEGACY_ERA) as client:
            future = client.call_tool_async("block", on_progress=pids)
            assert pids.next() == process.pid
            process.kill()
            process.wait(10)
            began = time.monotonic()
            with pytest.raises(ConnectionLost):
                future.result(20)
            assert time.monotonic() - began < 5.0
            losses.wait()
            with pytest.raises(ConnectionLost, match="reconnecting failed"):
                client.ping()  # the server is still gone: one attempt, which fails
    finally:
        process.kill()
        process.wait(10)
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                pipe.close()


# --- when and how often: a server made on demand -----------------------------------------------


class Connector:
    """A transport factory for ``Client(factory, reconnect=True)``: each call connects to a
    new connection of ``server`` in memory, or fails while ``refuse`` is set."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.calls = 0
        self.refuse = False
        self.connections: list[ServerConnection] = []

    def __call__(self) -> Transport:
        self.calls += 1
        if self.refuse:
            raise ConnectionLost("the server refused the connection")
        ours, theirs = memory_pair()
        self.connections.append(self.server.connect(theirs))
        return ours

    def drop(self) -> None:
        """End the server's side of the newest connection, as a crash would."""
        self.connections[-1].close()

    def close(self) -> None:
        for connection in self.connections:
            connection.close()


@pytest.fixture
def connector() -> Iterator[Connector]:
    server = Server("on-demand", version="1.0")
    seen: list[str] = []

    @server.tool()
    def remember(text: str) -> int:
        """Keep the text; return how many this server process has kept."""
        seen.append(text)
        return len(seen)

    made = Connector(server)
    yield made
    made.close()


def text_of(result: Any) -> str:
    return str(result.content[0].text)


@pytest.mark.timeout(30)
def test_reconnecting_waits_for_its_backoff_only_within_the_calls_timeout(
        connector: Connector, losses: Losses) -> None:
    """A failed attempt to reconnect spaces the next one: a call whose timeout ends
    before it is due fails at once without trying; a call with time to spare waits for
    it and is answered."""
    with Client(connector, reconnect=True, reconnect_delay=0.4, max_reconnect_delay=0.4,
                timeout=10) as client:
        assert text_of(client.call_tool("remember", {"text": "a"})) == "1"
        connector.refuse = True
        connector.drop()
        losses.wait()
        with pytest.raises(ConnectionLost, match="reconnecting failed"):
            client.call_tool("remember", {"text": "b"})
        assert connector.calls == 2

        began = time.monotonic()
        with pytest.raises(ConnectionLost, match="next attempt is due"):
            client.call_tool("remember", {"text": "c"}, timeout=0.05)
        assert time.monotonic() - began < 0.2 + 0.05
        assert connector.calls == 2  # not tried: it was not due

        connector.refuse = False
        # Neither "b" nor "c" reached a server.
        assert text_of(client.call_tool("remember", {"text": "d"})) == "2"
        assert connector.calls == 3


@pytest.mark.timeout(30)
def test_calls_in_flight_at_the_loss_are_never_repeated(connector: Connector) -> None:
    """SHUTDOWN-5: what was in flight when the server went away fails with
    ConnectionLost and is not sent again on the new connection; later calls are."""
    release = threading.Event()
    reached = threading.Event()

    @connector.server.tool()
    def hold() -> str:
        """Wait to be released."""
        reached.set()
        release.wait(10)
        return "held"

    try:
        with Client(connector, reconnect=True, timeout=10) as client:
            future = client.call_tool_async("hold")
            assert reached.wait(5)
            connector.drop()
            with pytest.raises(ConnectionLost):
                future.result(5)
            reached.clear()
            assert text_of(client.call_tool("remember", {"text": "x"})) == "1"
            assert not reached.is_set()  # "hold" did not run again
            assert connector.calls == 2
    finally:
        release.set()


@pytest.mark.timeout(30)
def test_many_threads_meeting_the_loss_reconnect_once(connector: Connector,
                                                     losses: Losses) -> None:
    """Eight threads call at once after the loss: one connection is made for all."""
    with Client(connector, reconnect=True, timeout=10) as client:
        client.ping()
        connector.drop()
        losses.wait()
        ready = threading.Barrier(8)
        answers: list[Any] = []

        def call(n: int) -> None:
            ready.wait(5)
            answers.append(text_of(client.call_tool("remember", {"text": str(n)})))

        threads = [threading.Thread(target=call, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert sorted(answers, key=int) == [str(n) for n in range(1, 9)]
        assert connector.calls == 2


def test_reconnect_needs_a_way_to_connect_again() -> None:
    """A transport object can be used once only: reconnect=True asks for a factory."""
    ours, theirs = memory_pair()
    try:
        with pytest.raises(ValueError, match="function that returns a new transport"):
            Client(ours, reconnect=True)
    finally:
        ours.close()
        theirs.close()


@pytest.mark.timeout(30)
def test_closing_ends_reconnecting_for_good(connector: Connector) -> None:
    """After close(), a reconnecting client refuses calls with ConnectionClosed."""
    client = Client(connector, reconnect=True, timeout=10)
    connector.drop()
    client.close()
    assert client.closed
    with pytest.raises(ConnectionClosed):
        client.ping()
    assert connector.calls == 1


@pytest.mark.timeout(30)
def test_the_new_connection_gets_the_old_subscriptions_back(connector: Connector,
                                                            losses: Losses) -> None:
    """RESOURCES-7: what the client had subscribed to is subscribed again on the new
    connection, so updates keep arriving after a reconnect."""
    @connector.server.resource("file:///project/{name}")
    def project_file(name: str) -> str:
        """A file of the project."""
        return name

    updated = threading.Event()
    with Client(connector, reconnect=True, timeout=10,
                on_resource_updated=lambda uri: updated.set(), **LEGACY_ERA) as client:
        client.subscribe_resource("file:///project")
        connector.drop()
        losses.wait()
        client.ping()
        assert connector.calls == 2
        assert connector.server.notify_resource_updated("file:///project/a.txt") == 1
        assert updated.wait(5)


@pytest.mark.timeout(60)
def test_the_flask_client_example_answers_again_after_its_server_died(
        losses: Losses) -> None:
    """examples/flask_client.py: one client per process, made at the first request; when
    its server is killed, the next request is served by a new one."""
    example = load_module(EXAMPLES / "flask_client.py", "flask_client_example")
    before = _children()
    atexit.unregister(example.close_mcp_client)
    web = example.create_app().test_client()
    try:
        assert web.get("/add?a=2&b=3").text == "5\n"
        client = example.mcp_client()
        (server_pid,) = _children() - before
        os.kill(server_pid, signal.SIGKILL)
        losses.wait()
        assert web.get("/add?a=20&b=3").text == "23\n"
        assert example.mcp_client() is client
    finally:
        example.close_mcp_client()
