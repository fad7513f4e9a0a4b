"""How a :class:`~mcp_sync.server.Server` tells its clients that something changed: every
legacy session that may hear it, and every modern ``subscriptions/listen`` stream that
opted in to it. ``Server`` inherits these.

An application serving the server's sessions together with other processes (through a
session store) adds an *announcer*: it is told of each change, and of the connections
already told here, and hands the change to the other processes, which tell their own
listen streams and the sessions whose streams they hold
(:mod:`mcp_sync.server.http._shared`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..protocol._subscriptions import RESOURCE_UPDATED
from ._listen import ListenStreams

if TYPE_CHECKING:
    from ._connection import ServerConnection

__all__ = ["Announcer", "Announcing"]

log = logging.getLogger("mcp_sync.server")

#: Called with a change notification's method and params, and the connections of this
#: process that were sent it.
Announcer = Callable[[str, "dict[str, Any] | None", "set[ServerConnection]"], None]


class Announcing:
    """The announcing half of :class:`~mcp_sync.server.Server` (see the module docstring)."""

    _lock: threading.Lock
    _connections: set[ServerConnection]
    _listens: ListenStreams
    _announcers: list[Announcer]

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
        told = {connection for connection in connections if connection.is_subscribed(uri)
                and connection.notify_if_ready(RESOURCE_UPDATED, {"uri": uri})}
        count = len(told) + self._listens.publish(RESOURCE_UPDATED, {"uri": uri})
        self._announce_elsewhere(RESOURCE_UPDATED, {"uri": uri}, told)
        return count

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
        told = {connection for connection in connections
                if connection.notify_if_ready(method, params)}
        self._listens.publish(method, params)
        self._announce_elsewhere(method, params, told)

    # --- other processes serving the same clients ---------------------------------------------

    def _add_announcer(self, announcer: Announcer) -> None:
        with self._lock:
            self._announcers.append(announcer)

    def _remove_announcer(self, announcer: Announcer) -> None:
        with self._lock:
            if announcer in self._announcers:
                self._announcers.remove(announcer)

    def _tell_listen_streams(self, method: str, params: dict[str, Any] | None) -> int:
        return self._listens.publish(method, params)

    def _announce_elsewhere(self, method: str, params: dict[str, Any] | None,
                            told: set[ServerConnection]) -> None:
        with self._lock:
            announcers = list(self._announcers)
        for announcer in announcers:
            try:
                announcer(method, params, told)
            except Exception:  # the change is made and told here all the same
                log.exception("cannot announce %s to the other processes", method)
