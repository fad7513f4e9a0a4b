"""Every message both sides send fits the negotiated version's schema (DES-19).

A representative session (initialize, tools, resources, prompts, completion, logging,
progress, sampling, roots, errors, ping) runs in each of the four versions, over the
in-memory transport and over Streamable HTTP; every message is recorded at the client's
transport and validated with tests/wire_schema.py. V0618-1/V0618-2: a JSON array is never
sent in a session that has no batches (the 2025-06-18 and 2025-11-25 schemas have none).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_sync import Client, Context, Server, types
from mcp_sync.errors import InvalidParams
from mcp_sync.transports.http_client import HttpClientTransport
from mcp_sync.transports.http_server import serve_http
from mcp_sync.transports.memory import memory_pair
from tests.wire_schema import VERSIONS, Conversation, RecordingTransport, message_errors


def representative_server() -> Server:
    server = Server("wire", version="1.0", instructions="Checked on the wire.")

    @server.tool(annotations={"readOnlyHint": True})
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def steps(count: int, ctx: Context) -> str:
        """Report progress and log while working."""
        for step in range(count):
            ctx.report_progress(step + 1, count, f"step {step + 1}")
            ctx.info(f"did step {step + 1}")
        return "done"

    @server.tool()
    def ask(ctx: Context) -> str:
        """Ask the client's model, and list its roots."""
        answer = ctx.sample("Say hi", max_tokens=10)
        roots = ctx.list_roots()
        text = answer.content.text if isinstance(answer.content, types.TextContent) else "?"
        return f"{text} with {len(roots)} root(s)"

    @server.tool()
    def fail() -> str:
        """Always fails."""
        raise RuntimeError("broken on purpose")

    @server.resource("config://app", description="Settings.", mime_type="application/json")
    def config() -> dict[str, Any]:
        return {"debug": True}

    @server.resource("users://{user_id}/profile", complete={"user_id": ["ann", "bob"]})
    def profile(user_id: str) -> str:
        return f"profile of {user_id}"

    @server.prompt(complete={"language": ["python", "rust"]})
    def review(code: str, language: str = "python") -> str:
        """Review some code."""
        return f"Review this {language}: {code}"

    return server


def sampling(params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    return types.CreateMessageResult(role="assistant", model="fake",
                                     content=types.TextContent(text="hi"))


def run_session(client: Client, version: str) -> None:
    assert client.protocol_version == version
    assert [tool.name for tool in client.list_tools()] == ["add", "steps", "ask", "fail"]
    assert client.call_tool("add", {"a": 2, "b": 40}).content[0].text == "42"  # type: ignore[union-attr]
    progress: list[Any] = []
    client.set_logging_level("debug")
    result = client.call_tool("steps", {"count": 2}, on_progress=lambda *a: progress.append(a))
    assert result.content[0].text == "done"  # type: ignore[union-attr]
    assert len(progress) == 2
    assert client.call_tool("ask").content[0].text == "hi with 1 root(s)"  # type: ignore[union-attr]
    assert client.call_tool("fail").is_error is True
    with pytest.raises(InvalidParams):
        client.call_tool("no_such_tool")
    bad = None
    with contextlib.suppress(InvalidParams):
        bad = client.call_tool("add", {"a": "x", "b": 1})
    assert (bad is not None and bad.is_error) == (version == "2025-11-25")
    assert [r.uri for r in client.list_resources()] == ["config://app"]
    assert [t.uri_template for t in client.list_resource_templates()] == [
        "users://{user_id}/profile"]
    assert client.read_resource("users://ann/profile").contents[0].text == "profile of ann"  # type: ignore[union-attr]
    client.read_resource("config://app")
    assert [p.name for p in client.list_prompts()] == ["review"]
    client.get_prompt("review", {"code": "x = 1"})
    if version != "2024-11-05":
        assert client.complete("review", "language", "r").completion.values == ["rust"]
    client.ping()


@contextlib.contextmanager
def memory_client(conversation: Conversation, version: str) -> Iterator[Client]:
    client_end, server_end = memory_pair()
    connection = representative_server().connect(server_end)
    try:
        with Client(RecordingTransport(client_end, conversation), protocol_version=version,
                    sampling_handler=sampling, roots=["file:///tmp/project"],
                    timeout=20) as client:
            yield client
    finally:
        connection.close()


@contextlib.contextmanager
def http_client(conversation: Conversation, version: str) -> Iterator[Client]:
    with serve_http(representative_server()) as handle:
        transport = HttpClientTransport(handle.url)
        with Client(RecordingTransport(transport, conversation), protocol_version=version,
                    sampling_handler=sampling, roots=["file:///tmp/project"],
                    timeout=20) as client:
            yield client


@pytest.mark.timeout(60)
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("over", ["memory", "http"])
def test_every_message_fits_the_negotiated_schema_des_19(version: str, over: str) -> None:
    conversation = Conversation()
    connect = memory_client if over == "memory" else http_client
    with connect(conversation, version) as client:
        run_session(client, version)
    assert conversation.negotiated() == version
    conversation.assert_valid()
    methods = {m.get("method") for _, m in conversation.messages if isinstance(m, dict)}
    assert {"initialize", "tools/call", "sampling/createMessage", "roots/list",
            "notifications/progress", "notifications/message"} <= methods
    if version in ("2025-06-18", "2025-11-25"):
        # V0618-1: no batch in either direction.
        assert not [m for _, m in conversation.messages if isinstance(m, list)]


def test_the_harness_catches_a_message_outside_the_schema() -> None:
    """The checker itself: a batch is refused in 2025-06-18 and allowed in 2025-03-26;
    a result is checked by the method it answers."""
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    conversation = Conversation("2025-06-18")
    conversation.sent_by_client([ping])
    assert conversation.problems()
    assert not message_errors([ping], "2025-03-26")
    conversation = Conversation("2025-11-25")
    conversation.sent_by_client({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    conversation.sent_by_server({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{}]}})
    assert conversation.problems()
    assert not message_errors({"jsonrpc": "2.0", "error": {"code": -32700, "message": "x"}},
                              "2025-11-25")
