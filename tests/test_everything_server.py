"""examples/everything_server.py driven in memory: every tool, resource, template,
prompt and completion it offers, its log levels, and its command line."""

from __future__ import annotations

import base64
import json
import queue
import struct
import zlib
from types import ModuleType
from typing import Any

import pytest

from mcp_sync import Context, Server, types
from mcp_sync.errors import InvalidParams, RequestTimeout, ResourceNotFound
from mcp_sync.testing import open_client
from tests.conftest import EXAMPLES
from tests.helpers import LEGACY_ERA, load_module
from tests.server_support import raw_session, request
from tests.wire_schema import validator

WAIT = 5.0


def _load_example() -> ModuleType:
    return load_module(EXAMPLES / "everything_server.py")


example = _load_example()
server: Server = example.server

TOOL_NAMES = ["echo", "add", "long_running", "sample", "roots", "fail", "log", "image",
              "structured", "link", "ask"]


def png_problems(data: bytes) -> list[str]:
    """Why ``data`` is not a valid 8-bit RGB PNG; empty if it is one."""
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return ["no PNG signature"]
    problems: list[str] = []
    chunks: list[tuple[bytes, bytes]] = []
    at = 8
    while at < len(data):
        if at + 12 > len(data):
            return [*problems, f"truncated chunk at {at}"]
        (length,) = struct.unpack(">I", data[at:at + 4])
        kind, body = data[at + 4:at + 8], data[at + 8:at + 8 + length]
        (crc,) = struct.unpack(">I", data[at + 8 + length:at + 12 + length])
        if zlib.crc32(kind + body) != crc:
            problems.append(f"bad CRC in {kind!r}")
        chunks.append((kind, body))
        at += 12 + length
    kinds = [kind for kind, _ in chunks]
    if kinds[0] != b"IHDR" or kinds[-1] != b"IEND" or b"IDAT" not in kinds:
        return [*problems, f"chunks out of order: {kinds!r}"]
    width, height, depth, colour, _, _, _ = struct.unpack(">IIBBBBB", chunks[0][1])
    if (depth, colour) != (8, 2):
        problems.append(f"not 8-bit RGB: depth {depth}, colour type {colour}")
    pixels = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    if len(pixels) != height * (1 + 3 * width):
        problems.append(f"{len(pixels)} bytes of scanlines for {width}x{height}")
    return problems


def _text(result: types.CallToolResult) -> str:
    assert len(result.content) == 1, result
    item = result.content[0]
    assert isinstance(item, types.TextContent), item
    return item.text


