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

``http.client`` itself was most of what remained of a call's cost on the client: it
writes a request a header at a time, each checked by two regular expressions, and parses
the answer's header lines with the ``email`` package. A connection here writes the whole
request, head and body, with one ``sendall``, and reads the status line and header lines
itself; ``http.client.HTTPResponse`` still reads the body (lengths, chunks, the end of
the connection). The bytes sent are those ``http.client`` sends: the same ``Host`` and
``Accept-Encoding: identity``, and ``Content-Length`` likewise.
"""

from __future__ import annotations

import contextlib
import http.client
import re
import select
import socket
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


_MAX_LINE = 65536  # as http.client allows a status or header line
_MAX_HEADERS = 100
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_METHODS_WITH_BODY = frozenset({"POST", "PUT", "PATCH"})


class _Headers:
    """An answer's header fields, for what reads them: ``http.client.HTTPResponse``
    (``getheaders``, ``getheader``) and requests' cookie handling (``get_all``)."""

    def __init__(self, fields: list[tuple[str, str]]) -> None:
        self._fields = fields

    def get(self, name: str, default: str | None = None) -> str | None:
        wanted = name.lower()
        for field, value in self._fields:
            if field.lower() == wanted:
                return value
        return default

    def get_all(self, name: str, failobj: Any = None) -> Any:
        wanted = name.lower()
        values = [value for field, value in self._fields if field.lower() == wanted]
        return values or failobj

    def items(self) -> list[tuple[str, str]]:
        return list(self._fields)


class _Answer(http.client.HTTPResponse):
    """A response whose status line and header fields are read here; its body is read
    by ``http.client`` as ever, from what this sets."""

    def __init__(self, sock: socket.socket, method: str) -> None:
        super().__init__(sock, method=method)
        self.request_method = method

    def begin(self) -> None:
        while True:  # an interim (1xx) answer is followed by the real one
            version, status, reason = self._status_line()
            fields = self._fields()
            if not 100 <= status < 200 or status == 101:
                break
        self.code = self.status = status
        self.reason = reason.strip()
        if version in ("HTTP/1.0", "HTTP/0.9"):
            self.version = 10
        elif version.startswith("HTTP/1."):
            self.version = 11
        else:
            raise http.client.UnknownProtocol(version)
        # What reads the fields of an HTTPMessage reads these alike (see _Headers).
        self.headers = self.msg = _Headers(fields)  # type: ignore[assignment]
        coding = self.headers.get("Transfer-Encoding")
        self.chunked = coding is not None and coding.lower() == "chunked"
        self.chunk_left = None
        self.will_close = self._closes()
        self.length = None
        declared = self.headers.get("Content-Length")
        if declared is not None and not self.chunked:
            with contextlib.suppress(ValueError):
                length = int(declared)
                self.length = length if length >= 0 else None
        if status in (204, 304) or status == 101 or self.request_method == "HEAD":
            self.length = 0
        if not self.will_close and not self.chunked and self.length is None:
            self.will_close = True  # the body ends with the connection

    def _status_line(self) -> tuple[str, int, str]:
        line = str(self.fp.readline(_MAX_LINE + 1), "iso-8859-1")
        if len(line) > _MAX_LINE:
            raise http.client.LineTooLong("status line")
        if not line:
            raise http.client.RemoteDisconnected(
                "Remote end closed connection without response")
        version, _, rest = line.partition(" ")
        code, _, reason = rest.lstrip().partition(" ")
        try:
            status = int(code)
        except ValueError:
            status = 0
        if not version.startswith("HTTP/") or not 100 <= status <= 999:
            raise http.client.BadStatusLine(line)
        return version, status, reason

    def _fields(self) -> list[tuple[str, str]]:
        fields: list[tuple[str, str]] = []
        while True:
            line = self.fp.readline(_MAX_LINE + 1)
            if len(line) > _MAX_LINE:
                raise http.client.LineTooLong("header line")
            if line in (b"\r\n", b"\n", b""):
                return fields
            if len(fields) >= _MAX_HEADERS:
                raise http.client.HTTPException(f"got more than {_MAX_HEADERS} headers")
            text = line.decode("iso-8859-1")
            if text[0] in " \t" and fields:  # a folded line continues the field above
                name, value = fields[-1]
                fields[-1] = (name, f"{value} {text.strip()}")
                continue
            name, colon, value = text.partition(":")
            name = name.strip()
            if colon and name:  # a line that is no field is left out, as in http.client
                fields.append((name, value.strip(" \t\r\n")))

    def _closes(self) -> bool:
        connection = (self.headers.get("Connection") or "").lower()
        if self.version == 11:
            return "close" in connection
        # HTTP/1.0 closes unless the answer says it keeps the connection.
        return not (self.headers.get("Keep-Alive") or "keep-alive" in connection
                    or "keep-alive" in (self.headers.get("Proxy-Connection") or "").lower())


