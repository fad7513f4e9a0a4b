"""Every client-to-server request as a typed Client method, against scripted servers.

The autouse ``wire`` fixture checks each request the client encodes against the schema
definition of its method; these tests check the params, the typed results, paging,
local capability refusals (CAPS-5) and the tool-call approval hook (GEN-5, TOOLS-12).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

import pytest

from mcp_sync import CapabilityError, Client, McpError, types
from mcp_sync.client import ToolCallDenied
from mcp_sync.errors import InvalidParams, ResourceNotFound
from tests.conftest import WireLog, schema_valid
from tests.helpers import ScriptedServer

pytestmark = pytest.mark.timeout(30)

Start = Callable[..., ScriptedServer]

EVERYTHING = {
    "tools": {}, "resources": {"subscribe": True, "listChanged": True},
    "prompts": {"listChanged": True}, "logging": {}, "completions": {},
}

RESOURCE = {"uri": "file:///notes.txt", "name": "notes", "mimeType": "text/plain",
            "size": 12, "annotations": {"audience": ["user"], "priority": 0.5}}
TEMPLATE = {"uriTemplate": "users://{id}/profile", "name": "profile",
            "description": "A user's profile"}
PROMPT = {"name": "review", "description": "Review code",
          "arguments": [{"name": "code", "required": True}]}
TOOL = {"name": "add", "inputSchema": {"type": "object"}}



def sent_methods(wire: WireLog) -> list[str]:
    """What the client sent, but its era probe (the legacy fakes here answer -32601)."""
    return [m["method"] for m in wire.sent if isinstance(m, dict) and "method" in m
            and m["method"] != "server/discover"]


# --- wire shapes and typed results ------------------------------------------------------


def test_resources_list_read_templates_resources_2_3_5(scripted: Start) -> None:
    """RESOURCES-2/3/5, CONTENT-6: typed resources, templates and contents (text and
    blob), unknown fields kept in ``extra``."""
    contents = {"contents": [
        {"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "hello"},
        {"uri": "file:///logo.png", "mimeType": "image/png", "blob": "iVBORw0KGgo="}]}
    server = scripted(EVERYTHING, {
        "resources/list": lambda p: schema_valid("ListResourcesResult", {
            "resources": [{**RESOURCE, "title": "Notes"}]}),
        "resources/templates/list": lambda p: schema_valid("ListResourceTemplatesResult", {
            "resourceTemplates": [TEMPLATE]}),
        "resources/read": lambda p: schema_valid("ReadResourceResult", contents),
    })
    with Client(server.peer.transport) as client:
        resources = client.list_resources()
        templates = client.list_resource_templates()
        read = client.read_resource("file:///notes.txt")
    assert resources == [types.Resource(
        uri="file:///notes.txt", name="notes", mime_type="text/plain", size=12,
        annotations=types.Annotations(audience=["user"], priority=0.5), title="Notes")]
    assert templates == [types.ResourceTemplate(
        uri_template="users://{id}/profile", name="profile", description="A user's profile")]
    assert read.contents == [
        types.TextResourceContents(uri="file:///notes.txt", mime_type="text/plain",
                                   text="hello"),
        types.BlobResourceContents(uri="file:///logo.png", mime_type="image/png",
                                   blob="iVBORw0KGgo=")]
    assert [(r["method"], r.get("params")) for r in server.requests()] == [
        ("resources/list", None), ("resources/templates/list", None),
        ("resources/read", {"uri": "file:///notes.txt"})]


def test_read_unknown_resource_raises_resource_not_found_resources_9(
        scripted: Start) -> None:
    """RESOURCES-9: -32002 becomes ResourceNotFound with the server's data."""
    def missing(params: dict[str, Any]) -> Any:
        raise ResourceNotFound("Resource not found", {"uri": params["uri"]})

    server = scripted(EVERYTHING, {"resources/read": missing})
    with Client(server.peer.transport) as client, \
            pytest.raises(ResourceNotFound) as caught:
        client.read_resource("file:///missing")
    assert caught.value.data == {"uri": "file:///missing"}


def test_subscribe_and_unsubscribe_resources_7(scripted: Start) -> None:
    """RESOURCES-7: both send ``{uri}`` and return None on the empty result."""
    server = scripted(EVERYTHING, {"resources/subscribe": lambda p: {},
                                   "resources/unsubscribe": lambda p: {}})
    with Client(server.peer.transport) as client:
        assert client.subscribe_resource("file:///a.txt") is None
        assert client.unsubscribe_resource("file:///a.txt") is None
    assert [(r["method"], r["params"]) for r in server.requests()] == [
        ("resources/subscribe", {"uri": "file:///a.txt"}),
        ("resources/unsubscribe", {"uri": "file:///a.txt"})]


