"""The Streamable HTTP server application, driven in-process with werkzeug's test client.

Status codes, headers, sessions, batches, both answer styles, security checks and
stateless mode. Streaming over real sockets (GET streams, resumption, disconnects,
concurrency) is in ``test_http_streaming.py``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_sync import Context, Server
from mcp_sync.transports.http_server import (
    LOOPBACK_HOSTS,
    StreamableHttpApp,
    make_wsgi_app,
)
from tests.conftest import schema_errors, validator
from tests.http_server_helpers import (
    HEADERS,
    INITIALIZE,
    INITIALIZED,
    FakeClock,
    WsgiPeer,
    call,
    checked,
    make_server,
    messages_of,
    parse_sse,
)

pytestmark = pytest.mark.timeout(30)


@pytest.fixture
def server() -> Server:
    return make_server()


@pytest.fixture
def app(server: Server) -> Iterator[StreamableHttpApp]:
    with make_wsgi_app(server) as app:
        yield app


@pytest.fixture
def peer(app: StreamableHttpApp) -> WsgiPeer:
    peer = WsgiPeer(app)
    peer.initialize()
    return peer


def error_of(response: Any) -> dict[str, Any]:
    """The JSON-RPC error body of an HTTP error, checked."""
    assert response.headers["Content-Type"].startswith("application/json")
    body = checked(json.loads(response.get_data()))
    assert set(body) == {"jsonrpc", "id", "error"}
    assert not -32099 <= body["error"]["code"] <= -32020  # read as 2026 by newer clients
    return body


# --- initialize and sessions -------------------------------------------------------------


def test_initialize_sse_assigns_session_id_http_10_http_29_http_30(app: StreamableHttpApp) -> None:
    """HTTP-10/29/30, LIFECYCLE-3: an SSE answer, a visible-ASCII unguessable session id."""
    peer = WsgiPeer(app)
    response = peer.post(INITIALIZE, session=False)
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/event-stream")
    session_id = response.headers["Mcp-Session-Id"]
    assert re.fullmatch(r"[\x21-\x7e]{32,}", session_id)
    events = parse_sse(response.get_data())
    assert len(events) == 1
    assert re.fullmatch(r"[^:]+:\d+", events[0].id or "")
    result = checked(json.loads(events[0].data))["result"]
    assert not list(validator("InitializeResult").iter_errors(result))
    assert result["protocolVersion"] == "2025-03-26"
    assert app.session_count == 1
    # Two sessions never share an id.
    assert WsgiPeer(app).post(INITIALIZE, session=False).headers["Mcp-Session-Id"] != session_id


def test_session_id_only_on_initialize_response_http_29(peer: WsgiPeer) -> None:
    """HTTP-29: later answers do not carry Mcp-Session-Id."""
    response = peer.post(call(1, "tools/list"))
    assert response.status_code == 200
    assert "Mcp-Session-Id" not in response.headers


def test_initialized_notification_is_202_with_empty_body_http_8(app: StreamableHttpApp) -> None:
    """HTTP-8: a body of notifications only gets 202 and nothing else."""
    peer = WsgiPeer(app)
    peer.session_id = peer.post(INITIALIZE, session=False).headers["Mcp-Session-Id"]
    response = peer.post(INITIALIZED)
    assert response.status_code == 202
    assert response.get_data() == b""


def test_tools_list_and_call_over_sse_http_10_http_12_http_15(peer: WsgiPeer) -> None:
    """HTTP-10/12/15, TOOLS-2/4: one response per request, then the stream ends."""
    tools = peer.result(call(1, "tools/list"))["tools"]
    assert {tool["name"] for tool in tools} >= {"add", "echo", "progress"}
    response = peer.post(call(2, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}))
    assert response.headers["Content-Type"].startswith("text/event-stream")
    messages = messages_of(response)
    assert messages == [{"jsonrpc": "2.0", "id": 2,
                         "result": {"content": [{"type": "text", "text": "5"}]}}]


def test_json_response_mode_http_10_http_11(server: Server) -> None:
    """HTTP-10: json_response answers with one application/json body per request."""
    with make_wsgi_app(server, json_response=True) as app:
        peer = WsgiPeer(app)
        response = peer.initialize()
        assert response.headers["Content-Type"] == "application/json"
        checked(json.loads(response.get_data()))
        response = peer.post(call(1, "tools/call", {"name": "echo",
                                                     "arguments": {"message": "Zürich ✓"}}))
        assert response.status_code == 200
        assert response.headers["Content-Type"] == "application/json"
        body = checked(json.loads(response.get_data()))
        assert body["result"]["content"] == [{"type": "text", "text": "Zürich ✓"}]


def test_accept_with_json_only_gets_json_in_sse_mode_ambig_12(peer: WsgiPeer) -> None:
    """AMBIG-12: a client that accepts only application/json is answered in JSON."""
    response = peer.post(call(1, "ping"), headers={"Accept": "application/json"})
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    assert checked(json.loads(response.get_data())) == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_progress_precedes_response_on_post_stream_http_13_progress_3(peer: WsgiPeer) -> None:
    """HTTP-13: the request's progress comes on its own stream, before the response."""
    messages = peer.request(call(7, "tools/call", {
        "name": "progress", "arguments": {"steps": 3}, "_meta": {"progressToken": "tok"}}))
    assert [m.get("method") for m in messages] == ["notifications/progress"] * 3 + [None]
    assert [m["params"]["progress"] for m in messages[:3]] == [1, 2, 3]
    assert messages[3]["id"] == 7
    assert messages[3]["result"]["content"] == [{"type": "text", "text": "done"}]


