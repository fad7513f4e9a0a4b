"""Resource links, lastModified, _meta and display names (V0618-8, V0618-16, V0618-22..25,
NAMBIG-12, DES-3)."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_sync import Server, types
from mcp_sync.content import resource_link
from mcp_sync.protocol._convert import from_wire, to_wire
from mcp_sync.testing import open_client
from tests.server_support import raw_session, request
from tests.wire_schema import validator


def make_server() -> Server:
    server = Server("links")

    @server.resource("static://hello", mime_type="text/plain")
    def hello() -> str:
        return "Hello, world!"

    @server.tool(title="Link")
    def link() -> types.ResourceLink:
        return resource_link("static://hello", title="Hello", mime_type="text/plain",
                             annotations=types.Annotations(
                                 last_modified="2025-01-12T15:00:58Z"))

    @server.tool()
    def links() -> list[Any]:
        return ["See:", resource_link("static://hello"), resource_link("file:///tmp/a.txt")]

    @server.prompt()
    def linked() -> list[Any]:
        return ["Read this:", resource_link("static://hello", name="hello")]

    return server


def test_a_tool_returns_a_link_the_client_can_read_v0618_22() -> None:
    """V0618-22: the client decodes the link and reads the resource by its uri."""
    with open_client(make_server()) as client:
        result = client.call_tool("link")
        link = result.content[0]
        assert isinstance(link, types.ResourceLink)
        assert (link.uri, link.name, link.title, link.mime_type) == (
            "static://hello", "hello", "Hello", "text/plain")
        assert link.annotations is not None
        assert link.annotations.last_modified == "2025-01-12T15:00:58Z"
        read = client.read_resource(link.uri)
        assert read.contents[0].text == "Hello, world!"  # type: ignore[union-attr]
        mixed = client.call_tool("links").content
        assert [item.type for item in mixed] == ["text", "resource_link", "resource_link"]


def test_link_names_default_to_the_last_path_segment_nambig_12() -> None:
    """NAMBIG-12: a link's required name is invented from the URI when not given."""
    assert resource_link("file:///tmp/report.pdf").name == "report.pdf"
    assert resource_link("static://hello").name == "hello"
    assert resource_link("urn:isbn:0451450523").name == "urn:isbn:0451450523"
    assert resource_link("https://example.com/a/?q=1").name == "a"
    with pytest.raises(ValueError):
        resource_link("")


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_links_on_the_wire_fit_the_schema_v0618_24(version: str) -> None:
    """V0618-24: resource_link blocks in tool results and prompt messages validate."""
    with raw_session(make_server(), version=version) as (peer, _):
        answer = peer.call(request("tools/call", {"name": "link"}))["result"]
        assert answer["content"][0]["type"] == "resource_link"
        validator("CallToolResult", version).validate(answer)
        prompt = peer.call(request("prompts/get", {"name": "linked"}))["result"]
        assert prompt["messages"][1]["content"]["type"] == "resource_link"
        validator("GetPromptResult", version).validate(prompt)


@pytest.mark.parametrize("version", ["2025-03-26", "2024-11-05"])
def test_older_sessions_get_a_text_block_naming_the_uri_des_3(version: str) -> None:
    """DES-3: before 2025-06-18 a link becomes a text block naming its URI, in tool
    results and prompt messages alike."""
    with raw_session(make_server(), version=version) as (peer, _):
        answer = peer.call(request("tools/call", {"name": "link"}))["result"]
        assert answer["content"] == [
            {"type": "text", "text": "[resource link] Hello: static://hello"}]
        validator("CallToolResult", version).validate(answer)
        mixed = peer.call(request("tools/call", {"name": "links"}))["result"]["content"]
        assert [item["text"] for item in mixed] == [
            "See:", "[resource link] hello: static://hello",
            "[resource link] a.txt: file:///tmp/a.txt"]
        prompt = peer.call(request("prompts/get", {"name": "linked"}))["result"]
        assert prompt["messages"][1]["content"] == {
            "type": "text", "text": "[resource link] hello: static://hello"}