def test_prompts_list_and_get_with_every_content_prompts_2_3_content_5(
        scripted: Start) -> None:
    """PROMPTS-2/3, CONTENT-5: prompt messages may hold every content type; an unknown
    content type is kept, not fatal."""
    messages = [
        {"role": "user", "content": {"type": "text", "text": "Review x"}},
        {"role": "user", "content": {"type": "image", "data": "AA==", "mimeType": "image/png"}},
        {"role": "assistant", "content": {"type": "audio", "data": "AA==",
                                          "mimeType": "audio/wav"}},
        {"role": "user", "content": {"type": "resource", "resource": {
            "uri": "file:///x.py", "mimeType": "text/x-python", "text": "x = 1"}}},
    ]
    server = scripted(EVERYTHING, {
        "prompts/list": lambda p: schema_valid("ListPromptsResult", {"prompts": [PROMPT]}),
        "prompts/get": lambda p: {**schema_valid("GetPromptResult", {
            "description": "Code review", "messages": messages}),
            "messages": [*messages, {"role": "user", "content": {  # a newer server's types
                "type": "resource_link", "uri": "file:///y", "name": "y"}},
                {"role": "user", "content": {"type": "hologram", "uri": "file:///z"}}]},
    })
    with Client(server.peer.transport) as client:
        prompts = client.list_prompts()
        result = client.get_prompt("review", {"code": "x = 1"})
    assert prompts == [types.Prompt(name="review", description="Review code", arguments=[
        types.PromptArgument(name="code", required=True)])]
    assert result.description == "Code review"
    assert [type(m.content) for m in result.messages] == [
        types.TextContent, types.ImageContent, types.AudioContent, types.EmbeddedResource,
        types.ResourceLink, types.UnknownContent]
    assert server.requests("prompts/get")[0]["params"] == {
        "name": "review", "arguments": {"code": "x = 1"}}


def test_get_prompt_refuses_non_string_arguments_prompts_3(
        scripted: Start, wire: WireLog) -> None:
    """PROMPTS-3: argument values are strings only; anything else is refused locally."""
    server = scripted(EVERYTHING, {"prompts/get": lambda p: {"messages": []}})
    with Client(server.peer.transport) as client:
        with pytest.raises(TypeError, match="'count' is int"):
            client.get_prompt("review", {"count": 3})  # type: ignore[dict-item]
        with pytest.raises(TypeError, match="non-string key"):
            client.get_prompt("review", {1: "x"})  # type: ignore[dict-item]
        assert client.get_prompt("review").messages == []
    assert server.requests("prompts/get")[0]["params"] == {"name": "review"}
    assert sent_methods(wire).count("prompts/get") == 1


@pytest.mark.parametrize(("ref", "wire_ref"), [
    (types.PromptReference(name="review"), {"type": "ref/prompt", "name": "review"}),
    (types.ResourceReference(uri="users://{id}"), {"type": "ref/resource",
                                                   "uri": "users://{id}"}),
    ({"type": "ref/prompt", "name": "review"}, {"type": "ref/prompt", "name": "review"}),
    ("review", {"type": "ref/prompt", "name": "review"}),
    ("users://{id}/profile", {"type": "ref/resource", "uri": "users://{id}/profile"}),
])
def test_complete_ref_forms_completion_2_3(scripted: Start, ref: Any,
                                           wire_ref: dict[str, Any]) -> None:
    """COMPLETION-2/3: every accepted form of ``ref`` becomes the wire reference."""
    server = scripted(EVERYTHING, {"completion/complete": lambda p: schema_valid("CompleteResult", {
        "completion": {"values": ["py", "pyi"], "total": 10, "hasMore": True}})})
    with Client(server.peer.transport) as client:
        result = client.complete(ref, "language", "py")
    assert result.completion == types.Completion(values=["py", "pyi"], total=10,
                                                 has_more=True)
    assert server.requests()[0]["params"] == {
        "ref": wire_ref, "argument": {"name": "language", "value": "py"}}


