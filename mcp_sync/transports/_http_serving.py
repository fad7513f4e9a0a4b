"""Running the Streamable HTTP application on werkzeug's server, in the background or not.

werkzeug's threaded server starts an anonymous daemon thread per connection and never
joins it. Ours starts them through a :class:`~mcp_sync._threads.ThreadGroup` (or a
bounded pool, to behave like a production server with a fixed number of threads),
remembers every open connection, and on close shuts down the ones still open so that
no request thread outlives the server.
"""

from __future__ import annotations

import contextlib
import logging
import selectors
import socket
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from werkzeug.serving import BaseWSGIServer

from .._threads import ThreadGroup, WorkerPool
from ._http_app import StreamableHttpApp
from ._http_checks import LOOPBACK_HOSTS
from ._http_keepalive import (
    DEFAULT_IO_TIMEOUT,
    DEFAULT_KEEP_ALIVE_TIMEOUT,
    POOLED_KEEP_ALIVE_TIMEOUT,
    IdleTracker,
    KeepAliveRequestHandler,
)

if TYPE_CHECKING:
    from ..server import Server

__all__ = ["HttpServerHandle", "start_server"]

log = logging.getLogger("mcp_sync.http.server")

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


class _RequestHandler(KeepAliveRequestHandler):
    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        if log.isEnabledFor(logging.DEBUG):  # werkzeug formats the line before logging it
            super().log_request(code, size)

    def log(self, type: str, message: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), message % args if args else message)


class _WsgiServer(BaseWSGIServer):
    multithread = True

    def __init__(self, host: str, port: int, app: Any, *, fd: int,
                 max_threads: int | None, keep_alive_timeout: float,
                 io_timeout: float) -> None:
        self.keep_alive_timeout = keep_alive_timeout
        self.io_timeout = io_timeout
        self.idle = IdleTracker()
        self.threads = ThreadGroup("http-server")
        self._max_threads = max_threads
        self._pool = (WorkerPool(self.threads, "request", max_threads)
                      if max_threads is not None else None)
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Condition()
        self._stopped_accepting = threading.Event()
        self._stopped_accepting.set()
        super().__init__(host, port, app, handler=_RequestHandler, fd=fd)
        # The accept loop sleeps in select() until a connection or a stop arrives; it
        # never wakes up just to look at a flag. (Made after werkzeug's __init__, which
        # calls server_close.)
        self._wake_r, self._wake_w = socket.socketpair()

    def serve_forever(self, poll_interval: float = 0.0) -> None:
        """Accept connections until :meth:`shutdown`, from another thread, or Ctrl+C."""
        self._stopped_accepting.clear()
        try:
            with selectors.DefaultSelector() as selector:
                selector.register(self.socket, selectors.EVENT_READ)
                selector.register(self._wake_r, selectors.EVENT_READ)
                while True:
                    ready = {key.fileobj for key, _ in selector.select()}
                    if self._wake_r in ready:
                        return
                    self._accept()
        except KeyboardInterrupt:
            pass
        finally:
            self._stopped_accepting.set()

    def _accept(self) -> None:
        try:
            request, client_address = self.get_request()
        except OSError:
            return  # the client gave up before we accepted; or we are closing
        try:
            self.process_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
            self.shutdown_request(request)

    def shutdown(self) -> None:
        """Stop the accept loop and wait until it has returned."""
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")
        self._stopped_accepting.wait()

    def server_close(self) -> None:
        super().server_close()
        for wake in (getattr(self, "_wake_r", None), getattr(self, "_wake_w", None)):
            if wake is not None:
                wake.close()

    def crowded(self) -> bool:
        """Whether accepted connections are waiting for a thread of the bounded pool."""
        if self._max_threads is None:
            return False
        with self._open_lock:
            return len(self._open) > self._max_threads

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            self._open.add(request)
        if self._pool is not None:
            self._pool.submit(self._process, request, client_address)
        else:
            self.threads.start("request", self._process, request, client_address)

    def _process(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)

    def shutdown_request(self, request: Any) -> None:
        super().shutdown_request(request)
        with self._open_lock:
            self._open.discard(request)
            if not self._open:
                self._open_lock.notify_all()

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("error while serving %s", client_address, exc_info=True)

    def abort_connections(self, grace: float) -> None:
        """Shut down the connections still open after ``grace`` seconds.

        The grace lets responses that are ending (their streams just closed) finish
        cleanly; what remains is blocked on a client, and the shutdown wakes it.
        Connections waiting for their next request are shut down at once.
        """
        self.idle.close_idle()
        with self._open_lock:
            self._open_lock.wait_for(lambda: not self._open, grace)
            connections = list(self._open)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def stop_workers(self, timeout: float) -> None:
        if self._pool is not None:
            self._pool.close()
        self.threads.join(timeout)


