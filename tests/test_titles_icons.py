"""Titles, icons and _meta given to the server's decorators (V0618-8, V0618-16, V1125-7)."""

from __future__ import annotations

import pytest

from mcp_sync import Server, types
from mcp_sync.testing import open_client
from tests.server_support import raw_session, request
from tests.wire_schema import validator

ICON = "https://example.com/icon.png"
DATA_ICON = "data:image/png;base64,iVBORw0KGgo="


def make_server() -> Server:
    server = Server("titled", title="Titled server", icons=[types.Icon(src=ICON)])

    @server.tool(title="Add numbers", icons=[{"src": ICON, "sizes": ["48x48"]}],
                 meta={"example.com/tier": "free"})
    def add(a: int, b: int) -> int:
        return a + b

    @server.resource("config://app", title="App configuration", icons=[DATA_ICON],
                     meta={"example.com/k": 1})
    def config() -> str:
        return "{}"

    @server.resource("users://{user_id}/profile", title="User profile")
    def profile(user_id: int) -> str:
        return f"user {user_id}"

    @server.prompt(title="Code review", argument_titles={"code": "Source code"},
                   icons=[types.Icon(src=ICON, theme="dark")])
    def review(code: str, language: str = "python") -> str:
        return f"Review this {language}: {code}"

    return server


def test_titles_reach_the_client_v0618_16() -> None:
    """V0618-16: title on the server, tools, resources, templates, prompts and prompt
    arguments; display_name() shows it, and falls back to the name."""
    with open_client(make_server()) as client:
        assert client.server_info.title == "Titled server"
        [tool] = client.list_tools()
        [resource] = client.list_resources()
        [template] = client.list_resource_templates()
        [prompt] = client.list_prompts()
    assert [types.display_name(item) for item in (tool, resource, template, prompt)] == [
        "Add numbers", "App configuration", "User profile", "Code review"]
    assert prompt.arguments is not None
    assert [(argument.name, argument.title) for argument in prompt.arguments] == [
        ("code", "Source code"), ("language", None)]
    assert [types.display_name(argument) for argument in prompt.arguments] == [
        "Source code", "language"]


def test_icons_and_meta_reach_the_client_v1125_7_v0618_8() -> None:
    """V1125-7, V0618-8: icons as src strings, wire dicts or Icon objects; _meta kept."""
    with open_client(make_server()) as client:
        info = client.server_info
        [tool] = client.list_tools()
        [resource] = client.list_resources()
        [prompt] = client.list_prompts()
    assert info.icons == [types.Icon(src=ICON)]
    assert tool.icons == [types.Icon(src=ICON, sizes=["48x48"])]
    assert tool.meta == {"example.com/tier": "free"}
    assert resource.icons == [types.Icon(src=DATA_ICON)]
    assert resource.meta == {"example.com/k": 1}
    assert prompt.icons == [types.Icon(src=ICON, theme="dark")]


def test_lists_fit_the_2025_11_25_schema_v1125_7() -> None:
    """V1125-7: the lists carrying titles and icons validate against 2025-11-25."""
    with raw_session(make_server(), version="2025-11-25") as (peer, _):
        for method, definition in (("tools/list", "ListToolsResult"),
                                   ("resources/list", "ListResourcesResult"),
                                   ("resources/templates/list", "ListResourceTemplatesResult"),
                                   ("prompts/list", "ListPromptsResult")):
            validator(definition, "2025-11-25").validate(peer.call(request(method))["result"])


@pytest.mark.parametrize("src", ["http://example.com/i.png", "javascript:alert(1)",
                                 "file:///etc/passwd"])
def test_unsafe_icon_sources_are_refused_v1125_7(src: str) -> None:
    """V1125-7/8: the server API checks the scheme of each icon's src at registration."""
    server = Server("icons")
    with pytest.raises(ValueError, match="icon src"):
        server.add_tool(lambda: "x", name="t", icons=[src])
    with pytest.raises(ValueError, match="icon src"):
        server.add_prompt(lambda: "x", name="p", icons=[{"src": src}])
    with pytest.raises(ValueError, match="icon src"):
        Server("bad", icons=[{"src": src}])


def test_argument_titles_must_name_arguments_v0618_16() -> None:
    server = Server("bad")
    with pytest.raises(ValueError, match="argument_titles"):
        server.add_prompt(lambda code: code, name="p", argument_titles={"nope": "No"})
