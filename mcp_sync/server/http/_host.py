"""What the HTTP application needs of the server it serves.

The application, the legacy HTTP+SSE endpoints and the session bookkeeping only connect
clients and ask which methods are served; :class:`ConnectionHost` says so, so that they
depend on that and not on :class:`~mcp_sync.server.Server` with all it registers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ...transports.base import Transport
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

    def connect(self, transport: Transport, *,
                assume_version: str | None = None) -> ServerConnection:
        """Serve one client over ``transport`` on background threads, starting now."""
        ...