class HttpServerHandle:
    """A running Streamable HTTP server; see :func:`~mcp_sync.transports.http_server.serve_http`.

    Attributes:
        url: the MCP endpoint, e.g. ``http://127.0.0.1:53411/mcp``.
        host: the address listened on.
        port: the port listened on.
        app: the MCP application (its ``sweep()``, ``session_count``...).
    """

    def __init__(self, wsgi_server: _WsgiServer, app: StreamableHttpApp, path: str) -> None:
        self._server = wsgi_server
        self.app = app
        self.host = wsgi_server.host
        self.port = wsgi_server.port
        shown = f"[{self.host}]" if ":" in self.host else self.host
        self.url = f"http://{shown}:{self.port}{path}"
        self._threads = ThreadGroup("http-serve")
        self._serving = False
        self._lock = threading.Lock()
        self._closed = False

    def start(self) -> None:
        """Serve on a background thread."""
        with self._lock:
            self._serving = True
        self._threads.start("accept", self._server.serve_forever)

    def serve_forever(self) -> None:
        """Serve in the calling thread until :meth:`close` (from another thread) or Ctrl+C."""
        with self._lock:
            if self._closed:
                return
            self._serving = True
        self._server.serve_forever()

    def close(self) -> None:
        """Stop accepting, end every session and stream, and join every thread; idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            serving = self._serving
        if serving:
            self._server.shutdown()
        self._threads.join(5.0)
        self._server.server_close()
        self.app.close()
        self._server.abort_connections(grace=2.0)
        self._server.stop_workers(10.0)

    def __enter__(self) -> HttpServerHandle:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<HttpServerHandle {self.url}>"


def start_server(server: Server, host: str, port: int, *, path: str, background: bool,
                 max_threads: int | None = None,
                 keep_alive_timeout: float | None = None,
                 io_timeout: float = DEFAULT_IO_TIMEOUT,
                 wrap: Callable[[StreamableHttpApp], Any] | None = None,
                 **options: Any) -> HttpServerHandle:
    """Build the application and a listening server for it (see ``serve_http``)."""
    if max_threads is not None and max_threads < 1:
        raise ValueError("max_threads must be at least 1")
    if keep_alive_timeout is None:
        # In a bounded pool an idle connection holds a thread others may be waiting for.
        keep_alive_timeout = (DEFAULT_KEEP_ALIVE_TIMEOUT if max_threads is None
                              else POOLED_KEEP_ALIVE_TIMEOUT)
    if keep_alive_timeout < 0:
        raise ValueError("keep_alive_timeout must not be negative")
    if io_timeout <= 0:
        raise ValueError("io_timeout must be positive")
    if host in _LOOPBACK:
        options.setdefault("allowed_hosts", LOOPBACK_HOSTS)
    options.setdefault("max_get_streams",
                       100 if max_threads is None else max(1, max_threads // 4))
    app = StreamableHttpApp(server, path, **options)
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        # Bound here, so that a busy port raises OSError instead of werkzeug's exit.
        listener = socket.create_server((host, port), family=family)
        try:
            wsgi_server = _WsgiServer(host, port, wrap(app) if wrap else app,
                                      fd=listener.fileno(), max_threads=max_threads,
                                      keep_alive_timeout=keep_alive_timeout,
                                      io_timeout=io_timeout)
        finally:
            listener.close()
    except BaseException:
        app.close()
        raise
    handle = HttpServerHandle(wsgi_server, app, path)
    if background:
        handle.start()
    else:
        print(f"Serving MCP on {handle.url} (Ctrl+C to stop)", file=sys.stderr)
    return handle
