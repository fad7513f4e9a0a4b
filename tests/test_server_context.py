"""The Context a function receives: sampling, roots, reading our own resources, and the
server's hook for roots changes."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from mcp_sync import CapabilityError, Context, RpcError, Server, types
from mcp_sync.content import Image
from tests.helpers import INITIALIZED
from tests.server_support import check, raw_session, recorded_client, request

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "A haiku."},
           "model": "test-model-1", "stopReason": "endTurn"}

pytestmark = pytest.mark.timeout(30)


def make_server() -> Server:
    server = Server("ctx")

    @server.tool()
    def ask(question: str, ctx: Context) -> str:
        try:
            answer = ctx.sample(question, max_tokens=50, system_prompt="Be brief.",
                                temperature=0.2, stop_sequences=["\n\n"],
                                model_preferences=["claude-3-5", "gpt-4o"],
                                include_context="thisServer", metadata={"k": "v"})
        except CapabilityError as exc:
            return f"no sampling: {exc}"
        except RpcError as exc:
            return f"refused: {exc.message} ({int(exc.code)})"
        assert isinstance(answer.content, types.TextContent)
        return f"{answer.model}/{answer.stop_reason}: {answer.content.text}"

    @server.tool()
    def conversation(ctx: Context) -> str:
        answer = ctx.sample(["Describe this image.", Image(PNG),
                             ("assistant", "It is tiny."), ("user", "Why?")],
                            max_tokens=10)
        return answer.model

    @server.tool()
    def roots(ctx: Context) -> list[str]:
        try:
            return [root.uri for root in ctx.list_roots()]
        except CapabilityError:
            return ["no roots"]

    @server.resource("notes://{name}")
    def note(name: str) -> str:
        return f"note {name}"

    @server.tool()
    def reread(name: str, ctx: Context) -> str:
        contents = ctx.read_resource(f"notes://{name}")
        first = contents[0]
        assert isinstance(first, types.TextResourceContents)
        return first.text

    return server


def test_sample_sends_create_message_sampling_2_4() -> None:
    """SAMPLING-2/4, JSONRPC-15: a tool's ctx.sample is a schema-valid
    sampling/createMessage; the client's result comes back typed while the tools/call
    waits."""
    with raw_session(make_server(), {"sampling": {}}) as (peer, _):
        peer.send(request("tools/call", {"name": "ask", "arguments": {"question": "Hi?"}}, 1))
        sampling = peer.receive()
        check(sampling, "CreateMessageRequest")
        assert sampling["params"] == {
            "messages": [{"role": "user", "content": {"type": "text", "text": "Hi?"}}],
            "maxTokens": 50, "systemPrompt": "Be brief.", "includeContext": "thisServer",
            "temperature": 0.2, "stopSequences": ["\n\n"], "metadata": {"k": "v"},
            "modelPreferences": {"hints": [{"name": "claude-3-5"}, {"name": "gpt-4o"}]},
        }
        peer.send({"jsonrpc": "2.0", "id": sampling["id"], "result": SAMPLED})
        answer = peer.receive()
        assert answer["id"] == 1
        assert answer["result"]["content"][0]["text"] == "test-model-1/endTurn: A haiku."


def test_sample_message_list_sampling_3() -> None:
    """SAMPLING-3: strings, images and (role, content) tuples become sampling messages."""
    with raw_session(make_server(), {"sampling": {}}) as (peer, _):
        peer.send(request("tools/call", {"name": "conversation"}, 1))
        sampling = peer.receive()
        check(sampling, "CreateMessageRequest")
        messages = sampling["params"]["messages"]
        assert [(m["role"], m["content"]["type"]) for m in messages] == [
            ("user", "text"), ("user", "image"), ("assistant", "text"), ("user", "text")]
        assert messages[1]["content"]["mimeType"] == "image/png"
        peer.send({"jsonrpc": "2.0", "id": sampling["id"], "result": SAMPLED})
        assert peer.receive()["result"]["content"][0]["text"] == "test-model-1"


def test_sample_without_capability_raises_caps_5() -> None:
    """CAPS-5: without the client's sampling capability, ctx.sample raises
    CapabilityError and nothing is sent."""
    with raw_session(make_server(), {}) as (peer, _):
        answer = peer.call(request("tools/call", {"name": "ask",
                                                  "arguments": {"question": "x"}}, 1))
        assert answer["id"] == 1
        assert answer["result"]["content"][0]["text"].startswith("no sampling:")


def test_sample_rejection_reaches_the_tool_sampling_8() -> None:
    """SAMPLING-8, AMBIG-19: the client's error (a user rejection, -1) is raised in the
    tool as an RpcError."""
    with raw_session(make_server(), {"sampling": {}}) as (peer, _):
        peer.send(request("tools/call", {"name": "ask", "arguments": {"question": "x"}}, 1))
        sampling = peer.receive()
        peer.send({"jsonrpc": "2.0", "id": sampling["id"],
                   "error": {"code": -1, "message": "User rejected sampling request"}})
        text = peer.receive()["result"]["content"][0]["text"]
        assert text == "refused: User rejected sampling request (-1)"


def test_list_roots_roots_2_7() -> None:
    """ROOTS-2/7: ctx.list_roots asks roots/list and returns typed roots; without the
    capability it raises CapabilityError and sends nothing."""
    with raw_session(make_server(), {"roots": {"listChanged": True}}) as (peer, _):
        peer.send(request("tools/call", {"name": "roots"}, 1))
        roots_request = peer.receive()
        check(roots_request, "ListRootsRequest")
        peer.send({"jsonrpc": "2.0", "id": roots_request["id"], "result": {"roots": [
            {"uri": "file:///home/me/project", "name": "project"}]}})
        answer = peer.receive()
        assert answer["result"]["content"][0]["text"] == '["file:///home/me/project"]'
    with raw_session(make_server(), {}) as (peer, _):
        answer = peer.call(request("tools/call", {"name": "roots"}, 1))
        assert answer["result"]["content"][0]["text"] == '["no roots"]'


def test_nested_requests_are_related_to_the_call() -> None:
    """Requests a tool makes to the client name the tools/call they serve (related_to),
    so Streamable HTTP can send them on that call's stream."""
    import inspect

    from mcp_sync import Client

    if "roots" not in inspect.signature(Client).parameters:
        pytest.skip("this Client cannot offer roots yet")
    with recorded_client(make_server(), roots=["file:///tmp/x"]) as (client, recording, _):
        result = client.call_tool("roots")
        assert result.content == [types.TextContent(text='["file:///tmp/x"]')]
        related = recording.related("roots/list")
    assert len(related) == 1 and related[0] is not None


