"""The server side of the modern era (MCP 2026-07-28) over the in-memory transport.

Raw JSON-RPC: each request carries its version, capabilities and client info in
``_meta``, no ``initialize`` comes first, and every message the server sends back is
checked against schema-2026-07-28.json (DES-19). IDs: the digest's "2026-07-28 — what
changes structurally" table, COEX-n and DES-n.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_sync import Context, Server
from tests.conftest import EXAMPLES
from tests.helpers import INITIALIZED, RawPeer, load_module
from tests.server_support import (
    MODERN,
    RecordingTransport,
    modern_peer,
    modern_request,
    request,
)
from tests.wire_schema import message_errors

everything = load_module(EXAMPLES / "everything_server.py")

SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def _checked(message: dict[str, Any], answers: str | None = None) -> dict[str, Any]:
    errors = message_errors(message, MODERN, answers=answers)
    assert not errors, (message, errors)
    return message


def ask(peer: RawPeer, message: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Send a request; its schema-checked answer and the notifications before it."""
    peer.send(message)
    notifications = []
    while True:
        answer = peer.receive()
        if "id" not in answer:
            notifications.append(_checked(answer))
            continue
        assert answer["id"] == message["id"], answer
        return _checked(answer, message["method"]), notifications


def result_of(peer: RawPeer, message: dict[str, Any]) -> dict[str, Any]:
    answer, _ = ask(peer, message)
    assert "result" in answer, answer
    result: dict[str, Any] = answer["result"]
    return result


def error_of(peer: RawPeer, message: dict[str, Any]) -> dict[str, Any]:
    answer, _ = ask(peer, message)
    assert "error" in answer, answer
    error: dict[str, Any] = answer["error"]
    return error


@pytest.fixture
def peer() -> Any:
    with modern_peer(everything.make_server()) as (raw, _):
        yield raw


# --- server/discover ------------------------------------------------------------------------


def test_discover_answers_versions_capabilities_instructions_and_server_info_des_1(
        peer: RawPeer) -> None:
    """DES-1, "Discovery": server/discover is what initialize used to tell, cacheable."""
    result = result_of(peer, modern_request("server/discover"))
    assert result["supportedVersions"] == [MODERN]
    assert result["resultType"] == "complete"
    assert result["ttlMs"] == 0 and result["cacheScope"] == "private"
    assert set(result["capabilities"]) >= {"tools", "resources", "prompts", "completions",
                                           "logging"}
    # Changes are delivered on subscriptions/listen streams, so they are promised.
    assert result["capabilities"]["tools"]["listChanged"] is True
    assert result["capabilities"]["resources"]["subscribe"] is True
    assert result["instructions"].startswith("Every MCP feature")
    assert result["_meta"][SERVER_INFO] == {"name": "everything", "version": "1.0.0"}


def test_discover_needs_no_earlier_request_and_repeats_identically(peer: RawPeer) -> None:
    """"Sessions": nothing is inferred from earlier requests on the connection."""
    first = result_of(peer, modern_request("server/discover"))
    result_of(peer, modern_request("tools/list"))
    assert result_of(peer, modern_request("server/discover")) == first


def test_cache_fields_are_configurable_on_the_server() -> None:
    """"Other": ttlMs and cacheScope come from Server(cache_ttl_ms=, cache_scope=)."""
    server = Server("cached", cache_ttl_ms=60_000, cache_scope="public")
    server.add_tool(lambda: "x", name="x")
    with modern_peer(server) as (raw, _):
        for method in ("server/discover", "tools/list"):
            result = result_of(raw, modern_request(method))
            assert (result["ttlMs"], result["cacheScope"]) == (60_000, "public")
    with pytest.raises(ValueError, match="cache_scope"):
        Server("bad", cache_scope="shared")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cache_ttl_ms"):
        Server("bad", cache_ttl_ms=-1)


# --- every served method ---------------------------------------------------------------------

CALLS = [
    ("tools/list", {}, True),
    ("tools/call", {"name": "add", "arguments": {"a": 2, "b": 40}}, False),
    ("tools/call", {"name": "structured", "arguments": {"a": 2, "b": 3}}, False),
    ("resources/list", {}, True),
    ("resources/templates/list", {}, True),
    ("resources/read", {"uri": "static://hello"}, True),
    ("resources/read", {"uri": "greeting://ada"}, True),
    ("prompts/list", {}, True),
    ("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}}, False),
    ("completion/complete", {"ref": {"type": "ref/prompt", "name": "greet"},
                             "argument": {"name": "name", "value": "A"}}, False),
]


@pytest.mark.parametrize(("method", "params", "cacheable"), CALLS,
                         ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(CALLS)])
