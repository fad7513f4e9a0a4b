"""The 2024-11-05 HTTP+SSE endpoints of our server (HTTP-36, HTTP-38, HTTP-2).

Status codes are checked in-process with werkzeug's test client; the flow of a session
runs over real sockets on 127.0.0.1 with ``serve_http`` and ``requests``, and with our
own client, whose HTTP-37 fallback reaches the old endpoints.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urljoin, urlparse

import pytest
import requests
from werkzeug.middleware.dispatcher import DispatcherMiddleware
from werkzeug.test import Client as WerkzeugClient
from werkzeug.test import TestResponse
from werkzeug.wrappers import Response

from mcp_sync import Client, Context
from mcp_sync.protocol._sse import SseEvent, SseParser
from mcp_sync.transports.http_server import StreamableHttpApp, make_wsgi_app, serve_http
from tests.helpers import LEGACY_ERA
from tests.http_server_helpers import (
    HEADERS,
    INITIALIZE,
    INITIALIZED,
    FakeClock,
    call,
    checked,
    make_server,
)

TIMEOUT = (5, 20)


class EventReader:
    """The events of one streamed response, read as they arrive."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._parser = SseParser()
        self._ready: list[SseEvent] = []

    def next(self) -> SseEvent:
        while not self._ready:
            chunk = next(self._chunks)  # StopIteration: the stream ended
            self._ready.extend(self._parser.feed(chunk))
        return self._ready.pop(0)

    def message(self) -> Any:
        event = self.next()
        assert event.event == "message", event
        return checked(json.loads(event.data))

    def ended(self) -> bool:
        """True once the stream ends without another event."""
        try:
            event = self.next()
        except StopIteration:
            return True
        raise AssertionError(f"unexpected event {event}")


def open_stream(client: WerkzeugClient, path: str = "/sse",
                **headers: str) -> tuple[TestResponse, EventReader]:
    response = client.get(path, headers=headers, buffered=False)
    return response, EventReader(iter(response.response))


def post_uri(endpoint: SseEvent) -> str:
    assert endpoint.event == "endpoint"
    return endpoint.data


@pytest.fixture
def app() -> Iterator[StreamableHttpApp]:
    with make_wsgi_app(make_server(), legacy_sse=True, keepalive_interval=5) as served:
        yield served


@pytest.mark.timeout(20)
def test_http38_endpoint_event_then_messages_in_process(app: StreamableHttpApp) -> None:
    """HTTP-38: first event `endpoint` (a POST URI with a session id); POSTs get 202 and
    every answer comes back as a `message` event on the stream; closing it ends the session."""
    client = WerkzeugClient(app)
    response, events = open_stream(client)
    assert response.status_code == 200
    assert response.mimetype == "text/event-stream"
    uri = post_uri(events.next())
    assert uri.startswith("/messages?session_id=")
    posted = client.post(uri, data=json.dumps(INITIALIZE), headers=HEADERS)
    assert posted.status_code == 202 and posted.get_data() == b""
    result = events.message()
    assert result["id"] == "init" and result["result"]["serverInfo"]["name"] == "http-test"
    assert client.post(uri, data=json.dumps(INITIALIZED), headers=HEADERS).status_code == 202
    assert client.post(uri, data=json.dumps(call(2, "tools/list")),
                       headers=HEADERS).status_code == 202
    tools = events.message()
    assert tools["id"] == 2 and "add" in {tool["name"] for tool in tools["result"]["tools"]}
    assert app.legacy is not None and app.legacy.session_count == 1
    assert app.get_stream_count == 1
    response.close()
    assert app.legacy.session_count == 0 and app.get_stream_count == 0
    gone = client.post(uri, data=json.dumps(call(3, "ping")), headers=HEADERS)
    assert gone.status_code == 404


@pytest.mark.timeout(20)
def test_http38_progress_and_result_on_the_stream(app: StreamableHttpApp) -> None:
    """HTTP-38: notifications related to a request travel on the one stream too."""
    client = WerkzeugClient(app)
    response, events = open_stream(client)
    uri = post_uri(events.next())
    client.post(uri, data=json.dumps(INITIALIZE), headers=HEADERS)
    events.message()
    client.post(uri, data=json.dumps(INITIALIZED), headers=HEADERS)
    request = call(7, "tools/call", {"name": "progress", "arguments": {"steps": 2},
                                     "_meta": {"progressToken": "t"}})
    assert client.post(uri, data=json.dumps(request), headers=HEADERS).status_code == 202
    got = [events.message() for _ in range(3)]
    assert [m.get("method") for m in got[:2]] == ["notifications/progress"] * 2
    assert got[2]["id"] == 7 and got[2]["result"]["content"][0]["text"] == "done"
    response.close()


