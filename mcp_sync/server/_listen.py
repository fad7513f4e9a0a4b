"""Serving ``subscriptions/listen`` (2026-07-28): the server's open listen streams.

A listen request stays open for as long as the client listens, so it must not hold a
thread of the request pool: :meth:`ListenStreams.open` acknowledges it on the worker that
received it and leaves it open (``IncomingRequest.answer_later``), and the worker goes
back to the pool. From then on the stream is a record in :class:`ListenStreams`. A change
(``Server.add_tool``, ``notify_resource_updated``, ...) is written to every stream that
opted in to its kind by the thread that made the change, in the order of the changes,
tagged with the stream's subscription id and related to the listen request, so that a
transport with a channel per request (Streamable HTTP) carries it on that request's
stream without knowing what a listen is.

A stream ends when the client cancels the request (``notifications/cancelled`` on stdio,
closing the response stream over HTTP), when its connection ends, or when the server
ends it (:meth:`ListenStreams.end_all`): ``notifications/cancelled`` naming the request,
then its empty result, which also ends the response stream of a per-request transport.

The streams cost no thread on stdio or in memory, only this record; over HTTP each holds
the WSGI thread that carries its response. ``Server(max_listen_streams=...)`` bounds how
many are open at once, over all connections; one more is refused with -32603 before its
acknowledgement.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

from ..errors import InternalError
from ..protocol._subscriptions import (
    ACKNOWLEDGED,
    PROMPTS_CHANGED,
    RESOURCE_UPDATED,
    RESOURCES_CHANGED,
    SUBSCRIPTION_ID_KEY,
    TOOLS_CHANGED,
    ListenFilter,
    tagged,
)
from ._modern import serve_modern

if TYPE_CHECKING:
    from .. import types
    from ..engine._engine import IncomingRequest
    from ._connection import ServerConnection

__all__ = ["ListenStreams"]

log = logging.getLogger("mcp_sync.server")


def _supported(capabilities: types.ServerCapabilities) -> list[str]:
    # What this connection declared is what its streams may carry (CAPS-6).
    kinds = []
    if capabilities.tools is not None and capabilities.tools.list_changed:
        kinds.append(TOOLS_CHANGED)
    if capabilities.prompts is not None and capabilities.prompts.list_changed:
        kinds.append(PROMPTS_CHANGED)
    resources = capabilities.resources
    if resources is not None and resources.list_changed:
        kinds.append(RESOURCES_CHANGED)
    if resources is not None and resources.subscribe:
        kinds.append(RESOURCE_UPDATED)
    return kinds


def _final_result(connection: ServerConnection, incoming: IncomingRequest) -> dict[str, Any]:
    # SubscriptionsListenResult: empty but for the id of the stream it closes.
    return {"_meta": {SUBSCRIPTION_ID_KEY: incoming.id}}


class _Stream:
    """One open listen request."""

    __slots__ = ("connection", "ended", "filter", "incoming", "lock")

    def __init__(self, connection: ServerConnection, incoming: IncomingRequest,
                 listen_filter: ListenFilter) -> None:
        self.connection = connection
        self.incoming = incoming
        self.filter = listen_filter
        # Held while writing to this stream, so that its messages leave in order: the
        # acknowledgement first, then the changes, the end last.
        self.lock = threading.Lock()
        self.ended = False

    def send(self, method: str, params: dict[str, Any] | None) -> bool:
        # Called with self.lock held.
        return self.connection._send_notification(
            method, tagged(params, self.incoming.id), self.incoming.id)


class ListenStreams:
    """The open ``subscriptions/listen`` streams of one server, over all its connections.

    Args:
        max_streams: how many may be open at once; one more is refused with -32603.
    """

    def __init__(self, max_streams: int) -> None:
        if max_streams < 0:
            raise ValueError("max_listen_streams must not be negative")
        self.max_streams = max_streams
        self._lock = threading.Lock()
        self._streams: dict[int, _Stream] = {}

    def open(self, connection: ServerConnection, incoming: IncomingRequest) -> None:
        """Serve a listen request: acknowledge it and leave it open (a request handler).

        Raises:
            InvalidParams: the ``notifications`` filter is missing or malformed.
            InternalError: ``max_streams`` streams are open already.
        """
        requested = ListenFilter.parse(incoming.params)
        stream = _Stream(connection, incoming, requested.honoured(
            _supported(connection.capabilities)))
        # Held from before the stream is seen until its acknowledgement is out, so that
        # changes (and the server ending it) wait for the acknowledgement, then follow it.
        with stream.lock:
            with self._lock:
                if len(self._streams) >= self.max_streams:
                    raise InternalError(
                        f"Internal error: {self.max_streams} subscriptions/listen streams "
                        "are open already; try again later")
                self._streams[id(stream)] = stream
            if not incoming.answer_later(lambda: self._forget(stream)):
                self._forget(stream)  # cancelled already: it gets no answer at all
                return
            stream.send(ACKNOWLEDGED, {"notifications": stream.filter.to_wire()})

    def publish(self, method: str, params: dict[str, Any] | None = None) -> int:
        """Send a change notification to every open stream that opted in to it.

        Returns:
            How many streams it was sent to.
        """
        with self._lock:
            streams = [stream for stream in self._streams.values()
                       if stream.filter.wants(method, params)]
        sent = 0
        for stream in streams:
            with stream.lock:
                if stream.ended:
                    continue
                if stream.incoming.cancelled.is_set() or not stream.incoming.left_open:
                    # Ended without our notice (a transport that dropped the stream, a
                    # call hook that failed the request): forget it.
                    self._forget(stream)
                    continue
                sent += stream.send(method, params)
        return sent

    def end_all(self) -> int:
        """End every open stream from the server's side: ``notifications/cancelled``
        naming the listen request, then its result.

        Returns:
            How many streams were ended.
        """
        with self._lock:
            streams = list(self._streams.values())
        ended = 0
        for stream in streams:
            with stream.lock:
                if stream.ended:
                    continue
                self._forget(stream)
                incoming = stream.incoming
                stream.connection._send_notification(
                    "notifications/cancelled",
                    {"requestId": incoming.id, "reason": "the server ended the subscription"},
                    incoming.id)
                incoming.answer(serve_modern(stream.connection, incoming, _final_result))
                ended += 1
        return ended

    def _forget(self, stream: _Stream) -> None:
        stream.ended = True
        with self._lock:
            self._streams.pop(id(stream), None)
