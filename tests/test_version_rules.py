"""Rules newer revisions added: capabilities per version (DES-5), id-less errors
(V1125-1, DES-13), tool names (V1125-31), argument errors as results (V1125-32, NAMBIG-7,
DES-9) and JSON Schema 2020-12 kept intact (V1125-2..4)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mcp_sync import Client, Server
from mcp_sync.errors import InvalidParams
from mcp_sync.protocol._convert import from_wire, to_wire
from mcp_sync.testing import open_client
from tests.helpers import LEGACY_ERA, RawPeer, answer_initialize, initialize_result
from tests.test_client import FakeServer

VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


def counting_server() -> tuple[Server, list[int]]:
    calls: list[int] = []
    server = Server("rules")

    @server.tool()
    def count(n: int) -> int:
        """Count."""
        calls.append(n)
        return n

    return server, calls


# --- argument errors (V1125-32, NAMBIG-7, DES-9) -------------------------------------------


@pytest.mark.parametrize("arguments", [{"n": "three"}, {}, {"n": 1, "extra": 2}])
def test_bad_arguments_are_an_is_error_result_in_2025_11_25_v1125_32(
        arguments: dict[str, Any]) -> None:
    server, calls = counting_server()
    with open_client(server, **LEGACY_ERA) as client:
        assert client.protocol_version == "2025-11-25"
        result = client.call_tool("count", arguments)
    assert result.is_error is True
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith("Invalid arguments for tool 'count': ")
    assert calls == []


@pytest.mark.parametrize("version", VERSIONS[:-1])
def test_bad_arguments_are_32602_before_2025_11_25_nambig_7(version: str) -> None:
    server, calls = counting_server()
    with open_client(server, protocol_version=version) as client, \
            pytest.raises(InvalidParams, match="'n'"):
        client.call_tool("count", {"n": "three"})
    assert calls == []


@pytest.mark.parametrize("version", VERSIONS)
def test_unknown_tool_and_non_object_arguments_stay_32602_des_9(version: str, wire: Any) -> None:
    server, _ = counting_server()
    with open_client(server, protocol_version=version) as client:
        with pytest.raises(InvalidParams, match="Unknown tool: nope"):
            client.call_tool("nope")
        with wire.allow_invalid(), pytest.raises(InvalidParams):
            client.send_request("tools/call", {"name": "count", "arguments": [1]})


# --- tool names (V1125-31) -----------------------------------------------------------------


@pytest.mark.parametrize("name", ["my tool", "", "x" * 129, "café", "a/b", "tool!"])
def test_registering_a_name_outside_the_rules_warns_v1125_31(name: str) -> None:
    server = Server("names")
    with pytest.warns(UserWarning, match="tool name"):
        server.add_tool(lambda: "ok", name=name)


@pytest.mark.parametrize("name", ["add", "get_user.v2", "A-b_c.d", "x" * 128])
def test_names_within_the_rules_do_not_warn_v1125_31(name: str,
                                                      recwarn: pytest.WarningsRecorder) -> None:
    Server("names").add_tool(lambda: "ok", name=name)
    assert not [w for w in recwarn if "tool name" in str(w.message)]


# --- capabilities per version (DES-5) ------------------------------------------------------


def full_server() -> Server:
    server = Server("caps", completions=True, tools=True, resources=True, prompts=True)
    return server


@pytest.mark.parametrize("version", VERSIONS)
def test_initialize_advertises_only_keys_of_the_negotiated_version_des_5(
        version: str, wire: Any) -> None:
    with open_client(full_server(), protocol_version=version) as client:
        assert client.protocol_version == version
    [result] = [m["result"] for m in wire.sent
                if isinstance(m, dict) and "serverInfo" in m.get("result", {})]
    keys = set(result["capabilities"])
    assert keys >= {"tools", "resources", "prompts", "logging"}
    assert ("completions" in keys) == (version != "2024-11-05")
    assert "tasks" not in keys


# --- id-less errors (V1125-1, DES-13) ------------------------------------------------------


@pytest.mark.parametrize("envelope", [
    pytest.param({"jsonrpc": "2.0"}, id="no id"),
    pytest.param({"jsonrpc": "2.0", "id": None}, id="null id"),
])
def test_an_id_less_error_is_logged_and_fails_no_call_v1125_1(
        caplog: pytest.LogCaptureFixture, envelope: dict[str, Any]) -> None:
    def script(peer: RawPeer) -> None:
        answer_initialize(peer, initialize_result("2025-11-25"))
        assert peer.receive()["method"] == "notifications/initialized"
        ping = peer.receive()
        peer.send({**envelope, "error": {"code": -32700, "message": "Parse error"}})
        peer.send({"jsonrpc": "2.0", "id": ping["id"], "result": {}})

    server = FakeServer(script)
    try:
        with caplog.at_level(logging.WARNING), Client(server.peer.transport) as client:
            client.ping()
    finally:
        server.finish()
    assert any("without an id" in r.getMessage() and "Parse error" in r.getMessage()
               for r in caplog.records)


# --- JSON Schema 2020-12 kept intact (V1125-2..4) -----------------------------------------

SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"point": {"type": "object", "properties": {"x": {"type": "number"}},
                        "required": ["x"], "additionalProperties": False}},
    "properties": {"points": {"type": "array", "items": {"$ref": "#/$defs/point"},
                              "prefixItems": [{"$ref": "#/$defs/point"}]},
                   "mode": {"const": "fast"}},
    "dependentRequired": {"mode": ["points"]},
    "unevaluatedProperties": False,
}


def test_an_explicit_2020_12_schema_reaches_the_client_unchanged_v1125_2() -> None:
    """A server's input and output schemas, with ``$schema``, ``$defs`` and 2020-12
    keywords, are decoded and encoded again without a change."""
    tool = {"name": "plot", "inputSchema": SCHEMA_2020_12, "outputSchema": SCHEMA_2020_12}

    def script(peer: RawPeer) -> None:
        answer_initialize(peer, initialize_result("2025-11-25"))
        assert peer.receive()["method"] == "notifications/initialized"
        listing = peer.receive()
        peer.send({"jsonrpc": "2.0", "id": listing["id"], "result": {"tools": [tool]}})

    server = FakeServer(script)
    try:
        with Client(server.peer.transport) as client:
            [listed] = client.list_tools()
    finally:
        server.finish()
    assert listed.input_schema == SCHEMA_2020_12
    assert to_wire(listed)["inputSchema"] == SCHEMA_2020_12
    assert to_wire(listed)["outputSchema"] == SCHEMA_2020_12
    assert to_wire(from_wire(to_wire(listed), type(listed))) == to_wire(listed)