def _model(params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    asked = params.messages[0].content
    assert isinstance(asked, types.TextContent)
    return types.CreateMessageResult(role="assistant", model="stub-model",
                                     content=types.TextContent(text=f"You said: {asked.text}"))


@pytest.mark.timeout(20)
def test_everything_is_declared_listed_and_described() -> None:
    """Every capability is declared with its flags; every tool and prompt has a description.

    CAPS-3, TOOLS-1, TOOLS-2, TOOLS-3, RESOURCES-1, RESOURCES-2, RESOURCES-5,
    PROMPTS-1, PROMPTS-2, COMPLETION-1, LOGGING-1.
    """
    with open_client(server, **LEGACY_ERA) as client:
        caps = client.server_capabilities
        assert caps.tools is not None and caps.tools.list_changed is True
        assert caps.resources is not None
        assert (caps.resources.subscribe, caps.resources.list_changed) == (True, True)
        assert caps.prompts is not None and caps.prompts.list_changed is True
        assert caps.logging is not None and caps.completions is not None
        assert client.server_info is not None and client.server_info.name == "everything"

        tools = client.list_tools()
        assert [tool.name for tool in tools] == TOOL_NAMES
        assert all(tool.description for tool in tools), tools
        schemas = {tool.name: tool.input_schema for tool in tools}
        assert schemas["add"]["required"] == ["a", "b"]
        assert "required" not in schemas["long_running"]
        assert schemas["log"]["properties"]["level"]["enum"] == list(types.LOGGING_LEVELS)

        resources = {r.uri: r for r in client.list_resources()}
        assert list(resources) == ["static://hello", "static://binary"]
        assert resources["static://hello"].mime_type == "text/plain"
        assert resources["static://binary"].mime_type == "application/octet-stream"
        assert [t.uri_template for t in client.list_resource_templates()] == [
            "greeting://{name}"]

        prompts = client.list_prompts()
        assert [prompt.name for prompt in prompts] == ["greet"]
        assert prompts[0].description
        assert [(a.name, a.required) for a in prompts[0].arguments or []] == [("name", True)]


@pytest.mark.timeout(20)
def test_echo_and_add() -> None:
    """``echo`` returns its text, ``add`` the sum; bad arguments are an ``isError``
    result in 2025-11-25 and a protocol error in 2025-03-26.

    TOOLS-4, TOOLS-7, TOOLS-11, CONTENT-1, V1125-32.
    """
    with open_client(server) as client:
        assert _text(client.call_tool("echo", {"message": "Zürich ✓"})) == "Zürich ✓"
        assert _text(client.call_tool("add", {"a": 2, "b": 40})) == "42"
        assert _text(client.call_tool("add", {"a": -7, "b": 3})) == "-4"
        assert client.call_tool("add", {"a": "two", "b": 40}).is_error is True
    with open_client(server, protocol_version="2025-03-26") as client, \
            pytest.raises(InvalidParams):
        client.call_tool("add", {"a": "two", "b": 40})


@pytest.mark.timeout(20)
def test_long_running_reports_each_step() -> None:
    """One progress report per step, increasing, all before the result ``done``.

    PROGRESS-1, PROGRESS-3, PROGRESS-4, PROGRESS-5.
    """
    reports: list[tuple[float, float | None, str | None]] = []
    with open_client(server) as client:
        result = client.call_tool("long_running", {"steps": 4, "delay": 0},
                                  on_progress=lambda p, t, m: reports.append((p, t, m)))
        assert _text(result) == "done"
        assert reports == [(n, 4, f"step {n} of 4") for n in range(1, 5)]
        # Without a progress token the tool still runs to the end (PROGRESS-6).
        assert _text(client.call_tool("long_running", {"steps": 2, "delay": 0})) == "done"


@pytest.mark.timeout(20)
def test_long_running_stops_when_cancelled(monkeypatch: pytest.MonkeyPatch) -> None:
    """A call that times out is cancelled at the server, and the tool's wait ends at once.

    CANCEL-1, CANCEL-4, CANCEL-6.
    """
    waits: queue.Queue[bool] = queue.Queue()
    real_wait = Context.wait_cancelled

    def recording_wait(self: Context, timeout: float | None = None) -> bool:
        cancelled = real_wait(self, timeout)
        waits.put(cancelled)
        return cancelled

    monkeypatch.setattr(Context, "wait_cancelled", recording_wait)
    with open_client(server) as client:
        # Each step would wait 60 s: only the cancellation can end the first wait early.
        with pytest.raises(RequestTimeout):
            client.call_tool("long_running", {"steps": 3, "delay": 60}, timeout=0.2)
        assert waits.get(timeout=WAIT) is True
        client.ping()  # the connection lives on after the cancellation
    assert waits.empty(), "the tool went on waiting after it was cancelled"


@pytest.mark.timeout(20)
def test_sample_returns_what_the_model_said() -> None:
    """``sample`` asks the client's model and returns its text; a client that cannot sample
    makes it a tool error.

    SAMPLING-1, SAMPLING-2, SAMPLING-4, TOOLS-6.
    """
    asked: list[types.CreateMessageRequestParams] = []

    def model(params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        asked.append(params)
        return _model(params)

    with open_client(server, sampling_handler=model, **LEGACY_ERA) as client:
        result = client.call_tool("sample", {"prompt": "What is MCP?"})
        assert _text(result) == "You said: What is MCP?"
    assert len(asked) == 1 and asked[0].max_tokens == 100
    assert [message.role for message in asked[0].messages] == ["user"]

    with open_client(server, **LEGACY_ERA) as client:
        refused = client.call_tool("sample", {"prompt": "What is MCP?"})
        assert refused.is_error is True


@pytest.mark.timeout(20)
@pytest.mark.parametrize(("reply", "expected"), [
    ({"action": "accept", "content": {"name": "Ada"}}, "Hello, Ada!"),
    ({"action": "decline"}, "declined"), ({"action": "cancel"}, "cancelled")])
def test_ask_elicits_a_name_v0618_29(reply: dict[str, Any], expected: str) -> None:
    """``ask`` elicits ``{"name": string}`` and answers after the user's choice; a client
    without elicitation makes it a tool error.

    V0618-29, V0618-31, V0618-9.
    """
    asked: list[Any] = []

    def handler(request: Any) -> dict[str, Any]:
        asked.append(request)
        return reply

    with open_client(server, elicitation_handler=handler, **LEGACY_ERA) as client:
        assert _text(client.call_tool("ask")) == expected
    assert asked[0].message == "What is your name?"
    assert asked[0].requested_schema == {"type": "object", "required": ["name"],
                                         "properties": {"name": {"type": "string"}}}
    with open_client(server, **LEGACY_ERA) as client:
        assert client.call_tool("ask").is_error is True


@pytest.mark.timeout(20)
def test_roots_come_back_as_json() -> None:
    """``roots`` lists the client's roots, with names where given.

    ROOTS-1, ROOTS-2, ROOTS-3, ROOTS-7.
    """
    offered = ["file:///home/me/project", {"uri": "file:///data", "name": "data"}]
    with open_client(server, roots=offered, **LEGACY_ERA) as client:
        listed = json.loads(_text(client.call_tool("roots")))
    assert listed == [{"uri": "file:///home/me/project"},
                      {"uri": "file:///data", "name": "data"}]


@pytest.mark.timeout(20)
def test_fail_is_a_tool_error() -> None:
    """``fail`` answers with a result flagged ``isError``, not a JSON-RPC error.

    TOOLS-6.
    """
    with open_client(server) as client:
        result = client.call_tool("fail")
    assert result.is_error is True
    assert _text(result) == "this tool always fails"


@pytest.mark.timeout(20)
def test_log_respects_the_clients_level() -> None:
    """``log`` sends at the level asked for, filtered by the client's ``setLevel`` (``info``
    and above before any).

    LOGGING-2, LOGGING-3, LOGGING-4, LOGGING-5.
    """
    received: queue.Queue[types.LoggingMessageNotificationParams] = queue.Queue()
    with open_client(server, on_log=received.put, **LEGACY_ERA) as client:
        answers = [_text(client.call_tool("log", {"level": level, "message": level}))
                   for level in ("debug", "info", "error")]
        client.set_logging_level("error")
        answers += [_text(client.call_tool("log", {"level": level, "message": level}))
                    for level in ("info", "warning", "error", "emergency")]
        arrived = [received.get(timeout=WAIT) for _ in range(4)]
        # V1125-32: a bad argument is an isError result in 2025-11-25.
        bad = client.call_tool("log", {"level": "loud", "message": "x"})
        assert bad.is_error is True and "level" in _text(bad)
    assert answers == ["filtered out by the client's log level", "sent", "sent",
                       "filtered out by the client's log level",
                       "filtered out by the client's log level", "sent", "sent"]
    assert [(m.level, m.data, m.logger) for m in arrived] == [
        ("info", "info", "everything"), ("error", "error", "everything"),
        ("error", "error", "everything"), ("emergency", "emergency", "everything")]
    assert received.empty()


@pytest.mark.timeout(20)
def test_stateless_server_logs_warning_and_above() -> None:
    """Built for stateless HTTP, where no session remembers ``setLevel``, the server sends
    ``warning`` and above without being asked.

    LOGGING-5, HTTP-29.
    """
    stateless = example.make_server(stateless=True)
    received: queue.Queue[types.LoggingMessageNotificationParams] = queue.Queue()
    with open_client(stateless, on_log=received.put, **LEGACY_ERA) as client:
        answers = [_text(client.call_tool("log", {"level": level, "message": level}))
                   for level in ("debug", "info", "notice", "warning", "critical")]
        arrived = [received.get(timeout=WAIT) for _ in range(2)]
    assert answers == ["filtered out by the client's log level"] * 3 + ["sent", "sent"]
    assert [m.level for m in arrived] == ["warning", "critical"]
    assert received.empty()


@pytest.mark.timeout(20)
def test_image_is_a_valid_png() -> None:
    """``image`` returns one image item holding a well-formed PNG.

    CONTENT-2, TOOLS-5.
    """
    with open_client(server) as client:
        result = client.call_tool("image")
    assert len(result.content) == 1
    item = result.content[0]
    assert isinstance(item, types.ImageContent) and item.mime_type == "image/png"
    assert png_problems(base64.b64decode(item.data)) == []
    assert png_problems(example.make_png(3, 2, (0, 0, 0))) == []


@pytest.mark.timeout(20)
def test_resources_and_the_template() -> None:
    """Text, blob and template resources read back exactly; an unknown URI is -32002.

    RESOURCES-3, RESOURCES-4, RESOURCES-9, CONTENT-4.
    """
    with open_client(server, **LEGACY_ERA) as client:
        (hello,) = client.read_resource("static://hello").contents
        assert isinstance(hello, types.TextResourceContents)
        assert (hello.uri, hello.mime_type, hello.text) == (
            "static://hello", "text/plain", "Hello, world!")
        (binary,) = client.read_resource("static://binary").contents
        assert isinstance(binary, types.BlobResourceContents)
        assert binary.mime_type == "application/octet-stream"
        assert base64.b64decode(binary.blob) == bytes(range(256))
        (greeting,) = client.read_resource("greeting://Zoë").contents
        assert isinstance(greeting, types.TextResourceContents)
        assert (greeting.uri, greeting.text) == ("greeting://Zoë", "Hello, Zoë!")
        with pytest.raises(ResourceNotFound) as missing:
            client.read_resource("static://nothing")
    assert missing.value.code == -32002


@pytest.mark.timeout(20)
def test_subscriptions_deliver_updates_until_unsubscribed() -> None:
    """A subscribed client hears of updates; after unsubscribing it does not.

    RESOURCES-7, RESOURCES-8.
    """
    updated: queue.Queue[str] = queue.Queue()
    with open_client(server, on_resource_updated=updated.put, **LEGACY_ERA) as client:
        client.subscribe_resource("static://hello")
        assert server.notify_resource_updated("static://hello") == 1
        assert updated.get(timeout=WAIT) == "static://hello"
        client.unsubscribe_resource("static://hello")
        assert server.notify_resource_updated("static://hello") == 0
        client.ping()
    assert updated.empty()


@pytest.mark.timeout(20)
def test_greet_prompt_and_name_completion() -> None:
    """``greet`` renders one user message with the name; names complete by prefix for the
    prompt and the template alike.

    PROMPTS-3, PROMPTS-4, PROMPTS-6, COMPLETION-2, COMPLETION-3, COMPLETION-5.
    """
    with open_client(server) as client:
        rendered = client.get_prompt("greet", {"name": "Ada"})
        assert len(rendered.messages) == 1
        message = rendered.messages[0]
        assert message.role == "user"
        assert isinstance(message.content, types.TextContent) and "Ada" in message.content.text
        with pytest.raises(InvalidParams):
            client.get_prompt("greet", {})

        prompt = types.PromptReference(name="greet")
        assert client.complete(prompt, "name", "A").completion.values == ["Alice"]
        assert client.complete(prompt, "name", "c").completion.values == ["Carol"]
        everyone = client.complete(prompt, "name", "").completion
        assert everyone.values == example.NAMES and not everyone.has_more
        assert client.complete(prompt, "name", "Zz").completion.values == []
        found = client.complete("greeting://{name}", "name", "e").completion
        assert found.values == ["Eve"]
        with pytest.raises(InvalidParams):
            client.complete(prompt, "nickname", "A")


@pytest.mark.timeout(20)
def test_command_line_picks_the_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    """No flags serve stdio; ``--http`` passes host, port, ``stateless`` and
    ``json_response`` to ``run_http``, with the stateless build when asked.

    STDIO-1, HTTP-1, LOGGING-5.
    """
    calls: list[tuple[str, Server, dict[str, Any]]] = []

    def run_stdio(self: Server) -> None:
        calls.append(("stdio", self, {}))

    def run_http(self: Server, **options: Any) -> None:
        calls.append(("http", self, options))

    monkeypatch.setattr(Server, "run_stdio", run_stdio)
    monkeypatch.setattr(Server, "run_http", run_http, raising=False)

    example.main([])
    example.main(["--http", "--host", "127.0.0.1", "--port", "8123"])
    example.main(["--http", "--port", "9000", "--stateless", "--json-response"])

    (stdio, _, _), (http, stateful, plain), (_, stateless, flagged) = calls
    assert (stdio, http) == ("stdio", "http")
    assert stateful is server and stateful.log_level == "info"
    assert plain == {"host": "127.0.0.1", "port": 8123, "stateless": False,
                     "json_response": False}
    assert stateless is not server and stateless.log_level == "warning"
    assert flagged == {"host": "127.0.0.1", "port": 9000, "stateless": True,
                       "json_response": True}


def test_every_tool_has_a_title_v0618_16() -> None:
    """V0618-16, issue 27 point 5: each tool of the everything server has a title."""
    with open_client(server) as client:
        assert all(tool.title for tool in client.list_tools())


def test_structured_returns_sum_and_product_v0618_21() -> None:
    """V0618-17/18/21: ``structured`` declares integer ``sum`` and ``product``, returns
    them as structured content and as the same JSON in a text block."""
    with open_client(server) as client:
        tools = {tool.name: tool for tool in client.list_tools()}
        schema = tools["structured"].output_schema
        assert schema is not None
        assert schema["properties"] == {"sum": {"type": "integer"},
                                        "product": {"type": "integer"}}
        assert schema["required"] == ["sum", "product"]
        result = client.call_tool("structured", {"a": 6, "b": 7})
        assert result.structured == {"sum": 13, "product": 42}
        assert json.loads(_text(result)) == {"sum": 13, "product": 42}


def test_link_points_at_a_readable_resource_v0618_22() -> None:
    """V0618-22: ``link`` returns a resource link to static://hello, which reads."""
    with open_client(server) as client:
        (link,) = client.call_tool("link").content
        assert isinstance(link, types.ResourceLink)
        assert (link.uri, link.name, link.mime_type) == (
            "static://hello", "hello", "text/plain")
        (hello,) = client.read_resource(link.uri).contents
        assert isinstance(hello, types.TextResourceContents)
        assert hello.text == "Hello, world!"


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_structured_and_link_fit_each_versions_schema_des_3(version: str) -> None:
    """DES-3, DES-10, DES-19: in every version the lists and results of ``structured`` and
    ``link`` fit that version's schema; outputSchema, structuredContent and resource
    links appear only from 2025-06-18, the JSON text and a text naming the URI before."""
    newer = version >= "2025-06-18"
    with raw_session(server, version=version) as (peer, _):
        listed = peer.call(request("tools/list"))["result"]
        validator("ListToolsResult", version).validate(listed)
        tools = {tool["name"]: tool for tool in listed["tools"]}
        assert ("outputSchema" in tools["structured"]) is newer
        answer = peer.call(request("tools/call", {"name": "structured",
                                                  "arguments": {"a": 2, "b": 3}}))["result"]
        validator("CallToolResult", version).validate(answer)
        assert json.loads(answer["content"][0]["text"]) == {"sum": 5, "product": 6}
        assert answer.get("structuredContent") == ({"sum": 5, "product": 6} if newer else None)
        linked = peer.call(request("tools/call", {"name": "link"}))["result"]
        validator("CallToolResult", version).validate(linked)
        (item,) = linked["content"]
        if newer:
            assert (item["type"], item["uri"]) == ("resource_link", "static://hello")
        else:
            assert item == {"type": "text", "text": "[resource link] Hello: static://hello"}
