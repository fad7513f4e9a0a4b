"""What a stateful HTTP session costs the server: threads when idle, time once abandoned,
and a warning when GET streams could take every thread of the WSGI server."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest
from werkzeug.test import Client

from mcp_sync import Server
from mcp_sync.transports.http_server import make_wsgi_app
from tests.http_server_helpers import (
    HEADERS,
    INITIALIZE,
    FakeClock,
    WsgiPeer,
    call,
    make_server,
)

pytestmark = pytest.mark.timeout(30)

ADD = {"name": "add", "arguments": {"a": 1, "b": 2}}


def _server_threads(before: set[threading.Thread]) -> list[threading.Thread]:
    return [thread for thread in threading.enumerate()
            if thread not in before and ":server-" in thread.name]


def test_an_idle_session_keeps_no_threads_and_serves_again() -> None:
    """A session's worker and notification threads end once idle for
    ``idle_thread_timeout``; it needs no reader thread at all, since its messages come
    in on the WSGI server's threads. The next request is served as before."""
    server = Server("cost", idle_thread_timeout=0.2)

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    before = set(threading.enumerate())
    with make_wsgi_app(server) as app:
        peer = WsgiPeer(app)
        peer.initialize()
        assert peer.result(call(1, "tools/call", ADD))["content"][0]["text"] == "3"
        started = _server_threads(before)
        assert started, "the call was served by a worker thread of the session"
        assert not [thread.name for thread in started if thread.name.endswith(":reader")]
        for thread in started:
            thread.join(10)
        assert not [thread.name for thread in started if thread.is_alive()]
        assert app.session_count == 1
        assert peer.result(call(2, "tools/call", ADD))["content"][0]["text"] == "3"


def _open_get(peer: WsgiPeer) -> Any:
    assert peer.session_id is not None
    response = peer.client.get("/mcp", headers={"Accept": "text/event-stream",
                                                "Mcp-Session-Id": peer.session_id},
                               buffered=False)
    assert response.status_code == 200
    next(response.response)  # the stream's opening comment: it is open
    return response


def test_a_session_whose_client_dropped_its_get_stream_expires_sooner_http_34() -> None:
    """HTTP-34: a client that went away without DELETE (its GET stream dropped and it
    sent nothing since) loses its session after ``abandoned_session_timeout`` (60 s by
    default), while a quiet client keeps its own for ``session_timeout``."""
    clock = FakeClock()
    with make_wsgi_app(make_server(), clock=clock, session_timeout=1800) as app:
        gone, quiet, back = WsgiPeer(app), WsgiPeer(app), WsgiPeer(app)
        for peer in (gone, quiet, back):
            peer.initialize()
        _open_get(gone).close()  # the connection drops: the client is gone
        _open_get(back).close()
        back_stream = _open_get(back)  # ...but this one came back at once
        clock.advance(59)
        assert app.sweep() == 0
        clock.advance(2)
        assert app.sweep() == 1
        assert gone.post(call(1, "ping")).status_code == 404
        assert quiet.result(call(1, "ping")) == {}
        back_stream.close()
        assert back.result(call(1, "ping")) == {}  # a request shows it is alive
        clock.advance(61)
        assert app.sweep() == 0
        assert app.session_count == 2


def test_a_get_stream_ended_by_the_server_is_no_abandonment() -> None:
    """A GET stream the server ends for idleness (``get_stream_timeout``) is not the
    client leaving; the session keeps the usual timeout."""
    clock = FakeClock()
    with make_wsgi_app(make_server(), clock=clock, get_stream_timeout=30,
                       keepalive_interval=0.05) as app:
        peer = WsgiPeer(app)
        peer.initialize()
        stream = _open_get(peer)
        clock.advance(31)
        assert app.sweep() == 0  # ends the idle GET stream
        assert list(stream.response) == []
        stream.close()
        clock.advance(61)
        assert app.sweep() == 0
        assert peer.result(call(1, "ping")) == {}


def test_abandoned_session_timeout_none_keeps_the_usual_timeout() -> None:
    clock = FakeClock()
    with make_wsgi_app(make_server(), clock=clock, abandoned_session_timeout=None) as app:
        peer = WsgiPeer(app)
        peer.initialize()
        _open_get(peer).close()
        clock.advance(1000)
        assert app.sweep() == 0
        assert peer.result(call(1, "ping")) == {}
    with pytest.raises(ValueError, match="abandoned_session_timeout"):
        make_wsgi_app(make_server(), abandoned_session_timeout=0)


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records
            if record.name == "mcp_sync.http.server" and record.levelno == logging.WARNING]


def test_max_get_streams_that_could_take_every_thread_is_warned_about(
        caplog: pytest.LogCaptureFixture) -> None:
    """Where the WSGI server's thread count is known (given as ``wsgi_threads``, or one
    because it says it is not multithreaded), GET streams that could hold all of them
    are logged at WARNING once, with what to do."""
    caplog.set_level(logging.WARNING)
    with make_wsgi_app(make_server(), wsgi_threads=4):
        pass
    [message] = _warnings(caplog)
    assert "max_get_streams=4" in message and "all 4 thread(s)" in message
    assert "Set max_get_streams below the thread count" in message
    caplog.clear()
    with make_wsgi_app(make_server(), wsgi_threads=8, max_get_streams=2):
        pass
    with make_wsgi_app(make_server(), max_get_streams=0, wsgi_threads=1):
        pass
    assert _warnings(caplog) == []
    with make_wsgi_app(make_server(), max_get_streams=1) as app:
        client = Client(app)
        for _ in range(2):
            response = client.post("/mcp", json=INITIALIZE, headers=HEADERS,
                                   environ_overrides={"wsgi.multithread": False})
            assert response.status_code == 200
    [message] = _warnings(caplog)
    assert "not multithreaded" in message and "max_get_streams=1" in message
