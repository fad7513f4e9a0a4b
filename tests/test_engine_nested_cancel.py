"""Requests a handler sends to the client on behalf of the request it serves (sampling,
roots) end with that request: a cancelled or finished request cancels them (CANCEL-1/2/4).

The server's default timeout is far longer than each test's bound, so every nested call
that ends here ended because of the cancellation, not a timeout."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from mcp_sync import Context, Server
from mcp_sync.errors import ConnectionLost, RequestCancelled
from tests.helpers import RawPeer
from tests.server_support import check, raw_session, request

pytestmark = pytest.mark.timeout(20)

LONG = 120.0  # no nested call may end by timing out within a test's bound

CAPABILITIES = {"sampling": {}, "roots": {}}

NESTED: dict[str, Callable[[Context], Any]] = {
    "sampling/createMessage": lambda ctx: ctx.sample("Hi?", max_tokens=5),
    "roots/list": lambda ctx: ctx.send_request("roots/list"),
}


class Seen:
    """What a tool's nested call ended with, once it ended."""

    def __init__(self) -> None:
        self.ended = threading.Event()
        self.errors: list[BaseException] = []

    def run(self, call: Callable[[], Any]) -> None:
        try:
            call()
        except BaseException as exc:
            self.errors.append(exc)
        self.ended.set()

    def error(self, index: int = 0) -> BaseException:
        assert self.ended.wait(5), "the nested call is still waiting"
        return self.errors[index]


def cancelled(request_id: Any, reason: str = "user stopped it") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": request_id, "reason": reason}}


def frames_until_answer(peer: RawPeer, request_id: Any) -> list[dict[str, Any]]:
    """Every frame up to and including the answer to ``request_id``."""
    frames = []
    while True:
        frame = peer.receive()
        frames.append(frame)
        if frame.get("id") == request_id and "method" not in frame:
            return frames


def nested_cancel_server(method: str, seen: Seen) -> Server:
    # One worker: the "done" call runs only after the worker has fully finished the
    # call before it, answer (or its suppression) included.
    server = Server("nested", timeout=LONG, max_workers=1)

    @server.tool()
    def ask(ctx: Context) -> str:
        seen.run(lambda: NESTED[method](ctx))
        return "finished"

    @server.tool()
    def done() -> str:
        return "done"

    return server


@pytest.mark.parametrize("method", sorted(NESTED))
def test_cancelling_a_call_cancels_its_nested_request_cancel_1_2_4(method: str) -> None:
    """CANCEL-4 (receiver stops the work), CANCEL-1/2 (sender cancels its own request):
    when the client cancels a tools/call, the tool's pending sampling/roots request fails
    at once with RequestCancelled, the client is sent a schema-valid
    notifications/cancelled for that nested request, and the tools/call gets no answer."""
    seen = Seen()
    with raw_session(nested_cancel_server(method, seen), CAPABILITIES) as (peer, _):
        peer.send(request("tools/call", {"name": "ask"}, 1))
        nested = peer.receive()
        assert nested["method"] == method
        peer.send(cancelled(1))
        assert isinstance(seen.error(), RequestCancelled)

        peer.send(request("tools/call", {"name": "done"}, 2))
        frames = frames_until_answer(peer, 2)
        cancels = [frame for frame in frames
                   if frame.get("method") == "notifications/cancelled"]
        assert len(cancels) == 1, frames
        check(cancels[0], "CancelledNotification")
        assert cancels[0]["params"]["requestId"] == nested["id"]
        assert not [frame for frame in frames if frame.get("id") == 1], frames
        assert frames[-1]["result"]["content"][0]["text"] == "done"

        # A late answer to the cancelled nested request is dropped quietly (CANCEL-6).
        peer.send({"jsonrpc": "2.0", "id": nested["id"], "result": {"roots": []}})
        assert peer.nothing_more()


