"""Resources on the Server: listing, reading, templates, errors, subscriptions, changes."""

from __future__ import annotations

import base64
from typing import Annotated, Any

import pytest

from mcp_sync import Context, Server, types
from mcp_sync.content import Image
from mcp_sync.errors import InternalError, InvalidParams, ResourceNotFound
from mcp_sync.protocol._convert import from_wire
from mcp_sync.server._uri_template import UriTemplate
from mcp_sync.testing import open_client
from tests.helpers import LEGACY_ERA
from tests.server_support import Notifications, check, error, raw_session, request, result

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8

pytestmark = pytest.mark.timeout(30)


def make_server(**options: Any) -> Server:
    server = Server("res", **options)

    @server.resource("config://app", description="App settings.")
    def config() -> dict[str, Any]:
        return {"debug": False, "name": "Zürich ✓"}

    @server.resource("file:///notes/readme.md")
    def readme() -> str:
        """The read-me."""
        return "# Notes\n"

    @server.resource("blob://raw", mime_type="application/x-raw",
                     annotations={"audience": ["user"], "priority": 0.5})
    def raw() -> bytes:
        return b"\x00\x01\xff"

    @server.resource("users://me/profile")
    def me() -> str:
        return "the current user"

    @server.resource("users://{user_id}/profile")
    def profile(user_id: int) -> dict[str, Any]:
        """A user's profile by number."""
        return {"id": user_id}

    @server.resource("users://{name}/profile", name="profile_by_name")
    def profile_by_name(name: str) -> str:
        return f"profile of {name}"

    @server.resource("file:///{+path}")
    def files(path: str) -> str:
        return f"contents of {path}"

    return server


def read(client: Any, uri: str) -> types.ReadResourceResult:
    raw = client.send_request("resources/read", {"uri": uri})
    check(raw, "ReadResourceResult")
    return from_wire(raw, types.ReadResourceResult)


def test_capability_and_listing_resources_1_2_5() -> None:
    """RESOURCES-1/2/5, CAPS-3: resources with subscribe and listChanged; static resources
    in resources/list, templates in resources/templates/list, both schema-valid."""
    with open_client(make_server(), **LEGACY_ERA) as client:
        assert client.server_capabilities.resources == types.ResourcesCapability(
            subscribe=True, list_changed=True)
        listed = check(client.send_request("resources/list"), "ListResourcesResult")
        resources = {item["uri"]: item for item in listed["resources"]}
        assert list(resources) == ["config://app", "file:///notes/readme.md", "blob://raw",
                                   "users://me/profile"]
        assert resources["config://app"] == {"uri": "config://app", "name": "config",
                                             "description": "App settings."}
        assert resources["file:///notes/readme.md"]["mimeType"] == "text/markdown"
        assert resources["file:///notes/readme.md"]["description"] == "The read-me."
        assert resources["blob://raw"]["annotations"] == {"audience": ["user"],
                                                          "priority": 0.5}
        templates = check(client.send_request("resources/templates/list"),
                          "ListResourceTemplatesResult")["resourceTemplates"]
        assert templates == [
            {"uriTemplate": "users://{user_id}/profile", "name": "profile",
             "description": "A user's profile by number."},
            {"uriTemplate": "users://{name}/profile", "name": "profile_by_name"},
            {"uriTemplate": "file:///{+path}", "name": "files"},
        ]


def test_read_conversions_resources_3_4() -> None:
    """RESOURCES-3/4: str is text, bytes a base64 blob, dicts JSON, each with a MIME type."""
    with open_client(make_server()) as client:
        config = read(client, "config://app").contents
        assert config == [types.TextResourceContents(
            uri="config://app", text='{"debug": false, "name": "Zürich ✓"}',
            mime_type="application/json")]
        readme = read(client, "file:///notes/readme.md").contents[0]
        assert readme == types.TextResourceContents(
            uri="file:///notes/readme.md", text="# Notes\n", mime_type="text/markdown")
        blob = read(client, "blob://raw").contents[0]
        assert isinstance(blob, types.BlobResourceContents)
        assert base64.b64decode(blob.blob) == b"\x00\x01\xff"
        assert blob.mime_type == "application/x-raw"