def test_every_result_has_result_type_and_server_info(
        peer: RawPeer, method: str, params: dict[str, Any], cacheable: bool) -> None:
    """"Result shape", "Other": resultType on every result, serverInfo in _meta, ttlMs
    and cacheScope on list and read results; each fits the 2026-07-28 schema."""
    result = result_of(peer, modern_request(method, params))
    assert result["resultType"] == "complete"
    assert result["_meta"][SERVER_INFO]["name"] == "everything"
    assert ("ttlMs" in result and "cacheScope" in result) is cacheable


def test_tool_results_are_the_legacy_ones_plus_the_modern_fields(peer: RawPeer) -> None:
    """DES-18: one tool body, the same answer in both eras (2025-11-25 features kept)."""
    result = result_of(peer, modern_request("tools/call", {"name": "structured",
                                                           "arguments": {"a": 2, "b": 3}}))
    assert result["structuredContent"] == {"sum": 5, "product": 6}
    listed = result_of(peer, modern_request("tools/list"))["tools"]
    assert {tool["name"] for tool in listed} >= {"echo", "add", "ask", "log"}
    assert all("title" in tool for tool in listed)


def test_argument_errors_are_tool_results_as_in_2025_11_25(peer: RawPeer) -> None:
    """DES-9 carried into the modern profile: bad arguments answer isError."""
    result = result_of(peer, modern_request("tools/call", {"name": "add",
                                                           "arguments": {"a": "two"}}))
    assert result["isError"] is True
    assert "Invalid arguments" in result["content"][0]["text"]


def test_progress_is_reported_to_a_modern_request(peer: RawPeer) -> None:
    """Progress still rides on the request's progressToken in the modern era."""
    answer, notes = ask(peer, modern_request(
        "tools/call", {"name": "long_running", "arguments": {"steps": 3, "delay": 0},
                       "_meta": {"progressToken": "p"}}))
    assert answer["result"]["content"][0]["text"] == "done"
    assert [n["params"]["progress"] for n in notes
            if n["method"] == "notifications/progress"] == [1, 2, 3]


# --- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize("drop", ["clientCapabilities", "protocolVersion"])
def test_a_missing_required_meta_key_is_invalid_params(peer: RawPeer, drop: str) -> None:
    """"Handshake": protocolVersion and clientCapabilities are required in every modern
    request (-32602); either one makes a request before initialize a modern one."""
    error = error_of(peer, modern_request("tools/list", **{drop: None}))
    assert error["code"] == -32602
    assert drop in error["message"]


def test_malformed_meta_members_are_invalid_params(peer: RawPeer) -> None:
    for meta in ({"protocolVersion": 20260728}, {"clientCapabilities": []},
                 {"logLevel": "loud"}):
        assert error_of(peer, modern_request("tools/list", **meta))["code"] == -32602


@pytest.mark.parametrize("version", ["2099-01-01", "2025-11-25", ""])
def test_an_unsupported_version_is_32022_with_supported_and_requested(
        peer: RawPeer, version: str) -> None:
    """"Version negotiation": -32022 UnsupportedProtocolVersionError, validated by its
    own schema definition, naming what we speak and what was asked."""
    error = error_of(peer, modern_request("tools/list", protocolVersion=version))
    assert error["code"] == -32022
    assert error["data"] == {"supported": [MODERN], "requested": version}


@pytest.mark.parametrize("method", ["ping", "logging/setLevel", "resources/subscribe",
                                    "resources/unsubscribe", "initialize/2", "tasks/list"])
def test_methods_the_era_removed_or_we_do_not_serve_are_method_not_found(
        peer: RawPeer, method: str) -> None:
    """"Ping", "Logging", "Change notifications": gone from the era, so -32601."""
    assert error_of(peer, modern_request(method, {"uri": "static://hello"}))["code"] == -32601


def test_an_unknown_resource_is_invalid_params(peer: RawPeer) -> None:
    """"Error codes" (SEP-2164): resource not found is -32602 in the modern era."""
    error = error_of(peer, modern_request("resources/read", {"uri": "static://nothing"}))
    assert error["code"] == -32602
    assert error["data"] == {"uri": "static://nothing"}


def test_the_connection_serves_on_after_every_refusal(peer: RawPeer) -> None:
    error_of(peer, modern_request("ping"))
    error_of(peer, modern_request("tools/list", protocolVersion="1999-01-01"))
    error_of(peer, modern_request("tools/list", clientCapabilities=None))
    assert result_of(peer, modern_request("tools/list"))["tools"]


# --- logging -----------------------------------------------------------------------------------


def test_no_log_messages_without_a_per_request_level(peer: RawPeer) -> None:
    """"Logging": without io.modelcontextprotocol/logLevel the request gets no logs."""
    answer, notes = ask(peer, modern_request(
        "tools/call", {"name": "log", "arguments": {"level": "emergency", "message": "x"}}))
    assert notes == []
    assert answer["result"]["content"][0]["text"] == "filtered out by the client's log level"