def test_event_ids_unique_across_streams_http_24_http_25(peer: WsgiPeer) -> None:
    """HTTP-24/25: every event carries an id, unique across the session's streams."""
    ids: list[str] = []
    for request_id in range(3):
        response = peer.post(call(request_id, "tools/call", {
            "name": "progress", "arguments": {"steps": 2},
            "_meta": {"progressToken": request_id}}))
        ids += [event.id or "" for event in parse_sse(response.get_data())]
    assert len(ids) == 9
    assert all(re.fullmatch(r"[^:]+:\d+", event_id) for event_id in ids)
    assert len(set(ids)) == len(ids)


# --- batches ---------------------------------------------------------------------------


@pytest.mark.parametrize("json_response", [False, True])
def test_batch_gets_every_response_http_12_batch_1_ambig_11(server: Server,
                                                            json_response: bool) -> None:
    """HTTP-12, BATCH-1/5, AMBIG-11: a batch is answered in full (an array in JSON mode)."""
    with make_wsgi_app(server, json_response=json_response) as app:
        peer = WsgiPeer(app)
        peer.initialize()
        response = peer.post([
            call(1, "ping"), call(2, "tools/list"),
            {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
            call(3, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})])
        assert response.status_code == 200
        if json_response:
            body = checked(json.loads(response.get_data()))
            assert isinstance(body, list)
            answers = body
        else:
            answers = messages_of(response)
        assert sorted(answer["id"] for answer in answers) == [1, 2, 3]
        assert all("result" in answer for answer in answers)


def test_batch_with_invalid_elements_answers_each_batch_5(peer: WsgiPeer, wire: Any) -> None:
    """BATCH-5, JSONRPC-12: invalid elements get their own errors beside the valid answers."""
    with wire.allow_invalid():
        response = peer.post([call(1, "ping"), 5, {"jsonrpc": "2.0", "id": 9, "method": 7}])
    assert response.status_code == 200
    messages = [json.loads(event.data) for event in parse_sse(response.get_data())]
    for message in messages:
        assert not schema_errors(message) or message["id"] is None
    by_id = {message["id"]: message for message in messages}
    assert by_id[1]["result"] == {}
    assert by_id[None]["error"]["code"] == -32600
    assert by_id[9]["error"]["code"] == -32600


