"""The Server API over the in-memory transport: tools, content, errors, pagination."""

from __future__ import annotations

import base64
import threading
from typing import Any

import attrs
import pytest

from mcp_sync import Client, Context, Server, types
from mcp_sync.errors import CapabilityError, InvalidParams
from mcp_sync.testing import open_client
from tests.helpers import LEGACY_ERA, RawPeer

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16

pytestmark = pytest.mark.timeout(30)


@attrs.define
class Point:
    x: int
    y: int


def make_server(**options: Any) -> Server:
    server = Server("test", version="2.0", instructions="be nice", **options)

    @server.tool(annotations={"readOnlyHint": True, "title": "Adder"})
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def echo(message: str) -> str:
        """Echo."""
        return message

    @server.tool()
    def fail() -> str:
        """Always fails."""
        raise RuntimeError("it broke")

    @server.tool()
    def image() -> bytes:
        """A PNG."""
        return PNG

    @server.tool()
    def structured() -> dict[str, Any]:
        """JSON."""
        return {"b": [1, 2], "a": "Zürich ✓"}

    @server.tool()
    def nothing() -> None:
        """No content."""

    return server


def test_initialize_result_shape_lifecycle_3(wire: Any) -> None:
    """LIFECYCLE-3/8, CAPS-3: serverInfo, instructions and the tools capability."""
    with open_client(make_server(), **LEGACY_ERA) as client:
        assert client.server_info.name == "test"
        assert client.server_info.version == "2.0"
        assert client.instructions == "be nice"
        assert client.protocol_version == "2025-11-25"
        assert client.server_capabilities.tools == types.ToolsCapability(list_changed=True)
        assert client.server_capabilities.resources is None
    initialize = next(m for m in wire.sent if isinstance(m, dict)
                      and isinstance(m.get("result"), dict) and "serverInfo" in m["result"])
    from tests.conftest import validator

    assert not list(validator("InitializeResult").iter_errors(initialize["result"]))


def test_list_tools_schema_and_annotations_tools_3_tools_9() -> None:
    """TOOLS-2/3/9: tools carry name, description, an object input schema, annotations."""
    with open_client(make_server()) as client:
        tools = {tool.name: tool for tool in client.list_tools()}
    assert set(tools) == {"add", "echo", "fail", "image", "structured", "nothing"}
    add = tools["add"]
    assert add.description == "Add two integers."
    assert add.input_schema["type"] == "object"
    assert add.input_schema["required"] == ["a", "b"]
    assert add.annotations == types.ToolAnnotations(title="Adder", read_only_hint=True)
    assert tools["nothing"].input_schema["type"] == "object"


def test_call_tool_results_tools_4_5() -> None:
    """TOOLS-4/5, CONTENT-1/2: text, image and JSON content; None gives no content."""
    with open_client(make_server()) as client:
        assert client.call_tool("add", {"a": 2, "b": 40}).content == [
            types.TextContent(text="42")]
        text = client.call_tool("echo", {"message": "line one\nZürich ✓"}).content[0]
        assert isinstance(text, types.TextContent)
        assert text.text == "line one\nZürich ✓"
        image = client.call_tool("image").content[0]
        assert isinstance(image, types.ImageContent)
        assert image.mime_type == "image/png"
        assert base64.b64decode(image.data) == PNG
        structured = client.call_tool("structured").content[0]
        assert isinstance(structured, types.TextContent)
        assert structured.text == '{"b": [1, 2], "a": "Zürich ✓"}'
        assert client.call_tool("nothing").content == []


def test_tool_exception_is_error_result_tools_6() -> None:
    """TOOLS-6: a failure inside the tool is a result with isError, not a JSON-RPC error."""
    with open_client(make_server()) as client:
        result = client.call_tool("fail")
        assert result.is_error is True
        assert result.content == [types.TextContent(text="Error: it broke")]
        client.ping()  # the connection is still serving


def test_unknown_tool_and_bad_arguments_tools_7_tools_11(wire: Any) -> None:
    """TOOLS-7/11: unknown tool and invalid arguments are -32602 before the tool runs,
    in a 2025-03-26 session (2025-11-25 answers bad arguments with isError: V1125-32,
    tests/test_version_rules.py)."""
    calls = []
    server = Server("s")

    @server.tool()
    def count(n: int) -> int:
        calls.append(n)
        return n

    with open_client(server, protocol_version="2025-03-26") as client:
        with pytest.raises(InvalidParams, match="Unknown tool: nope"):
            client.call_tool("nope")
        with pytest.raises(InvalidParams, match="'n'"):
            client.call_tool("count", {"n": "three"})
        with pytest.raises(InvalidParams):
            client.call_tool("count", {})
        with wire.allow_invalid():
            with pytest.raises(InvalidParams):
                client.send_request("tools/call", {"name": 5})
            with pytest.raises(InvalidParams):
                client.send_request("tools/call", {"name": "count", "arguments": [1]})
        assert calls == []
        assert client.call_tool("count", {"n": 3}).content[0] == types.TextContent(text="3")


