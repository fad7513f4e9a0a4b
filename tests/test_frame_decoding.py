"""Received frames: a large one is parsed with the garbage collector paused, which is always
resumed; every transport parses through ``decode_frame``."""

from __future__ import annotations

import ast
import gc
import json
import random
import threading
from pathlib import Path
from typing import Any

import pytest

from mcp_sync import Server, jsonrpc, types
from mcp_sync.testing import open_client
from mcp_sync.transports._decode import LARGE_FRAME, decode_frame, gc_paused

TRANSPORTS = Path(jsonrpc.__file__).resolve().parent / "transports"


def _items(count: int) -> list[dict[str, Any]]:
    return [{"type": "text", "text": f"item {i}"} for i in range(count)]


def test_paused_inside_and_resumed_after() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_left_disabled_when_it_was_disabled_before() -> None:
    gc.disable()
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_resumed_after_an_exception() -> None:
    with pytest.raises(RuntimeError, match="boom"), gc_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_overlapping_pauses_resume_when_the_last_one_ends() -> None:
    entered = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with gc_paused():
            entered.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert entered.wait(10)
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled(), "resumed while another thread was still decoding"
    finally:
        release.set()
        holder.join(10)
    assert not holder.is_alive()
    assert gc.isenabled()


def test_many_threads_pausing_at_once_leave_it_enabled() -> None:
    errors: list[BaseException] = []
    start = threading.Barrier(8, timeout=10)

    def churn(seed: int) -> None:
        chooser = random.Random(seed)
        try:
            start.wait()
            for _ in range(300):
                with gc_paused():
                    if not gc.isenabled() and chooser.random() < 0.5:
                        with gc_paused():
                            assert not gc.isenabled()
                    assert not gc.isenabled()
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=churn, args=(seed,)) for seed in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert not any(thread.is_alive() for thread in threads)
    assert errors == []
    assert gc.isenabled()


def _spy_loads(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Each time jsonrpc parses a frame: whether the collector was enabled meanwhile."""
    seen: list[bool] = []
    real = jsonrpc._loads

    def loads(text: str) -> Any:
        seen.append(gc.isenabled())
        return real(text)

    monkeypatch.setattr(jsonrpc, "_loads", loads)
    return seen


def test_a_large_frame_is_parsed_with_collection_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _spy_loads(monkeypatch)
    large = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"content": _items(5000)}})
    small = json.dumps({"jsonrpc": "2.0", "id": 2, "result": {"content": _items(3)}})
    assert len(large) > LARGE_FRAME > len(small)
    answer = decode_frame(large.encode())
    assert isinstance(answer, jsonrpc.Response)
    assert len(answer.result["content"]) == 5000
    assert isinstance(decode_frame(small), jsonrpc.Response)
    assert seen == [False, True]
    assert gc.isenabled()


def test_a_large_frame_that_is_not_json_still_resumes_collection(
        monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _spy_loads(monkeypatch)
    broken = '{"jsonrpc": "2.0", "id": 1, "result": {"text": "' + "x" * 100_000 + '"'
    invalid = decode_frame(broken)
    assert isinstance(invalid, jsonrpc.Invalid)
    assert invalid.error.code == -32700
    assert seen == [False]
    assert gc.isenabled()


def test_a_large_result_reaches_the_client_through_a_paused_parse(
        monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _spy_loads(monkeypatch)
    server = Server("many")

    @server.tool()
    def many(n: int) -> list[types.TextContent]:
        return [types.TextContent(text=f"item {i}") for i in range(n)]

    with open_client(server) as client:
        assert seen.count(False) == 0
        result = client.call_tool("many", {"n": 5000})
    assert result.content[4999] == types.TextContent(text="item 4999")
    assert seen.count(False) == 1, "the one large frame, the answer, parsed while paused"
    assert gc.isenabled()


def test_every_transport_parses_frames_through_decode_frame() -> None:
    for path in sorted(TRANSPORTS.glob("*.py")):
        if path.name == "_decode.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("jsonrpc"):
                names = {alias.name for alias in node.names}
                assert "decode" not in names, f"{path.name}:{node.lineno} imports decode"
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                called = f"{node.value.id}.{node.attr}"
                assert called != "jsonrpc.decode", f"{path.name}:{node.lineno} uses {called}"