def test_complete_refuses_bad_refs_and_values(scripted: Start, wire: WireLog) -> None:
    """COMPLETION-2: nothing is sent for a reference or value of the wrong kind."""
    server = scripted(EVERYTHING)
    with Client(server.peer.transport) as client:
        with pytest.raises(ValueError, match="invalid completion reference"):
            client.complete({"type": "ref/tool", "name": "x"}, "a", "b")
        with pytest.raises(TypeError):
            client.complete(42, "a", "b")  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            client.complete("review", "a", 7)  # type: ignore[arg-type]
    assert "completion/complete" not in sent_methods(wire)


def test_set_logging_level_logging_2_3(scripted: Start, wire: WireLog) -> None:
    """LOGGING-2/3: a known level is sent; an unknown one is refused locally."""
    server = scripted(EVERYTHING, {"logging/setLevel": lambda p: {}})
    with Client(server.peer.transport) as client:
        assert client.set_logging_level("warning") is None
        with pytest.raises(ValueError, match="verbose"):
            client.set_logging_level("verbose")  # type: ignore[arg-type]
    assert [r["params"] for r in server.requests("logging/setLevel")] == [
        {"level": "warning"}]
    assert sent_methods(wire).count("logging/setLevel") == 1


def test_progress_on_read_resource_and_get_prompt_progress_1(scripted: Start) -> None:
    """PROGRESS-1/3: ``on_progress`` puts a token in ``_meta`` and receives reports,
    all of them before the call returns."""
    def with_progress(result: dict[str, Any]) -> Callable[[dict[str, Any]], Any]:
        def answer(params: dict[str, Any]) -> Any:
            token = params["_meta"]["progressToken"]
            for step in (1, 2):
                server.notify("notifications/progress", {
                    "progressToken": token, "progress": step, "total": 2,
                    "message": f"step {step}"})
            return result
        return answer

    server = scripted(EVERYTHING, {
        "resources/read": with_progress({"contents": []}),
        "prompts/get": with_progress({"messages": []}),
    })
    seen: list[tuple[float, float | None, str | None]] = []
    with Client(server.peer.transport) as client:
        client.read_resource("file:///a", on_progress=lambda *a: seen.append(a))
        client.get_prompt("review", on_progress=lambda *a: seen.append(a))
    assert seen == [(1, 2, "step 1"), (2, 2, "step 2")] * 2


def test_async_variants_complete_off_the_reader(scripted: Start) -> None:
    """TOOLS-4, RESOURCES-3, PROMPTS-3: ``*_async`` futures hold the typed results and
    never complete on the reader thread."""
    server = scripted(EVERYTHING, {
        "resources/read": lambda p: {"contents": [{"uri": p["uri"], "text": "t"}]},
        "prompts/get": lambda p: {"messages": []},
        "tools/call": lambda p: {"content": [{"type": "text", "text": "ok"}]},
    })
    threads: queue.SimpleQueue[str] = queue.SimpleQueue()
    with Client(server.peer.transport) as client:
        futures = [client.read_resource_async("file:///a"),
                   client.get_prompt_async("review", {"code": "x"}),
                   client.call_tool_async("add", {"a": 1})]
        for future in futures:
            future.add_done_callback(lambda f: threads.put(threading.current_thread().name))
        results = [future.result(5) for future in futures]
        names = [threads.get(timeout=5) for _ in futures]
    assert isinstance(results[0], types.ReadResourceResult)
    assert results[0].contents == [types.TextResourceContents(uri="file:///a", text="t")]
    assert isinstance(results[1], types.GetPromptResult)
    assert isinstance(results[2], types.CallToolResult)
    assert not any("reader" in name for name in names)


def test_timeout_on_every_call_lifecycle_10(scripted: Start, wire: WireLog) -> None:
    """LIFECYCLE-9/10: a per-call timeout overrides the default and cancels the call."""
    from mcp_sync import RequestTimeout

    never = threading.Event()
    server = scripted(EVERYTHING, {"resources/read": lambda p: never.wait(10) and {}})
    with Client(server.peer.transport, timeout=30) as client:
        with pytest.raises(RequestTimeout):
            client.read_resource("file:///slow", timeout=0.2)
        never.set()
    cancels = [m for m in wire.sent if isinstance(m, dict)
               and m.get("method") == "notifications/cancelled"]
    assert [c["params"]["requestId"] for c in cancels] == [
        server.requests("resources/read")[0]["id"]]


# --- pagination ---------------------------------------------------------------------------

LISTS = [
    ("tools/list", "tools", TOOL, lambda c: c.list_tools(), types.Tool),
    ("resources/list", "resources", RESOURCE, lambda c: c.list_resources(), types.Resource),
    ("resources/templates/list", "resourceTemplates", TEMPLATE,
     lambda c: c.list_resource_templates(), types.ResourceTemplate),
    ("prompts/list", "prompts", PROMPT, lambda c: c.list_prompts(), types.Prompt),
]


