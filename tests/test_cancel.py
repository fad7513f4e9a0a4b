"""Cancelling a call in flight, and timeouts that stay local (issue 25, points 1 and 8).

A call's Future, cancelled from any thread, cancels the call at the server over every
transport (CANCEL-1, CANCEL-4). Over Streamable HTTP a request its caller gave up on
before it was posted is never posted, a cancellation never overtakes its request, and
a cancelled request's event stream ends at once, so that a storm of timeouts leaves the
next call served promptly.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import CancelledError, Future
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import requests

from mcp_sync import Client, Context, RequestCancelled, RequestTimeout, Server
from mcp_sync.errors import ConnectionClosed
from mcp_sync.testing import open_client
from mcp_sync.transports.http_server import serve_http
from tests.conftest import EXAMPLES
from tests.helpers import LEGACY_ERA, load_module
from tests.http_client_helpers import open_client as open_http_client
from tests.http_server_helpers import HEADERS, INITIALIZE, INITIALIZED, call, parse_sse

pytestmark = pytest.mark.timeout(60)

CANCEL_SERVER = Path(__file__).resolve().parent / "servers" / "cancel_server.py"
cancel_server = load_module(CANCEL_SERVER)


@contextmanager
def connected(kind: str, **options: Any) -> Iterator[Client]:
    """A client of a fresh cancel server, in memory, over stdio or over HTTP."""
    options.setdefault("timeout", 10)
    if kind == "memory":
        with open_client(cancel_server.make_server(), **options) as client:
            yield client
    elif kind == "stdio":
        with Client.stdio([sys.executable, str(CANCEL_SERVER)], **options) as client:
            yield client
    elif kind == "http":  # a legacy session, where notifications/cancelled is posted
        with serve_http(cancel_server.make_server()) as handle, \
                Client.http(handle.url, **{**LEGACY_ERA, **options}) as client:
            yield client
    else:  # the modern era: the client closes the request's stream; the server notices
        # when it next writes to it, so it writes keep-alives often.
        with serve_http(cancel_server.make_server(), keepalive_interval=0.1) as handle, \
                Client.http(handle.url, **options) as client:
            assert client.era == "modern"
            yield client


def start_block(client: Client) -> Future[Any]:
    """Call ``block`` and wait until it runs at the server."""
    running = threading.Event()
    future = client.call_tool_async("block", on_progress=lambda *_: running.set())
    assert running.wait(10)
    return future


def text(result: Any) -> str:
    return str(result.content[0].text)


# --- cancellation you can call ---------------------------------------------------------------


@pytest.mark.parametrize("kind", ["memory", "stdio", "http", "http-modern"])
def test_cancel_from_another_thread_stops_the_tool_cancel_1_cancel_4(kind: str) -> None:
    """A "Cancel" button: another thread cancels the Future a caller waits on. The caller
    gets RequestCancelled within a second, the tool sees ``ctx.cancelled``, and the
    connection serves the next call."""
    with connected(kind) as client:
        future = start_block(client)
        cancelled: list[bool] = []
        button = threading.Thread(target=lambda: cancelled.append(future.cancel()),
                                  name="test:cancel-button")
        began = time.monotonic()
        button.start()
        with pytest.raises(RequestCancelled):
            future.result(5)
        assert time.monotonic() - began < 1.0
        button.join(5)
        assert cancelled == [True]
        assert text(client.call_tool("saw_cancel", {"timeout": 5})) == "yes"
        assert text(client.call_tool("echo", {"text": "after"})) == "after"


def test_every_async_call_can_be_cancelled_and_the_server_is_told(wire: Any) -> None:
    """send_request_async is cancelled like call_tool_async: the server is sent
    ``notifications/cancelled`` naming the request (CANCEL-1) and the tool stops."""
    with connected("memory") as client:
        running = threading.Event()
        future = client.send_request_async(
            "tools/call", {"name": "block", "arguments": {}},
            on_progress=lambda *_: running.set())
        assert running.wait(10)
        assert future.cancel()
        with pytest.raises(RequestCancelled):
            future.result(5)
        assert text(client.call_tool("saw_cancel", {"timeout": 5})) == "yes"
    cancels = [m for m in wire.sent
               if isinstance(m, dict) and m.get("method") == "notifications/cancelled"]
    assert len(cancels) == 1
    assert cancels[0]["params"]["reason"] == "cancelled by the client"


def test_a_cancelled_future_reads_as_cancelled_everywhere() -> None:
    """A cancelled call raises RequestCancelled, there also the CancelledError code written
    for plain futures expects; the Future is cancelled, its callbacks run, and
    exception() raises rather than returning None."""
    with connected("memory") as client:
        future = start_block(client)
        called: list[bool] = []
        future.add_done_callback(lambda done: called.append(done.cancelled()))
        assert future.cancel()
        assert future.cancelled() and called == [True]
        with pytest.raises(RequestCancelled):
            future.exception(1)
        with pytest.raises(CancelledError):
            future.result(1)
        assert future.cancel()  # as for any Future, cancelling it again is True


def test_cancel_after_the_answer_changes_nothing_cancel_5() -> None:
    """A call already answered cannot be cancelled: cancel() is False, the result stays,
    and nothing is sent (CANCEL-2)."""
    with connected("memory") as client:
        future = client.call_tool_async("echo", {"text": "kept"})
        assert text(future.result(5)) == "kept"
        assert future.cancel() is False
        assert text(future.result(0)) == "kept"


def test_cancel_after_close_is_too_late() -> None:
    """Closing the client failed the call already: cancel() is False and the Future
    keeps its ConnectionClosed."""
    with connected("memory") as client:
        future = start_block(client)
    assert future.cancel() is False
    with pytest.raises(ConnectionClosed):
        future.result(5)


def test_the_cancel_example_cancels_and_goes_on() -> None:
    completed = subprocess.run(
        [sys.executable, str(EXAMPLES / "cancel_call.py")], capture_output=True, text=True,
        timeout=50)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines() == [
        "cancelled after the first step", "the client is still usable: yes"]


# --- timeouts that stay local over Streamable HTTP --------------------------------------------


class Door:
    """WSGI middleware that records each POST body as it reaches the MCP application, and
    can hold back the POSTs of chosen tool calls until opened."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.bodies: list[Any] = []
        self.hold: set[str] = set()
        self.reached = threading.Event()
        self.opened = threading.Event()
        self.roots_changed = threading.Event()

    def wrap(self, app: Any) -> Callable[..., Any]:
        def wsgi(environ: dict[str, Any], start_response: Any) -> Any:
            if environ["REQUEST_METHOD"] == "POST":
                raw = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
                environ["wsgi.input"] = io.BytesIO(raw)
                body = json.loads(raw)
                if self._tool(body) in self.hold:
                    self.reached.set()
                    assert self.opened.wait(20)
                with self.lock:
                    self.bodies.append(body)
                if isinstance(body, dict) and body.get("method") == (
                        "notifications/roots/list_changed"):
                    self.roots_changed.set()
            return app(environ, start_response)
        return wsgi

    @staticmethod
    def _tool(body: Any) -> str | None:
        if isinstance(body, dict) and body.get("method") == "tools/call":
            return str(body["params"]["name"])
        return None

    def methods(self) -> list[tuple[str, Any]]:
        """(method, request id or the id a cancellation names) of each POST, in order."""
        with self.lock:
            bodies = list(self.bodies)
        found: list[tuple[str, Any]] = []
        for body in bodies:
            if not isinstance(body, dict) or "method" not in body:
                continue
            if body["method"] == "notifications/cancelled":
                found.append((body["method"], body["params"]["requestId"]))
            else:
                found.append((body["method"], body.get("id")))
        return found


