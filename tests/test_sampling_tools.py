"""Sampling with tools (2025-11-25): ctx.sample(tools=...) gated on the client's
``sampling.tools``, the tool loop's content blocks, and the client's checks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mcp_sync import CapabilityError, Client, Context, Server, types
from mcp_sync.errors import ErrorCode
from tests.conftest import WireLog
from tests.elicitation_support import check_version
from tests.helpers import ScriptedServer
from tests.server_support import raw_session, request

pytestmark = pytest.mark.timeout(30)

NEW, JUNE = "2025-11-25", "2025-06-18"
Start = Callable[..., ScriptedServer]
WEATHER = {"name": "weather", "description": "The weather in a city.",
           "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}},
                           "required": ["city"]}}
TOOL_USE = {"role": "assistant", "model": "m", "stopReason": "toolUse", "content": [
    {"type": "tool_use", "id": "call-1", "name": "weather", "input": {"city": "Paris"},
     "_meta": {"cache": "k1"}}]}
FINAL = {"role": "assistant", "model": "m", "stopReason": "endTurn",
         "content": {"type": "text", "text": "Sunny in Paris."}}


def make_server() -> Server:
    server = Server("loop")

    @server.tool()
    def forecast(ctx: Context) -> str:
        history: list[Any] = ["What is the weather in Paris?"]
        try:
            reply = ctx.sample(history, max_tokens=50, tools=[WEATHER],
                               tool_choice="auto")
            for _ in range(3):  # a bounded loop (V1125-49)
                if not reply.tool_uses:
                    break
                results = [types.ToolResultContent(
                    tool_use_id=use.id, content=[types.TextContent(text="sunny")],
                    meta=use.meta) for use in reply.tool_uses]
                history += [types.SamplingMessage(role="assistant", content=reply.content),
                            types.SamplingMessage(role="user", content=results)]
                reply = ctx.sample(history, max_tokens=50, tools=[WEATHER])
        except CapabilityError as exc:
            return f"CapabilityError: {exc}"
        return reply.text or ""

    @server.tool()
    def mixed(ctx: Context) -> str:
        message = types.SamplingMessage(role="user", content=[
            types.TextContent(text="and"), types.ToolResultContent(tool_use_id="x",
                                                                    content=[])])
        try:
            ctx.sample([message], max_tokens=5)
        except ValueError as exc:
            return str(exc)
        return "sent"

    @server.tool()
    def context(ctx: Context) -> str:
        return ctx.sample("hi", max_tokens=5, include_context="thisServer").model

    return server


def test_tool_loop_v1125_47_48_51(wire: WireLog) -> None:
    """V1125-47/48/51: tools and toolChoice go to a client that declared sampling.tools;
    the two-round loop fits the 2025-11-25 schema and tool_use ``_meta`` comes back."""
    caps = {"sampling": {"tools": {}}}
    # Checked against the 2025-11-25 schema below, not the fixture's 2025-03-26 one.
    with wire.allow_invalid(), raw_session(make_server(), caps, version=NEW) as (peer, _):
        peer.send(request("tools/call", {"name": "forecast"}, 1))
        first = check_version(peer.receive(), "CreateMessageRequest", NEW)
        assert first["params"]["tools"] == [WEATHER]
        assert first["params"]["toolChoice"] == {"mode": "auto"}
        peer.send({"jsonrpc": "2.0", "id": first["id"], "result": check_version(
            TOOL_USE, "CreateMessageResult", NEW)})
        second = check_version(peer.receive(), "CreateMessageRequest", NEW)
        messages = second["params"]["messages"]
        assert messages[1] == {"role": "assistant", "content": TOOL_USE["content"]}
        assert messages[2] == {"role": "user", "content": [{
            "type": "tool_result", "toolUseId": "call-1",
            "content": [{"type": "text", "text": "sunny"}], "_meta": {"cache": "k1"}}]}
        peer.send({"jsonrpc": "2.0", "id": second["id"], "result": FINAL})
        assert peer.receive()["result"]["content"][0]["text"] == "Sunny in Paris."


@pytest.mark.parametrize(("caps", "version", "why"), [
    ({"sampling": {}}, NEW, "did not declare sampling.tools"),
    ({"sampling": {"tools": {}}}, JUNE, "needs protocol version 2025-11-25"),
])
def test_tools_need_the_capability_v1125_47_des_5(
        caps: dict[str, Any], version: str, why: str) -> None:
    """V1125-47, DES-5: without sampling.tools, or before 2025-11-25, ctx.sample with
    tools raises CapabilityError and sends nothing."""
    with raw_session(make_server(), caps, version=version) as (peer, _):
        text = peer.call(request("tools/call", {"name": "forecast"}, 1))
        assert text["id"] == 1
        assert why in text["result"]["content"][0]["text"]


def test_history_mixing_tool_results_refused_locally_v1125_49() -> None:
    """V1125-49: the server never builds a message mixing tool results with text."""
    with raw_session(make_server(), {"sampling": {"tools": {}}}, version=NEW) as (peer, _):
        text = peer.call(request("tools/call", {"name": "mixed"}, 1))
        assert "holds nothing else" in text["result"]["content"][0]["text"]


@pytest.mark.parametrize(("sampling", "sent"), [({}, False), ({"context": {}}, True)])
def test_include_context_needs_sampling_context_v1125_50(
        sampling: dict[str, Any], sent: bool) -> None:
    """V1125-50: in 2025-11-25 includeContext is left out unless the client declared
    sampling.context."""
    with raw_session(make_server(), {"sampling": sampling}, version=NEW) as (peer, _):
        peer.send(request("tools/call", {"name": "context"}, 1))
        asked = peer.receive()
        assert ("includeContext" in asked["params"]) is sent
        peer.send({"jsonrpc": "2.0", "id": asked["id"], "result": FINAL})
        assert peer.receive()["result"]["content"][0]["text"] == "m"


ASK = {"messages": [{"role": "user", "content": {"type": "text", "text": "Weather?"}}],
       "maxTokens": 20, "tools": [WEATHER], "toolChoice": {"mode": "required"}}


def test_client_declares_and_serves_tools_v1125_47(scripted: Start) -> None:
    """V1125-47/48: with sampling_capabilities={"tools": {}} the client declares
    sampling.tools; its handler sees the tools and may answer with tool_use blocks."""
    seen: list[types.CreateMessageRequestParams] = []

    def model(params: types.CreateMessageRequestParams) -> dict[str, Any]:
        seen.append(params)
        return TOOL_USE

    server = scripted({}, version=NEW)
    with Client(server.peer.transport, sampling_handler=model,
                sampling_capabilities={"tools": {}}):
        answer = server.request("sampling/createMessage", ASK)
    assert server.initialize["params"]["capabilities"]["sampling"] == {"tools": {}}
    assert check_version(answer["result"], "CreateMessageResult", NEW) == TOOL_USE
    assert seen[0].tools is not None and seen[0].tools[0].name == "weather"
    assert seen[0].tool_choice == types.ToolChoice(mode="required")


def test_client_refuses_tools_it_did_not_declare_nambig_10(scripted: Start) -> None:
    """V1125-47, NAMBIG-10: tools sent to a client without sampling.tools are -32602."""
    server = scripted({}, version=NEW)
    with Client(server.peer.transport, sampling_handler=lambda p: FINAL):
        answer = server.request("sampling/createMessage", ASK)
    assert answer["error"]["code"] == ErrorCode.INVALID_PARAMS


def test_client_refuses_mixed_tool_results_v1125_49(scripted: Start) -> None:
    """V1125-49: a user message mixing tool_result with text is -32602."""
    mixed = {"maxTokens": 5, "messages": [{"role": "user", "content": [
        {"type": "tool_result", "toolUseId": "call-1", "content": []},
        {"type": "text", "text": "and also"}]}]}
    server = scripted({}, version=NEW)
    with Client(server.peer.transport, sampling_handler=lambda p: FINAL,
                sampling_capabilities={"tools": {}}):
        answer = server.request("sampling/createMessage", mixed)
    assert answer["error"]["code"] == ErrorCode.INVALID_PARAMS
    assert "nothing else" in answer["error"]["message"]
