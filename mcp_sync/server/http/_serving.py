"""Running the Streamable HTTP application on waitress, in the background or not.

waitress reads requests and writes responses on one I/O thread (its ``wasyncore`` loop)
and runs the application on a fixed number of task threads: a connection holds a thread
only while the application serves one of its requests, never while it sends its request
or waits idle between two. It refuses malformed and ambiguous framing with 400, 431 or 501
(RFC 9112 6.3), and flushes every piece an application yields at once, so SSE events
reach the client as they are sent.

This module sizes waitress, names and joins its threads, adds the two rules it leaves to
its user (``Content-Length`` beside ``Transfer-Encoding: chunked`` is refused, not
ignored; a client that stops reading its response loses its connection after
``io_timeout``, as one that stops sending its request does), and closes it so that no
thread outlives the handle.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from waitress import wasyncore  # type: ignore[import-untyped]
from waitress.adjustments import Adjustments  # type: ignore[import-untyped]
from waitress.channel import HTTPChannel  # type: ignore[import-untyped]
from waitress.parser import HTTPRequestParser, ParsingError  # type: ignore[import-untyped]
from waitress.server import TcpWSGIServer  # type: ignore[import-untyped]
from waitress.task import ThreadedTaskDispatcher  # type: ignore[import-untyped]

from ...engine._threads import ThreadGroup
from ._app import StreamableHttpApp
from ._checks import LOOPBACK_HOSTS

if TYPE_CHECKING:
    from .._server import Server

__all__ = ["DEFAULT_IO_TIMEOUT", "DEFAULT_MAX_THREADS", "HttpServerHandle", "start_server"]

_LOOPBACK = ("127.0.0.1", "localhost", "::1")

#: Task threads, each serving one request (or holding one open stream) at a time.
DEFAULT_MAX_THREADS = 32
#: How long a connection may stall: send nothing of its request, take nothing of its
#: response, or sit idle between two requests. Waiting for the application has no limit.
DEFAULT_IO_TIMEOUT = 60.0
#: The most a request's head (request line and header fields) may take.
MAX_HEAD_SIZE = 64 * 1024
# What a connection's response may have waiting to be sent before its writer waits.
_MAX_UNSENT = 1024 * 1024
# How long close() lets responses that are ending go out before it cuts connections.
_GRACE = 2.0


class _RequestParser(HTTPRequestParser):  # type: ignore[misc]
    """waitress's parser, refusing a request framed both by length and by chunks.

    RFC 9112 6.3 lets a server ignore ``Content-Length`` when the body is chunked, but a
    proxy in front may have read the length: the two would see different requests.
    """

    def parse_header(self, header_plus: bytes) -> None:
        super().parse_header(header_plus)
        if self.chunked and "CONTENT_LENGTH" in self.headers:
            raise ParsingError("Content-Length with Transfer-Encoding: chunked")


class _Channel(HTTPChannel):  # type: ignore[misc]
    parser_class = _RequestParser


class _Server(TcpWSGIServer):  # type: ignore[misc]
    channel_class = _Channel

    def pull_trigger(self) -> None:
        # A task thread finishing a response while close() has already closed the
        # trigger: the loop no longer runs, so there is nobody left to wake.
        with contextlib.suppress(OSError):
            super().pull_trigger()

    def maintenance(self, now: float) -> None:
        """Close idle connections (waitress's own rule) and those not reading their answer.

        waitress closes a connection after ``channel_timeout`` without activity only when
        no request of it is being served; one whose response waits in the buffers because
        its client stopped reading would keep its task thread. Closing it makes the
        thread's next write fail, which ends the response.
        """
        super().maintenance(now)
        cutoff = now - self.adj.channel_timeout
        for channel in list(self.active_channels.values()):
            if channel.requests and channel.total_outbufs_len and \
                    channel.last_activity < cutoff:
                # Closed from the trigger, between two polls of the loop, not while the
                # loop is collecting what to poll.
                self.trigger.pull_trigger(channel.handle_close)


class _Dispatcher(ThreadedTaskDispatcher):  # type: ignore[misc]
    """waitress's task threads, started (named) and joined by a ThreadGroup."""

    def __init__(self, threads: ThreadGroup) -> None:
        super().__init__()
        self._group = threads

    def start_new_thread(self, target: Callable[[int], None], thread_no: int) -> None:
        self._group.start(f"request-{thread_no}", target, thread_no)


class HttpServerHandle:
    """A running Streamable HTTP server; see :func:`~mcp_sync.transports.http_server.serve_http`.

    Attributes:
        url: the MCP endpoint, e.g. ``http://127.0.0.1:53411/mcp``.
        host: the address listened on.
        port: the port listened on.
        app: the MCP application (its ``sweep()``, ``session_count``...).
    """

    def __init__(self, wsgi_server: _Server, threads: ThreadGroup, app: StreamableHttpApp,
                 host: str, path: str) -> None:
        self._server = wsgi_server
        self._threads = threads
        self.app = app
        self.host = host
        self.port: int = wsgi_server.socket.getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        self.url = f"http://{shown}:{self.port}{path}"
        self._lock = threading.Lock()
        self._closed = False
        self._loop: threading.Thread | None = None  # the thread running the I/O loop
        self._loop_ended = threading.Event()

    def start(self) -> None:
        """Serve on a background thread."""
        with self._lock:
            self._loop = self._threads.start("io", self._run_loop)

    def serve_forever(self) -> None:
        """Serve in the calling thread until :meth:`close` (from another thread) or Ctrl+C."""
        with self._lock:
            if self._closed:
                return
            self._loop = threading.current_thread()
        self._run_loop()

    def _run_loop(self) -> None:
        server = self._server
        try:
            wasyncore.loop(timeout=server.adj.asyncore_loop_timeout, map=server._map,
                           use_poll=True)
        except KeyboardInterrupt:
            pass
        finally:
            self._loop_ended.set()

    def _in_loop(self, action: Callable[[], None]) -> None:
        """Run ``action`` on the I/O loop's thread if it runs, else here; wait for it."""
        with self._lock:
            running = self._loop is not None and not self._loop_ended.is_set()
        if not running:
            action()
            return
        done = threading.Event()

        def run() -> None:
            try:
                action()
            finally:
                done.set()

        try:
            self._server.trigger.pull_trigger(run)
        except OSError:  # the trigger is closed: the loop has ended
            action()
            return
        while not done.wait(0.1):
            if self._loop_ended.is_set():  # ended (Ctrl+C) before it ran the action
                if not done.is_set():
                    action()
                return

    def close(self) -> None:
        """Stop accepting, end every session and stream, and join every thread; idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        server = self._server
        self._in_loop(lambda: wasyncore.dispatcher.close(server))  # the listening socket
        self.app.close()  # ends every stream, so the task threads come back
        # Each task thread ends once its request is served; what a client holds up past
        # the grace is woken by the closing of its connection.
        dispatcher: _Dispatcher = server.task_dispatcher
        dispatcher.set_thread_count(0)
        with dispatcher.lock:
            dispatcher.thread_exit_cv.wait_for(lambda: not dispatcher.threads, _GRACE)
        self._in_loop(self._close_connections)
        if self._loop is not None and self._loop is not threading.current_thread():
            self._loop.join(5.0)
        dispatcher.shutdown(cancel_pending=True, timeout=10.0)
        self._threads.join(5.0)

    def _close_connections(self) -> None:
        server = self._server
        for channel in list(server.active_channels.values()):
            channel.handle_close()
        wasyncore.close_all(server._map)  # the trigger: the loop then ends

    def __enter__(self) -> HttpServerHandle:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<HttpServerHandle {self.url}>"


def start_server(server: Server, host: str, port: int, *, path: str, background: bool,
                 max_threads: int = DEFAULT_MAX_THREADS,
                 io_timeout: float = DEFAULT_IO_TIMEOUT,
                 wrap: Callable[[StreamableHttpApp], Any] | None = None,
                 **options: Any) -> HttpServerHandle:
    """Build the application and a listening server for it (see ``serve_http``)."""
    if "keep_alive_timeout" in options:
        raise TypeError("keep_alive_timeout is no longer an option: an idle connection "
                        "holds no thread, and is closed after io_timeout")
    if max_threads < 2:
        raise ValueError("max_threads must be at least 2 (one for GET streams, one for "
                         "the rest)")
    if io_timeout <= 0:
        raise ValueError("io_timeout must be positive")
    if host in _LOOPBACK:
        options.setdefault("allowed_hosts", LOOPBACK_HOSTS)
    options.setdefault("max_get_streams", max(1, max_threads // 4))
    if options["max_get_streams"] >= max_threads:
        raise ValueError(f"max_get_streams={options['max_get_streams']} would take every "
                         f"one of the max_threads={max_threads} threads (each open stream "
                         "holds one): give fewer streams or more threads")
    app = StreamableHttpApp(server, path, **options)
    threads = ThreadGroup("http-server")
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        listener = socket.create_server((host, port), family=family)
        try:
            adjustments = Adjustments(
                threads=max_threads, max_request_header_size=MAX_HEAD_SIZE,
                asyncore_use_poll=True, ident="mcp_sync",
                # waitress reads a body whole before the application sees it: one larger
                # than the application takes is refused (413) as it arrives.
                max_request_body_size=app.max_body_size,
                # A response a client does not read fills this much, then its writer
                # waits (and the stream's own bounded queue takes over); kept in memory.
                outbuf_high_watermark=_MAX_UNSENT, outbuf_overflow=2 * _MAX_UNSENT)
            # waitress takes whole seconds from its settings; set here, fractions work too.
            adjustments.channel_timeout = io_timeout
            adjustments.cleanup_interval = min(io_timeout / 2, 30.0)
            dispatcher = _Dispatcher(threads)
            wsgi_server = _Server(
                wrap(app) if wrap else app, map={}, _sock=listener, dispatcher=dispatcher,
                adj=adjustments, bind_socket=False,
                sockinfo=(listener.family, listener.type, listener.proto,
                          listener.getsockname()))
            dispatcher.set_thread_count(max_threads)
        except BaseException:
            listener.close()
            raise
    except BaseException:
        app.close()
        raise
    handle = HttpServerHandle(wsgi_server, threads, app, host, path)
    if background:
        handle.start()
    else:
        print(f"Serving MCP on {handle.url} (Ctrl+C to stop)", file=sys.stderr)
    return handle