def test_batch_of_notifications_is_202_http_8_batch_5(peer: WsgiPeer) -> None:
    """HTTP-8, BATCH-5: a batch without requests gets 202 and no body."""
    response = peer.post([{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
                          {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}])
    assert response.status_code == 202
    assert response.get_data() == b""


def test_initialize_inside_a_batch_is_refused_batch_4_ambig_5(peer: WsgiPeer) -> None:
    """BATCH-4, AMBIG-5: initialize inside a batch gets -32600 and changes nothing."""
    messages = peer.request([INITIALIZE, call(2, "ping")])
    by_id = {message["id"]: message for message in messages}
    assert by_id["init"]["error"]["code"] == -32600
    assert by_id[2]["result"] == {}


def test_request_id_in_use_is_refused(peer: WsgiPeer) -> None:
    """JSONRPC-4: a body reusing an id awaiting its answer gets -32600 for the copy."""
    messages = peer.request([call(1, "ping"), call(1, "tools/list")])
    assert sorted(("result" in m, m.get("error", {}).get("code")) for m in messages) == [
        (False, -32600), (True, None)]


# --- malformed bodies and headers ----------------------------------------------------------


@pytest.mark.parametrize(("body", "code"), [
    (b"{bad json", -32700),
    (b"\xff\xfe", -32700),
    (b"[]", -32600),
    (b'{"jsonrpc": "1.0", "id": 1, "method": "ping"}', -32600),
    (b"42", -32600),
])
def test_malformed_body_is_400_with_jsonrpc_error_http_9_ambig_3(
        peer: WsgiPeer, wire: Any, body: bytes, code: int) -> None:
    """HTTP-9, AMBIG-3, JSONRPC-12: 400 with a JSON-RPC error naming the problem."""
    with wire.allow_invalid():
        response = peer.post(None, raw=body)
    assert response.status_code == 400
    error = error_of(response)
    assert error["error"]["code"] == code


def test_body_over_the_limit_is_413(server: Server) -> None:
    """HTTP-9: a body beyond max_body_size gets 413 with a JSON-RPC error; the session lives."""
    with make_wsgi_app(server, max_body_size=200) as app:
        peer = WsgiPeer(app)
        peer.initialize()
        big = call(1, "tools/call", {"name": "echo", "arguments": {"message": "x" * 500}})
        response = peer.post(big)
        assert response.status_code == 413
        assert error_of(response)["error"]["code"] == -32600
        assert peer.result(call(2, "ping")) == {}


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", ""])
def test_wrong_content_type_is_415_ambig_12(peer: WsgiPeer, content_type: str) -> None:
    """AMBIG-12: a POST body that is not application/json gets 415."""
    response = peer.post(call(1, "ping"), headers={"Content-Type": content_type})
    assert response.status_code == 415
    error_of(response)


def test_json_content_type_with_charset_is_accepted_ambig_12(peer: WsgiPeer) -> None:
    """AMBIG-12: parameters of application/json do not matter."""
    response = peer.post(call(1, "ping"),
                         headers={"Content-Type": "application/json; charset=utf-8"})
    assert response.status_code == 200


def test_unacceptable_accept_is_406_http_6_ambig_12(server: Server) -> None:
    """HTTP-6, AMBIG-12: 406 when we can produce nothing the client accepts."""
    with make_wsgi_app(server) as app:
        peer = WsgiPeer(app)
        peer.initialize()
        assert peer.post(call(1, "ping"), headers={"Accept": "text/html"}).status_code == 406
        error_of(peer.post(call(1, "ping"), headers={"Accept": "text/html"}))
        get = peer.client.get("/mcp", headers={"Accept": "application/json",
                                               "Mcp-Session-Id": peer.session_id or ""})
        assert get.status_code == 406
    with make_wsgi_app(server, json_response=True) as app:
        peer = WsgiPeer(app)
        response = peer.post(INITIALIZE, headers={"Accept": "text/event-stream"}, session=False)
        assert response.status_code == 406
        assert app.session_count == 0


@pytest.mark.parametrize("method", ["PUT", "PATCH", "HEAD"])
def test_other_methods_are_405_with_allow_http_1(peer: WsgiPeer, method: str) -> None:
    """HTTP-1: the endpoint takes GET, POST and DELETE; anything else is 405 with Allow."""
    response = peer.client.open("/mcp", method=method, headers=HEADERS)
    assert response.status_code == 405
    assert set(response.headers["Allow"].split(", ")) == {"GET", "POST", "DELETE", "OPTIONS"}


def test_options_preflight_for_an_allowed_origin(peer: WsgiPeer) -> None:
    """HTTP-2: a browser page on localhost may call the endpoint (CORS preflight)."""
    response = peer.client.options("/mcp", headers={
        "Origin": "http://localhost:5173", "Access-Control-Request-Method": "POST"})
    assert response.status_code == 204
    assert response.headers["Access-Control-Allow-Origin"] == "http://localhost:5173"
    assert "mcp-session-id" in response.headers["Access-Control-Allow-Headers"].lower()


def test_other_paths_are_404_http_1(peer: WsgiPeer) -> None:
    """HTTP-1: one endpoint path; a trailing slash is the same path."""
    response = peer.client.post("/other", data=json.dumps(call(1, "ping")), headers=HEADERS)
    assert response.status_code == 404
    response = peer.client.post("/mcp/", data=json.dumps(call(1, "ping")),
                                headers={**HEADERS, "Mcp-Session-Id": peer.session_id or ""})
    assert response.status_code == 200


# --- session rules ----------------------------------------------------------------------


def test_post_without_session_id_is_400_http_33(app: StreamableHttpApp) -> None:
    """HTTP-33: a request other than initialize without Mcp-Session-Id gets 400."""
    peer = WsgiPeer(app)
    response = peer.post(call(1, "tools/list"), session=False)
    assert response.status_code == 400
    error = error_of(response)
    assert (error["id"], error["error"]["code"]) == (1, -32600)
    assert peer.post(INITIALIZED, session=False).status_code == 400
    assert app.session_count == 0


def test_unknown_method_without_session_is_400_with_32601() -> None:
    """HTTP-33, JSONRPC-12, COEX-6, living with newer peers: a server/discover probe
    without a session, to a server speaking only legacy versions, learns at once (400,
    -32601) that we lack the method. (A dual-era server answers it: test_modern_http.)"""
    server = Server("legacy-only", supported_versions=["2025-03-26", "2025-11-25"])
    with make_wsgi_app(server) as app:
        peer = WsgiPeer(app)
        response = peer.post(call(0, "server/discover"), session=False,
                             headers={"MCP-Protocol-Version": "2026-07-28"})
        assert response.status_code == 400
        assert error_of(response)["error"]["code"] == -32601


def test_unknown_method_inside_session_is_200_with_32601_caps_7(peer: WsgiPeer) -> None:
    """Living with newer peers, JSONRPC-12: 200 with -32601, never 404 (which means session)."""
    response = peer.post(call(1, "tasks/list"))
    assert response.status_code == 200
    [message] = messages_of(response)
    assert message["error"]["code"] == -32601


def test_get_and_delete_without_session_id_are_400_ambig_15(peer: WsgiPeer) -> None:
    """AMBIG-15: GET and DELETE need the session id."""
    assert peer.client.get("/mcp", headers={"Accept": "text/event-stream"}).status_code == 400
    assert peer.client.delete("/mcp").status_code == 400


def test_unknown_session_id_is_404_ambig_15(peer: WsgiPeer) -> None:
    """HTTP-34, AMBIG-15: a forged or unknown session id gets 404 on every method."""
    forged = {"Mcp-Session-Id": "no-such-session"}
    assert peer.post(call(1, "ping"), headers=forged).status_code == 404
    error_of(peer.post(call(1, "ping"), headers=forged))
    assert peer.client.get("/mcp", headers={**forged, "Accept": "text/event-stream"}
                           ).status_code == 404
    assert peer.client.delete("/mcp", headers=forged).status_code == 404


def test_delete_ends_the_session_http_32_http_34(app: StreamableHttpApp, peer: WsgiPeer) -> None:
    """HTTP-32/34: DELETE ends the session; its id then gets 404."""
    assert app.session_count == 1
    response = peer.client.delete("/mcp", headers={"Mcp-Session-Id": peer.session_id or ""})
    assert response.status_code == 204
    assert app.session_count == 0
    assert peer.post(call(1, "ping")).status_code == 404
    assert peer.client.delete("/mcp", headers={"Mcp-Session-Id": peer.session_id or ""}
                              ).status_code == 404


def test_idle_session_expires_http_34() -> None:
    """HTTP-34: a session idle beyond session_timeout is closed and its id gets 404."""
    clock = FakeClock()
    server = make_server()
    with make_wsgi_app(server, session_timeout=60, clock=clock) as app:
        idle, busy = WsgiPeer(app), WsgiPeer(app)
        idle.initialize()
        busy.initialize()
        clock.advance(59)
        assert app.sweep() == 0
        assert busy.result(call(1, "ping")) == {}  # activity restarts its idle time
        clock.advance(2)
        assert app.sweep() == 1
        assert idle.post(call(1, "ping")).status_code == 404
        assert busy.result(call(2, "ping")) == {}
        assert app.session_count == 1
        assert len(server._connections) == 1


def test_failed_initialize_leaves_no_session_lifecycle_2() -> None:
    """LIFECYCLE-2: an initialize the server refuses gets its error and no session."""
    server = make_server()
    with make_wsgi_app(server, json_response=True) as app:
        peer = WsgiPeer(app)
        response = peer.post(call(0, "initialize", {"protocolVersion": 5}), session=False)
        assert response.status_code == 200
        assert "Mcp-Session-Id" not in response.headers
        assert checked(json.loads(response.get_data()))["error"]["code"] == -32602
        assert app.session_count == 0
        assert not server._connections


def test_too_many_sessions_is_503(server: Server) -> None:
    """HTTP-29/30: max_sessions bounds how many sessions may be open at once (503 beyond)."""
    with make_wsgi_app(server, max_sessions=2) as app:
        WsgiPeer(app).initialize()
        WsgiPeer(app).initialize()
        response = WsgiPeer(app).post(INITIALIZE, session=False)
        assert response.status_code == 503
        assert error_of(response)["id"] == "init"


# --- MCP-Protocol-Version ---------------------------------------------------------------


def test_unsupported_protocol_version_header_is_400(peer: WsgiPeer) -> None:
    """HTTP-9, VERSION-6, living with newer peers: a version we do not speak gets 400 with a
    JSON-RPC body."""
    response = peer.post(call(1, "ping"), headers={"MCP-Protocol-Version": "2099-01-01"})
    assert response.status_code == 400
    error = error_of(response)["error"]
    assert error["code"] == -32600
    assert error["data"]["supported"] == [
        "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
    get = peer.client.get("/mcp", headers={"MCP-Protocol-Version": "2099-01-01",
                                           "Mcp-Session-Id": peer.session_id or "",
                                           "Accept": "text/event-stream"})
    assert get.status_code == 400


@pytest.mark.parametrize("version", ["2025-03-26", "2024-11-05"])
def test_spoken_protocol_versions_are_accepted(peer: WsgiPeer, version: str) -> None:
    """VERSION-6, living with newer peers: the negotiated version (or any we speak) passes."""
    assert peer.result(call(1, "ping")) == {}
    response = peer.post(call(2, "ping"), headers={"MCP-Protocol-Version": version})
    assert response.status_code == 200


def test_initialize_ignores_the_version_header_version_3(app: StreamableHttpApp) -> None:
    """VERSION-3: initialize negotiates from its body, whatever the header says."""
    peer = WsgiPeer(app)
    response = peer.post(INITIALIZE, session=False, headers={"MCP-Protocol-Version": "2026-07-28"})
    assert response.status_code == 200
    [message] = messages_of(response)
    assert message["result"]["protocolVersion"] == "2025-03-26"


# --- security -----------------------------------------------------------------------------


@pytest.mark.parametrize(("origin", "status"), [
    ("http://evil.example", 403),
    ("null", 403),
    ("http://localhost.evil.example:80", 403),
    ("http://localhost:6274", 200),
    ("http://127.0.0.1:8000", 200),
    ("http://[::1]:3000", 200),
    ("http://localhost", 200),
])
def test_origin_is_checked_http_2_ambig_14(peer: WsgiPeer, origin: str, status: int) -> None:
    """HTTP-2, AMBIG-14: a foreign Origin gets 403; loopback pages are served."""
    response = peer.post(call(1, "ping"), headers={"Origin": origin})
    assert response.status_code == status
    if status == 403:
        error_of(response)
    else:
        assert response.headers["Access-Control-Allow-Origin"] == origin


def test_request_without_origin_is_served_ambig_14(peer: WsgiPeer) -> None:
    """AMBIG-14: non-browser clients send no Origin; they are served."""
    assert peer.result(call(1, "ping")) == {}


def test_allowed_origins_can_be_set_or_disabled_http_2(server: Server) -> None:
    """HTTP-2: the allow-list is configurable; None turns the check off."""
    with make_wsgi_app(server, allowed_origins=["https://app.example"]) as app:
        peer = WsgiPeer(app)
        assert peer.post(INITIALIZE, session=False,
                         headers={"Origin": "https://app.example"}).status_code == 200
        assert peer.post(INITIALIZE, session=False,
                         headers={"Origin": "http://localhost:1"}).status_code == 403
    with make_wsgi_app(server, allowed_origins=None) as app:
        assert WsgiPeer(app).post(INITIALIZE, session=False,
                                  headers={"Origin": "http://evil.example"}).status_code == 200


def test_host_allow_list_refuses_rebound_names_http_2(server: Server) -> None:
    """HTTP-2: with allowed_hosts, a DNS-rebinding Host header gets 421."""
    with make_wsgi_app(server, allowed_hosts=LOOPBACK_HOSTS) as app:
        peer = WsgiPeer(app)
        response = peer.post(INITIALIZE, session=False, headers={"Host": "evil.example:8000"})
        assert response.status_code == 421
        error_of(response)
        assert peer.post(INITIALIZE, session=False,
                         headers={"Host": "127.0.0.1:8000"}).status_code == 200


def test_token_verifier_refuses_with_401_http_4_auth_5_auth_13(server: Server) -> None:
    """HTTP-4, AUTH-5/13: a refused or failing token check is 401 with WWW-Authenticate."""
    seen: list[str | None] = []

    def verify(request: Any) -> bool:
        header = request.headers.get("Authorization")
        seen.append(header)
        if header == "Bearer boom":
            raise RuntimeError("verifier crashed")
        return bool(header == "Bearer good")

    with make_wsgi_app(server, token_verifier=verify) as app:
        peer = WsgiPeer(app)
        for header in ({}, {"Authorization": "Bearer bad"}, {"Authorization": "Bearer boom"}):
            response = peer.post(INITIALIZE, session=False, headers=header)
            assert response.status_code == 401
            assert response.headers["WWW-Authenticate"].startswith("Bearer")
            error_of(response)
        good = {"Authorization": "Bearer good"}
        response = peer.post(INITIALIZE, session=False, headers=good)
        assert response.status_code == 200
        peer.session_id = response.headers["Mcp-Session-Id"]
        assert peer.post(call(1, "ping"), headers=good).status_code == 200
        assert peer.client.delete("/mcp", headers={"Mcp-Session-Id": peer.session_id}
                                  ).status_code == 401  # every request, DELETE included
        assert seen[:3] == [None, "Bearer bad", "Bearer boom"]


# --- stateless mode -----------------------------------------------------------------------


@pytest.mark.parametrize("json_response", [False, True])
def test_stateless_mode_end_to_end(server: Server, json_response: bool) -> None:
    """HTTP-18/29/32 (stateless): no session ids, every POST stands alone, GET and DELETE
    get 405."""
    with make_wsgi_app(server, stateless=True, json_response=json_response) as app:
        peer = WsgiPeer(app)
        response = peer.post(INITIALIZE)
        assert response.status_code == 200
        assert "Mcp-Session-Id" not in response.headers
        [initialized] = messages_of(response)
        assert initialized["result"]["protocolVersion"] == "2025-03-26"
        assert peer.post(INITIALIZED).status_code == 202
        assert peer.result(call(1, "tools/call", {"name": "add",
                                                  "arguments": {"a": 20, "b": 22}})) == {
            "content": [{"type": "text", "text": "42"}]}
        messages = peer.request(call(2, "tools/call", {
            "name": "progress", "arguments": {"steps": 2}, "_meta": {"progressToken": 2}}))
        if json_response:
            assert [m["id"] for m in messages] == [2]
        else:
            assert [m.get("method") for m in messages] == [
                "notifications/progress", "notifications/progress", None]
        get = peer.client.get("/mcp", headers={"Accept": "text/event-stream"})
        assert get.status_code == 405
        assert get.headers["Allow"] == "POST, OPTIONS"
        assert peer.client.delete("/mcp").status_code == 405
        assert app.session_count == 0
        assert not server._connections  # each POST's connection is closed with it


def test_stateless_mode_assumes_the_header_version(server: Server) -> None:
    """VERSION-2, TOOLS-9 (stateless): a POST is served under its MCP-Protocol-Version;
    2024-11-05 has no tool annotations."""
    with make_wsgi_app(server, stateless=True) as app:
        peer = WsgiPeer(app)
        tools = peer.result(call(1, "tools/list"))["tools"]
        assert next(t for t in tools if t["name"] == "add")["annotations"] == {
            "readOnlyHint": True}
        response = peer.post(call(2, "tools/list"),
                             headers={"MCP-Protocol-Version": "2024-11-05"})
        [message] = messages_of(response)
        assert all("annotations" not in tool for tool in message["result"]["tools"])


def test_stateless_mode_refuses_server_requests(server: Server) -> None:
    """CAPS-5, TOOLS-6 (stateless): the client declared nothing, so a tool's sampling
    request fails at once and the tool reports the error."""

    @server.tool()
    def ask(ctx: Context) -> str:
        """Ask the client to sample."""
        ctx.send_request("sampling/createMessage", {"messages": [], "maxTokens": 1})
        return "unreachable"

    with make_wsgi_app(server, stateless=True) as app:
        result = WsgiPeer(app).result(call(1, "tools/call", {"name": "ask", "arguments": {}}))
        assert result["isError"] is True
        assert "sampling" in result["content"][0]["text"]


# --- construction and mounting ----------------------------------------------------------------


def test_options_are_checked(server: Server) -> None:
    """HTTP-1: out-of-range and unknown options are refused when the app is built."""
    with pytest.raises(ValueError):
        make_wsgi_app(server, max_body_size=0)
    with pytest.raises(ValueError):
        make_wsgi_app(server, session_timeout=-1)
    with pytest.raises(TypeError):
        make_wsgi_app(server, no_such_option=True)


def test_mounted_under_a_prefix_http_1(server: Server) -> None:
    """HTTP-1: mounted with DispatcherMiddleware, the endpoint is the mount point."""
    from werkzeug.middleware.dispatcher import DispatcherMiddleware
    from werkzeug.wrappers import Response

    with make_wsgi_app(server, path="") as mcp:
        host = DispatcherMiddleware(Response("home"), {"/mcp": mcp})
        peer = WsgiPeer(host)
        peer.initialize()
        assert peer.result(call(1, "ping")) == {}
        assert peer.client.get("/").get_data() == b"home"


def test_a_posts_usual_answers_are_written_as_werkzeug_wrote_them() -> None:
    """A JSON answer, an event stream and 202 skip werkzeug's ``Response`` on the way out;
    their status lines and fields are those it wrote, CORS fields included."""
    from werkzeug.wrappers import Response

    from mcp_sync.server.http._app import _SSE_HEADERS, _PostAnswer

    environ = {"REQUEST_METHOD": "POST", "SERVER_NAME": "x", "SERVER_PORT": "80",
               "wsgi.url_scheme": "http", "PATH_INFO": "/mcp"}

    def written(app: Any) -> tuple[str, list[tuple[str, str]], bytes]:
        seen: list[Any] = []
        body = app(environ, lambda status, headers, exc_info=None: seen.extend(
            [status, list(headers)]))
        return seen[0], seen[1], b"".join(body)

    events = [b": \n\n", b"data: {}\n\n"]
    pairs: list[tuple[Any, Any]] = [
        (lambda: _PostAnswer.json(b'{"id":1}'),
         lambda: Response(b'{"id":1}', status=200, content_type="application/json")),
        # A stream is an iterator, which werkzeug gives no length.
        (lambda: _PostAnswer.events(iter(events)),  # type: ignore[arg-type]
         lambda: Response(iter(events), status=200, content_type="text/event-stream",
                          headers=_SSE_HEADERS)),
        (_PostAnswer.accepted, lambda: Response(status=202)),
    ]
    for make_ours, make_theirs in pairs:
        ours, theirs = make_ours(), make_theirs()
        ours.allow_origin("http://localhost:5173")
        theirs.headers["Access-Control-Allow-Origin"] = "http://localhost:5173"
        theirs.headers["Access-Control-Expose-Headers"] = "Mcp-Session-Id"
        theirs.vary.add("Origin")
        assert ours.status_code == theirs.status_code
        (status, fields, body), (status_, fields_, body_) = written(ours), written(theirs)
        assert (status, sorted(fields), body) == (status_, sorted(fields_), body_)