def test_log_messages_follow_the_request_level_and_belong_to_the_request() -> None:
    """"Logging": the level the request opted in to filters, and each message is sent
    as part of that request (related to its id), never to another."""
    recorded: list[RecordingTransport] = []

    def record(transport: Any) -> RecordingTransport:
        recorded.append(RecordingTransport(transport))
        return recorded[0]

    with modern_peer(everything.make_server(), record) as (raw, _):
        arguments = {"level": "info", "message": "hello"}
        answer, notes = ask(raw, modern_request(
            "tools/call", {"name": "log", "arguments": arguments}, "opted-in",
            logLevel="debug"))
        assert answer["result"]["content"][0]["text"] == "sent"
        assert [n["params"] for n in notes] == [
            {"level": "info", "logger": "everything", "data": "hello"}]
        _, notes = ask(raw, modern_request(
            "tools/call", {"name": "log", "arguments": arguments}, "too-low",
            logLevel="warning"))
        assert notes == []
        _, notes = ask(raw, modern_request(
            "tools/call", {"name": "log", "arguments": arguments}, "silent"))
        assert notes == []
    assert recorded[0].related("notifications/message") == ["opted-in"]


# --- one tool body for both eras (DES-18) --------------------------------------------------


def _scope_server() -> Server:
    server = Server("scope", supported_versions=None)

    @server.tool()
    def who(ctx: Context) -> dict[str, Any]:
        caps = ctx.client_capabilities
        info = ctx.client_info
        return {"version": ctx.protocol_version,
                "client": info.name if info is not None else None,
                "sampling": caps is not None and caps.sampling is not None}

    return server


def test_context_reads_version_capabilities_and_info_from_the_request_des_18() -> None:
    """DES-18: the same tool body sees the session in a legacy request and the request's
    own _meta in a modern one; two modern requests never see each other's."""
    server = _scope_server()
    call = {"name": "who"}
    with modern_peer(server) as (raw, _):
        first = result_of(raw, modern_request(
            "tools/call", call, clientCapabilities={"sampling": {}},
            clientInfo={"name": "first", "version": "1"}))
        second = result_of(raw, modern_request(
            "tools/call", call, clientInfo=None))
        third = result_of(raw, modern_request(
            "tools/call", call, clientCapabilities={"sampling": {}},
            clientInfo={"name": "first", "version": "1"}))
        fourth = result_of(raw, modern_request(
            "tools/call", call, clientCapabilities={"sampling": {}},
            clientInfo={"name": "fourth", "version": "1"}))
    assert _json(first) == {"version": MODERN, "client": "first", "sampling": True}
    assert _json(second) == {"version": MODERN, "client": None, "sampling": False}
    assert _json(third) == _json(first)
    assert _json(fourth) == {"version": MODERN, "client": "fourth", "sampling": True}
    with modern_peer(server) as (raw, _):
        raw.call(request("initialize", {"protocolVersion": "2025-06-18",
                                        "capabilities": {"sampling": {}},
                                        "clientInfo": {"name": "legacy", "version": "1"}}))
        raw.send(INITIALIZED)
        legacy = raw.call(request("tools/call", call))["result"]
    assert _json(legacy) == {"version": "2025-06-18", "client": "legacy", "sampling": True}


def _json(result: dict[str, Any]) -> Any:
    return json.loads(result["content"][0]["text"])


# --- the legacy era beside it (COEX) ------------------------------------------------------


def test_after_initialize_modern_meta_is_opaque_coex_5() -> None:
    """COEX-5: once initialize was answered, io.modelcontextprotocol/* keys in a request
    change nothing: legacy answers (no resultType), discover stays unknown."""
    with modern_peer(everything.make_server()) as (raw, _):
        answer = raw.call(request("initialize", {"protocolVersion": "2025-11-25",
                                                 "capabilities": {},
                                                 "clientInfo": {"name": "l", "version": "1"}}))
        assert answer["result"]["protocolVersion"] == "2025-11-25"
        raw.send(INITIALIZED)
        listed = raw.call(modern_request("tools/list"))
        assert "resultType" not in listed["result"] and "_meta" not in listed["result"]
        assert not message_errors(listed, "2025-11-25", answers="tools/list")
        assert raw.call(modern_request("server/discover"))["error"]["code"] == -32601
        assert raw.call(modern_request("ping"))["result"] == {}


def test_initialize_offering_the_modern_version_gets_our_newest_legacy_one_coex_9() -> None:
    """COEX-9: 2026-07-28 offered in initialize is ordinary legacy negotiation, modern
    _meta on the initialize request included."""
    with modern_peer(everything.make_server()) as (raw, _):
        answer = raw.call(modern_request("initialize", {
            "protocolVersion": MODERN, "capabilities": {},
            "clientInfo": {"name": "l", "version": "1"}}))
    assert answer["result"]["protocolVersion"] == "2025-11-25"


