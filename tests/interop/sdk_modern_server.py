"""An MCP server on the official Python SDK whose tools use the modern era's features.

Served over stdio when run (``--http PORT`` serves Streamable HTTP instead). Its tools
answer with input-required results (2026-07-28 SEP-2322) the way an SDK tool does it: the
first call returns the input requests and a request state, the call sent again reads the
answers. ``notify`` publishes list and resource changes, which only a client that keeps
``subscriptions/listen`` open hears.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import InputRequiredResult

server = MCPServer("sdk-modern", version="3.0.0", instructions="Modern-era interop tools.")

ASKS: dict[str, dict[str, Any]] = {
    "elicit": {"method": "elicitation/create", "params": {
        "mode": "form", "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}},
                            "required": ["name"]}}},
    "sample": {"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Say hi"}}],
        "maxTokens": 10}},
    "roots": {"method": "roots/list", "params": {}},
}


def _answers(ctx: Context) -> dict[str, Any] | None:
    responses = ctx.input_responses
    if not responses:
        return None
    return {key: value.model_dump(by_alias=True, mode="json", exclude_none=True)
            for key, value in responses.items()}


@server.tool()
def ask(kinds: str, ctx: Context) -> Any:
    """Ask the client for each comma-separated kind (elicit, sample, roots) in one round,
    then return the answers and the request state as JSON text."""
    answers = _answers(ctx)
    if answers is None:
        requests = {kind: ASKS[kind] for kind in kinds.split(",")}
        return InputRequiredResult.model_validate(
            {"resultType": "input_required", "inputRequests": requests,
             "requestState": "state-of-" + kinds})
    return json.dumps({"answers": answers, "state": ctx.request_state}, sort_keys=True)


@server.tool()
def twice(ctx: Context) -> Any:
    """Two rounds: a name first, then (with the first state echoed) a confirmation."""
    state = ctx.request_state
    if state is None:
        return InputRequiredResult.model_validate(
            {"resultType": "input_required", "inputRequests": {"first": ASKS["elicit"]},
             "requestState": "round-1"})
    if state == "round-1":
        return InputRequiredResult.model_validate(
            {"resultType": "input_required", "inputRequests": {"second": ASKS["elicit"]},
             "requestState": "round-2"})
    answers = _answers(ctx) or {}
    return f"{state}: {answers['second']['content']['name']}"


@server.tool()
async def notify(ctx: Context) -> str:
    """Publish that the tools changed and that memo://one was updated."""
    await ctx.notify_tools_changed()
    await ctx.notify_resource_updated("memo://one")
    return "published"


@server.resource("memo://one")
def memo() -> str:
    return "one"


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