def test_http36_session_ids_unguessable(app: StreamableHttpApp) -> None:
    """HTTP-36/HTTP-30: each stream gets its own long random id of URL-safe characters."""
    client = WerkzeugClient(app)
    ids = []
    for _ in range(3):
        response, events = open_stream(client)
        ids.append(parse_qs(urlparse(post_uri(events.next())).query)["session_id"][0])
        response.close()
    assert len(set(ids)) == 3
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{43}", session_id) for session_id in ids)


def test_http38_post_status_codes(app: StreamableHttpApp, wire: Any) -> None:
    """HTTP-38/HTTP-9: POST refusals: no session 400, unknown 404, bad JSON 400, wrong
    content type 415; wrong methods 405 (a POST to /sse is HTTP-37's probe)."""
    client = WerkzeugClient(app)
    response, events = open_stream(client)
    uri = post_uri(events.next())
    body = json.dumps(call(1, "ping"))
    assert client.post("/messages", data=body, headers=HEADERS).status_code == 400
    assert client.post("/messages?session_id=nope", data=body,
                       headers=HEADERS).status_code == 404
    with wire.allow_invalid():
        bad = client.post(uri, data=b"{not json", headers=HEADERS)
    assert bad.status_code == 400 and bad.get_json()["error"]["code"] == -32700
    assert client.post(uri, data=body, headers={"Content-Type": "text/plain"}
                       ).status_code == 415
    probe = client.post("/sse", data=json.dumps(INITIALIZE), headers=HEADERS)
    assert probe.status_code == 405 and "GET" in probe.headers["Allow"]
    assert client.get("/messages").status_code == 405
    assert client.get("/sse", headers={"Accept": "application/json"}).status_code == 406
    assert client.open("/sse", method="OPTIONS").status_code == 204
    response.close()


def test_http2_origin_host_and_token_checked_on_legacy_endpoints() -> None:
    """HTTP-2/HTTP-4: Origin (403), Host (421) and token (401) guard both old endpoints."""
    app = make_wsgi_app(make_server(), legacy_sse=True, allowed_hosts=["localhost:*"],
                        token_verifier=lambda request: request.headers.get(
                            "Authorization") == "Bearer ok")
    with app:
        client = WerkzeugClient(app)
        good = {"Authorization": "Bearer ok", "Host": "localhost:8000"}
        evil = client.get("/sse", headers={**good, "Origin": "http://evil.example"})
        assert evil.status_code == 403
        assert client.post("/messages?session_id=x", data="{}", headers={
            **good, **HEADERS, "Origin": "http://evil.example"}).status_code == 403
        assert client.get("/sse", headers={**good, "Host": "evil.example"}).status_code == 421
        refused = client.get("/sse", headers={"Host": "localhost:8000"})
        assert refused.status_code == 401 and refused.headers["WWW-Authenticate"] == "Bearer"
        assert client.post("/messages?session_id=x", data="{}", headers={
            **HEADERS, "Host": "localhost:8000"}).status_code == 401
        response, events = open_stream(client, **good, Origin="http://localhost:3000")
        assert response.status_code == 200 and events.next().event == "endpoint"
        response.close()


def test_http36_off_by_default() -> None:
    """HTTP-36 is opt-in: without legacy_sse the old paths are 404."""
    with make_wsgi_app(make_server()) as app:
        client = WerkzeugClient(app)
        assert client.get("/sse").status_code == 404
        assert client.post("/messages?session_id=x", data="{}",
                           headers=HEADERS).status_code == 404


def test_http36_paths_must_differ() -> None:
    """HTTP-36: the two legacy paths and the MCP endpoint are three distinct paths."""
    with pytest.raises(ValueError):
        make_wsgi_app(make_server(), legacy_sse=True, legacy_sse_path="/mcp")
    with pytest.raises(ValueError):
        make_wsgi_app(make_server(), legacy_sse=True, legacy_messages_path="/sse")


def test_http36_streams_count_against_get_bound() -> None:
    """HTTP-36 + DESIGN "Streams and threads": a legacy stream holds a GET slot; beyond
    max_get_streams a legacy GET gets 503 and a Streamable GET 405."""
    with make_wsgi_app(make_server(), legacy_sse=True, max_get_streams=1) as app:
        client = WerkzeugClient(app)
        response, events = open_stream(client)
        events.next()
        second = client.get("/sse")
        assert second.status_code == 503 and "Retry-After" in second.headers
        first = client.post("/mcp", data=json.dumps(INITIALIZE), headers=HEADERS)
        session_id = first.headers["Mcp-Session-Id"]
        get = client.get("/mcp", headers={"Accept": "text/event-stream",
                                          "Mcp-Session-Id": session_id})
        assert get.status_code == 405
        response.close()
        assert app.get_stream_count == 0
        again, events = open_stream(client)
        assert again.status_code == 200
        again.close()