def test_requests_wait_for_initialized_lifecycle_6() -> None:
    """LIFECYCLE-6: a tool called before the client's initialized (pipelined) sends its
    roots/list only after initialized arrives."""
    with raw_session(make_server(), {"roots": {}}, initialized=False) as (peer, _):
        peer.send(request("tools/call", {"name": "roots"}, 1))
        assert peer.nothing_more()
        peer.send(INITIALIZED)
        roots_request = peer.receive()
        assert roots_request["method"] == "roots/list"
        peer.send({"jsonrpc": "2.0", "id": roots_request["id"], "result": {"roots": []}})
        assert peer.receive()["result"]["content"][0]["text"] == "[]"


def test_read_own_resource_from_a_tool() -> None:
    """ctx.read_resource reads the server's own resources, templates included."""
    with raw_session(make_server()) as (peer, _):
        answer = peer.call(request("tools/call", {"name": "reread",
                                                  "arguments": {"name": "a"}}, 1))
        assert answer["result"]["content"][0]["text"] == "note a"
        missing = peer.call(request("tools/call", {"name": "reread",
                                                   "arguments": {"name": "../x"}}, 2))
        assert missing["result"]["isError"] is True
        assert "Resource not found" in missing["result"]["content"][0]["text"]


def test_on_roots_changed_hook_roots_7() -> None:
    """ROOTS-4/7: the client's roots/list_changed runs the server's hook, which may ask
    for the new roots at once."""
    server = make_server()
    seen: list[list[str]] = []
    called = threading.Event()

    @server.on_roots_changed
    def refresh(connection: Any) -> None:
        seen.append([root.uri for root in connection.list_roots(timeout=5)])
        called.set()

    @server.on_roots_changed
    def broken(connection: Any) -> None:
        raise RuntimeError("a bad hook must not stop the others")

    with raw_session(server, {"roots": {"listChanged": True}}) as (peer, _):
        peer.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
        roots_request = peer.receive()
        assert roots_request["method"] == "roots/list"
        peer.send({"jsonrpc": "2.0", "id": roots_request["id"],
                   "result": {"roots": [{"uri": "file:///new"}]}})
        assert called.wait(5)
        assert peer.call(request("ping", None, "p")) == {"jsonrpc": "2.0", "id": "p",
                                                         "result": {}}
    assert seen == [["file:///new"]]


def test_context_properties() -> None:
    """CAPS-1, LIFECYCLE-3: the context knows the request, the connection and what the
    client declared."""
    server = Server("s")
    seen: dict[str, Any] = {}

    @server.tool()
    def look(ctx: Context) -> str:
        seen.update(method=ctx.method, server=ctx.server, version=ctx.protocol_version,
                    connection=ctx.connection, caps=ctx.client_capabilities)
        return "ok"

    with raw_session(server, {"sampling": {}}) as (peer, connection):
        peer.call(request("tools/call", {"name": "look"}, 1))
    assert seen["method"] == "tools/call"
    assert seen["server"] is server
    assert seen["connection"] is connection
    assert seen["version"] == "2025-03-26"
    assert seen["caps"] == types.ClientCapabilities(sampling={})
