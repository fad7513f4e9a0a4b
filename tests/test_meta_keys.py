"""``_meta`` keys: syntax and the reserved prefixes (V0618-5..7, V1125-5, DES-17)."""

from __future__ import annotations

import pytest

from mcp_sync import Context, Server
from mcp_sync.protocol._meta_keys import (
    MODEL_IMMEDIATE_RESPONSE_KEY,
    PROGRESS_TOKEN_KEY,
    RELATED_TASK_KEY,
    check_meta_key,
    is_reserved_meta_key,
    is_valid_meta_key,
)
from mcp_sync.testing import open_client


@pytest.mark.parametrize("key", [
    "progressToken", "com.example/trace", "com.example/", "a/b", "x", "", "a-b.c_d",
    "com.example-1.tools/my.key", "com.example.mcp/thing",
])
def test_valid_keys_v0618_6(key: str) -> None:
    assert is_valid_meta_key(key)


@pytest.mark.parametrize("key", [
    "-x", "x-", "_x", "com..example/x", "1com/x", "com-/x", "com.example/-x", "a b",
    "com/example/x", "é",
])
def test_invalid_keys_v0618_6(key: str) -> None:
    assert not is_valid_meta_key(key)
    with pytest.raises(ValueError, match="not a valid _meta key"):
        check_meta_key(key)


@pytest.mark.parametrize("key", [
    "mcp.dev/x", "tools.mcp.com/x", "api.modelcontextprotocol.org/x",   # V0618-7
    "io.modelcontextprotocol/x", "dev.mcp/x", "com.mcp.tools/x",       # V1125-5
    "MCP.dev/x",
])
def test_reserved_prefixes_of_both_versions_are_refused_v0618_7_v1125_5(key: str) -> None:
    assert is_reserved_meta_key(key)
    with pytest.raises(ValueError, match="reserved for MCP"):
        check_meta_key(key)


@pytest.mark.parametrize("key", ["com.example.mcp/x", "mcp/x", "example.com/mcp", "x"])
def test_not_reserved(key: str) -> None:
    assert not is_reserved_meta_key(key)
    assert check_meta_key(key) == key


def test_the_protocols_own_keys_are_well_formed_des_17() -> None:
    for key in (PROGRESS_TOKEN_KEY, RELATED_TASK_KEY, MODEL_IMMEDIATE_RESPONSE_KEY):
        assert is_valid_meta_key(key)
    assert is_reserved_meta_key(RELATED_TASK_KEY)
    assert is_reserved_meta_key(MODEL_IMMEDIATE_RESPONSE_KEY)


def test_reserved_keys_from_a_peer_pass_through_and_never_reach_arguments_v0618_5() -> None:
    server = Server("meta")
    seen: dict[str, object] = {}

    @server.tool()
    def show(ctx: Context, text: str = "") -> str:
        """Show."""
        seen["text"] = text
        return "ok"

    meta = {"io.modelcontextprotocol/related-task": {"taskId": "t"}, "mcp.dev/x": 1}
    with open_client(server) as client:
        answer = client.send_request("tools/call",
                                     {"name": "show", "arguments": {}, "_meta": meta})
    assert answer["content"][0]["text"] == "ok"
    assert seen == {"text": ""}