@pytest.fixture
def door() -> Door:
    return Door()


@pytest.mark.parametrize("give_up", ["timeout", "cancel"])
def test_a_request_given_up_on_before_it_was_posted_is_never_posted_cancel_2(
        door: Door, give_up: str, wire: Any) -> None:
    """One sender, busy with a call: the next call waits for it. Its caller gives up
    (timeout or cancel) before it was posted: the server never sees the request, nor a
    cancellation of it."""
    with serve_http(cancel_server.make_server(), wrap=door.wrap) as handle:
        client = open_http_client(handle.url, max_senders=1, timeout=10)
        with client:
            busy = start_block(client)
            if give_up == "timeout":
                with pytest.raises(RequestTimeout):
                    client.call_tool("count", timeout=0.2)
            else:
                waiting = client.call_tool_async("count")
                assert waiting.cancel()
                with pytest.raises(RequestCancelled):
                    waiting.result(5)
            assert busy.cancel()
            assert text(client.call_tool("count")) == "1"
    written = [m["id"] for m in wire.sent if isinstance(m, dict)
               and m.get("method") == "tools/call" and m["params"]["name"] == "count"]
    posted = door.methods()
    given_up = [request_id for request_id in written
                if ("tools/call", request_id) not in posted]
    assert len(written) == 2 and len(given_up) == 1
    assert ("notifications/cancelled", given_up[0]) not in posted