def test_meta_is_not_an_argument_jsonrpc_11() -> None:
    """JSONRPC-11: params._meta never reaches the tool's arguments."""
    with open_client(make_server()) as client:
        raw = client.send_request(
            "tools/call", {"name": "add", "arguments": {"a": 1, "b": 1},
                           "_meta": {"progressToken": "t", "vendor/x": 1}})
        assert raw["content"][0]["text"] == "2"


def test_returned_content_objects_and_results_pass_through() -> None:
    """TOOLS-5, CONTENT-4: content objects and whole results pass through unchanged."""
    server = Server("s")
    resource = types.EmbeddedResource(resource=types.TextResourceContents(
        uri="file:///a.txt", text="hello", mime_type="text/plain"))

    @server.tool()
    def items() -> list[types.Content]:
        return [types.TextContent(text="a"), resource]

    @server.tool()
    def whole() -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(text="x")], is_error=True)

    @server.tool()
    def point() -> Point:
        return Point(1, 2)

    with open_client(server) as client:
        assert client.call_tool("items").content == [types.TextContent(text="a"), resource]
        assert client.call_tool("whole").is_error is True
        assert client.call_tool("point").content == [types.TextContent(text='{"x": 1, "y": 2}')]


def test_pagination_and_bad_cursor_pagination_5(wire: Any) -> None:
    """TOOLS-2, PAGINATION-1/4/5: 250 tools in pages of 100; a forged cursor is -32602."""
    server = Server("many", page_size=100)
    for index in range(250):
        server.add_tool(lambda: "x", name=f"tool{index:03}")
    with open_client(server) as client:
        first = client.list_tools_page()
        assert len(first.tools) == 100
        assert first.next_cursor
        names = [tool.name for tool in client.list_tools()]
        assert names == [f"tool{index:03}" for index in range(250)]
        with pytest.raises(InvalidParams):
            client.list_tools_page("garbage")
        with wire.allow_invalid(), pytest.raises(InvalidParams):
            client.send_request("tools/list", {"cursor": 7})


def test_tools_list_changed_tools_8() -> None:
    """TOOLS-8: adding and removing a tool at runtime notifies connected clients."""
    server = make_server()
    seen: list[str] = []
    changed = threading.Event()

    def on_notification(method: str, params: dict[str, Any]) -> None:
        seen.append(method)
        changed.set()

    with open_client(server, on_notification=on_notification, **LEGACY_ERA) as client:
        server.add_tool(lambda: "new", name="new_tool")
        assert changed.wait(5)
        assert seen == ["notifications/tools/list_changed"]
        assert "new_tool" in {tool.name for tool in client.list_tools()}
        changed.clear()
        server.remove_tool("new_tool")
        assert changed.wait(5)
        assert "new_tool" not in {tool.name for tool in client.list_tools()}


def test_undeclared_features_are_method_not_found_caps_7() -> None:
    """CAPS-7, AMBIG-18: a server without prompts, resources, completers or logging answers
    their methods with -32601."""
    peer = RawPeer()
    connection = make_server(logging=False).connect(peer.transport)
    try:
        peer.handshake()
        for method in ("prompts/list", "resources/read", "resources/subscribe",
                       "completion/complete", "logging/setLevel"):
            answer = peer.call({"jsonrpc": "2.0", "id": method, "method": method})
            assert answer["id"] == method
            assert answer["error"]["code"] == -32601
    finally:
        peer.close()
        connection.close()


def test_client_refuses_undeclared_features_locally_caps_5(wire: Any) -> None:
    """CAPS-5: calling a feature the server did not declare raises without any traffic."""
    with open_client(make_server()) as client:
        sent_before = len(wire.sent)
        with pytest.raises(CapabilityError, match="prompts"):
            client.send_request("prompts/list")
        assert len(wire.sent) == sent_before


def test_context_parameter_found_by_type() -> None:
    """TOOLS-3: a Context parameter, found by its type, stays out of the input schema."""
    server = Server("s")
    seen: dict[str, Any] = {}

    @server.tool()
    def inspect_me(value: int, whatever: Context) -> str:
        seen["id"] = whatever.request_id
        seen["client"] = whatever.client_info
        seen["token"] = whatever.progress_token
        return "ok"

    with open_client(server, name="probe", version="9") as client:
        tool = client.list_tools()[0]
        assert tool.input_schema["properties"] == {"value": {"type": "integer"}}
        client.call_tool("inspect_me", {"value": 1})
    assert seen["client"] == types.Implementation(name="probe", version="9")
    assert seen["token"] is None
    assert isinstance(seen["id"], int)


