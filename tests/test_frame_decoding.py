"""Received frames: a large one is parsed whole, with the application's garbage collector
left as it is (the library never turns it off, not even for a moment)."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mcp_sync import Server, jsonrpc, types
from mcp_sync.testing import open_client
from mcp_sync.transports._decode import decode_frame


def _items(count: int) -> list[dict[str, Any]]:
    return [{"type": "text", "text": f"item {i}"} for i in range(count)]


@contextmanager
def _collections() -> Iterator[list[int]]:
    """The generation of every collection the interpreter runs inside the block."""
    seen: list[int] = []

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            seen.append(info["generation"])

    gc.callbacks.append(callback)
    try:
        yield seen
    finally:
        gc.callbacks.remove(callback)


def test_a_large_frame_is_parsed_while_the_collector_keeps_running() -> None:
    large = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"content": _items(20_000)}})
    assert gc.isenabled()
    with _collections() as seen:
        answer = decode_frame(large.encode())
    assert isinstance(answer, jsonrpc.Response)
    assert answer.result["content"][19_999] == {"type": "text", "text": "item 19999"}
    assert seen, "no collection ran while 20,000 objects were made"
    assert gc.isenabled()


def test_a_large_frame_that_is_not_json_is_a_parse_error() -> None:
    broken = '{"jsonrpc": "2.0", "id": 1, "result": {"text": "' + "x" * 100_000 + '"'
    invalid = decode_frame(broken)
    assert isinstance(invalid, jsonrpc.Invalid)
    assert invalid.error.code == -32700
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled() -> None:
    """An application that turned collection off finds it off after our parse."""
    large = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"content": _items(5000)}})
    gc.disable()
    try:
        assert isinstance(decode_frame(large), jsonrpc.Response)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_large_result_reaches_the_client_whole() -> None:
    server = Server("many")

    @server.tool()
    def many(n: int) -> list[types.TextContent]:
        return [types.TextContent(text=f"item {i}") for i in range(n)]

    with open_client(server) as client, _collections() as seen:
        result = client.call_tool("many", {"n": 5000})
    assert len(result.content) == 5000
    assert result.content[4999] == types.TextContent(text="item 4999")
    assert seen
    assert gc.isenabled()
