"""Our client against a server made with the official TypeScript SDK's McpServer
(tests/interop/ts/server.mjs), over stdio and over Streamable HTTP: it negotiates
2025-11-25, reads the SDK tool's structured output, and answers the SDK server's
``elicitInput`` (form and URL mode) with its elicitation_handler, whether the request
comes inside the tools/call or (over HTTP) on the session's GET stream.
"""

from __future__ import annotations

import contextlib
import json
import queue
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mcp_sync import (
    Client,
    ElicitationRequest,
    ElicitationResult,
    UrlElicitationRequired,
    types,
)
from tests.interop.ts_sdk import NODE, TS_DIR, TsHttpServer, requires_ts_sdk

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60), requires_ts_sdk]

CALL_TIMEOUT = 20.0

Handler = Callable[[ElicitationRequest], ElicitationResult[Any]]


@contextlib.contextmanager
def _connected(transport: str, handler: Handler | None = None,
               **options: Any) -> Iterator[Client]:
    if transport == "stdio":
        with Client.stdio([str(NODE), str(TS_DIR / "server.mjs"), "stdio"],
                          elicitation_handler=handler, timeout=CALL_TIMEOUT,
                          **options) as client:
            yield client
        return
    server = TsHttpServer()
    try:
        with Client.http(server.url, elicitation_handler=handler, timeout=CALL_TIMEOUT,
                         **options) as client:
            yield client
    finally:
        server.stop()


def _text(result: types.CallToolResult) -> str:
    (item,) = result.content
    assert isinstance(item, types.TextContent), item
    return item.text


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_structured_output_from_an_sdk_tool_v0618_18_20(transport: str) -> None:
    """V0618-10: 2025-11-25 is negotiated. V0618-17/18/20: the SDK tool's outputSchema is
    listed and its structuredContent, checked against it, is ``result.structured``; the text
    copy stays in ``content`` (V0618-21). V1125-2/3: the SDK names the schema's dialect
    (draft-07) with ``$schema``, and the schema is kept as it came."""
    with _connected(transport) as client:
        assert client.protocol_version == "2025-11-25"
        assert client.server_info is not None
        assert client.server_info.name == "ts-sdk-server"
        tools = {tool.name: tool for tool in client.list_tools()}
        schema = tools["structured"].output_schema
        assert tools["structured"].title == "Sum and product"
        result = client.call_tool("structured", {"a": 3, "b": 4})
    assert schema is not None
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert schema["required"] == ["sum", "product"]
    assert not result.is_error
    assert result.structured == {"sum": 7, "product": 12}
    assert json.loads(_text(result)) == {"sum": 7, "product": 12}


ANSWERS: dict[str, tuple[Callable[[ElicitationRequest], ElicitationResult[Any]], str]] = {
    "accept": (lambda request: request.accept({"name": "Ada", "newsletter": True}),
               "Hello, Ada! newsletter=true"),
    "decline": (lambda request: request.decline(), "decline"),
    "cancel": (lambda request: request.cancel(), "cancel"),
}


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("action", sorted(ANSWERS))
def test_elicitation_from_an_sdk_server_v0618_29_31(transport: str, action: str) -> None:
    """V0618-29/31/33, V1125-36: the SDK server's elicitInput reaches our handler as a form
    request naming the server, its ``default`` is offered to pre-fill (V1125-38), and the
    handler's answer is what the tool gets (accepted content passes the SDK's own check
    against the requested schema, V0618-34). ``ask`` sends the request unrelated to the
    call (over HTTP: on the GET stream), ``ask_inline`` as part of it."""
    seen: list[ElicitationRequest] = []
    answer, expected = ANSWERS[action]

    def handler(request: ElicitationRequest) -> ElicitationResult[Any]:
        seen.append(request)
        return answer(request)

    with _connected(transport, handler) as client:
        assert client.protocol_version == "2025-11-25"
        texts = [_text(client.call_tool(tool)) for tool in ("ask", "ask_inline")]
    assert texts == [expected, expected]
    assert len(seen) == 2
    for request in seen:
        assert (request.mode, request.message) == ("form", "What is your name?")
        assert request.requested_schema is not None
        assert request.requested_schema["required"] == ["name"]
        assert request.defaults == {"newsletter": False}
        assert request.server_info is not None
        assert request.server_info.name == "ts-sdk-server"


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_url_elicitation_from_an_sdk_server_v1125_40_43(transport: str) -> None:
    """V1125-40/41/42: the SDK server's URL-mode elicitInput reaches our handler with the
    URL's host and the elicitation id, and its completion notice reaches
    on_elicitation_complete. V1125-43: its -32042 error (UrlElicitationRequiredError) is
    raised as UrlElicitationRequired, listing what to complete."""
    seen: list[ElicitationRequest] = []
    completed: queue.SimpleQueue[str] = queue.SimpleQueue()

    def handler(request: ElicitationRequest) -> ElicitationResult[Any]:
        seen.append(request)
        return request.accept()

    with _connected(transport, handler, elicitation_modes=("form", "url"),
                    on_elicitation_complete=completed.put) as client:
        assert _text(client.call_tool("connect")) == "accept"
        assert completed.get(timeout=CALL_TIMEOUT) == "e-1"
        with pytest.raises(UrlElicitationRequired) as caught:
            client.call_tool("locked")
    (request,) = seen
    assert (request.mode, request.message, request.url_host, request.elicitation_id) == (
        "url", "Connect your account", "example.com", "e-1")
    assert caught.value.elicitations == [{
        "mode": "url", "message": "Authorise first", "url": "https://example.com/auth",
        "elicitationId": "e-2"}]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_sdk_server_sees_the_elicitation_capability_v1125_34(transport: str) -> None:
    """V0618-15, V1125-34: with an elicitation_handler our client declares form
    elicitation, as the SDK server reads it; without one it declares none."""
    def handler(request: ElicitationRequest) -> ElicitationResult[Any]:
        return request.decline()

    with _connected(transport, handler) as client:
        with_handler = json.loads(_text(client.call_tool("client")))
    with _connected(transport) as client:
        without = json.loads(_text(client.call_tool("client")))
    assert with_handler["capabilities"]["elicitation"] == {"form": {}}
    assert "elicitation" not in without["capabilities"]
    assert with_handler["clientInfo"]["name"] == without["clientInfo"]["name"] == "mcp-sync"