def test_several_contents_and_media_resources_3_4() -> None:
    """RESOURCES-3/4: a function may return several contents objects, or an Image."""
    server = Server("s")

    @server.resource("dir://project")
    def project() -> list[types.ResourceContents]:
        return [types.TextResourceContents(uri="dir://project/a.txt", text="a"),
                types.BlobResourceContents(uri="dir://project/b.bin", blob="AAE=")]

    @server.resource("img://logo")
    def logo() -> Image:
        return Image(PNG)

    @server.resource("bytes://png")
    def png() -> bytes:
        return PNG

    @server.resource("none://")
    def nothing() -> None:
        return None

    with open_client(server) as client:
        assert [item.uri for item in read(client, "dir://project").contents] == [
            "dir://project/a.txt", "dir://project/b.bin"]
        logo_contents = read(client, "img://logo").contents[0]
        assert isinstance(logo_contents, types.BlobResourceContents)
        assert logo_contents.mime_type == "image/png"
        assert base64.b64decode(logo_contents.blob) == PNG
        assert read(client, "bytes://png").contents[0].mime_type == "image/png"
        assert read(client, "none://").contents == []


def test_templates_convert_variables_and_fall_through_resources_5() -> None:
    """RESOURCES-5: template variables become typed arguments; an exact URI wins; a value
    that does not convert lets the next template match; {+path} spans slashes."""
    with open_client(make_server()) as client:
        assert read(client, "users://42/profile").contents[0].text == '{"id": 42}'
        assert read(client, "users://alice/profile").contents[0].text == "profile of alice"
        assert read(client, "users://me/profile").contents[0].text == "the current user"
        assert read(client, "users://a%20b/profile").contents[0].text == "profile of a b"
        nested = read(client, "file:///docs/a%20b/c.txt").contents[0]
        assert nested.text == "contents of docs/a b/c.txt"
        assert nested.mime_type == "text/plain"


def test_unknown_and_traversal_uris_are_not_found_resources_9_11() -> None:
    """RESOURCES-9/11: unknown URIs and path traversal through a template are -32002 with
    the URI in data."""
    with open_client(make_server(), **LEGACY_ERA) as client:
        for uri in ("nope://x", "file:///../etc/passwd", "file:///a/%2E%2E/b",
                    "users://x/y/profile", "file:///a%00b"):
            with pytest.raises(ResourceNotFound) as caught:
                client.send_request("resources/read", {"uri": uri})
            assert caught.value.data == {"uri": uri}


def test_resource_function_failures_resources_9(caplog: pytest.LogCaptureFixture) -> None:
    """RESOURCES-9: a failing function is -32603 without the exception's text or a
    traceback; ResourceNotFound from the function is -32002; bad params are -32602."""
    server = Server("s")

    @server.resource("secret://x")
    def broken() -> str:
        raise RuntimeError("password=hunter2")

    @server.resource("items://{item_id}")
    def item(item_id: str) -> str:
        raise ResourceNotFound(f"no item {item_id}", {"uri": f"items://{item_id}"})

    with open_client(server, **LEGACY_ERA) as client:
        with pytest.raises(InternalError) as caught:
            client.send_request("resources/read", {"uri": "secret://x"})
        assert "hunter2" not in str(caught.value)
        assert "Traceback" not in str(caught.value)
        assert caught.value.data == {"uri": "secret://x"}
        with pytest.raises(ResourceNotFound, match="no item 7"):
            client.send_request("resources/read", {"uri": "items://7"})
    assert "hunter2" in caplog.text  # the traceback went to our log instead


def test_read_without_uri_is_invalid_params_jsonrpc_12(wire: Any) -> None:
    """JSONRPC-12: resources/read without a string uri is -32602."""
    with raw_session(make_server()) as (peer, _):
        assert error(peer, request("resources/read", {}))["code"] == -32602
        assert error(peer, request("resources/read", {"uri": 3}))["code"] == -32602


