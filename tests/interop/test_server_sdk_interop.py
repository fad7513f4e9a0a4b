"""The official MCP SDK's client against an mcp_sync server using every server feature,
over real stdio pipes (the server is tests/servers/features_server.py)."""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import MCPError
from mcp import types as sdk
from mcp.client import Client as SdkClient
from mcp.client.stdio import StdioServerParameters, stdio_client

pytestmark = [pytest.mark.interop, pytest.mark.timeout(45),
              # The SDK warns that logging and subscriptions are gone in its newest revision.
              pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

ROOT = Path(__file__).resolve().parents[2]
FEATURES_SERVER = ROOT / "tests" / "servers" / "features_server.py"
EXCHANGE_BOUND = 30.0


async def _drive(mode: str) -> dict[str, Any]:
    seen: dict[str, Any] = {"logs": [], "updates": [], "sampling": []}
    updated = anyio.Event()

    async def sampling(context: Any, params: sdk.CreateMessageRequestParams,
                       ) -> sdk.CreateMessageResult:
        seen["sampling"].append(params)
        return sdk.CreateMessageResult(role="assistant", model="sdk-model",
                                       content=sdk.TextContent(type="text", text="Hello."))

    async def roots(context: Any) -> sdk.ListRootsResult:
        return sdk.ListRootsResult(roots=[sdk.Root(uri="file:///work", name="work")])

    async def on_log(params: sdk.LoggingMessageNotificationParams) -> None:
        seen["logs"].append((params.level, params.logger, params.data))

    async def on_message(message: Any) -> None:
        if isinstance(message, sdk.ResourceUpdatedNotification):
            seen["updates"].append(str(message.params.uri))
            updated.set()

    params = StdioServerParameters(command=sys.executable, args=[str(FEATURES_SERVER)],
                                   env={"PYTHONPATH": str(ROOT)}, cwd=str(ROOT))
    with anyio.fail_after(EXCHANGE_BOUND):
        async with SdkClient(stdio_client(params), mode=mode, sampling_callback=sampling,
                             list_roots_callback=roots, logging_callback=on_log,
                             message_handler=on_message) as client:
            caps = client.server_capabilities
            seen["caps"] = caps
            seen["resources"] = (await client.list_resources()).resources
            seen["templates"] = (await client.list_resource_templates()).resource_templates
            seen["config"] = await client.read_resource("config://app")
            seen["profile"] = await client.read_resource("users://12/profile")
            seen["logo"] = await client.read_resource("img://logo")
            try:
                await client.read_resource("nope://x")
            except MCPError as exc:
                seen["missing"] = exc
            seen["prompts"] = (await client.list_prompts()).prompts
            seen["review"] = await client.get_prompt("review", {"code": "x = 1"})
            seen["prompt_completion"] = await client.complete(
                sdk.PromptReference(type="ref/prompt", name="review"),
                {"name": "language", "value": "p"})
            seen["template_completion"] = await client.complete(
                sdk.ResourceTemplateReference(type="ref/resource",
                                              uri="users://{user_id}/profile"),
                {"name": "user_id", "value": "1"})
            await client.set_logging_level("warning")
            seen["ask"] = await client.call_tool("ask", {"question": "Hi?"})
            await client.subscribe_resource("config://app")
            await client.call_tool("touch", {"uri": "config://app"})
            await updated.wait()
    return seen


# Legacy only: the SDK's default ("auto") mode now stays in the modern era with our
# server, which has no logging/setLevel, subscriptions or requests to the client; that
# era is driven in tests/interop/test_everything_server.py.
@pytest.mark.parametrize("mode", ["legacy"])
def test_sdk_client_uses_every_server_feature(mode: str) -> None:
    """The SDK's client reads resources and templates, renders prompts, completes, sets
    the log level, receives logs and resource updates, and answers sampling and roots
    requests made from a tool.

    CAPS-3, RESOURCES-1/2/3/4/5/7/8/9, PROMPTS-2/3/4, COMPLETION-1/2/3, LOGGING-3/4,
    SAMPLING-2/4, ROOTS-2, JSONRPC-15.
    """
    seen = anyio.run(_drive, mode)

    caps = seen["caps"]
    assert caps.resources.subscribe is True and caps.resources.list_changed is True
    assert caps.prompts is not None and caps.completions is not None
    assert caps.logging is not None and caps.tools is not None

    assert [str(resource.uri) for resource in seen["resources"]] == ["config://app",
                                                                     "img://logo"]
    assert [template.uri_template for template in seen["templates"]] == [
        "users://{user_id}/profile"]
    assert seen["config"].contents[0].text == '{"debug": false}'
    assert seen["config"].contents[0].mime_type == "application/json"
    assert seen["profile"].contents[0].text == '{"id": 12}'
    assert base64.b64decode(seen["logo"].contents[0].blob).startswith(b"\x89PNG")
    assert seen["missing"].code == -32002

    review = next(prompt for prompt in seen["prompts"] if prompt.name == "review")
    assert [(argument.name, argument.required) for argument in review.arguments] == [
        ("code", True), ("language", False)]
    assert [message.role for message in seen["review"].messages] == ["user", "assistant"]
    assert seen["review"].messages[0].content.text == "Review this python:\nx = 1"

    assert seen["prompt_completion"].completion.values == ["python", "perl"]
    assert seen["template_completion"].completion.values == ["1", "12", "123"]

    ask = seen["ask"]
    assert ask.is_error is False
    assert ask.content[0].text == "sdk-model: Hello. (roots: file:///work)"
    assert seen["sampling"][0].max_tokens == 20
    assert seen["logs"] == [("warning", "features", "asking Hi?")]
    assert seen["updates"] == ["config://app"]