def test_http38_endpoint_carries_mount_prefix() -> None:
    """HTTP-38: mounted under a prefix, the endpoint URI includes it (SCRIPT_NAME)."""
    with make_wsgi_app(make_server(), "", legacy_sse=True) as app:
        host = DispatcherMiddleware(Response("host app"), {"/mcp": app})
        client = WerkzeugClient(host)
        response, events = open_stream(client, "/mcp/sse")
        uri = post_uri(events.next())
        assert uri.startswith("/mcp/messages?session_id=")
        assert client.post(uri, data=json.dumps(call(1, "ping")),
                           headers=HEADERS).status_code == 202
        assert events.message() == {"jsonrpc": "2.0", "id": 1, "result": {}}
        response.close()


def test_http38_idle_session_swept_and_close_ends_streams() -> None:
    """HTTP-38: a session silent both ways for session_timeout ends with its stream;
    closing the app ends the rest."""
    clock = FakeClock()
    with make_wsgi_app(make_server(), legacy_sse=True, clock=clock,
                       session_timeout=10) as app:
        client = WerkzeugClient(app)
        idle, idle_events = open_stream(client)
        idle_events.next()
        busy, busy_events = open_stream(client)
        uri = post_uri(busy_events.next())
        clock.advance(6)
        client.post(uri, data=json.dumps(call(1, "ping")), headers=HEADERS)
        busy_events.message()
        clock.advance(6)
        app.sweep()
        assert idle_events.ended()
        idle.close()
        assert app.legacy is not None and app.legacy.session_count == 1
    assert busy_events.ended()
    busy.close()
    assert app.get_stream_count == 0


@pytest.mark.timeout(30)
def test_http36_old_and_new_clients_side_by_side_over_sockets() -> None:
    """HTTP-36/37/38: over real sockets, one client reaches /mcp (Streamable HTTP) and
    one is given /sse and falls back to the old transport; both call tools, and a tool's
    progress reaches the old client."""
    server = make_server()
    with serve_http(server, legacy_sse=True) as handle:
        base = handle.url.rsplit("/", 1)[0]
        progress: list[float] = []
        with Client.http(handle.url, **LEGACY_ERA) as new, \
                Client.http(base + "/sse", **LEGACY_ERA) as old:
            assert new.call_tool("add", {"a": 1, "b": 2}).content[0].text == "3"
            result = old.call_tool("progress", {"steps": 3},
                                   on_progress=lambda p, *rest: progress.append(p))
            assert result.content[0].text == "done"
            assert progress == [1, 2, 3]
            assert handle.app.legacy is not None and handle.app.legacy.session_count == 1
            assert handle.app.session_count == 1


@pytest.mark.timeout(30)
def test_http38_raw_flow_over_socket_and_session_ends_with_stream() -> None:
    """HTTP-38 over a real socket: GET /sse, POST to the endpoint URI (202), answers as
    `message` events; when the client drops the stream the server ends the session."""
    with serve_http(make_server(), legacy_sse=True, keepalive_interval=0.2) as handle:
        sse_url = handle.url.rsplit("/", 1)[0] + "/sse"
        with requests.Session() as listener, requests.Session() as sender:
            stream = listener.get(sse_url, stream=True, timeout=TIMEOUT,
                                  headers={"Accept": "text/event-stream"})
            assert stream.status_code == 200
            events = EventReader(stream.iter_content(chunk_size=None))
            uri = urljoin(sse_url, post_uri(events.next()))
            posted = sender.post(uri, json=INITIALIZE, timeout=TIMEOUT)
            assert posted.status_code == 202
            assert events.message()["result"]["protocolVersion"] == "2025-03-26"
            sender.post(uri, json=INITIALIZED, timeout=TIMEOUT)
            sender.post(uri, json=call(5, "tools/call", {
                "name": "add", "arguments": {"a": 2, "b": 3}}), timeout=TIMEOUT)
            assert events.message()["result"]["content"][0]["text"] == "5"
            legacy = handle.app.legacy
            assert legacy is not None
            server_side = next(iter(legacy._sessions.values())).connection
            stream.close()
            # The server notices at its next write, a keep-alive.
            assert server_side.wait_closed(10)
            assert legacy.session_count == 0 and handle.app.get_stream_count == 0
            assert sender.post(uri, json=call(6, "ping"), timeout=TIMEOUT).status_code == 404


def test_http38_sampling_request_reaches_old_client() -> None:
    """HTTP-38: server-initiated requests go out on the stream and the client's POSTed
    answer comes back to the tool (sampling over the old transport)."""
    from mcp_sync import Server, types

    server = Server("sampler")

    @server.tool()
    def ask(ctx: Context) -> str:
        """Ask the client's model."""
        return ctx.sample("hello").text

    def handler(params: Any) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant", model="m", content=types.TextContent(type="text", text="hi!"))

    with serve_http(server, legacy_sse=True) as handle:
        sse_url = handle.url.rsplit("/", 1)[0] + "/sse"
        with Client.http(sse_url, sampling_handler=handler) as client:
            assert client.call_tool("ask", {}).content[0].text == "hi!"