@pytest.mark.parametrize(("method", "field", "item", "list_all", "cls"), LISTS,
                         ids=[entry[0] for entry in LISTS])
def test_lists_follow_cursors_any_page_size_pagination_1_2_3(
        scripted: Start, method: str, field: str, item: dict[str, Any],
        list_all: Callable[[Client], list[Any]], cls: type[Any]) -> None:
    """PAGINATION-1/2/3/6: pages of 1, 0 and 1000 items; each cursor goes back as is."""
    sizes = {None: (1, "c1"), "c1": (0, "c/2=="), "c/2==": (1000, "c3"), "c3": (1, None)}

    def page(params: dict[str, Any]) -> dict[str, Any]:
        count, next_cursor = sizes[params.get("cursor")]
        result: dict[str, Any] = {field: [item] * count}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    server = scripted(EVERYTHING, {method: page})
    with Client(server.peer.transport) as client:
        items = list_all(client)
    assert len(items) == 1002 and all(isinstance(i, cls) for i in items)
    assert [r.get("params") for r in server.requests(method)] == [
        None, {"cursor": "c1"}, {"cursor": "c/2=="}, {"cursor": "c3"}]


@pytest.mark.parametrize(("method", "field", "item", "list_all", "cls"), LISTS,
                         ids=[entry[0] for entry in LISTS])
def test_no_next_cursor_is_one_page_pagination_4(
        scripted: Start, method: str, field: str, item: dict[str, Any],
        list_all: Callable[[Client], list[Any]], cls: type[Any]) -> None:
    """PAGINATION-4: a result without ``nextCursor`` (or an empty one) ends the list."""
    server = scripted(EVERYTHING, {method: lambda p: {field: [item, item], "nextCursor": ""}})
    with Client(server.peer.transport) as client:
        assert len(list_all(client)) == 2
    assert len(server.requests(method)) == 1


def test_page_methods_return_one_page_pagination_1(scripted: Start) -> None:
    """PAGINATION-1: ``*_page`` sends the given cursor and returns the typed page."""
    server = scripted(EVERYTHING, {
        "resources/list": lambda p: {"resources": [RESOURCE], "nextCursor": "n"},
        "resources/templates/list": lambda p: {"resourceTemplates": []},
        "prompts/list": lambda p: {"prompts": [], "nextCursor": "m"},
        "tools/list": lambda p: {"tools": []},
    })
    with Client(server.peer.transport) as client:
        resources = client.list_resources_page("a")
        templates = client.list_resource_templates_page()
        prompts = client.list_prompts_page("b")
        tools = client.list_tools_page("c")
    assert isinstance(resources, types.ListResourcesResult) and resources.next_cursor == "n"
    assert isinstance(templates, types.ListResourceTemplatesResult)
    assert isinstance(prompts, types.ListPromptsResult) and prompts.next_cursor == "m"
    assert isinstance(tools, types.ListToolsResult) and tools.next_cursor is None
    assert [r.get("params") for r in server.requests()] == [
        {"cursor": "a"}, None, {"cursor": "b"}, {"cursor": "c"}]


def test_a_repeated_cursor_stops_the_listing(scripted: Start) -> None:
    """PAGINATION-1: a server that hands back the same cursor cannot loop us forever."""
    server = scripted(EVERYTHING, {"tools/list": lambda p: {"tools": [TOOL],
                                                            "nextCursor": "same"}})
    with Client(server.peer.transport) as client, pytest.raises(McpError, match="twice"):
        client.list_tools()
    assert len(server.requests("tools/list")) == 2


def test_invalid_result_raises_invalid_params(scripted: Start) -> None:
    """RESOURCES-3, JSONRPC-8: a result that breaks its schema is an error naming the
    bad member, never a half-built object."""
    server = scripted(EVERYTHING, {"resources/read": lambda p: {"contents": [{"uri": 1}]}})
    with Client(server.peer.transport) as client, \
            pytest.raises(InvalidParams, match=r"\$\.contents\[0\]"):
        client.read_resource("file:///a")


# --- CAPS-5: nothing undeclared is asked for ---------------------------------------------

