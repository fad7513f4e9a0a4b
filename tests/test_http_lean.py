"""The plain-HTTP session that stands in for requests' machinery on an ``http://`` endpoint.

Most of its behaviour is covered by every HTTP test that runs a default client (which
uses it). Here: when it is chosen, and what a keep-alive client has to get right by
itself: connections the server closed while idle, bodies left unread, redirects, cookies,
timeouts and failures reported as requests' own errors. The servers are scripted over
raw sockets so that each test decides exactly when a connection closes.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests

from mcp_sync import Client, Server, __version__
from mcp_sync.transports._http_client_io import SocketRegistry, is_connect_failure
from mcp_sync.transports._http_lean import LeanSession, _Connection, lean_applies
from mcp_sync.transports.http_server import serve_http
from tests.helpers import closing_all

WAIT = 10.0
OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"

# What a scripted server does with one request: the bytes to answer with, or None to
# close the connection without answering. Arguments: connection number (from 0), request
# number on that connection (from 0), and the request's head and body.
Script = Callable[[int, int, bytes], bytes | None]


class ScriptedServer:
    """A socket server on 127.0.0.1 that answers each request as its script says."""

    def __init__(self, script: Script,
                 close_after: frozenset[tuple[int, int]] = frozenset()) -> None:
        self._script = script
        self._close_after = close_after
        self.closed: list[int] = []  # connection numbers the server has closed
        self._changed = threading.Condition()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.requests: list[tuple[int, bytes]] = []  # (connection number, request)
        self._lock = threading.Lock()
        self._connections: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._accepting = threading.Thread(target=self._accept, name="test:scripted-accept")
        self._accepting.start()

    @property
    def connection_count(self) -> int:
        with self._lock:
            return len(self._connections)

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                number = len(self._connections)
                self._connections.append(connection)
                thread = threading.Thread(target=self._serve, args=(connection, number),
                                          name="test:scripted-connection")
                self._threads.append(thread)
            thread.start()

    def _serve(self, connection: socket.socket, number: int) -> None:
        reader = connection.makefile("rb")
        try:
            for index in range(1000):
                request = _read_request(reader)
                if request is None:
                    return
                with self._lock:
                    self.requests.append((number, request))
                answer = self._script(number, index, request)
                if answer is None:
                    return
                connection.sendall(answer)
                if (number, index) in self._close_after:
                    return
        except OSError:
            return
        finally:
            reader.close()
            connection.close()
            with self._changed:
                self.closed.append(number)
                self._changed.notify_all()

    def wait_closed(self, number: int) -> None:
        with self._changed:
            assert self._changed.wait_for(lambda: number in self.closed, WAIT)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        self._listener.close()
        self._accepting.join(WAIT)
        with self._lock:
            connections, threads = list(self._connections), list(self._threads)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        for thread in threads:
            thread.join(WAIT)
            assert not thread.is_alive()


def _read_request(reader: object) -> bytes | None:
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        line = reader.readline(65537)  # type: ignore[attr-defined]
        if not line:
            return None
        head += line
    length = 0
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    body = reader.read(length) if length else b""  # type: ignore[attr-defined]
    return head + body


Start = Callable[..., ScriptedServer]


@pytest.fixture
def scripted() -> Iterator[Start]:
    yield from closing_all(ScriptedServer)


@pytest.fixture
def session_for() -> Iterator[Callable[[str], LeanSession]]:
    yield from closing_all(lambda url: LeanSession(url, SocketRegistry()))


def _post(session: LeanSession, url: str, body: bytes = b"{}",
          timeout: tuple[float, float | None] = (WAIT, WAIT)) -> requests.Response:
    return session.post(url, data=body, headers={"Content-Type": "application/json"},
                        stream=True, timeout=timeout)


# --- when it is used ---------------------------------------------------------------------


def test_it_applies_to_plain_http_without_proxy_or_netrc(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NETRC", str(tmp_path / "absent"))
    assert lean_applies("http://127.0.0.1:8000/mcp")
    assert lean_applies("http://mcp.example/mcp")
    assert not lean_applies("https://mcp.example/mcp")  # TLS stays with requests
    assert not lean_applies("http://127.0.0.1:port/mcp")

    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3128")
    assert not lean_applies("http://mcp.example/mcp")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    assert lean_applies("http://127.0.0.1:8000/mcp")
    monkeypatch.delenv("HTTP_PROXY")

    netrc = tmp_path / "netrc"
    netrc.write_text("machine mcp.example login user password secret\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    assert not lean_applies("http://mcp.example/mcp")
    assert lean_applies("http://127.0.0.1:8000/mcp")


def test_default_client_uses_it_and_a_session_factory_client_does_not() -> None:
    agents: list[str] = []

    def recording(app: Callable[..., object]) -> Callable[..., object]:
        def wsgi(environ: dict[str, object], start_response: object) -> object:
            agents.append(str(environ.get("HTTP_USER_AGENT")))
            return app(environ, start_response)
        return wsgi

    server = Server("lean")

    @server.tool()
    def echo(text: str) -> str:
        return text

    with serve_http(server, json_response=True, wrap=recording) as handle:
        with Client.http(handle.url) as client:
            assert client.call_tool("echo", {"text": "a"}).content[0].text == "a"
        lean_agents = set(agents)
        agents.clear()
        with Client.http(handle.url, session_factory=requests.Session) as client:
            assert client.call_tool("echo", {"text": "b"}).content[0].text == "b"
    assert lean_agents and all(agent.startswith("mcp_sync/") for agent in lean_agents)
    assert agents and all(agent.startswith("python-requests/") for agent in agents)


# --- connections -------------------------------------------------------------------------


def test_a_connection_is_reused_for_the_next_request(
        scripted: Start,
        session_for: Callable[[str], LeanSession]) -> None:
    server = scripted(lambda conn, index, request: OK)
    session = session_for(server.url)
    for _ in range(3):
        with _post(session, server.url) as response:
            assert response.status_code == 200
            assert response.raw.read() == b"{}"
    assert server.connection_count == 1
    assert [number for number, _ in server.requests] == [0, 0, 0]


def test_a_connection_the_server_closed_while_idle_is_not_used(
        scripted: Start, session_for: Callable[[str], LeanSession]) -> None:
    server = scripted(lambda conn, index, request: OK, close_after=frozenset({(0, 0)}))
    session = session_for(server.url)
    with _post(session, server.url) as response:
        assert response.content == b"{}"
    server.wait_closed(0)  # closed after answering, without saying so
    with _post(session, server.url) as response:
        assert response.content == b"{}"
    assert [number for number, _ in server.requests] == [0, 1]


def test_a_request_met_by_a_close_on_a_reused_connection_is_sent_once_more(
        scripted: Start,
        session_for: Callable[[str], LeanSession]) -> None:
    # Connection 0 answers its first request, then closes when the second arrives, as a
    # server does whose keep-alive timer fired just as the request was on its way.
    server = scripted(lambda conn, index, request: None if (conn, index) == (0, 1) else OK)
    session = session_for(server.url)
    with _post(session, server.url, b'{"n":1}') as response:
        assert response.content == b"{}"
    with _post(session, server.url, b'{"n":2}') as response:
        assert response.status_code == 200
        assert response.content == b"{}"
    assert [(number, request.endswith(b'{"n":2}')) for number, request in server.requests] \
        == [(0, False), (0, True), (1, True)]


def test_a_close_on_a_new_connection_is_an_error_and_not_repeated(
        scripted: Start,
        session_for: Callable[[str], LeanSession]) -> None:
    server = scripted(lambda conn, index, request: None)
    session = session_for(server.url)
    with pytest.raises(requests.ConnectionError, match="without answering"):
        _post(session, server.url)
    assert len(server.requests) == 1


def test_a_body_left_unread_does_not_spoil_the_next_request(
        scripted: Start,
        session_for: Callable[[str], LeanSession]) -> None:
    big = b"x" * 100_000
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
    server = scripted(lambda conn, index, request: head % len(big) + big if conn == 0 else OK)
    session = session_for(server.url)
    with _post(session, server.url) as response:
        assert response.raw.read(10) == b"x" * 10
    with _post(session, server.url) as response:
        assert response.content == b"{}"
    assert server.connection_count == 2


def test_a_chunked_event_stream_is_read_as_it_arrives(
        scripted: Start,
        session_for: Callable[[str], LeanSession]) -> None:
    events = [b"data: one\n\n", b"data: two\n\n"]
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(event), event) for event in events) + b"0\r\n\r\n"
    head = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n")
    server = scripted(lambda conn, index, request: head + chunked)
    session = session_for(server.url)
    for _ in range(2):
        with _post(session, server.url) as response:
            pieces = []
            while chunk := response.raw.read1(65536, decode_content=True):
                pieces.append(chunk)
            assert b"".join(pieces) == b"".join(events)
    assert server.connection_count == 1  # read to its end, the connection was kept


# --- what requests would have done -------------------------------------------------------


def test_a_redirect_is_followed(scripted: Start,
                                session_for: Callable[[str], LeanSession]) -> None:
    def redirect_once(conn: int, index: int, request: bytes) -> bytes:
        if request.startswith(b"POST /mcp "):
            return (b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /moved\r\n"
                    b"Content-Length: 0\r\n\r\n")
        return OK

    server = scripted(redirect_once)
    session = session_for(server.url)
    with _post(session, server.url, b'{"a":1}') as response:
        assert response.status_code == 200
        assert response.url.endswith("/moved")
    moved = [request for _, request in server.requests if request.startswith(b"POST /moved ")]
    assert len(moved) == 1 and moved[0].endswith(b'{"a":1}')


def test_cookies_are_kept_and_sent_back(scripted: Start,
                                        session_for: Callable[[str], LeanSession]) -> None:
    def set_cookie(conn: int, index: int, request: bytes) -> bytes:
        if index == 0:
            return (b"HTTP/1.1 200 OK\r\nSet-Cookie: route=a1; Path=/\r\n"
                    b"Content-Length: 2\r\n\r\n{}")
        return OK

    server = scripted(set_cookie)
    session = session_for(server.url)
    for _ in range(2):
        with _post(session, server.url) as response:
            assert response.content == b"{}"
    first, second = (request for _, request in server.requests)
    assert b"cookie:" not in first.lower()
    assert b"\r\nCookie: route=a1\r\n" in second


def test_requests_it_does_not_handle_go_through_requests(
        scripted: Start,
        session_for: Callable[[str], LeanSession]) -> None:
    server = scripted(lambda conn, index, request: OK)
    session = session_for(server.url)
    session.auth = ("user", "secret")
    with _post(session, server.url) as response:
        assert response.status_code == 200
    (_, request), = server.requests
    assert b"Authorization: Basic " in request
    assert b"python-requests/" in request


# --- failures, as requests reports them ---------------------------------------------------


def test_refused_connection_is_a_connect_failure(
        session_for: Callable[[str], LeanSession]) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    listener.close()
    session = session_for(url)
    with pytest.raises(requests.ConnectionError) as caught:
        _post(session, url)
    assert is_connect_failure(caught.value)


def test_a_server_that_does_not_answer_is_a_read_timeout(
        scripted: Start,
        session_for: Callable[[str], LeanSession]) -> None:
    release = threading.Event()

    def hang(conn: int, index: int, request: bytes) -> bytes | None:
        release.wait(WAIT)
        return None

    server = scripted(hang)
    session = session_for(server.url)
    try:
        with pytest.raises(requests.ReadTimeout) as caught:
            _post(session, server.url, timeout=(WAIT, 0.2))
        assert not is_connect_failure(caught.value)
    finally:
        release.set()


def test_a_body_cut_short_is_a_requests_error(
        scripted: Start,
        session_for: Callable[[str], LeanSession]) -> None:
    short = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789"
    server = scripted(lambda conn, index, request: short, close_after=frozenset({(0, 0)}))
    session = session_for(server.url)
    with _post(session, server.url) as response, \
            pytest.raises(requests.ConnectionError, match="reading the response failed"):
        response.raw.read()


def test_an_answer_that_is_not_http_is_a_requests_error(
        scripted: Start,
        session_for: Callable[[str], LeanSession]) -> None:
    server = scripted(lambda conn, index, request: b"SSH-2.0-OpenSSH\r\n\r\n")
    session = session_for(server.url)
    with pytest.raises(requests.ConnectionError, match="not HTTP"):
        _post(session, server.url)


def test_a_dropped_connection_is_seen_on_any_descriptor_number() -> None:
    # select() cannot watch a descriptor past 1023; a busy process has such sockets.
    resource = pytest.importorskip("resource")
    fcntl = pytest.importorskip("fcntl")
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft <= 1100:
        pytest.skip("the descriptor limit is too low to test a high descriptor")
    ours, peer = socket.socketpair()
    # The lowest free descriptor from 1100 up: dup2 would close one already in use.
    high = socket.socket(fileno=fcntl.fcntl(ours.fileno(), fcntl.F_DUPFD, 1100))
    assert high.fileno() >= 1100
    ours.close()
    connection = _Connection("127.0.0.1", 1, None, None, SocketRegistry())
    connection.sock = high
    try:
        assert not connection.dropped()
        peer.close()
        assert connection.dropped()
    finally:
        connection.close()
        peer.close()


# --- the request written and the answer read without http.client's own code ------------


def test_a_request_is_written_as_http_client_writes_it(
        scripted: Start,
        session_for: Callable[[str], LeanSession]) -> None:
    import http.client

    server = scripted(lambda conn, index, request: OK)
    headers = {"Content-Type": "application/json", "Mcp-Session-Id": "abc"}
    session = session_for(server.url)
    with session.post(server.url, data=b'{"n":1}', headers=headers, timeout=WAIT) as answer:
        assert answer.content == b"{}"
    with session.post(server.url, headers=headers, timeout=WAIT) as answer:  # no body
        assert answer.content == b"{}"
    reference = http.client.HTTPConnection("127.0.0.1", server.port, timeout=WAIT)
    try:
        for body in (b'{"n":1}', None):
            reference.request("POST", "/mcp", body=body,
                              headers={"User-Agent": f"mcp_sync/{__version__}", **headers})
            assert reference.getresponse().read() == b"{}"
    finally:
        reference.close()
    ours, theirs = [request for _, request in server.requests[:2]], \
        [request for _, request in server.requests[2:]]
    assert ours == theirs
    assert ours[0].startswith(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % server.port)
    assert b"Content-Length: 0\r\n" in ours[1]


@pytest.mark.parametrize("headers", [{"X-Bad": "a\r\nInjected: 1"}, {"X-Bad": "a\nb"},
                                     {"Bad Name": "a"}, {"": "a"}])
def test_a_header_that_would_break_the_request_is_refused_and_nothing_is_sent(
        scripted: Start, session_for: Callable[[str], LeanSession],
        headers: dict[str, str]) -> None:
    server = scripted(lambda conn, index, request: OK)
    session = session_for(server.url)
    with pytest.raises(ValueError, match="Invalid header"):
        session.post(server.url, data=b"{}", headers=headers, timeout=WAIT)
    assert server.requests == []


def test_interim_answers_are_passed_over(
        scripted: Start, session_for: Callable[[str], LeanSession]) -> None:
    interim = (b"HTTP/1.1 100 Continue\r\n\r\n"
               b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n")
    server = scripted(lambda conn, index, request: interim + OK)
    session = session_for(server.url)
    for _ in range(2):
        with _post(session, server.url) as response:
            assert response.status_code == 200
            assert "Link" not in response.headers
            assert response.content == b"{}"
    assert server.connection_count == 1


def test_header_fields_are_read_as_written(
        scripted: Start, session_for: Callable[[str], LeanSession]) -> None:
    answer = (b"HTTP/1.1 200 Fine Thanks\r\n"
              b"Content-Type:application/json  \r\n"
              b"X-Folded: first\r\n  second\r\n"
              b"no colon here\r\n"
              b"X-Twice: a\r\nX-Twice: b\r\n"
              b"X-Latin: caf\xe9\r\n"
              b"Content-Length: 2\r\n\r\n{}")
    server = scripted(lambda conn, index, request: answer)
    session = session_for(server.url)
    with _post(session, server.url) as response:
        assert (response.status_code, response.reason) == (200, "Fine Thanks")
        assert response.headers["content-type"] == "application/json"
        assert response.headers["X-Folded"] == "first second"
        assert response.headers["X-Twice"] == "a, b"  # as requests joins them
        assert response.headers["X-Latin"] == "café"
        assert "no colon here" not in response.headers
        assert response.content == b"{}"


@pytest.mark.parametrize(("answer", "kept"), [
    (b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}", False),
    (b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n{}", True),
    (b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}", False),
    (b"HTTP/1.1 204 No Content\r\n\r\n", True),
    (b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n", True),
])
def test_the_answer_decides_whether_its_connection_is_kept(
        scripted: Start, session_for: Callable[[str], LeanSession],
        answer: bytes, kept: bool) -> None:
    # The server keeps every connection open: whether one is used again is up to the client.
    server = scripted(lambda conn, index, request: answer)
    session = session_for(server.url)
    for _ in range(2):
        with _post(session, server.url) as response:
            assert response.content == answer.partition(b"\r\n\r\n")[2]
    assert server.connection_count == (1 if kept else 2)


@pytest.mark.parametrize("answer", [
    b"HTTP/1.1 200 OK\r\n" + b"X-Many: 1\r\n" * 101 + b"\r\n",
    b"HTTP/1.1 200 OK\r\nX-Long: " + b"x" * 70_000 + b"\r\n\r\n",
    b"HTTP/1.1 2000 Too Big\r\n\r\n",
    b"HTTP/2 200 OK\r\n\r\n",
])
def test_an_answer_head_beyond_what_http_allows_is_a_requests_error(
        scripted: Start, session_for: Callable[[str], LeanSession], answer: bytes) -> None:
    server = scripted(lambda conn, index, request: answer)
    session = session_for(server.url)
    with pytest.raises(requests.ConnectionError, match="not HTTP"):
        _post(session, server.url)
