"""The Client against our own Server in memory: every feature, both directions.

Where ``test_client_requests.py`` pins the wire shapes with scripted servers, these tests
check that the two halves of mcp_sync agree end to end: what the server registers, the
client lists, reads, renders, completes and hears about.
"""

from __future__ import annotations

import queue
import threading
from typing import Any

import pytest

from mcp_sync import Client, Context, RpcError, Server, types
from mcp_sync.client import SamplingRejected
from mcp_sync.errors import ResourceNotFound
from mcp_sync.testing import open_client
from tests.helpers import LEGACY_ERA

pytestmark = pytest.mark.timeout(30)


def demo_server() -> Server:
    server = Server("demo", version="1.0.0", page_size=2)

    @server.resource("config://app", mime_type="application/json")
    def config() -> dict[str, Any]:
        return {"debug": False}

    @server.resource("users://{user_id}/profile", complete={"user_id": ["alice", "bob"]})
    def profile(user_id: str) -> str:
        return f"profile of {user_id}"

    @server.prompt(complete={"language": ["python", "perl"]})
    def review(code: str, language: str = "python") -> str:
        """Review some code."""
        return f"Review this {language}: {code}"

    @server.tool()
    def ask_model(question: str, ctx: Context) -> str:
        """Ask the client's model."""
        try:
            return ctx.sample(question, max_tokens=20).content.text  # type: ignore[union-attr]
        except RpcError as exc:
            return f"refused with code {exc.code}: {exc.message}"

    @server.tool()
    def where(ctx: Context) -> list[str]:
        """The client's roots."""
        return [root.uri for root in ctx.list_roots()]

    @server.tool()
    def chatty(ctx: Context) -> str:
        """Log at two levels."""
        ctx.debug("details")
        ctx.error("trouble", logger="chatty")
        return "done"

    for n in range(3):
        server.add_resource(lambda n=n: f"note {n}", f"file:///notes/{n}.txt",
                            name=f"note{n}")
    return server


def test_resources_and_templates_end_to_end_resources_2_3_5() -> None:
    """RESOURCES-2/3/5, PAGINATION-1: listing crosses pages; reads are typed."""
    with open_client(demo_server(), **LEGACY_ERA) as client:
        uris = [resource.uri for resource in client.list_resources()]
        templates = client.list_resource_templates()
        read = client.read_resource("users://alice/profile")
        with pytest.raises(ResourceNotFound):
            client.read_resource("file:///nope")
    assert uris == ["config://app", *(f"file:///notes/{n}.txt" for n in range(3))]
    assert [t.uri_template for t in templates] == ["users://{user_id}/profile"]
    assert [(c.uri, c.text) for c in read.contents] == [  # type: ignore[union-attr]
        ("users://alice/profile", "profile of alice")]


def test_prompts_and_completion_end_to_end_prompts_3_completion_2() -> None:
    """PROMPTS-2/3, COMPLETION-2/3: render a prompt; complete prompt and template args."""
    with open_client(demo_server()) as client:
        prompts = client.list_prompts()
        rendered = client.get_prompt("review", {"code": "x = 1", "language": "python"})
        languages = client.complete("review", "language", "p")
        users = client.complete(types.ResourceReference(uri="users://{user_id}/profile"),
                                "user_id", "b")
    assert [p.name for p in prompts] == ["review"]
    assert rendered.messages[0].content == types.TextContent(text="Review this python: x = 1")
    assert languages.completion.values == ["python", "perl"]
    assert users.completion.values == ["bob"]


def test_sampling_from_a_tool_reaches_the_handler_sampling_2_8() -> None:
    """SAMPLING-2/4/8: a tool's ctx.sample() runs our handler; a rejection reaches the
    tool as an RpcError with code -1 and the handler's message."""
    answers: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def sample(params: types.CreateMessageRequestParams) -> Any:
        answer = answers.get(timeout=5)
        if isinstance(answer, Exception):
            raise answer
        return answer

    with open_client(demo_server(), sampling_handler=sample, **LEGACY_ERA) as client:
        answers.put({"role": "assistant", "content": {"type": "text", "text": "42"},
                     "model": "m"})
        ok = client.call_tool("ask_model", {"question": "meaning of life?"})
        answers.put(SamplingRejected())
        refused = client.call_tool("ask_model", {"question": "again?"})
    assert ok.content == [types.TextContent(text="42")] and not ok.is_error
    assert refused.content == [types.TextContent(
        text="refused with code -1: The user rejected the sampling request")]