def test_resource_function_gets_context() -> None:
    """RESOURCES-3: a resource function may take a Context, which knows the request."""
    server = Server("s")
    seen: dict[str, Any] = {}

    @server.resource("ctx://{name}")
    def with_context(name: str, ctx: Context) -> str:
        seen["method"] = ctx.method
        seen["id"] = ctx.request_id
        return name

    with open_client(server) as client:
        assert read(client, "ctx://x").contents[0].text == "x"
    assert seen["method"] == "resources/read"
    assert seen["id"] is not None


def test_registration_errors() -> None:
    """RESOURCES-5: mistakes in resource functions are reported when registered."""
    server = Server("s")
    with pytest.raises(TypeError, match="no parameter"):
        server.add_resource_template(lambda: "x", "a://{missing}")
    with pytest.raises(TypeError, match="not variables"):
        server.add_resource_template(lambda a, b: "x", "a://{a}")
    with pytest.raises(TypeError, match="URI template"):
        server.add_resource(lambda needed: "x", "a://fixed")
    with pytest.raises(ValueError, match="operator"):
        server.add_resource_template(lambda q: "x", "a://x{?q}")
    with pytest.raises(ValueError, match="nothing to complete"):
        server.resource("a://fixed", complete={"x": ["y"]})(lambda: "x")
    with pytest.raises(ValueError, match="cannot complete"):
        server.add_resource_template(lambda a: "x", "a://{a}", complete={"b": ["c"]})

    async def coroutine() -> str:
        return "x"

    with pytest.raises(TypeError, match="coroutine"):
        server.add_resource(coroutine, "a://async")
    assert server.resources == [] and server.resource_templates == []


def test_uri_template_matching_and_expansion() -> None:
    """RESOURCES-5: RFC 6570 {var} and {+var}: match, decode, expand, refuse the rest."""
    template = UriTemplate("users://{user_id}/files/{+path}")
    assert template.variables == ("user_id", "path")
    assert template.match("users://7/files/a/b.txt") == {"user_id": "7", "path": "a/b.txt"}
    assert template.match("users://7/x/files/a") is None
    assert template.match("users:///files/a") is None
    assert template.expand(user_id="a b", path="c d/e") == "users://a%20b/files/c%20d/e"
    assert template.match(template.expand(user_id="a/b", path="x")) == {
        "user_id": "a/b", "path": "x"}
    for bad in ("a://{x}{y}", "a://{x", "a://x}", "a://{x}/{x}", "a://{#x}", "a://{x*}",
                "a://{x,y}", "a://{1x}", "a://{x:3}"):
        with pytest.raises(ValueError):
            UriTemplate(bad)


def test_subscriptions_resources_7_8_ambig_23() -> None:
    """RESOURCES-7/8, AMBIG-23: subscribed URIs (and those below them) are notified,
    others not, and none after unsubscribing."""
    notes = Notifications()
    server = make_server()
    with open_client(server, on_notification=notes, **LEGACY_ERA) as client:
        check(client.send_request("resources/subscribe", {"uri": "users://42/profile"}),
              "EmptyResult")
        client.send_request("resources/subscribe", {"uri": "file:///docs"})
        assert server.notify_resource_updated("config://app") == 0
        assert server.notify_resource_updated("file:///docsx") == 0
        assert server.notify_resource_updated("users://42/profile") == 1
        assert notes.next() == ("notifications/resources/updated", {"uri": "users://42/profile"})
        assert server.notify_resource_updated("file:///docs/a/b.txt") == 1
        assert notes.next() == ("notifications/resources/updated",
                                {"uri": "file:///docs/a/b.txt"})
        check(client.send_request("resources/unsubscribe", {"uri": "users://42/profile"}),
              "EmptyResult")
        assert server.notify_resource_updated("users://42/profile") == 0
        client.send_request("resources/unsubscribe", {"uri": "never://subscribed"})
        assert server.notify_resource_updated("file:///docs") == 1
        assert notes.next() == ("notifications/resources/updated", {"uri": "file:///docs"})
        assert notes.empty()