CALLS: dict[str, Callable[[Client], Any]] = {
    "tools/list": lambda c: c.list_tools(),
    "tools/call": lambda c: c.call_tool("add", {"a": 1}),
    "tools/call async": lambda c: c.call_tool_async("add"),
    "resources/list": lambda c: c.list_resources(),
    "resources/templates/list": lambda c: c.list_resource_templates(),
    "resources/read": lambda c: c.read_resource("file:///a"),
    "resources/read async": lambda c: c.read_resource_async("file:///a"),
    "resources/subscribe": lambda c: c.subscribe_resource("file:///a"),
    "resources/unsubscribe": lambda c: c.unsubscribe_resource("file:///a"),
    "prompts/list": lambda c: c.list_prompts(),
    "prompts/get": lambda c: c.get_prompt("p"),
    "prompts/get async": lambda c: c.get_prompt_async("p"),
    "logging/setLevel": lambda c: c.set_logging_level("info"),
    "completion/complete": lambda c: c.complete("p", "a", "b"),
}


@pytest.mark.parametrize("call", list(CALLS))
def test_undeclared_features_are_refused_locally_caps_5(
        scripted: Start, wire: WireLog, call: str) -> None:
    """CAPS-5: with no server capability, every feature call raises CapabilityError and
    nothing but the handshake reaches the wire."""
    server = scripted({})
    with Client(server.peer.transport) as client, pytest.raises(CapabilityError):
        CALLS[call](client)
    assert sent_methods(wire) == ["initialize", "notifications/initialized"]


@pytest.mark.parametrize("call", ["resources/subscribe", "resources/unsubscribe"])
def test_subscribe_needs_the_subscribe_flag_resources_7(
        scripted: Start, wire: WireLog, call: str) -> None:
    """RESOURCES-7, CAPS-5: ``resources`` without ``subscribe: true`` is not enough."""
    server = scripted({"resources": {"listChanged": True}},
                      {"resources/read": lambda p: {"contents": []}})
    with Client(server.peer.transport) as client:
        with pytest.raises(CapabilityError, match=r"resources\.subscribe"):
            CALLS[call](client)
        client.read_resource("file:///a")  # resources themselves are declared
    assert sent_methods(wire)[2:] == ["resources/read"]


def test_completion_is_not_gated_for_a_2024_server(scripted: Start) -> None:
    """CAPS-5 and the 2024-11-05 notes: that revision had no ``completions`` flag, so
    the request is sent and the server's answer decides."""
    server = scripted({"prompts": {}}, {"completion/complete": lambda p: {
        "completion": {"values": ["a"]}}}, version="2024-11-05")
    with Client(server.peer.transport) as client:
        assert client.protocol_version == "2024-11-05"
        assert client.complete("p", "x", "").completion.values == ["a"]
        with pytest.raises(CapabilityError):
            client.list_tools()  # the other gates still hold


# --- approving tool calls ----------------------------------------------------------------


def test_approval_hook_sees_each_call_before_it_is_sent_tools_12_gen_5(
        scripted: Start, wire: WireLog) -> None:
    """GEN-5, TOOLS-12: the hook gets name and arguments first; False sends nothing."""
    asked: list[tuple[str, dict[str, Any], int]] = []

    def approve(name: str, arguments: dict[str, Any]) -> bool:
        asked.append((name, arguments, sent_methods(wire).count("tools/call")))
        return name != "delete_everything"

    server = scripted(EVERYTHING, {"tools/call": lambda p: {"content": []}})
    with Client(server.peer.transport, approve_tool_call=approve) as client:
        assert client.call_tool("add", {"a": 1}).content == []
        with pytest.raises(ToolCallDenied, match="delete_everything") as caught:
            client.call_tool("delete_everything", {"really": True})
        assert isinstance(caught.value, PermissionError)
        with pytest.raises(ToolCallDenied):
            client.call_tool_async("delete_everything")
        assert client.call_tool_async("add").result(5).content == []
    assert asked == [("add", {"a": 1}, 0), ("delete_everything", {"really": True}, 1),
                     ("delete_everything", {}, 1), ("add", {}, 1)]
    assert [r["params"]["name"] for r in server.requests("tools/call")] == ["add", "add"]


def test_approval_hook_that_raises_sends_nothing(scripted: Start, wire: WireLog) -> None:
    """GEN-5: an approval hook that fails is a refusal too; its error reaches the caller."""
    def approve(name: str, arguments: dict[str, Any]) -> bool:
        raise RuntimeError("no UI available")

    server = scripted(EVERYTHING)
    with Client(server.peer.transport, approve_tool_call=approve) as client, \
            pytest.raises(RuntimeError, match="no UI"):
        client.call_tool("add")
    assert "tools/call" not in sent_methods(wire)