@pytest.mark.parametrize("give_up", ["timeout", "cancel"])
def test_a_cancel_never_overtakes_its_request_lifecycle_9(door: Door, give_up: str) -> None:
    """The POST of a call is under way but held up before the server takes it, when its
    caller gives up. The cancellation waits for it: the server gets the request first,
    then the cancellation, and the tool sees ``ctx.cancelled`` (LIFECYCLE-9: a caller
    told it timed out has its request cancelled at the server)."""
    door.hold.add("block")
    with serve_http(cancel_server.make_server(), wrap=door.wrap) as handle, \
            Client.http(handle.url, timeout=10, roots=[], **LEGACY_ERA) as client:
        if give_up == "timeout":
            outcome = Callers(lambda: client.call_tool("block", timeout=0.3))
            assert door.reached.wait(10)
            assert isinstance(outcome.result(), RequestTimeout)
        else:
            future = client.call_tool_async("block")
            assert door.reached.wait(10)
            assert future.cancel()
            with pytest.raises(RequestCancelled):
                future.result(5)
        # Notifications are posted one at a time, in order: once this one is through, a
        # cancellation posted at once would have reached the server too.
        client.set_roots(["file:///tmp"])
        assert door.roots_changed.wait(10)
        door.opened.set()
        assert text(client.call_tool("saw_cancel", {"timeout": 5})) == "yes"
    methods = door.methods()
    request = next(entry for entry in methods if entry[0] == "tools/call")
    assert methods.index(request) < methods.index(("notifications/cancelled", request[1]))


class Callers:
    """Runs ``call`` on a thread of its own; :meth:`result` is what it returned or raised."""

    def __init__(self, call: Callable[[], Any]) -> None:
        self._outcome: list[Any] = []
        self._thread = threading.Thread(target=self._run, args=(call,), name="test:caller")
        self._thread.start()

    def _run(self, call: Callable[[], Any]) -> None:
        try:
            self._outcome.append(call())
        except BaseException as exc:
            self._outcome.append(exc)

    def result(self, timeout: float = 10) -> Any:
        self._thread.join(timeout)
        assert self._outcome, "the call is still running"
        return self._outcome[0]


def test_a_cancelled_requests_stream_ends_at_once_http_15() -> None:
    """The server ends a cancelled request's event stream at once, not at its next
    keep-alive tick: a client with a single sender, whose one connection that stream
    held, has its next call answered promptly (AMBIG-8)."""
    with serve_http(cancel_server.make_server(), keepalive_interval=30) as handle, \
            open_http_client(handle.url, max_senders=1, timeout=10) as client:
        future = start_block(client)
        assert future.cancel()
        began = time.monotonic()
        assert text(client.call_tool("echo", {"text": "next"})) == "next"
        assert time.monotonic() - began < 3.0


