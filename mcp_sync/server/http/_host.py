"""What the HTTP application needs of the server it serves.

The application, the legacy HTTP+SSE endpoints and the session bookkeeping only connect
clients, ask which methods are served and, with a session store, exchange the server's
announcements with the other processes; :class:`ConnectionHost` says so, so that they
depend on that and not on :class:`~mcp_sync.server.Server` with all it registers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ...engine._threads import WorkerPool
    from ...transports.base import Transport
    from .._announcing import Announcer
    from .._connection import ServerConnection

__all__ = ["ConnectionHost"]


class ConnectionHost(Protocol):
    """Connects clients and knows the request methods it may answer (Server does both)."""

    @property
    def served_methods(self) -> frozenset[str]:
        """Every request method some connection may answer."""
        ...

    @property
    def supported_versions(self) -> tuple[str, ...]:
        """The protocol versions the server speaks, oldest first."""
        ...

    @property
    def modern_versions(self) -> tuple[str, ...]:
        """The modern (2026-07-28 on) versions it serves; none for a legacy-only server."""
        ...

    @property
    def idle_thread_timeout(self) -> float:
        """Seconds a connection's idle worker thread waits for work before it ends."""
        ...

    def tool_scopes(self, name: str) -> frozenset[str]:
        """The OAuth scopes a call of tool ``name`` needs."""
        ...

    def connect(self, transport: Transport, *,
                assume_version: str | None = None) -> ServerConnection:
        """Serve one client over ``transport`` on background threads, starting now."""
        ...

    def _connect(self, transport: Transport, *, assume_version: str | None = None,
                 workers: WorkerPool | None = None) -> ServerConnection:
        """:meth:`connect`, with ``workers`` shared by connections that serve one POST."""
        ...

    def _add_announcer(self, announcer: Announcer) -> None:
        """Be told of every change the server announces, after its own clients."""
        ...

    def _remove_announcer(self, announcer: Announcer) -> None:
        """Be told no more."""
        ...

    def _tell_listen_streams(self, method: str, params: dict[str, Any] | None) -> int:
        """Send a change announced elsewhere to the listen streams that opted in to it."""
        ...
