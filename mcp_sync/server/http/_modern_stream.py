"""The transport of one modern (2026-07-28) request over Streamable HTTP, and its stream.

A modern POST carries one request and its connection serves nothing else until it is
answered (no session: nothing of it outlives the answer; the connection may then go on
to a later POST's transport). :class:`RequestTransport` is what that connection writes to:
the answer, and the notifications the handler sends about the request (progress, log
messages, what a long-lived request such as ``subscriptions/listen`` streams), in
order: whatever the connection writes with ``related_to`` set to the request's id.
Anything not about the request has nowhere to go in this era and is dropped. The stream
stays open for as long as the request runs.

The HTTP side waits for the first of them (:meth:`RequestTransport.wait_first`): an
answer that comes first is the whole response, one JSON body with the status its error
code calls for; a notification that comes first (or a handler silent past the
keep-alive interval) makes the response an event stream, :class:`RequestEvents`, which
ends with the answer. The client closing that stream before the answer cancels the
request (its handler sees ``ctx.cancelled``); there are no event ids and no resumption.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Sequence

from ...errors import ConnectionClosed
from ...protocol._jsonrpc import (
    ErrorResponse,
    Incoming,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
)
from ...protocol._sse import format_comment, format_data_event
from ...transports.base import Pusher, Receiver, Transport
from ._session import encode_answer

__all__ = ["RequestEvents", "RequestTransport"]

log = logging.getLogger("mcp_sync.http.server")


class RequestTransport(Transport):
    """The transport of one modern request (see the module docstring).

    Args:
        request: the request this connection serves.
        keep_events: keep the notifications about it; without (an answer in one JSON
            body) they are dropped.
    """

    ends_on_close = True
    modern_era = True

    def __init__(self, request: Request, *, keep_events: bool = True) -> None:
        self.request = request
        self._keep_events = keep_events
        self._cond = threading.Condition()
        self._pusher = Pusher()
        self._events: list[bytes] = []  # notifications not yet taken, JSON text
        self._answer: bytes | None = None
        #: The JSON-RPC error code of the answer, or None for a result.
        self.error_code: int | None = None
        self._finished = False  # answered, or cancelled (then never answered)
        self._closed = False

    # --- the engine's side -----------------------------------------------------------------

    def read(self) -> Incoming | None:
        # Messages are pushed (attach_receiver); reading only waits for the end.
        with self._cond:
            self._cond.wait_for(lambda: self._closed)
        return None

    def attach_receiver(self, receiver: Receiver) -> bool:
        return self._pusher.attach(receiver)

    def write(self, message: Message | Sequence[Message], *,
              related_to: RequestId | None = None) -> None:
        messages = [message] if isinstance(
            message, (Request, Notification, Response, ErrorResponse)) else list(message)
        with self._cond:
            if self._closed:
                raise ConnectionClosed("the request has been answered")
            for item in messages:
                self._route(item, related_to)
            self._cond.notify_all()

    def _route(self, item: Message, related_to: RequestId | None) -> None:
        if isinstance(item, (Response, ErrorResponse)):
            if item.id != self.request.id or self._finished:
                log.debug("dropping an answer to %r: nothing waits for it", item.id)
                return
            self._answer = encode_answer(item)
            if isinstance(item, ErrorResponse):
                self.error_code = item.code
            self._finished = True
        elif isinstance(item, Notification) and related_to == self.request.id:
            if self._keep_events and not self._finished:
                self._events.append(encode_answer(item))
        else:
            # The era has no requests to the client and no stream but the request's own.
            log.debug("dropping %s: a modern request's stream carries only what is "
                      "about that request", item.method)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._finished = True
            self._cond.notify_all()

    # --- the HTTP side ---------------------------------------------------------------------

    @property
    def finished(self) -> bool:
        """Answered or cancelled."""
        with self._cond:
            return self._finished

    def feed(self, incoming: Incoming, *, serve_here: bool = False) -> None:
        """Hand a message to the connection's engine, to be served by its workers, or
        with ``serve_here`` by the calling thread (one that would only wait for it)."""
        if not self._pusher.attached:
            raise ConnectionClosed("the connection is not running")
        for serve in self._pusher.push(incoming, serve_here):
            serve()

    def cancel(self, reason: str) -> None:
        """Cancel the request, unless answered already: its handler sees
        ``ctx.cancelled`` and its answer, should it come, goes nowhere."""
        with self._cond:
            if self._finished:
                return
            self._finished = True
            self._events.clear()
            self._cond.notify_all()
        with contextlib.suppress(ConnectionClosed):  # the connection ended already
            self.feed(Notification("notifications/cancelled",
                                   {"requestId": self.request.id, "reason": reason}))

    def wait_first(self, timeout: float | None) -> bool:
        """Wait until the answer or a notification is there; False if ``timeout``
        (None: no limit) passed first."""
        with self._cond:
            return self._cond.wait_for(lambda: self._finished or bool(self._events), timeout)

    def lone_answer(self) -> bytes | None:
        """The answer (JSON text) if it came with nothing before it; None otherwise."""
        with self._cond:
            return None if self._events else self._answer

    def next_events(self, wait: float) -> tuple[bytes, bool]:
        """Take what came as SSE events, waiting up to ``wait`` seconds for something;
        ``(events, ended)``, where ``ended`` says the answer (or the end) is in them."""
        deadline = time.monotonic() + wait
        with self._cond:
            while not self._events and not self._finished:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return b"", False
                self._cond.wait(remaining)
            events, self._events = self._events, []
            ended = self._finished
            if ended and self._answer is not None:
                events.append(self._answer)
                self._answer = None
        return b"".join(format_data_event(event) for event in events), ended


class RequestEvents:
    """The WSGI body of a modern request's event stream (see the module docstring).

    ``on_close`` runs once, when the WSGI server closes the body, with False if the
    client left before the answer (the request is then cancelled first).
    """

    def __init__(self, transport: RequestTransport, *, keepalive: float,
                 on_close: Callable[[bool], None]) -> None:
        self._transport = transport
        self._keepalive = keepalive
        self._on_close = on_close
        self._ended = False
        self._closed = False
        self._first = True

    def __iter__(self) -> RequestEvents:
        return self

    def __next__(self) -> bytes:
        if self._ended:
            raise StopIteration
        events, self._ended = self._transport.next_events(0.0 if self._first else
                                                          self._keepalive)
        if self._first:
            # The headers go out at once, with whatever is there already.
            self._first = False
            return format_comment() + events
        return events or format_comment("keep-alive")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        answered = self._ended or self._transport.finished
        if not answered:
            self._transport.cancel("the client closed the response stream")
        self._on_close(answered)