def test_annotations_last_modified_round_trips_v0618_25() -> None:
    """V0618-25: audience, priority and lastModified survive decode and encode."""
    wire = {"audience": ["user"], "priority": 0.9, "lastModified": "2025-01-12T15:00:58Z"}
    annotations = from_wire(wire, types.Annotations)
    assert annotations.last_modified == "2025-01-12T15:00:58Z"
    assert to_wire(annotations) == wire


META = {"example.com/k": [1, {"x": None}]}


@pytest.mark.parametrize(("cls", "wire"), [
    (types.Tool, {"name": "t", "inputSchema": {"type": "object"}, "_meta": META}),
    (types.Resource, {"uri": "a:b", "name": "b", "_meta": META}),
    (types.ResourceTemplate, {"uriTemplate": "a:{b}", "name": "b", "_meta": META}),
    (types.Prompt, {"name": "p", "_meta": META}),
    (types.TextResourceContents, {"uri": "a:b", "text": "t", "_meta": META}),
    (types.BlobResourceContents, {"uri": "a:b", "blob": "AA==", "_meta": META}),
    (types.TextContent, {"type": "text", "text": "t", "_meta": META}),
    (types.ImageContent, {"type": "image", "data": "AA==", "mimeType": "image/png",
                          "_meta": META}),
    (types.AudioContent, {"type": "audio", "data": "AA==", "mimeType": "audio/wav",
                          "_meta": META}),
    (types.EmbeddedResource, {"type": "resource", "resource": {"uri": "a:b", "text": "t"},
                              "_meta": META}),
    (types.ResourceLink, {"type": "resource_link", "uri": "a:b", "name": "b",
                          "_meta": META}),
])
def test_meta_round_trips_v0618_8(cls: Any, wire: dict[str, Any]) -> None:
    """V0618-8: _meta on each of these types is kept as a field, without loss."""
    decoded = from_wire(wire, cls)
    assert decoded.meta == META
    assert not decoded.extra
    assert to_wire(decoded) == wire


def test_display_name_order_v0618_16() -> None:
    """V0618-16: title, then (for tools) annotations.title, then name."""
    schema: dict[str, Any] = {"type": "object"}
    assert types.display_name(types.Tool(name="t", input_schema=schema)) == "t"
    assert types.display_name(types.Tool(
        name="t", input_schema=schema,
        annotations=types.ToolAnnotations(title="From annotations"))) == "From annotations"
    assert types.display_name(types.Tool(
        name="t", input_schema=schema, title="Title",
        annotations=types.ToolAnnotations(title="From annotations"))) == "Title"
    assert types.display_name(types.Prompt(name="p", title="A prompt")) == "A prompt"
    assert types.display_name(types.PromptArgument(name="a")) == "a"
    assert types.display_name(types.Implementation(name="s", version="1",
                                                   title="Server")) == "Server"


def test_embedding_a_resource_without_the_capability_warns_once_v0618_23(
        caplog: pytest.LogCaptureFixture) -> None:
    """V0618-23: a tool returning embedded resources from a server without the resources
    capability is logged as a warning, once per tool; with the capability, not at all."""
    embedded = types.TextResourceContents(uri="file:///a.txt", text="a")
    server = Server("embeds")
    server.add_tool(lambda: embedded, name="embed")
    with caplog.at_level("WARNING", logger="mcp_sync.server"), open_client(server) as client:
        client.call_tool("embed")
        client.call_tool("embed")
    warnings = [r for r in caplog.records if "embedded resource" in r.getMessage()]
    assert len(warnings) == 1 and "'embed'" in warnings[0].getMessage()
    caplog.clear()
    with_resources = Server("embeds", resources=True)
    with_resources.add_tool(lambda: embedded, name="embed")
    with caplog.at_level("WARNING", logger="mcp_sync.server"), \
            open_client(with_resources) as client:
        client.call_tool("embed")
    assert not [r for r in caplog.records if "embedded resource" in r.getMessage()]
