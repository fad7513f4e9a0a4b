"""A ``requests.Session`` that sends plain-HTTP requests to one origin with ``http.client``.

An MCP call over Streamable HTTP is one small POST. On a loopback or LAN connection
requests' own per-request work (merging settings, preparing, hooks, cookie bookkeeping,
urllib3's pool) takes several times what ``http.client`` needs for the same exchange,
and more than the rest of the call. Where none of that work can change the outcome, this
session skips it:

* it is only made for an ``http://`` endpoint without a proxy or netrc credentials from
  the environment, and without a ``session_factory`` (see :func:`lean_applies`);
* it handles only requests to that endpoint's origin with nothing requests-specific
  (auth, proxies, hooks...) set; anything else goes to ``requests.Session.request``;
* a redirect is sent again through requests, which follows it.

Responses are real ``requests.Response`` objects and failures real ``requests``
exceptions, so the transports cannot tell the two paths apart. Cookies go through the
session's jar as with requests. Each session keeps its idle connections for reuse; a
connection the server closed while idle is replaced before it is used, and a request
that meets such a close before any answer is sent once more on a new connection.
"""

from __future__ import annotations

import contextlib
import http.client
import select
import threading
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.cookies import extract_cookies_to_jar, get_cookie_header
from requests.structures import CaseInsensitiveDict

from .._version import __version__
from ._http_client_io import ConnectFailed, SocketRegistry

__all__ = ["LeanSession", "lean_applies"]

_USER_AGENT = f"mcp_sync/{__version__}"
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
# What a server's close of an idle keep-alive connection looks like to the next request.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)
_SEND_ERRORS = (OSError, http.client.HTTPException)