def test_coroutine_tools_are_refused() -> None:
    """TOOLS-3: a tool must be a plain function; async ones are refused at once."""
    server = Server("s")

    async def later() -> str:
        return "x"

    with pytest.raises(TypeError, match="coroutine"):
        server.add_tool(later)


def test_decorator_returns_the_function_unchanged() -> None:
    """TOOLS-3: registering leaves the function callable as before."""
    server = Server("s")

    def double(x: int) -> int:
        return 2 * x

    assert server.tool()(double) is double
    assert double(4) == 8


def test_old_client_gets_no_tool_annotations_version_2() -> None:
    """VERSION-2: a 2024-11-05 client gets that version, and tools without annotations."""
    server = make_server()
    with open_client(server, protocol_version="2024-11-05") as client:
        assert client.protocol_version == "2024-11-05"
        assert all(tool.annotations is None for tool in client.list_tools())


def test_unknown_protocol_version_option_is_refused() -> None:
    """VERSION-1: the client offers only versions it knows."""
    with pytest.raises(ValueError, match="unknown protocol version"):
        Client(None, protocol_version="2030-01-01")  # type: ignore[arg-type]


# --- capabilities: what is declared, and when ----------------------------------------------


def test_empty_server_declares_only_logging_gen_1_caps_3() -> None:
    """GEN-1, CAPS-3: a server with nothing registered initializes, answers ping and
    declares nothing but logging."""
    from tests.server_support import raw_session, request

    with raw_session(Server("empty")) as (peer, connection):
        assert connection.capabilities == types.ServerCapabilities(logging={})
        assert peer.call(request("ping", None, 1)) == {"jsonrpc": "2.0", "id": 1, "result": {}}
        for method in ("tools/list", "resources/list", "prompts/list"):
            assert peer.call(request(method, None, method))["error"]["code"] == -32601


def test_capabilities_follow_registrations_caps_3() -> None:
    """CAPS-3, RESOURCES-1, PROMPTS-1, COMPLETION-1: each feature appears once something of
    its kind is registered; completions only with a completer."""
    server = Server("s")
    assert server.capabilities() == types.ServerCapabilities(logging={})
    server.add_tool(lambda: "x", name="t")
    server.add_resource(lambda: "x", "a://x")
    server.add_prompt(lambda: "x", name="p")
    assert server.capabilities() == types.ServerCapabilities(
        logging={}, tools=types.ToolsCapability(list_changed=True),
        resources=types.ResourcesCapability(subscribe=True, list_changed=True),
        prompts=types.PromptsCapability(list_changed=True))
    server.add_resource_template(lambda v: v, "b://{v}", complete={"v": ["one"]})
    assert server.capabilities().completions == {}
    server.remove_resource("b://{v}")
    assert server.capabilities().completions is None


def test_flags_declare_features_registered_later_caps_3_tools_8() -> None:
    """CAPS-3, TOOLS-8: tools=True declares tools with none registered yet, so a tool added
    while the client is connected is announced and callable."""
    server = Server("s", tools=True)
    seen: list[str] = []
    changed = threading.Event()

    def on_notification(method: str, params: dict[str, Any]) -> None:
        seen.append(method)
        changed.set()

    with open_client(server, on_notification=on_notification, **LEGACY_ERA) as client:
        assert client.server_capabilities.tools == types.ToolsCapability(list_changed=True)
        assert client.list_tools() == []
        server.add_tool(lambda: "late", name="late")
        assert changed.wait(5)
        assert seen == ["notifications/tools/list_changed"]
        assert client.call_tool("late").content == [types.TextContent(text="late")]


def test_flags_can_hide_registered_features_caps_7() -> None:
    """CAPS-7: prompts=False keeps registered prompts undeclared and unserved (-32601)."""
    from tests.server_support import raw_session, request

    server = Server("s", prompts=False, completions=False)
    server.add_prompt(lambda x: x, name="p", complete={"x": ["a"]})
    with raw_session(server) as (peer, connection):
        assert connection.capabilities.prompts is None
        assert connection.capabilities.completions is None
        assert peer.call(request("prompts/list", None, 1))["error"]["code"] == -32601


def test_features_added_after_connecting_stay_undeclared_caps_6() -> None:
    """CAPS-6: without the capability at connection time, its list_changed is never sent
    to that connection; a later connection declares the feature."""
    server = make_server()
    notes: list[str] = []
    arrived = threading.Event()

    def on_notification(method: str, params: dict[str, Any]) -> None:
        notes.append(method)
        arrived.set()

    with open_client(server, on_notification=on_notification, **LEGACY_ERA) as client:
        assert client.server_capabilities.prompts is None
        server.add_prompt(lambda: "x", name="late")
        server.add_tool(lambda: "x", name="marker")  # notifications arrive in order
        assert arrived.wait(5)
        assert notes == ["notifications/tools/list_changed"]
    with open_client(server, **LEGACY_ERA) as client:
        assert client.server_capabilities.prompts == types.PromptsCapability(list_changed=True)