def _request_head(method: str, target: str, host: str, headers: Mapping[str, str],
                  body: bytes | None) -> bytes:
    """The request line and header fields, as http.client writes them."""
    if not _TOKEN.fullmatch(method):
        raise ValueError(f"method can't contain control characters. {method!r}")
    if any(ord(char) <= 0x20 or char == "\x7f" for char in target):
        raise http.client.InvalidURL(
            f"URL can't contain control characters. {target!r}")
    names = {name.lower() for name in headers}
    lines = []
    if "host" not in names:
        lines.append(f"Host: {host}")
    if "accept-encoding" not in names:
        lines.append("Accept-Encoding: identity")
    if "content-length" not in names and "transfer-encoding" not in names:
        if body is not None:
            lines.append(f"Content-Length: {len(body)}")
        elif method in _METHODS_WITH_BODY:
            lines.append("Content-Length: 0")
    for name, value in headers.items():
        if not _TOKEN.fullmatch(name):
            raise ValueError(f"Invalid header name {name!r}")
        value = str(value)
        if "\r" in value or "\n" in value or "\0" in value:
            raise ValueError(f"Invalid header value {value!r}")
        lines.append(f"{name}: {value}")
    lines.append("\r\n")
    # The request line in ASCII and the fields in Latin-1, as http.client encodes them.
    return (f"{method} {target} HTTP/1.1\r\n".encode("ascii")
            + "\r\n".join(lines).encode("latin-1"))


class _Connection:
    """One connection to the session's origin, kept alive from one exchange to the next."""

    def __init__(self, host: str, port: int, connect_timeout: float | None,
                 read_timeout: float | None, sockets: SocketRegistry) -> None:
        self.host = host
        self.port = port
        self.timeout = connect_timeout
        self._read_timeout = read_timeout
        self._sockets = sockets
        self.sock: socket.socket | None = None
        try:
            written = host.encode("ascii").decode("ascii")
        except UnicodeEncodeError:
            written = host.encode("idna").decode("ascii")
        if ":" in written:  # an IPv6 address
            written = f"[{written}]"
        self.host_header = written if port == 80 else f"{written}:{port}"

    def connect(self) -> None:
        sock = socket.create_connection((self.host, self.port), self.timeout)
        with contextlib.suppress(OSError):
            # A request is one write and its answer comes back whole: nothing to gather.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = sock
        self._sockets.add(sock)
        sock.settimeout(self._read_timeout)

    def exchange(self, method: str, target: str, body: bytes | None,
                 headers: Mapping[str, str]) -> http.client.HTTPResponse:
        """Send one request, in one write, and read its answer's status and headers."""
        head = _request_head(method, target, self.host_header, headers, body)
        if self.sock is None:
            self.connect()
        assert self.sock is not None
        self.sock.sendall(head + body if body else head)
        answer = _Answer(self.sock, method=method)
        try:
            answer.begin()
        except BaseException:
            answer.close()
            raise
        return answer

    def close(self) -> None:
        sock, self.sock = self.sock, None
        if sock is not None:
            sock.close()

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
        response.headers = _header_dict(answer.getheaders())
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
            return connection.exchange(method, target, data, headers)
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


def _header_dict(fields: list[tuple[str, str]]) -> CaseInsensitiveDict[str]:
    """The fields as requests gives them: a field sent more than once, its values joined."""
    headers: CaseInsensitiveDict[str] = CaseInsensitiveDict()
    for name, value in fields:
        if name in headers:
            headers[name] = f"{headers[name]}, {value}"
        else:
            headers[name] = value
    return headers


class _CookieRequest:
    """What requests' cookie helpers read of a request."""

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        self.url = url
        self.headers = headers


class _CookieResponse:
    """What requests' cookie helpers read of a response."""

    def __init__(self, answer: http.client.HTTPResponse) -> None:
        self._original_response = answer