@pytest.mark.parametrize("json_response", [False, True])
def test_a_request_that_arrives_after_its_cancellation_is_never_served_cancel_7(
        json_response: bool) -> None:
    """Two POSTs cross: the cancellation of request 7 reaches the server before request 7
    itself. Ids are never reused in a session (JSONRPC-4), so the server serves request 7
    not at all: no tool runs, no answer is sent (CANCEL-4, AMBIG-8)."""
    with serve_http(cancel_server.make_server(), json_response=json_response) as handle, \
            requests.Session() as http:
        def post(body: Any, session_id: str | None = None) -> requests.Response:
            headers = dict(HEADERS, **({"Mcp-Session-Id": session_id} if session_id else {}))
            return http.post(handle.url, data=json.dumps(body), headers=headers, timeout=10)

        session_id = post(INITIALIZE).headers["Mcp-Session-Id"]
        assert post(INITIALIZED, session_id).status_code == 202
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": 7, "reason": "gave up"}}
        assert post(cancel, session_id).status_code == 202
        late = post(call(7, "tools/call", {"name": "block", "arguments": {}}), session_id)
        assert late.status_code in (200, 202)
        assert not [event for event in parse_sse(late.content) if event.data]
        if json_response:
            assert late.status_code == 202 and late.content == b""
        counted = post(call(8, "tools/call", {"name": "count", "arguments": {}}), session_id)
        answers = ([counted.json()] if json_response
                   else [json.loads(event.data) for event in parse_sse(counted.content)])
        assert answers[-1]["result"]["content"][0]["text"] == "0"


def storm_server() -> tuple[Server, dict[str, int], threading.Condition]:
    """``slow`` runs two seconds unless cancelled first, counting how each call ended."""
    server = Server("storm", version="1.0.0")
    counts = {"started": 0, "cancelled": 0, "completed": 0}
    ended = threading.Condition()

    @server.tool()
    def slow(ctx: Context) -> str:
        """Wait two seconds, or until cancelled."""
        with ended:
            counts["started"] += 1
        cancelled = ctx.wait_cancelled(2.0)
        with ended:
            counts["cancelled" if cancelled else "completed"] += 1
            ended.notify_all()
        return "cancelled" if cancelled else "completed"

    @server.tool()
    def echo(text: str) -> str:
        """Return the text."""
        return text

    return server, counts, ended


@pytest.mark.timeout(90)
@pytest.mark.parametrize("json_response", [False, True])
def test_a_timeout_storm_leaves_the_next_call_served_promptly_lifecycle_9(
        json_response: bool) -> None:
    """32 threads make 96 calls of a slow tool with timeouts of 0.05 to 0.5 s; all time
    out. An echo right after is answered within 3 s, and none of the timed-out calls
    ran to completion at the server: each was cancelled there, or never sent. The same
    with a server that answers calls as JSON rather than event streams."""
    server, counts, ended = storm_server()
    with serve_http(server, json_response=json_response) as handle, \
            Client.http(handle.url, timeout=10, **LEGACY_ERA) as client:
        outcomes: list[Any] = []
        lock = threading.Lock()

        def three_calls(n: int) -> None:
            for i in range(3):
                timeout = 0.05 + (n * 3 + i) % 10 * 0.05
                try:
                    outcome: Any = client.call_tool("slow", timeout=timeout)
                except Exception as exc:
                    outcome = exc
                with lock:
                    outcomes.append(outcome)

        threads = [threading.Thread(target=three_calls, args=(n,), name=f"test:storm-{n}")
                   for n in range(32)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert len(outcomes) == 96
        assert all(isinstance(outcome, RequestTimeout) for outcome in outcomes), outcomes
        began = time.monotonic()
        assert text(client.call_tool("echo", {"text": "calm"}, timeout=10)) == "calm"
        assert time.monotonic() - began < 3.0
        # Every call that started ends, each as a cancellation, before the server
        # closes (which would cancel whatever still runs).
        with ended:
            assert ended.wait_for(
                lambda: counts["started"] == counts["cancelled"] + counts["completed"], 10)
            assert counts["completed"] == 0, counts
