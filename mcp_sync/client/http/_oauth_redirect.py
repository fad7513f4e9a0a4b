"""The browser step of the authorization code flow: from the authorization URL to the
URL the browser was sent back to.

:class:`LoopbackRedirect` is the default for programs a person runs on their own
machine (RFC 8252 §7.3): it listens on 127.0.0.1 for the one redirect, opens the
authorization URL in the browser, and waits, for a bounded time, for the browser to come
back. An application that drives the browser itself (a web app that redirects its user, a
desktop app with its own window) passes ``authorize=callable`` to
:class:`~mcp_sync.auth.OAuth` instead.
"""

from __future__ import annotations

import http.server
import logging
import socket
import threading
import time
import webbrowser
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ...engine._threads import ThreadGroup
from ...errors import AuthorizationError

__all__ = ["LoopbackRedirect", "Redirect"]

log = logging.getLogger("mcp_sync.auth")

_DONE_PAGE = (b"<!doctype html><meta charset=utf-8><title>Authorization</title>"
              b"<p>Authorization finished. You can close this window.</p>")
_ERROR_PAGE = (b"<!doctype html><meta charset=utf-8><title>Authorization</title>"
               b"<p>Authorization failed. You can close this window.</p>")


class Redirect:
    """One authorization's redirect catcher, bound and ready: see
    :meth:`LoopbackRedirect.open`."""

    def __init__(self, server: http.server.HTTPServer, path: str, redirect_uri: str,
                 open_browser: bool | Callable[[str], object], timeout: float) -> None:
        self._server = server
        self._path = path
        self.redirect_uri = redirect_uri
        self._open_browser = open_browser
        self._timeout = timeout
        self._callback: str | None = None

    def wait(self, authorization_url: str) -> str:
        """Send the user to ``authorization_url`` and wait for the redirect back.

        Returns:
            the full URL the browser was redirected to (code, state, iss).

        Raises:
            AuthorizationError: nothing came back within the timeout.
        """
        threads = ThreadGroup("oauth")
        if self._open_browser is True:
            if not webbrowser.open(authorization_url):
                log.warning("could not open a browser; open this URL to authorize: %s",
                            authorization_url)
        elif callable(self._open_browser):
            # On a thread of its own: a caller that follows the redirect itself needs this
            # thread to answer it meanwhile.
            threads.start("browser", self._open_browser, authorization_url)
        else:
            log.warning("open this URL to authorize: %s", authorization_url)
        deadline = time.monotonic() + self._timeout
        try:
            while self._callback is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AuthorizationError(
                        f"the authorization was not completed within {self._timeout:g} s "
                        f"(no redirect to {self.redirect_uri})")
                self._server.timeout = min(remaining, 1.0)
                self._server.handle_request()
        finally:
            threads.join(5.0)
        return self._callback

    def close(self) -> None:
        """Stop listening; idempotent."""
        self._server.server_close()

    def __enter__(self) -> Redirect:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _arrived(self, target: str) -> bool:
        """Take ``target`` (path and query) if it is the redirect; True when it was."""
        parts = urlsplit(target)
        if parts.path != self._path:
            return False
        query = parse_qs(parts.query)
        if "code" not in query and "error" not in query:
            return False
        self._callback = f"{self.redirect_uri}?{parts.query}"
        return "code" in query


class LoopbackRedirect:
    """Catches the authorization redirect on a loopback address (RFC 8252 §7.3).

    Each authorization listens on ``http://HOST:PORT/callback`` for one redirect, opens
    the authorization URL in the browser with :mod:`webbrowser` (no shell involved), and
    waits up to ``timeout`` seconds. The socket is always closed afterwards. With
    ``port=0`` a free port is chosen the first time and kept for the next
    authorizations, so the redirect URI registered with the authorization server stays
    the same.

    Args:
        host: the loopback address to listen on.
        port: the port; 0 picks a free one.
        path: the redirect path.
        open_browser: True opens the system browser; False only logs the URL; a callable
            is called with the URL instead (on a thread of its own), e.g. to show it in
            an application's window.
        timeout: seconds to wait for the user to finish.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, path: str = "/callback",
                 open_browser: bool | Callable[[str], object] = True,
                 timeout: float = 300.0) -> None:
        if host not in ("127.0.0.1", "::1", "localhost"):
            raise ValueError(f"a loopback redirect listens on a loopback address, not {host!r}")
        self.host = host
        self.port = port
        self.path = path
        self.open_browser = open_browser
        self.timeout = timeout
        self._lock = threading.Lock()

    @property
    def redirect_uri(self) -> str:
        """The redirect URI (its port is known once the first listener was opened)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{self.path}"

    def open(self) -> Redirect:
        """Start listening for one redirect.

        Raises:
            AuthorizationError: the address cannot be bound.
        """
        catcher: dict[str, Redirect] = {}

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                ok = catcher["redirect"]._arrived(self.path)
                self.send_response(200 if ok else 400)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(_DONE_PAGE if ok else _ERROR_PAGE)

            def log_message(self, format: str, *args: Any) -> None:
                log.debug("loopback redirect: " + format, *args)

        server_class: type[http.server.HTTPServer] = http.server.HTTPServer
        if ":" in self.host:
            class V6Server(http.server.HTTPServer):
                address_family = socket.AF_INET6
            server_class = V6Server
        with self._lock:
            try:
                server = server_class((self.host, self.port), Handler)
            except OSError as first:
                if self.port == 0:
                    raise AuthorizationError(
                        f"cannot listen on {self.host} for the redirect: {first}") from first
                # The port chosen before is taken now: another one means registering again.
                try:
                    server = server_class((self.host, 0), Handler)
                except OSError:
                    raise AuthorizationError(
                        f"cannot listen on {self.host} for the redirect: {first}") from first
            self.port = server.server_address[1]
            redirect = Redirect(server, self.path, self.redirect_uri, self.open_browser,
                                self.timeout)
        catcher["redirect"] = redirect
        return redirect