def test_roots_end_to_end_roots_2_4() -> None:
    """ROOTS-2/4, ROOTS-7: the server sees our roots, and hears when they change."""
    server = demo_server()
    changed = threading.Event()
    server.on_roots_changed(lambda connection: changed.set())
    with open_client(server, roots=["file:///work"], **LEGACY_ERA) as client:
        first = client.call_tool("where")
        client.set_roots(["file:///work", "file:///data"])
        assert changed.wait(5)
        second = client.call_tool("where")
    assert first.content[0].text == '["file:///work"]'  # type: ignore[union-attr]
    assert second.content[0].text == (  # type: ignore[union-attr]
        '["file:///work", "file:///data"]')


def test_logging_level_and_callback_end_to_end_logging_3_4() -> None:
    """LOGGING-3/4: after set_logging_level("error") only the error arrives at on_log."""
    logs: queue.SimpleQueue[types.LoggingMessageNotificationParams] = queue.SimpleQueue()
    with open_client(demo_server(), on_log=logs.put) as client:
        client.set_logging_level("error")
        assert client.call_tool("chatty").content[0].text == "done"  # type: ignore[union-attr]
        record = logs.get(timeout=5)
        client.ping()
    assert (record.level, record.logger, record.data) == ("error", "chatty", "trouble")
    assert logs.empty()


def test_subscription_and_list_changed_end_to_end_resources_8_tools_8() -> None:
    """RESOURCES-8, TOOLS-8: updates for a subscribed URI and list changes arrive."""
    server = demo_server()
    events: queue.SimpleQueue[tuple[str, str]] = queue.SimpleQueue()
    with open_client(server, on_resource_updated=lambda uri: events.put(("updated", uri)),
                     on_list_changed=lambda kind: events.put(("list", kind)),
                                      **LEGACY_ERA) as client:
        client.subscribe_resource("config://app")
        server.notify_resource_updated("config://app")
        assert events.get(timeout=5) == ("updated", "config://app")
        client.unsubscribe_resource("config://app")

        @server.tool()
        def extra() -> str:
            return "x"

        assert events.get(timeout=5) == ("list", "tools")
        assert "extra" in [tool.name for tool in client.list_tools()]


def test_a_client_without_sampling_makes_ctx_sample_fail_caps_5() -> None:
    """CAPS-4/5: no handler, no ``sampling`` capability: the tool's request is refused
    at the server before it is sent, and the tool reports the error (a legacy session;
    the modern era answers -32021, see test_input_required.py)."""
    with open_client(demo_server(), **LEGACY_ERA) as client:
        result = client.call_tool("ask_model", {"question": "?"})
    assert result.is_error
    assert "sampling" in result.content[0].text  # type: ignore[union-attr]


def test_errors_from_our_server_are_typed_prompts_6() -> None:
    """PROMPTS-6, JSONRPC-12: an unknown prompt is -32602, raised as a typed error."""
    with open_client(demo_server()) as client, pytest.raises(RpcError) as caught:
        client.get_prompt("nope")
    assert caught.value.code == -32602


def test_client_constructor_still_takes_only_a_transport() -> None:
    """GEN-3, LIFECYCLE-3: any transport and options make a client; what the server
    declared at initialization is readable afterwards."""
    from mcp_sync.transports.memory import memory_pair

    client_end, server_end = memory_pair()
    connection = demo_server().connect(server_end)
    try:
        with Client(client_end, timeout=5) as client:
            assert client.server_info.name == "demo"
            assert client.server_capabilities.resources is not None
    finally:
        connection.close()