def test_only_the_cancelled_calls_nested_requests_end_cancel_4() -> None:
    """CANCEL-4: cancelling one tools/call leaves another call's nested request alone;
    that one still completes when the client answers it."""
    finished: dict[str, str] = {}
    cancelled_seen = threading.Event()
    server = Server("nested", timeout=LONG)

    @server.tool()
    def roots(label: str, ctx: Context) -> str:
        try:
            found = ctx.list_roots()
        except RequestCancelled:
            finished[label] = "cancelled"
            cancelled_seen.set()
            raise
        finished[label] = "answered"
        return f"{label}: {len(found)} roots"

    with raw_session(server, CAPABILITIES) as (peer, _):
        peer.send(request("tools/call", {"name": "roots", "arguments": {"label": "a"}}, 1))
        first = peer.receive()
        peer.send(request("tools/call", {"name": "roots", "arguments": {"label": "b"}}, 2))
        second = peer.receive()
        assert first["method"] == second["method"] == "roots/list"

        peer.send(cancelled(1))
        cancel = peer.receive()
        assert cancel["method"] == "notifications/cancelled"
        assert cancel["params"]["requestId"] == first["id"]

        peer.send({"jsonrpc": "2.0", "id": second["id"], "result": {"roots": []}})
        answer = peer.receive()
        assert answer["id"] == 2
        assert answer["result"]["content"][0]["text"] == "b: 0 roots"
        # Call a's thread learns of the cancellation on its own time, not before b's answer.
        assert cancelled_seen.wait(10.0)
        assert finished == {"a": "cancelled", "b": "answered"}


def test_a_finished_handlers_leftover_nested_requests_are_cancelled_cancel_2() -> None:
    """CANCEL-2: a request the handler started on a thread of its own and left pending
    when it returned is cancelled once the handler has answered: the thread's call raises
    RequestCancelled and the client is told. A nested call started after that fails at
    once and is never sent."""
    seen = Seen()
    sent = threading.Event()
    threads: list[threading.Thread] = []
    server = Server("nested", timeout=LONG)

    def leftover(ctx: Context) -> None:
        seen.run(ctx.list_roots)
        seen.run(ctx.list_roots)

    @server.tool()
    def background(ctx: Context) -> str:
        thread = threading.Thread(target=leftover, args=(ctx,))
        threads.append(thread)
        thread.start()
        assert sent.wait(5)
        return "started"

    try:
        with raw_session(server, CAPABILITIES) as (peer, _):
            peer.send(request("tools/call", {"name": "background"}, 1))
            nested = peer.receive()
            assert nested["method"] == "roots/list"
            sent.set()
            frames = [peer.receive(), peer.receive()]
            answers = [frame for frame in frames if frame.get("id") == 1]
            assert len(answers) == 1 and answers[0]["result"]["content"][0]["text"] == "started"
            cancels = [frame for frame in frames
                       if frame.get("method") == "notifications/cancelled"]
            assert len(cancels) == 1, frames
            check(cancels[0], "CancelledNotification")
            assert cancels[0]["params"]["requestId"] == nested["id"]

            threads[0].join(5)
            assert not threads[0].is_alive()
            assert len(seen.errors) == 2
            assert all(isinstance(error, RequestCancelled) for error in seen.errors)
            assert peer.nothing_more()  # the second roots/list was never sent
    finally:
        sent.set()
        for thread in threads:
            thread.join(5)


def test_a_nested_request_after_the_cancel_is_never_sent_cancel_2() -> None:
    """CANCEL-2: a tool that asks the client for something after its call was cancelled
    gets RequestCancelled at once; nothing reaches the client (no request, no cancel)."""
    seen = Seen()
    started = threading.Event()
    server = Server("nested", timeout=LONG, max_workers=1)

    @server.tool()
    def late(ctx: Context) -> str:
        started.set()
        assert ctx.wait_cancelled(5)
        seen.run(lambda: ctx.sample("too late", max_tokens=5))
        return "finished"

    @server.tool()
    def done() -> str:
        return "done"

    with raw_session(server, CAPABILITIES) as (peer, _):
        peer.send(request("tools/call", {"name": "late"}, 1))
        # Cancelled once running: a cancel that overtook it would skip the tool instead.
        assert started.wait(5)
        peer.send(cancelled(1))
        assert isinstance(seen.error(), RequestCancelled)
        peer.send(request("tools/call", {"name": "done"}, 2))
        frames = frames_until_answer(peer, 2)
        assert len(frames) == 1, frames
        assert frames[0]["result"]["content"][0]["text"] == "done"


def test_connection_end_ends_nested_requests_at_once() -> None:
    """When the client goes away the tool's pending sampling request fails at once with
    ConnectionLost (nothing can be sent any more) instead of waiting for its timeout."""
    seen = Seen()
    with raw_session(nested_cancel_server("sampling/createMessage", seen),
                     CAPABILITIES) as (peer, connection):
        peer.send(request("tools/call", {"name": "ask"}, 1))
        assert peer.receive()["method"] == "sampling/createMessage"
        peer.close()
        assert isinstance(seen.error(), ConnectionLost)
        assert connection.wait_closed(5)
