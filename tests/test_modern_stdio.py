"""The modern era (MCP 2026-07-28) over stdio: examples/everything_server.py as a real
child process, spoken to line by line, every line it writes checked against the schema
of the era of the request it answers (DES-19)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import EXAMPLES
from tests.helpers import INITIALIZED, RawChild
from tests.server_support import MODERN, modern_request, request
from tests.wire_schema import message_errors

EVERYTHING = [sys.executable, str(EXAMPLES / "everything_server.py")]


@pytest.fixture
def child() -> Iterator[RawChild]:
    started = RawChild(EVERYTHING)
    try:
        yield started
    finally:
        started.kill()


class Lines:
    """What the child wrote, sorted into answers by id and notifications, each checked
    against the schema of the version its request was served in."""

    def __init__(self, child: RawChild) -> None:
        self.child = child
        self.answers: dict[Any, dict[str, Any]] = {}
        self.notifications: list[dict[str, Any]] = []
        #: request id -> (method, version its answer must fit)
        self.sent: dict[Any, tuple[str, str]] = {}

    def send(self, message: dict[str, Any], version: str) -> None:
        self.sent[message["id"]] = (message["method"], version)
        self.child.send(message)

    def answer(self, request_id: Any) -> dict[str, Any]:
        while request_id not in self.answers:
            message = self.child.receive()
            if "id" not in message:
                self.notifications.append(message)
                continue
            method, version = self.sent[message["id"]]
            errors = message_errors(message, version, answers=method)
            assert not errors, (message, errors)
            self.answers[message["id"]] = message
        return self.answers.pop(request_id)


@pytest.mark.timeout(60)
def test_modern_requests_over_stdio_fit_the_2026_schema(child: RawChild) -> None:
    """DES-1, DES-19: discover, the lists, a read, a prompt, a completion and tool calls
    over a real stdio process, no initialize; each answer fits schema-2026-07-28.json."""
    lines = Lines(child)
    calls = [
        ("server/discover", {}),
        ("tools/list", {}),
        ("tools/call", {"name": "echo", "arguments": {"message": "Zürich ✓"}}),
        ("resources/list", {}),
        ("resources/templates/list", {}),
        ("resources/read", {"uri": "static://binary"}),
        ("prompts/list", {}),
        ("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}}),
        ("completion/complete", {"ref": {"type": "ref/resource", "uri": "greeting://{name}"},
                                 "argument": {"name": "name", "value": ""}}),
    ]
    for number, (method, params) in enumerate(calls):
        lines.send(modern_request(method, params, number), MODERN)
    results = [lines.answer(number)["result"] for number in range(len(calls))]
    assert all(result["resultType"] == "complete" for result in results)
    assert results[0]["supportedVersions"] == [MODERN]
    assert results[2]["content"] == [{"type": "text", "text": "Zürich ✓"}]
    assert lines.notifications == []
    assert child.close_stdin_and_wait() == 0


@pytest.mark.timeout(60)
def test_errors_and_opt_in_logs_over_stdio(child: RawChild) -> None:
    """"Version negotiation", "Logging", COEX-3's band used only in a modern answer:
    -32022 names the versions, a removed method is -32601, and a log message is written
    only for the request that asked for it."""
    lines = Lines(child)
    lines.send(modern_request("tools/list", request_id="old",
                              protocolVersion="2025-11-25"), MODERN)
    assert lines.answer("old")["error"]["data"] == {"supported": [MODERN],
                                                    "requested": "2025-11-25"}
    lines.send(modern_request("ping", request_id="ping"), MODERN)
    assert lines.answer("ping")["error"]["code"] == -32601
    arguments = {"level": "warning", "message": "careful"}
    lines.send(modern_request("tools/call", {"name": "log", "arguments": arguments},
                              "quiet"), MODERN)
    lines.send(modern_request("tools/call", {"name": "log", "arguments": arguments},
                              "loud", logLevel="info"), MODERN)
    assert lines.answer("quiet")["result"]["content"][0]["text"].startswith("filtered")
    assert lines.answer("loud")["result"]["content"][0]["text"] == "sent"
    assert [n["params"]["data"] for n in lines.notifications] == ["careful"]
    for notification in lines.notifications:
        assert not message_errors(notification, MODERN)


@pytest.mark.timeout(60)
def test_legacy_and_modern_requests_interleave_on_one_process(child: RawChild) -> None:
    """"How eras find each other", COEX-5, COEX-9: a modern call still running while
    the same process is initialized as a legacy session; the modern answer keeps its
    era, the legacy ones have theirs, and after initialize the modern _meta is opaque."""
    lines = Lines(child)
    lines.send(modern_request("server/discover", request_id="discover"), MODERN)
    assert lines.answer("discover")["result"]["resultType"] == "complete"
    # Long enough to be still running while initialize is answered; it reports progress
    # after each step, so the test waits for the first step instead of guessing.
    lines.send(modern_request("tools/call", {
        "name": "long_running", "arguments": {"steps": 2, "delay": 3.0},
        "_meta": {"progressToken": "slow"}}, "slow"), MODERN)
    first = lines.child.receive()
    assert first["method"] == "notifications/progress", first
    assert not message_errors(first, MODERN)
    lines.send(request("initialize", {"protocolVersion": MODERN, "capabilities": {},
                                      "clientInfo": {"name": "legacy", "version": "1"}},
                       "init"), "2025-11-25")
    assert lines.answer("init")["result"]["protocolVersion"] == "2025-11-25"
    child.send(INITIALIZED)
    lines.send(request("tools/list", {}, "legacy-list"), "2025-11-25")
    legacy = lines.answer("legacy-list")["result"]
    assert "resultType" not in legacy
    lines.send(modern_request("tools/list", request_id="opaque"), "2025-11-25")
    assert "resultType" not in lines.answer("opaque")["result"]
    slow = lines.answer("slow")["result"]
    assert slow["resultType"] == "complete" and slow["content"][0]["text"] == "done"
    assert slow["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "everything"
    assert child.close_stdin_and_wait() == 0