def test_a_legacy_only_server_refuses_modern_requests_as_before_coex_1_coex_4() -> None:
    """supported_versions without 2026-07-28: discover is -32601 (COEX-1), a feature
    request before initialize -32600 (COEX-4), and no code in -32020..-32099 (COEX-3)."""
    server = Server("legacy", supported_versions=["2025-06-18", "2025-11-25"])
    server.add_tool(lambda: "x", name="x")
    with modern_peer(server) as (raw, _):
        assert raw.call(modern_request("server/discover"))["error"]["code"] == -32601
        assert raw.call(modern_request("tools/list"))["error"]["code"] == -32600
        assert raw.call(modern_request("tools/list", protocolVersion="2099-01-01")
                        )["error"]["code"] == -32600


def test_supported_versions_takes_the_modern_version_but_not_alone() -> None:
    """DES-1: 2026-07-28 is known; it is never negotiated by initialize; a server
    needs a legacy version beside it (modern-only servers are not built yet)."""
    server = Server("both", supported_versions=["2025-11-25", MODERN])
    assert server.supported_versions == ("2025-11-25",)
    assert server.modern_versions == (MODERN,)
    assert Server("default").modern_versions == (MODERN,)
    with pytest.raises(ValueError, match="modern-only"):
        Server("modern", supported_versions=[MODERN])
    with pytest.raises(ValueError, match="unknown protocol version"):
        Server("future", supported_versions=["2025-11-25", "2099-01-01"])


def test_the_modern_profile_says_what_the_era_changes_des_1() -> None:
    """DES-1: feature code reads flags; 2026-07-28's say what the modern era changes."""
    from mcp_sync.protocol._versions import KNOWN_VERSIONS, MODERN_VERSIONS, profile_for

    modern, legacy = profile_for(MODERN), profile_for("2025-11-25")
    changed = ("stateless", "result_type", "cache_fields", "input_required",
               "request_log_level", "no_ping", "no_resource_subscribe",
               "no_roots_list_changed", "not_found_invalid_params")
    assert all(getattr(modern, flag) for flag in changed)
    assert not any(getattr(profile_for(v), flag) for v in KNOWN_VERSIONS for flag in changed)
    # Kept from 2025-11-25; tasks moved to an extension, URL elicitation lost -32042 and
    # SSE resumption is gone.
    assert modern.structured_output and modern.icons and modern.argument_errors_as_results
    assert legacy.tasks and not modern.tasks
    assert not modern.elicitation_url and not modern.sse_polling and not modern.batching
    assert MODERN_VERSIONS == (MODERN,) and MODERN not in KNOWN_VERSIONS


def test_a_modern_request_in_a_batch_is_invalid(peer: RawPeer) -> None:
    """The modern era has no JSON-RPC batches: the element is refused with -32600."""
    peer.send([modern_request("tools/list", request_id="in-batch")])
    (answer,) = peer.receive()
    assert answer["id"] == "in-batch" and answer["error"]["code"] == -32600
    assert result_of(peer, modern_request("tools/list"))["resultType"] == "complete"


def test_a_cancelled_modern_request_is_never_answered(peer: RawPeer) -> None:
    """"Cancellation" (stdio): the client's notifications/cancelled ends the call; its
    function sees ctx.cancelled and no answer is written."""
    peer.send(modern_request("tools/call", {
        "name": "long_running", "arguments": {"steps": 2, "delay": 30},
        "_meta": {"progressToken": "c"}}, "to-cancel"))
    first = _checked(peer.receive())
    assert first["method"] == "notifications/progress"  # the call is running
    peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": "to-cancel", "reason": "no longer needed"}})
    answer, _ = ask(peer, modern_request("tools/list", request_id="after"))
    assert answer["id"] == "after"
    assert peer.nothing_more()


def test_every_result_names_the_server_as_it_is_now() -> None:
    """The serverInfo in a modern result's _meta follows the server's identity when the
    application changes it (name, version, title), though it is made once per identity."""
    from mcp_sync.testing import open_client

    server = Server("renamed", version="1.0")

    @server.tool()
    def hello() -> str:
        """Say hello."""
        return "hello"

    with open_client(server, supported_versions=(MODERN,)) as client:
        client.call_tool("hello", {})
        assert (client.server_info.name, client.server_info.version) == ("renamed", "1.0")
        server.version, server.title = "2.0", "Renamed"
        client.call_tool("hello", {})
        assert (client.server_info.version, client.server_info.title) == ("2.0", "Renamed")
