"""Plumbing shared by the HTTP client transports: sessions set up once, interruptible
reads, bounded reads.

Every request goes through ``requests``. :class:`Environment` reads what the
environment says about the endpoint (proxies, ``NO_PROXY``, a CA bundle, netrc
credentials) once, and :meth:`Environment.apply` sets it on each session with
``trust_env`` off, so no request reads the environment again.

A thread blocked reading a response cannot be woken by closing the response from another
thread: the buffered reader waits for the very lock the blocked read holds. What does wake
it is shutting the socket down. :class:`SocketRegistry` gives a session's HTTP adapters
urllib3 connection pools whose connections report each socket they open, and
:meth:`SocketRegistry.shutdown` shuts all of them down at once; the blocked read then ends
with an error or at EOF.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import attrs
import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from ...protocol._sse import SseEvent, SseParser

__all__ = [
    "READ_CHUNK",
    "STREAM_ERRORS",
    "ConnectFailed",
    "Environment",
    "EventTooLarge",
    "SocketRegistry",
    "body_excerpt",
    "content_type",
    "drain",
    "feed",
    "is_connect_failure",
    "iter_raw",
    "read_limited",
    "same_origin",
]

READ_CHUNK = 64 * 1024


@attrs.frozen
class Environment:
    """What the environment says about requests to one URL, read once.

    With ``trust_env`` requests reads every environment variable (proxies, ``NO_PROXY``,
    CA bundles) and looks for a netrc file on each request. The endpoint never changes,
    so :meth:`read` asks requests once and :meth:`apply` sets the answer on each session,
    with the precedence requests itself gives it: the environment's proxies and CA bundle
    over the session's, netrc credentials only where the session has none.
    """

    proxies: dict[str, str]
    ca_bundle: str | None
    netrc_auth: tuple[str, str] | None

    @classmethod
    def read(cls, url: str) -> Environment:
        proxies = requests.utils.get_environ_proxies(url, no_proxy=None)
        bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
        return cls(dict(proxies), bundle or None, requests.utils.get_netrc_auth(url))

    def apply(self, session: requests.Session) -> None:
        """Set the environment's settings on ``session`` and stop it reading them again.

        A session built with ``trust_env=False`` ignores the environment, and is left so.
        """
        if not session.trust_env:
            return
        session.proxies = {**session.proxies, **self.proxies}
        if self.ca_bundle is not None:
            session.verify = self.ca_bundle
        if session.auth is None and self.netrc_auth is not None:
            session.auth = self.netrc_auth
        session.trust_env = False


#: What can go wrong while reading a response body that is already under way (a read on
#: a response closed under it raises ValueError).
STREAM_ERRORS: tuple[type[Exception], ...] = (
    requests.RequestException, urllib3.exceptions.HTTPError, OSError, ValueError,
)


class ConnectFailed(requests.ConnectionError):
    """No connection to the server could be made (refused, no such host, unreachable)."""


class EventTooLarge(Exception):
    """An event on a stream grew beyond the size limit."""


def feed(parser: SseParser, chunk: bytes) -> list[SseEvent]:
    """``parser.feed(chunk)``, with the size limit reported as :class:`EventTooLarge`."""
    try:
        return parser.feed(chunk)
    except ValueError as exc:
        raise EventTooLarge(str(exc)) from None


class SocketRegistry:
    """Remembers the sockets of the sessions it instruments, to shut them down.

    Sockets, not connections or responses: a thread may be blocked before any response
    exists (waiting for the head of an answer), and a response read to a
    ``Connection: close`` keeps the socket after its connection let it go.

    Its connections also tell the thread that sends a request when that request has gone
    out whole (:meth:`when_sent`), before the answer is read.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sockets: weakref.WeakSet[socket.socket] = weakref.WeakSet()
        self._closed = False
        self._pool_classes = _pool_classes(self)
        self._local = threading.local()

    def when_sent(self, callback: Callable[[], None] | None) -> None:
        """Call ``callback`` once the calling thread's next request has been sent whole
        (head and body), before its answer is read; None forgets it."""
        self._local.when_sent = callback

    def sent(self) -> None:
        callback = getattr(self._local, "when_sent", None)
        if callback is not None:
            self._local.when_sent = None
            callback()

    def instrument(self, session: requests.Session, url: str) -> requests.Session:
        """Make every connection ``session`` opens to ``url`` from now on known here.

        Call it once the session's proxies are final: the pools of the proxy that
        ``url`` goes through are instrumented too. Only
        :class:`~requests.adapters.HTTPAdapter` adapters, and HTTP(S) proxies, can be
        instrumented; others keep working, but a read blocked on them is not
        interrupted by :meth:`shutdown`.
        """
        proxy = requests.utils.select_proxy(url, session.proxies)
        for adapter in session.adapters.values():
            if isinstance(adapter, HTTPAdapter):
                self.instrument_adapter(adapter, proxy)
        return session

    def instrument_adapter(self, adapter: HTTPAdapter, proxy: str | None) -> None:
        """Make every connection ``adapter`` opens, directly or through ``proxy``, known here."""
        managers = [adapter.poolmanager]
        if proxy and not proxy.lower().startswith("socks"):
            # The proxy's own pool manager, under the key requests looks it up by.
            managers.append(adapter.proxy_manager_for(
                requests.utils.prepend_scheme_if_needed(  # type: ignore[no-untyped-call]
                    proxy, "http")))
        for manager in managers:
            manager.clear()  # pools made before now would hand out untracked connections
            # A fresh dict: the default one is shared by every PoolManager in the process.
            manager.pool_classes_by_scheme = dict(self._pool_classes)

    def add(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self._lock:
            closed = self._closed
            if not closed:
                self._sockets.add(sock)
        if closed:
            _shut(sock)

    def shutdown(self) -> None:
        """Shut down every open socket, now and any opened later; idempotent."""
        with self._lock:
            self._closed = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    # The plain socket's shutdown, also for TLS: it wakes a blocked read without touching
    # the TLS state that the reading thread is using. A socket already closed has no
    # descriptor any more, so this can never reach an unrelated file.
    with contextlib.suppress(OSError, ValueError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


def _pool_classes(registry: SocketRegistry) -> dict[str, type[HTTPConnectionPool]]:
    class TrackedConnection(urllib3.connection.HTTPConnection):
        def connect(self) -> None:
            super().connect()
            registry.add(self.sock)

        def request(self, *args: Any, **kwargs: Any) -> None:
            super().request(*args, **kwargs)
            registry.sent()

    class TrackedHTTPSConnection(urllib3.connection.HTTPSConnection):
        def connect(self) -> None:
            super().connect()
            registry.add(self.sock)

        def request(self, *args: Any, **kwargs: Any) -> None:
            super().request(*args, **kwargs)
            registry.sent()

    class TrackedPool(HTTPConnectionPool):
        ConnectionCls = TrackedConnection

    class TrackedHTTPSPool(HTTPSConnectionPool):
        ConnectionCls = TrackedHTTPSConnection

    return {"http": TrackedPool, "https": TrackedHTTPSPool}


def is_connect_failure(error: requests.RequestException) -> bool:
    """True when no connection to the server, or to its proxy, could be made at all
    (refused, no such host)."""
    if isinstance(error, (requests.ConnectTimeout, ConnectFailed)):
        return True
    if not isinstance(error, requests.ConnectionError):
        return False
    reason = getattr(error.args[0], "reason", None) if error.args else None
    if isinstance(reason, urllib3.exceptions.ProxyError):  # the proxy could not be reached
        reason = reason.original_error
    return isinstance(reason, (urllib3.exceptions.NewConnectionError,
                               urllib3.exceptions.ConnectTimeoutError))


def content_type(response: requests.Response) -> str:
    """The media type of a response, lower-cased, without parameters."""
    return response.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()


def read_limited(response: requests.Response, limit: int) -> bytes | None:
    """The whole body, or None when it is longer than ``limit`` bytes (nothing more is read).

    Raises:
        requests.RequestException: the body could not be read to its end.
    """
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_content(READ_CHUNK):
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def iter_raw(response: requests.Response) -> Iterator[bytes]:
    """The body as it arrives, each piece as soon as the server sent it.

    ``iter_content`` waits for a full chunk size on a body without chunked framing, which
    would hold back events on an event stream; ``read1`` returns what is there.
    """
    raw: Any = response.raw
    while True:
        chunk: bytes = raw.read1(READ_CHUNK, decode_content=True)
        if not chunk:
            return
        yield chunk


def body_excerpt(response: requests.Response, limit: int = 2000) -> tuple[str, str | None]:
    """A short text of an error response's body, and the JSON-RPC error message in it if any.

    HTTP-9 allows an error body to be a JSON-RPC error without an id, whose ``message`` says
    more than the status line.
    """
    try:
        data = read_limited(response, 64 * 1024)
    except requests.RequestException:
        data = None
    if not data:
        return "", None
    text = data.decode("utf-8", "replace")
    detail: str | None = None
    with contextlib.suppress(ValueError):
        value = json.loads(text)
        error = value.get("error") if isinstance(value, dict) else None
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            detail = error["message"]
    return text[:limit], detail


def drain(response: requests.Response, limit: int = 64 * 1024) -> None:
    """Read a small body to its end, so that its connection can be kept alive."""
    with contextlib.suppress(*STREAM_ERRORS):
        read_limited(response, limit)


def same_origin(first: str, second: str) -> bool:
    """True when two absolute URLs share scheme, host and port."""
    a, b = urlsplit(first), urlsplit(second)
    defaults = {"http": 80, "https": 443}
    try:
        port_a = a.port or defaults.get(a.scheme)
        port_b = b.port or defaults.get(b.scheme)
    except ValueError:  # a port that is not a number
        return False
    return (a.scheme, a.hostname, port_a) == (b.scheme, b.hostname, port_b)
