"""How a :class:`~mcp_sync.server.Server` is served: on stdin/stdout, or over Streamable
HTTP as a WSGI application or on the embedded server. ``Server`` inherits these."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from ._process import settle_startup_objects

if TYPE_CHECKING:
    from ..transports.base import Transport
    from ._connection import ServerConnection
    from ._server import Server
    from .http._entry import StreamableHttpApp

__all__ = ["Serving"]


class Serving:
    """The serving half of :class:`~mcp_sync.server.Server` (see the module docstring)."""

    if TYPE_CHECKING:  # what Server itself defines
        def connect(self, transport: Transport, *,
                    assume_version: str | None = None) -> ServerConnection: ...

    def _as_server(self) -> Server:
        return cast("Server", self)

    def tool_scopes(self, name: str) -> frozenset[str]:
        """The OAuth scopes a call of tool ``name`` needs over HTTP behind a
        :class:`~mcp_sync.auth.ResourceServer` (none for an unknown tool)."""
        registered = self._as_server()._registry.tool(name)
        return frozenset() if registered is None else registered.scopes

    def wsgi_app(self, path: str = "/mcp", *, stateless: bool = False,
                 json_response: bool = False, **options: Any) -> StreamableHttpApp:
        """This server over Streamable HTTP, as a WSGI application.

        Mount it in Flask, Django or any WSGI server; see docs/http.md for every option
        (``allowed_origins``, ``auth`` to put it behind OAuth (docs/auth.md),
        ``max_get_streams``, ``legacy_sse`` to also serve the 2024-11-05 HTTP+SSE
        endpoints for old clients, ``session_store`` to share sessions between
        processes and hosts, ...).

        Args:
            path: the MCP endpoint's path within the application.
            stateless: no sessions; each POST stands alone (scales across processes).
            json_response: answer requests with ``application/json``, never SSE.
            options: passed to :func:`mcp_sync.transports.http_server.make_wsgi_app`.
        """
        from .http._entry import make_wsgi_app

        return make_wsgi_app(self._as_server(), path, stateless=stateless,
                             json_response=json_response, **options)

    def run_http(self, host: str = "127.0.0.1", port: int = 8000, *, path: str = "/mcp",
                 **options: Any) -> None:
        """Serve Streamable HTTP at ``http://host:port/path`` until Ctrl+C.

        Serves on waitress; binds the loopback address by default (HTTP-3). Options as
        for :meth:`wsgi_app`, plus ``max_threads``, ``io_timeout`` and ``wrap``; see
        docs/http.md.
        """
        from .http._entry import run_http

        run_http(self._as_server(), host, port, path=path, **options)

    def run_stdio(self) -> None:
        """Serve one client on stdin/stdout until stdin closes, then return.

        While serving, anything printed to stdout goes to stderr instead, so it cannot
        corrupt the message stream. Returns normally when the client closes the pipe, so
        a script that ends with this call exits with status 0. The objects alive when it
        starts are left out of the garbage collector's later passes (``gc.freeze()``).
        """
        from ..transports.stdio import StdioServerTransport

        settle_startup_objects()
        connection = self.connect(StdioServerTransport())
        try:
            connection.wait_closed()
        finally:
            connection.close()
