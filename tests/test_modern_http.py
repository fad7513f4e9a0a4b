"""The modern era (MCP 2026-07-28) over Streamable HTTP, server side, in-process.

One endpoint serves both eras: a POST without ``Mcp-Session-Id`` carrying the modern
``_meta`` (or naming 2026-07-28 in ``MCP-Protocol-Version``) is served statelessly; its
mirrored headers (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``)
are checked against its body (SEP-2243); its answer is one JSON body, or an event stream
when the handler sends something about the request first. Every message the server sends
is checked against schema-2026-07-28.json. IDs: the digest's "2026-07-28 — what changes
structurally" table, COEX-n, SEP-2243, SEP-2575.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from typing import Annotated, Any

import pytest
from werkzeug.test import Client as WerkzeugClient
from werkzeug.test import TestResponse

from mcp_sync import Context, Server
from mcp_sync.server import Header
from mcp_sync.transports.http_server import (
    MemorySessionStore,
    SessionRecord,
    StreamableHttpApp,
    make_wsgi_app,
)
from tests.http_server_helpers import INITIALIZE, WsgiPeer, messages_of, parse_sse
from tests.server_support import MODERN, modern_request, request
from tests.wire_schema import message_errors

NAME_PARAMS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def make_server() -> Server:
    server = Server("modern-http", version="2.0.0", instructions="Both eras, one endpoint.")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def deploy(region: Annotated[str, Header("Region")], replicas: Annotated[
            int, Header("Replicas")] = 1, dry_run: Annotated[bool, Header("Dry-Run")] = False,
            ) -> str:
        """Deploy somewhere."""
        return f"{region} x{replicas}{' (dry run)' if dry_run else ''}"

    @server.tool()
    def countdown(steps: int, ctx: Context) -> str:
        """Report progress at each step."""
        for step in range(1, steps + 1):
            ctx.report_progress(step, steps)
        return "liftoff"

    @server.tool()
    def chatty(ctx: Context) -> str:
        """Log at two levels."""
        ctx.debug("details")
        ctx.warning("careful")
        return "said it"

    @server.resource("notes://today", mime_type="text/plain")
    def today() -> str:
        return "ship it"

    @server.prompt()
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello {name}"

    return server


def checked(message: dict[str, Any], answers: str | None = None) -> dict[str, Any]:
    errors = message_errors(message, MODERN, answers=answers)
    assert not errors, (message, errors)
    return message


def standard_headers(message: dict[str, Any]) -> dict[str, str]:
    """What a modern client sends with ``message``: Accept, version, method and name."""
    headers = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json",
               "MCP-Protocol-Version": MODERN, "Mcp-Method": message["method"]}
    target = (message.get("params") or {}).get(NAME_PARAMS.get(message["method"], ""))
    if isinstance(target, str):
        headers["Mcp-Name"] = target
    return headers


class ModernPeer:
    """Sends modern POSTs, each with the headers a well-behaved client mirrors."""

    def __init__(self, app: Any) -> None:
        self.client = WerkzeugClient(app)

    def post(self, message: Any, *, headers: dict[str, str] | None = None,
             drop: tuple[str, ...] = ()) -> TestResponse:
        all_headers = standard_headers(message) if isinstance(message, dict) else {
            "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": MODERN,
            "Content-Type": "application/json"}
        for name in drop:
            all_headers.pop(name, None)
        all_headers.update(headers or {})
        return self.client.post("/mcp", data=json.dumps(message), headers=all_headers,
                                buffered=True)

    def answer(self, message: dict[str, Any], status: int = 200,
               **options: Any) -> dict[str, Any]:
        response = self.post(message, **options)
        assert response.status_code == status, (response.status_code, response.get_data())
        assert response.content_type == "application/json"
        assert "Mcp-Session-Id" not in response.headers
        return checked(json.loads(response.get_data()), message.get("method"))

    def result(self, message: dict[str, Any], **options: Any) -> dict[str, Any]:
        answer = self.answer(message, **options)
        assert answer["id"] == message["id"] and "result" in answer, answer
        result: dict[str, Any] = answer["result"]
        return result

    def error(self, message: Any, status: int, **options: Any) -> dict[str, Any]:
        response = self.post(message, **options)
        assert response.status_code == status, (response.status_code, response.get_data())
        answer = checked(json.loads(response.get_data()))
        if isinstance(message, dict):
            assert answer["id"] == message["id"]
        error: dict[str, Any] = answer["error"]
        return error


@pytest.fixture
def app() -> Iterator[StreamableHttpApp]:
    with make_wsgi_app(make_server()) as app:
        yield app


@pytest.fixture
def peer(app: StreamableHttpApp) -> ModernPeer:
    return ModernPeer(app)


def call(name: str, arguments: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return modern_request("tools/call", {"name": name, "arguments": arguments}, **meta)


# --- stateless serving ----------------------------------------------------------------------


def test_discover_is_served_without_a_session(app: StreamableHttpApp, peer: ModernPeer) -> None:
    """SEP-2575: server/discover over HTTP, no Mcp-Session-Id made, nothing kept."""
    result = peer.result(modern_request("server/discover"))
    assert result["supportedVersions"] == [MODERN]
    assert result["resultType"] == "complete"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "modern-http"
    assert result["instructions"] == "Both eras, one endpoint."
    assert app.session_count == 0


def test_features_answer_as_over_stdio(peer: ModernPeer) -> None:
    """Tools, resources and prompts over HTTP, each answer JSON with resultType."""
    assert {t["name"] for t in peer.result(modern_request("tools/list"))["tools"]} == {
        "add", "deploy", "countdown", "chatty"}
    added = peer.result(call("add", {"a": 2, "b": 40}))
    assert added["structuredContent"] == {"result": 42}
    read = peer.result(modern_request("resources/read", {"uri": "notes://today"}))
    assert read["contents"][0]["text"] == "ship it"
    prompt = peer.result(modern_request("prompts/get", {"name": "greet",
                                                        "arguments": {"name": "Ada"}}))
    assert prompt["messages"][0]["content"]["text"] == "Hello Ada"


def test_requests_of_both_eras_are_served_side_by_side_coex_7(
        app: StreamableHttpApp, peer: ModernPeer) -> None:
    """A legacy session and modern requests on one endpoint: the session works as
    before (an unknown method is 200 with -32601 in it, COEX-7), modern requests need
    no session, and neither era sees the other."""
    legacy = WsgiPeer(app)
    legacy.initialize(protocolVersion="2025-11-25")
    assert peer.result(call("add", {"a": 1, "b": 1}))["structuredContent"] == {"result": 2}
    response = legacy.post(request("tasks/list", request_id=5))
    assert response.status_code == 200
    assert messages_of(response)[0]["error"]["code"] == -32601
    assert legacy.result(request("tools/call", {"name": "add", "arguments": {"a": 3, "b": 4}},
                                 request_id=6))["content"][0]["text"] == "7"
    assert app.session_count == 1


def test_modern_headers_in_a_legacy_session_are_ignored_coex_8(app: StreamableHttpApp) -> None:
    """COEX-8, COEX-5: Mcp-Method, Mcp-Name and Mcp-Param-* (even wrong ones) and modern
    _meta keys in a legacy session are neither checked nor obeyed."""
    legacy = WsgiPeer(app)
    legacy.initialize(protocolVersion="2025-11-25")
    message = request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2},
                                     "_meta": {"io.modelcontextprotocol/protocolVersion":
                                               MODERN}}, request_id=3)
    response = legacy.post(message, headers={"Mcp-Method": "prompts/get", "Mcp-Name": "x",
                                             "Mcp-Param-Region": "nowhere"})
    assert response.status_code == 200
    [answer] = messages_of(response)
    assert answer["result"]["content"][0]["text"] == "3"
    assert "resultType" not in answer["result"]


def test_initialize_is_legacy_whatever_it_carries_coex_9(app: StreamableHttpApp) -> None:
    """COEX-9: an initialize offering a version is the legacy handshake, even with the
    modern header; one without a version to negotiate is a modern request for a method
    the era does not have (404, -32601)."""
    legacy = WsgiPeer(app)
    response = legacy.post(INITIALIZE, session=False, headers={"MCP-Protocol-Version": MODERN})
    assert response.status_code == 200 and "Mcp-Session-Id" in response.headers
    error = ModernPeer(app).error(modern_request("initialize"), 404)
    assert error["code"] == -32601


def test_a_legacy_only_server_refuses_the_modern_header_with_a_legacy_error_coex_6() -> None:
    """COEX-6: without 2026-07-28 among its versions, a modern POST is 400 with a code
    outside -32020..-32099, which sends a dual-era client to initialize."""
    server = Server("legacy-only", supported_versions=["2025-06-18", "2025-11-25"])
    with make_wsgi_app(server) as app:
        error = ModernPeer(app).error(modern_request("server/discover"), 400)
        assert not -32099 <= error["code"] <= -32020
        response = WsgiPeer(app).post(INITIALIZE, session=False)
        assert response.status_code == 200


class WatchedStore(MemorySessionStore):
    """A session store that remembers which sessions were written to it."""

    def __init__(self) -> None:
        super().__init__()
        self.written: list[str] = []

    def create(self, record: SessionRecord, ttl: float | None) -> None:
        self.written.append(record.session_id)
        super().create(record, ttl)


def test_nothing_is_stored_behind_a_session_store() -> None:
    """Scale-out: two processes sharing a session store answer modern requests without
    writing to it (any process may answer any of them), while a legacy session still
    goes to the store."""
    store = WatchedStore()
    with make_wsgi_app(make_server(), session_store=store) as one, \
            make_wsgi_app(make_server(), session_store=store) as two:
        for app in (one, two):
            result = ModernPeer(app).result(call("add", {"a": 20, "b": 22}))
            assert result["structuredContent"] == {"result": 42}
        assert store.written == []
        WsgiPeer(one).initialize(protocolVersion="2025-11-25")
        assert len(store.written) == 1


def test_notifications_are_accepted_and_batches_refused(peer: ModernPeer) -> None:
    """A modern notification is 202 and dropped (a client cancels by closing its
    stream); the era has no batches (400)."""
    notification = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": 1, "_meta": modern_request("x")["params"]["_meta"]}}
    assert peer.post(notification, headers={"Mcp-Method": "notifications/cancelled"}
                     ).status_code == 202
    response = peer.post([modern_request("tools/list"), modern_request("prompts/list")])
    assert response.status_code == 400
    assert json.loads(response.get_data())["error"]["code"] == -32600


def test_get_and_delete_without_a_session_are_405_for_the_modern_era(
        app: StreamableHttpApp) -> None:
    """The modern era is POST only: GET and DELETE naming 2026-07-28 without a session
    are 405; without the header they keep their legacy answer (400)."""
    client = WerkzeugClient(app)
    modern = {"MCP-Protocol-Version": MODERN, "Accept": "text/event-stream"}
    for method in ("GET", "DELETE"):
        response = client.open("/mcp", method=method, headers=modern)
        assert response.status_code == 405 and response.headers["Allow"] == "POST"
        legacy = client.open("/mcp", method=method, headers={"Accept": "text/event-stream"})
        assert legacy.status_code == 400


def test_a_browser_preflight_may_send_the_modern_headers(app: StreamableHttpApp) -> None:
    """CORS: the preflight allows Mcp-Method, Mcp-Name and the Mcp-Param-* headers a
    page asks about (their names depend on each tool)."""
    response = WerkzeugClient(app).options("/mcp", headers={
        "Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "mcp-method, mcp-param-region, x-other"})
    assert response.status_code == 204
    allowed = {h.strip().lower()
               for h in response.headers["Access-Control-Allow-Headers"].split(",")}
    assert {"mcp-method", "mcp-name", "mcp-protocol-version", "mcp-param-region"} <= allowed
    assert "x-other" not in allowed


# --- _meta, version and method ---------------------------------------------------------------


@pytest.mark.parametrize("drop", ["protocolVersion", "clientCapabilities"])
def test_missing_meta_is_400_with_invalid_params(peer: ModernPeer, drop: str) -> None:
    """SEP-2575: _meta without the version or the capabilities is HTTP 400, -32602."""
    error = peer.error(modern_request("server/discover", **{drop: None}), 400)
    assert error["code"] == -32602
    bare = request("tools/list", request_id=9)
    assert peer.error(bare, 400)["code"] == -32602


def test_clientinfo_is_optional(peer: ModernPeer) -> None:
    """SEP-2575 (spec PR #3002): a request without clientInfo is served."""
    assert peer.result(modern_request("tools/list", clientInfo=None))["tools"]


def test_an_unsupported_version_is_400_with_32022(peer: ModernPeer) -> None:
    """UnsupportedProtocolVersionError: HTTP 400, data.supported and data.requested."""
    message = modern_request("server/discover", protocolVersion="2099-01-01")
    error = peer.error(message, 400, headers={"MCP-Protocol-Version": "2099-01-01"})
    assert error["code"] == -32022
    assert error["data"] == {"supported": [MODERN], "requested": "2099-01-01"}


@pytest.mark.parametrize("method", ["ping", "logging/setLevel", "resources/subscribe",
                                    "no/such/method"])
def test_an_unknown_method_is_404_with_32601(peer: ModernPeer, method: str) -> None:
    """SEP-2575: a method the era removed, or any unknown one, is HTTP 404 with -32601."""
    assert peer.error(modern_request(method), 404)["code"] == -32601


def test_errors_of_the_handler_keep_their_codes(peer: ModernPeer) -> None:
    """An unknown tool (-32602) is 400; a resource not found is -32602 with its URI
    (SEP-2164)."""
    assert peer.error(call("nope", {}), 400)["code"] == -32602
    error = peer.error(modern_request("resources/read", {"uri": "notes://none"}), 400)
    assert error["code"] == -32602


# --- standard headers (SEP-2243) ---------------------------------------------------------------


@pytest.mark.parametrize(("headers", "drop"), [
    ({}, ("MCP-Protocol-Version",)),
    ({"MCP-Protocol-Version": "2025-11-25"}, ()),
    ({}, ("Mcp-Method",)),
    ({"Mcp-Method": "prompts/list"}, ()),
    ({"Mcp-Method": "TOOLS/CALL"}, ()),
    ({}, ("Mcp-Name",)),
    ({"Mcp-Name": "deploy"}, ()),
    ({"Mcp-Name": "=?base64?YWRk?"}, ()),
])
def test_a_missing_or_differing_standard_header_is_400_with_32020(
        peer: ModernPeer, headers: dict[str, str], drop: tuple[str, ...]) -> None:
    """SEP-2243, HeaderMismatchError: the version, method and name headers must say what
    the body says (values case-sensitive); the tool does not run."""
    error = peer.error(call("add", {"a": 1, "b": 2}), 400, headers=headers, drop=drop)
    assert error["code"] == -32020


def test_header_names_are_case_insensitive_and_values_trimmed(peer: ModernPeer) -> None:
    """SEP-2243: any case for the names, optional whitespace around the values, and the
    name in the base64 form are all accepted."""
    message = call("add", {"a": 1, "b": 2})
    drop = ("Mcp-Method", "Mcp-Name")
    encoded = "=?base64?" + base64.b64encode(b"add").decode() + "?="
    for headers in ({"mcp-method": "tools/call", "MCP-NAME": "  add\t"},
                    {"MCP-METHOD": " tools/call ", "mcp-name": encoded}):
        assert peer.result(message, headers=headers, drop=drop)["content"][0]["text"] == "3"


def test_resource_and_prompt_names_are_checked(peer: ModernPeer) -> None:
    """SEP-2243: Mcp-Name carries the URI of resources/read and the prompt's name."""
    read = modern_request("resources/read", {"uri": "notes://today"})
    assert peer.error(read, 400, headers={"Mcp-Name": "notes://other"})["code"] == -32020
    prompt = modern_request("prompts/get", {"name": "greet", "arguments": {"name": "x"}})
    assert peer.error(prompt, 400, drop=("Mcp-Name",))["code"] == -32020


# --- Mcp-Param-* (x-mcp-header) ------------------------------------------------------------------


def test_header_arguments_are_published_with_x_mcp_header(peer: ModernPeer) -> None:
    """SEP-2243: Header("Region") marks the argument's schema with x-mcp-header."""
    tools = {t["name"]: t for t in peer.result(modern_request("tools/list"))["tools"]}
    properties = tools["deploy"]["inputSchema"]["properties"]
    assert properties["region"]["x-mcp-header"] == "Region"
    assert properties["replicas"]["x-mcp-header"] == "Replicas"
    assert "x-mcp-header" not in tools["add"]["inputSchema"]["properties"]["a"]


def _b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


@pytest.mark.parametrize(("arguments", "headers"), [
    ({"region": "eu-west"}, {"Mcp-Param-Region": "eu-west"}),
    ({"region": "Zürich"}, {"Mcp-Param-Region": _b64("Zürich")}),
    ({"region": "SGVsbG8="}, {"Mcp-Param-Region": "SGVsbG8="}),
    ({"region": "=?base64?SGVsbG8="}, {"Mcp-Param-Region": "=?base64?SGVsbG8="}),
    ({"region": "x", "replicas": 3, "dry_run": True},
     {"Mcp-Param-Region": "x", "Mcp-Param-Replicas": "3", "mcp-param-dry-run": "true"}),
    ({"region": "x", "replicas": 3}, {"Mcp-Param-Region": "x", "Mcp-Param-Replicas": "3.0"}),
])
def test_matching_param_headers_are_accepted(peer: ModernPeer, arguments: dict[str, Any],
                                             headers: dict[str, str]) -> None:
    """SEP-2243: plain and base64 values, integers compared as numbers, booleans as
    true/false; a value without the exact =?base64?...?= wrapper is literal."""
    result = peer.result(call("deploy", arguments), headers=headers)
    assert not result.get("isError"), result


@pytest.mark.parametrize(("arguments", "headers"), [
    ({"region": "eu-west"}, {}),
    ({"region": "eu-west"}, {"Mcp-Param-Region": "us-east"}),
    ({"region": "Hello"}, {"Mcp-Param-Region": "=?base64?SGVsbG8?="}),
    ({"region": "Hello"}, {"Mcp-Param-Region": "=?base64?SGVs!!!bG8=?="}),
    ({"region": "x"}, {"Mcp-Param-Region": "x", "Mcp-Param-Replicas": "2"}),
    ({"region": "x", "replicas": 2}, {"Mcp-Param-Region": "x", "Mcp-Param-Replicas": "2.5"}),
    ({"region": "x", "dry_run": False}, {"Mcp-Param-Region": "x",
                                         "Mcp-Param-Dry-Run": "False"}),
])
def test_missing_or_differing_param_headers_are_400_with_32020(
        peer: ModernPeer, arguments: dict[str, Any], headers: dict[str, str]) -> None:
    """SEP-2243: a header missing while its argument is sent, one sent without its
    argument, a different value or broken base64 is refused before the tool runs."""
    assert peer.error(call("deploy", arguments), 400, headers=headers)["code"] == -32020


def test_header_marks_are_checked_when_a_tool_is_registered() -> None:
    """SEP-2243: only a str, int or bool argument that cannot be None, with a token for
    a name, unique among the tool's arguments, may be mirrored; hand-written schemas
    are held to the same rules."""
    server = Server("marks")
    with pytest.raises(ValueError, match="token"):
        Header("Bad Name")
    with pytest.raises(TypeError, match="str, int or bool"):
        @server.tool()
        def ratio(value: Annotated[float, Header("Ratio")]) -> str:
            return ""
    with pytest.raises(TypeError, match="str, int or bool"):
        @server.tool()
        def maybe(value: Annotated[str, Header("Maybe")] | None = None) -> str:
            return ""
    with pytest.raises(TypeError, match="both go to header"):
        @server.tool()
        def twice(a: Annotated[str, Header("Same")], b: Annotated[str, Header("same")]) -> str:
            return ""
    with pytest.raises(TypeError, match="x-mcp-header"):
        @server.tool(input_schema={"type": "object", "properties": {
            "tags": {"type": "array", "x-mcp-header": "Tags"}}})
        def tagged(**kwargs: Any) -> str:
            return ""


# --- per-request streams ---------------------------------------------------------------------


def events_of(response: TestResponse) -> list[dict[str, Any]]:
    assert response.status_code == 200
    assert response.content_type.startswith("text/event-stream")
    events = parse_sse(response.get_data())
    assert all(event.id is None for event in events)  # no resumption in this era
    return [checked(json.loads(event.data)) for event in events if event.data]


def test_progress_makes_the_answer_an_event_stream(peer: ModernPeer) -> None:
    """Per-request SSE: progress about the request, then its answer, on its own stream."""
    message = call("countdown", {"steps": 3}, **{"progressToken": "p"})
    message["params"]["_meta"]["progressToken"] = "p"
    messages = events_of(peer.post(message))
    assert [m["params"]["progress"] for m in messages[:-1]] == [1, 2, 3]
    assert messages[-1]["id"] == message["id"]
    assert messages[-1]["result"]["content"][0]["text"] == "liftoff"


def test_a_silent_request_is_answered_with_json(peer: ModernPeer) -> None:
    """Per-request response: plain JSON when nothing comes before the answer."""
    response = peer.post(call("countdown", {"steps": 2}))
    assert response.content_type == "application/json"


def test_log_messages_ride_the_stream_of_a_request_that_asked(peer: ModernPeer) -> None:
    """A log level in _meta opts in: messages at or above it ride that request's stream;
    a request that did not opt in gets none (JSON)."""
    messages = events_of(peer.post(call("chatty", {}, logLevel="warning")))
    logs = [m for m in messages if m.get("method") == "notifications/message"]
    assert [(m["params"]["level"], m["params"]["data"]) for m in logs] == [
        ("warning", "careful")]
    assert peer.post(call("chatty", {})).content_type == "application/json"


def test_json_only_clients_get_json_without_the_notifications(peer: ModernPeer) -> None:
    """A client that accepts only JSON gets the answer alone."""
    message = call("countdown", {"steps": 2})
    message["params"]["_meta"]["progressToken"] = 1
    answer = peer.answer(message, headers={"Accept": "application/json"})
    assert answer["result"]["content"][0]["text"] == "liftoff"


def test_a_subscription_needs_a_client_that_reads_streams(peer: ModernPeer) -> None:
    """subscriptions/listen answers with a stream: a client accepting only JSON gets 406
    at once, never a wait for a JSON body that would come only when it ends."""
    response = peer.post(modern_request("subscriptions/listen", {"notifications": {}}),
                         headers={"Accept": "application/json"})
    assert response.status_code == 406


def test_a_silent_long_request_streams_keepalives_until_its_answer() -> None:
    """A handler silent past the keep-alive interval gets an event stream (so that a
    client leaving is noticed); the answer ends it."""
    server = Server("slow")
    release = threading.Event()

    @server.tool()
    def wait(ctx: Context) -> str:
        release.wait(10)
        return "done"

    with make_wsgi_app(server, keepalive_interval=0.05) as app:
        message = call("wait", {})
        response = WerkzeugClient(app).post("/mcp", data=json.dumps(message),
                                           headers=standard_headers(message))
        assert response.content_type == "text/event-stream"
        chunks = iter(response.response)
        assert next(chunks).startswith(b":")  # the headers went out with a comment
        release.set()
        body = b"".join(chunks)
        response.close()
        [answer] = [json.loads(e.data) for e in parse_sse(body) if e.data]
        assert answer["result"]["content"][0]["text"] == "done"


def test_closing_the_stream_cancels_the_request() -> None:
    """HTTP cancellation in the modern era: the client closing the response stream
    cancels the request; the tool sees ctx.cancelled and nothing answers it."""
    server = Server("cancel")
    reached, seen = threading.Event(), threading.Event()
    outcome: dict[str, bool] = {}

    @server.tool()
    def until_cancelled(ctx: Context) -> str:
        ctx.report_progress(1)
        reached.set()
        outcome["cancelled"] = ctx.wait_cancelled(10)
        seen.set()
        return "late"

    with make_wsgi_app(server) as app:
        message = call("until_cancelled", {})
        message["params"]["_meta"]["progressToken"] = 1
        response = WerkzeugClient(app).post("/mcp", data=json.dumps(message),
                                           headers=standard_headers(message))
        assert response.content_type == "text/event-stream"
        assert reached.wait(10)
        first = next(iter(response.response))
        assert b"notifications/progress" in first
        response.close()  # what a WSGI server does when the client goes away
        assert seen.wait(10)
    assert outcome["cancelled"] is True


def test_one_post_connections_share_their_worker_threads() -> None:
    """Each modern POST has a connection of its own, but not a thread of its own: the
    requests of a client reading events run on workers kept between requests, and those
    of one that takes only JSON on the POST's own thread. All end with the application."""
    server = Server("threads")
    ran_on: list[str] = []

    @server.tool()
    def where() -> str:
        ran_on.append(threading.current_thread().name)
        return "here"

    with make_wsgi_app(server) as app:
        client = WerkzeugClient(app)
        message = call("where", {})
        for _ in range(5):
            response = client.post("/mcp", data=json.dumps(message),
                                   headers=standard_headers(message))
            assert json.loads(response.get_data())["result"]["content"][0]["text"] == "here"
        json_only = {**standard_headers(message), "Accept": "application/json"}
        response = client.post("/mcp", data=json.dumps(message), headers=json_only)
        assert json.loads(response.get_data())["result"]["content"][0]["text"] == "here"
        workers = set(ran_on[:5])
        assert len(workers) == 1 and next(iter(workers)).startswith("mcp_sync:")
        assert ran_on[5] == threading.current_thread().name
    assert not [t for t in threading.enumerate() if t.name in workers]


# --- connections kept between requests --------------------------------------------------------


def test_a_log_sent_after_its_request_was_answered_reaches_no_later_request() -> None:
    """A modern request's connection may serve the next POST once it is answered: a log
    message a tool sends about its own request after the answer (from a thread it left
    behind) goes nowhere, even when a later request, from anyone, has the same id."""
    server = Server("kept")
    kept: list[Context] = []
    sent: list[bool] = []

    @server.tool()
    def leave(ctx: Context) -> str:
        """Keep the context past the answer."""
        kept.append(ctx)
        return "left"

    @server.tool()
    def speak(ctx: Context) -> str:
        """Send a message for the earlier request, then one of its own."""
        sent.append(kept[0].warning("stray"))
        ctx.warning("mine")
        return "spoke"

    with make_wsgi_app(server) as app:
        peer = ModernPeer(app)
        assert peer.result(call("leave", {}, logLevel="debug") | {"id": 7})["content"][0][
            "text"] == "left"
        for _ in range(3):
            messages = events_of(peer.post(call("speak", {}, logLevel="debug") | {"id": 7}))
            logs = [m["params"]["data"] for m in messages
                    if m.get("method") == "notifications/message"]
            assert logs == ["mine"]
            assert messages[-1]["result"]["content"][0]["text"] == "spoke"
    assert sent == [False, False, False]


def test_a_feature_added_between_requests_is_served_by_the_next_one() -> None:
    """CAPS-7 per request: what the server declares is read again for each modern POST,
    though connections are kept between them."""
    server = Server("growing")

    @server.tool()
    def ping_tool() -> str:
        """Answer."""
        return "pong"

    with make_wsgi_app(server) as app:
        peer = ModernPeer(app)
        for _ in range(3):
            peer.result(call("ping_tool", {}))
        assert peer.error(modern_request("prompts/list"), 404)["code"] == -32601

        @server.prompt()
        def hello() -> str:
            """Say hello."""
            return "hello"

        prompts = peer.result(modern_request("prompts/list"))["prompts"]
        assert [prompt["name"] for prompt in prompts] == ["hello"]
