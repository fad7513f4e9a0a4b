"""How a :class:`~mcp_sync.server.Server` tells its clients that something changed: every
legacy session that may hear it, and every modern ``subscriptions/listen`` stream that
opted in to it. ``Server`` inherits these."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from ..protocol._subscriptions import RESOURCE_UPDATED
from ._listen import ListenStreams

if TYPE_CHECKING:
    from ._connection import ServerConnection

__all__ = ["Announcing"]


class Announcing:
    """The announcing half of :class:`~mcp_sync.server.Server` (see the module docstring)."""

    _lock: threading.Lock
    _connections: set[ServerConnection]
    _listens: ListenStreams

    @staticmethod
    def _make_listen_streams(max_streams: int) -> ListenStreams:
        """The record of a server's open listen streams (``Server(max_listen_streams=)``).

        Raises:
            ValueError: ``max_streams`` is negative.
        """
        return ListenStreams(max_streams)

    def notify_resource_updated(self, uri: str) -> int:
        """Tell the clients subscribed to ``uri`` (or to a URI above it) that it changed.

        A subscription to ``a://x`` covers ``a://x`` itself and everything under
        ``a://x/`` (AMBIG-23); each legacy session is told once, with ``uri``, and so is
        each modern listen stream whose ``resourceSubscriptions`` cover it.

        Returns:
            How many sessions and listen streams were notified.
        """
        with self._lock:
            connections = list(self._connections)
        told = sum(1 for connection in connections if connection.is_subscribed(uri)
                   and connection.notify_if_ready(RESOURCE_UPDATED, {"uri": uri}))
        return told + self._listens.publish(RESOURCE_UPDATED, {"uri": uri})

    def end_listen_streams(self) -> int:
        """End every open ``subscriptions/listen`` stream from the server's side.

        Each listen request is sent ``notifications/cancelled`` naming it, then its
        result (which over HTTP ends its response stream); its client listens again if
        it still wants changes. Call it before shutting a server down.

        Returns:
            How many streams were ended.
        """
        return self._listens.end_all()

    def _broadcast(self, method: str, params: dict[str, Any] | None = None) -> None:
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            connection.notify_if_ready(method, params)
        self._listens.publish(method, params)