def lean_applies(url: str) -> bool:
    """True when requests would send requests to ``url`` exactly as :class:`LeanSession` does."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        return False
    try:
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        return False
    proxies = requests.utils.get_environ_proxies(url)
    if requests.utils.select_proxy(url, proxies):
        return False
    return requests.utils.get_netrc_auth(url) is None


class _Connection(http.client.HTTPConnection):
    def __init__(self, host: str, port: int, connect_timeout: float | None,
                 read_timeout: float | None, sockets: SocketRegistry) -> None:
        super().__init__(host, port, timeout=connect_timeout)
        self._read_timeout = read_timeout
        self._sockets = sockets

    def connect(self) -> None:
        super().connect()
        self._sockets.add(self.sock)
        self.sock.settimeout(self._read_timeout)

    def dropped(self) -> bool:
        """True when the server closed (or wrote to) this idle connection."""
        if self.sock is None:
            return True
        try:
            if hasattr(select, "poll"):  # select() cannot watch descriptors past 1023
                poller = select.poll()
                poller.register(self.sock, select.POLLIN)
                return bool(poller.poll(0))
            readable, _, _ = select.select([self.sock], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)


@contextlib.contextmanager
def _reading() -> Iterator[None]:
    """A failure to read a body, reported as requests reports it."""
    try:
        yield
    except TimeoutError as exc:
        raise requests.ReadTimeout(f"reading the response timed out: {exc}") from exc
    except _SEND_ERRORS as exc:
        raise requests.ConnectionError(f"reading the response failed: {exc!r}") from exc


class _Body:
    """``response.raw``: the body of one response, and the return of its connection."""

    def __init__(self, session: LeanSession, connection: _Connection,
                 answer: http.client.HTTPResponse) -> None:
        self._session = session
        self._connection: _Connection | None = connection
        self._answer = answer

    def read(self, amount: int | None = None, decode_content: bool = True) -> bytes:
        with _reading():
            return self._answer.read(amount)

    def read1(self, amount: int = -1, decode_content: bool = True) -> bytes:
        with _reading():
            return self._answer.read1(amount)

    def close(self) -> None:
        self.release_conn()

    def release_conn(self) -> None:
        """Keep the connection for the next request if the body was read to its end."""
        connection, self._connection = self._connection, None
        if connection is None:
            return
        if self._answer.isclosed() and not self._answer.will_close:
            self._session._keep(connection)
        else:
            self._answer.close()
            connection.close()


class LeanSession(requests.Session):
    """Sends what it can to ``url``'s origin itself; everything else as requests does."""

    def __init__(self, url: str, sockets: SocketRegistry) -> None:
        super().__init__()
        self.trust_env = False  # lean_applies() read the environment already
        parts = urlsplit(url)
        assert parts.hostname is not None
        self._host = parts.hostname
        self._port = parts.port or 80
        self._origin = (parts.scheme, parts.netloc.lower())
        self._sockets = sockets
        self._idle: list[_Connection] = []
        self._lock = threading.Lock()
        self._closed = False

    def request(  # type: ignore[override]
        self, method: str | bytes, url: str | bytes, params: Any = None,
        data: Any = None, headers: Mapping[str, str] | None = None, cookies: Any = None,
        files: Any = None, auth: Any = None, timeout: Any = None,
        allow_redirects: bool = True, proxies: Any = None, hooks: Any = None,
        stream: bool | None = None, verify: Any = None, cert: Any = None, json: Any = None,
    ) -> requests.Response:
        target = self._target(url) if isinstance(url, str) and isinstance(method, str) else None
        plain = (target is not None and isinstance(data, (bytes, type(None)))
                 and params is None and cookies is None and files is None and auth is None
                 and proxies is None and hooks is None and verify is None and cert is None
                 and json is None and self.auth is None and not self.proxies
                 and not any(self.hooks.values()))
        if not plain:
            return super().request(method, url, params, data, headers, cookies, files, auth,
                                   timeout, allow_redirects, proxies, hooks, stream, verify,
                                   cert, json)
        assert isinstance(method, str) and isinstance(url, str) and target is not None
        response = self._exchange(method, url, target, data, headers or {}, timeout,
                                  bool(stream))
        if allow_redirects and response.status_code in _REDIRECTS \
                and "Location" in response.headers:
            response.close()
            return super().request(method, url, data=data, headers=headers, timeout=timeout,
                                   stream=stream)
        return response

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()
        super().close()

    def _target(self, url: str) -> str | None:
        parts = urlsplit(url)
        if (parts.scheme, parts.netloc.lower()) != self._origin:
            return None
        path = parts.path or "/"
        return f"{path}?{parts.query}" if parts.query else path

    def _keep(self, connection: _Connection) -> None:
        with self._lock:
            if not self._closed:
                self._idle.append(connection)
                return
        connection.close()

    def _connection(self, timeout: Any) -> tuple[_Connection, bool]:
        connect_timeout, read_timeout = (timeout if isinstance(timeout, tuple)
                                         else (timeout, timeout))
        with self._lock:
            while self._idle:
                connection = self._idle.pop()
                if connection.dropped():
                    connection.close()
                    continue
                connection.timeout = connect_timeout
                connection._read_timeout = read_timeout
                if connection.sock is not None:
                    connection.sock.settimeout(read_timeout)
                return connection, True
        return _Connection(self._host, self._port, connect_timeout, read_timeout,
                           self._sockets), False

    def _exchange(self, method: str, url: str, target: str, data: bytes | None,
                  headers: Mapping[str, str], timeout: Any,
                  stream: bool) -> requests.Response:
        sent = {"User-Agent": _USER_AGENT, **headers}
        if self.cookies:
            cookie = get_cookie_header(  # type: ignore[no-untyped-call]
                self.cookies, _CookieRequest(url, sent))
            if cookie:
                sent["Cookie"] = cookie
        for attempt in (1, 2):
            connection, reused = self._connection(timeout)
            try:
                answer = self._send(connection, method, target, data, sent)
            except _STALE as exc:
                connection.close()
                if reused and attempt == 1:
                    continue  # the server closed it while idle; nothing was answered
                raise requests.ConnectionError(
                    f"the server closed the connection without answering: {exc!r}") from exc
            except BaseException:
                connection.close()
                raise
            break
        response = requests.Response()
        response.status_code = answer.status
        response.reason = answer.reason
        response.url = url
        response.headers = CaseInsensitiveDict(answer.getheaders())
        response.raw = _Body(self, connection, answer)
        if "Set-Cookie" in response.headers:
            extract_cookies_to_jar(  # type: ignore[no-untyped-call]
                self.cookies, _CookieRequest(url, sent),
                                   _CookieResponse(answer))
        if not stream:
            try:
                response._content = response.raw.read()
            finally:
                response.raw.release_conn()
            response._content_consumed = True  # type: ignore[attr-defined]
        return response

    def _send(self, connection: _Connection, method: str, target: str,
              data: bytes | None, headers: dict[str, str]) -> http.client.HTTPResponse:
        """Send one request and read its status line and headers, errors as requests'."""
        try:
            connection.request(method, target, body=data, headers=headers)
            return connection.getresponse()
        except _STALE:
            raise
        except TimeoutError as exc:
            if connection.sock is None:
                raise requests.ConnectTimeout(
                    f"connecting to {self._host}:{self._port} timed out") from exc
            raise requests.ReadTimeout(f"the server did not answer in time: {exc}") from exc
        except OSError as exc:
            if connection.sock is None:
                raise ConnectFailed(
                    f"cannot connect to {self._host}:{self._port}: {exc}") from exc
            raise requests.ConnectionError(f"the request failed: {exc!r}") from exc
        except http.client.HTTPException as exc:
            raise requests.ConnectionError(f"the server's answer is not HTTP: {exc!r}") \
                from exc


class _CookieRequest:
    """What requests' cookie helpers read of a request."""

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        self.url = url
        self.headers = headers


class _CookieResponse:
    """What requests' cookie helpers read of a response."""

    def __init__(self, answer: http.client.HTTPResponse) -> None:
        self._original_response = answer