def test_subscriptions_are_per_connection_resources_8() -> None:
    """RESOURCES-8: an update reaches only the connection that subscribed."""
    server = make_server()
    first, second = Notifications(), Notifications()
    with open_client(server, on_notification=first, **LEGACY_ERA) as one, \
            open_client(server, on_notification=second, **LEGACY_ERA):
        one.send_request("resources/subscribe", {"uri": "config://app"})
        assert server.notify_resource_updated("config://app") == 1
        assert first.next() == ("notifications/resources/updated", {"uri": "config://app"})
        server.add_resource(lambda: "x", "marker://x")  # both see this, in order
        assert first.next()[0] == "notifications/resources/list_changed"
        assert second.next()[0] == "notifications/resources/list_changed"


def test_resources_list_changed_resources_6() -> None:
    """RESOURCES-6: adding or removing a resource or template notifies clients."""
    notes = Notifications()
    server = make_server()
    with open_client(server, on_notification=notes, **LEGACY_ERA) as client:
        server.add_resource(lambda: "new", "new://x", name="new")
        assert notes.next()[0] == "notifications/resources/list_changed"
        assert "new://x" in [r["uri"] for r in client.send_request("resources/list")["resources"]]
        server.add_resource_template(lambda n: n, "new://{n}/t", name="t")
        assert notes.next()[0] == "notifications/resources/list_changed"
        server.remove_resource("new://{n}/t")
        assert notes.next()[0] == "notifications/resources/list_changed"
        server.remove_resource("new://x")
        assert notes.next()[0] == "notifications/resources/list_changed"
        with pytest.raises(KeyError):
            server.remove_resource("new://x")
        with pytest.raises(ResourceNotFound):
            client.send_request("resources/read", {"uri": "new://x"})


def test_pagination_of_resources_and_templates_pagination_1_5_6(wire: Any) -> None:
    """PAGINATION-1/5/6: both resource lists page; foreign and forged cursors are -32602."""
    server = Server("paged", page_size=2)
    for index in range(5):
        server.add_resource(lambda: "x", f"r://{index}", name=f"r{index}")
        server.add_resource_template(lambda v: v, f"t{index}://{{v}}", name=f"t{index}")
    with raw_session(server) as (peer, _):
        uris: list[str] = []
        cursor = None
        pages = 0
        while True:
            page = result(peer, request("resources/list",
                                        {"cursor": cursor} if cursor else None),
                          "ListResourcesResult")
            pages += 1
            uris += [item["uri"] for item in page["resources"]]
            cursor = page.get("nextCursor")
            if cursor is None:
                break
        assert pages == 3
        assert uris == [f"r://{index}" for index in range(5)]
        first = result(peer, request("resources/templates/list"), "ListResourceTemplatesResult")
        assert len(first["resourceTemplates"]) == 2
        second = result(peer, request("resources/templates/list",
                                      {"cursor": first["nextCursor"]}),
                        "ListResourceTemplatesResult")
        assert [t["name"] for t in second["resourceTemplates"]] == ["t2", "t3"]
        # A templates cursor means nothing to resources/list.
        assert error(peer, request("resources/list",
                                   {"cursor": first["nextCursor"]}))["code"] == -32602
        assert error(peer, request("resources/templates/list",
                                   {"cursor": "garbage"}))["code"] == -32602


def test_annotated_template_parameter_and_defaults() -> None:
    """RESOURCES-5: a template function may have optional parameters that are not
    variables."""
    server = Server("s")

    @server.resource("logs://{day}")
    def logs(day: Annotated[str, "ISO date"], limit: int = 3) -> str:
        return f"{day}:{limit}"

    with open_client(server) as client:
        assert read(client, "logs://2025-01-01").contents[0].text == "2025-01-01:3"


def test_bad_annotations_are_refused_resources_12() -> None:
    """RESOURCES-12: annotations in the wire shape are checked at registration."""
    server = Server("s")
    with pytest.raises(InvalidParams):
        server.add_resource(lambda: "x", "a://x", annotations={"audience": ["robots"]})
    with pytest.raises(ValueError, match="priority"):
        server.add_resource(lambda: "x", "a://x", annotations={"priority": 1.5})
    with pytest.raises(ValueError, match="priority"):
        server.add_resource_template(lambda v: v, "a://{v}",
                                     annotations=types.Annotations(priority=-0.1))
    assert server.resources == [] and server.resource_templates == []
