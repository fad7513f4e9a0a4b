"""Our Client's feature methods against a server built on the official MCP SDK.

The server script below runs as a child process over real stdio pipes; it uses the SDK
(a test-only dependency) and is written to a temporary folder, since mcp_sync itself
never imports ``mcp``. What our client sends is schema-checked by the autouse ``wire``
fixture.
"""

from __future__ import annotations

import queue
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_sync import Client, RpcError, types
from mcp_sync.client import SamplingRejected
from tests.helpers import LEGACY_ERA

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60)]

SDK_SERVER = '''\
from mcp import types
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("sdk-features", version="1.0.0")


@server.resource("config://app", mime_type="application/json")
def config() -> str:
    return '{"debug": false}'


@server.resource("users://{user_id}/profile")
def profile(user_id: str) -> str:
    return f"profile of {user_id}"


@server.prompt()
def review(code: str) -> str:
    """Review some code."""
    return f"Please review: {code}"


@server.completion()
async def complete(ref, argument, context):
    return types.Completion(values=[v for v in ("python", "perl") if v.startswith(argument.value)])


@server.tool()
async def ask(question: str, ctx: Context) -> str:
    result = await ctx.session.create_message(
        [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=question))],
        max_tokens=10)
    return f"{result.model}: {result.content.text}"


@server.tool()
async def roots(ctx: Context) -> str:
    result = await ctx.session.list_roots()
    return ",".join(str(root.uri) for root in result.roots)


@server.tool()
async def chatty(ctx: Context) -> str:
    await ctx.info("hello from the sdk")
    return "done"


if __name__ == "__main__":
    server.run("stdio")
'''


@pytest.fixture
def sdk_script(tmp_path: Path) -> Path:
    pytest.importorskip("mcp")
    path = tmp_path / "sdk_features.py"
    path.write_text(SDK_SERVER)
    return path


def test_resources_prompts_and_completion_with_the_sdk_resources_3_prompts_3(
        sdk_script: Path) -> None:
    """RESOURCES-2/3/5, PROMPTS-2/3, COMPLETION-2/3 against the official SDK."""
    with Client.stdio([sys.executable, str(sdk_script)], timeout=20) as client:
        resources = client.list_resources()
        templates = client.list_resource_templates()
        read = client.read_resource("users://bob/profile")
        prompts = client.list_prompts()
        rendered = client.get_prompt("review", {"code": "x = 1"})
        completed = client.complete("review", "code", "p")
    assert [(r.uri, r.mime_type) for r in resources] == [("config://app", "application/json")]
    assert [t.uri_template for t in templates] == ["users://{user_id}/profile"]
    assert [(c.uri, c.text) for c in read.contents] == [  # type: ignore[union-attr]
        ("users://bob/profile", "profile of bob")]
    assert [(p.name, [a.name for a in p.arguments or []]) for p in prompts] == [
        ("review", ["code"])]
    assert rendered.messages[0].content == types.TextContent(text="Please review: x = 1")
    assert completed.completion.values == ["python", "perl"]


def test_sampling_roots_and_logs_for_the_sdk_sampling_4_roots_2_logging_4(
        sdk_script: Path) -> None:
    """SAMPLING-4/8, ROOTS-2, LOGGING-4: the SDK server samples through our handler
    (a rejection reaches it as code -1, which its tool passes back as an error), lists
    our roots, and its log message reaches on_log."""
    answers: list[Any] = [{"role": "assistant", "content": {"type": "text", "text": "hi"},
                           "model": "test-model"}, SamplingRejected()]
    logs: queue.SimpleQueue[types.LoggingMessageNotificationParams] = queue.SimpleQueue()

    def sample(params: types.CreateMessageRequestParams) -> Any:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    with Client.stdio([sys.executable, str(sdk_script)], timeout=20, sampling_handler=sample,
                      roots=["file:///work", {"uri": "file:///data", "name": "data"}],
                      on_log=logs.put, **LEGACY_ERA) as client:
        sampled = client.call_tool("ask", {"question": "hello?"})
        with pytest.raises(RpcError) as refused:
            client.call_tool("ask", {"question": "again?"})
        roots = client.call_tool("roots")
        client.call_tool("chatty")
        log = logs.get(timeout=10)
    assert sampled.content == [types.TextContent(text="test-model: hi")]
    assert refused.value.code == -1
    assert roots.content == [types.TextContent(text="file:///work,file:///data")]
    assert (log.level, log.data) == ("info", "hello from the sdk")
