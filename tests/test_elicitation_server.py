"""ctx.elicit and ctx.elicit_url: the requested schema from Python classes, the version
and capability gates, the answer checked on receipt, and -32042 from a tool."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, Literal, TypedDict

import attrs
import pytest

from mcp_sync import CapabilityError, Context, Server, UrlElicitationRequired
from tests.elicitation_support import check_version
from tests.server_support import raw_session, request

pytestmark = pytest.mark.timeout(30)

NEW, JUNE, MARCH = "2025-11-25", "2025-06-18", "2025-03-26"


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@attrs.define
class Profile:
    name: str
    age: int = 30
    subscribed: bool = False
    color: Color = Color.RED
    nickname: str | None = None


@dataclasses.dataclass
class Pick:
    flavour: Literal["vanilla", "chocolate"]
    toppings: list[Literal["nuts", "sprinkles"]] = dataclasses.field(default_factory=list)


class Contact(TypedDict):
    email: str
    weight: float


@attrs.define
class Nested:
    inner: Pick


SCHEMAS: dict[str, Any] = {
    "profile": Profile, "pick": Pick, "contact": Contact, "nested": Nested,
    "fields": {"name": str, "count": int, "note": str | None,
               "plan": {"type": "string", "oneOf": [{"const": "a", "title": "Plan A"},
                                                    {"const": "b", "title": "Plan B"}],
                        "default": "a"}},
    "tags": {"tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]},
                      "minItems": 1}},
    "array": {"values": list[int]},
    "shapes": {
        "untitled": {"type": "string", "enum": ["a", "b"], "default": "a"},
        "titled": {"type": "string", "oneOf": [{"const": "a", "title": "A"},
                                               {"const": "b", "title": "B"}]},
        "legacy": {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]},
        "many": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]},
                 "maxItems": 2, "default": ["a"]},
        "titled_many": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"},
                                                             {"const": "b", "title": "B"}]}},
        "text": {"type": "string", "default": "hi", "pattern": "^h"},
        "number": {"type": "number", "default": 1.5},
    },
}


def make_server() -> Server:
    server = Server("elicit")

    @server.tool()
    def ask(kind: str, ctx: Context) -> str:
        try:
            result = ctx.elicit("Tell me", SCHEMAS[kind])
        except (CapabilityError, TypeError, ValueError) as exc:
            return f"{type(exc).__name__}: {exc}"
        return f"{result.action} {result.value!r}"

    @server.tool()
    def visit(ctx: Context) -> str:
        result = ctx.elicit_url("Sign in at the provider", "https://example.com/connect",
                                elicitation_id="e-1")
        if result.accepted:
            ctx.complete_elicitation("e-1")
        return f"{result.action} {result.elicitation_id}"

    @server.tool()
    def needs_login() -> str:
        raise UrlElicitationRequired(elicitations=[{
            "message": "Authorise access", "url": "https://example.com/auth",
            "elicitationId": "e-2"}])

    return server


def call(peer: Any, kind: str, request_id: int = 1) -> None:
    peer.send(request("tools/call", {"name": "ask", "arguments": {"kind": kind}}, request_id))


def answer(peer: Any, asked: dict[str, Any], result: dict[str, Any]) -> str:
    peer.send({"jsonrpc": "2.0", "id": asked["id"], "result": result})
    text: str = peer.receive()["result"]["content"][0]["text"]
    return text


def test_attrs_class_schema_with_defaults_v0618_29_v1125_38() -> None:
    """V0618-29/30, V1125-36/38, DES-12: an attrs class becomes a flat requested schema
    (defaults on every primitive in 2025-11-25, mode form), valid for the schema; the
    answer comes back as an instance."""
    with raw_session(make_server(), {"elicitation": {}}, version=NEW) as (peer, _):
        call(peer, "profile")
        asked = check_version(peer.receive(), "ElicitRequest", NEW)
        assert asked["method"] == "elicitation/create"
        assert asked["params"] == {"mode": "form", "message": "Tell me", "requestedSchema": {
            "type": "object", "required": ["name"], "properties": {
                "name": {"type": "string"},
                "age": {"type": "integer", "default": 30},
                "subscribed": {"type": "boolean", "default": False},
                "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
                "nickname": {"type": "string"}}}}
        text = answer(peer, asked, check_version(
            {"action": "accept", "content": {"name": "Ada", "color": "blue"}},
            "ElicitResult", NEW))
        assert text == ("accept Profile(name='Ada', age=30, subscribed=False, "
                        "color=<Color.BLUE: 'blue'>, nickname=None)")


def test_june_keeps_defaults_only_on_booleans_des_3() -> None:
    """DES-3, V0618-30: in a 2025-06-18 session only booleans keep ``default`` and no
    ``mode`` is sent; the request fits the 2025-06-18 schema."""
    with raw_session(make_server(), {"elicitation": {}}, version=JUNE) as (peer, _):
        call(peer, "profile")
        asked = check_version(peer.receive(), "ElicitRequest", JUNE)
        properties = asked["params"]["requestedSchema"]["properties"]
        assert "mode" not in asked["params"]
        assert properties["subscribed"] == {"type": "boolean", "default": False}
        assert properties["age"] == {"type": "integer"}
        assert answer(peer, asked, {"action": "cancel"}) == "cancel None"


def test_enum_shapes_v1125_37() -> None:
    """V1125-37: single choice (Literal), multiple choice (list of Literal), titled
    single choice and a multi-select answer ``["x", "y"]``; all fit the 2025-11-25
    schema."""
    with raw_session(make_server(), {"elicitation": {"form": {}}}, version=NEW) as (peer, _):
        call(peer, "pick")
        asked = check_version(peer.receive(), "ElicitRequest", NEW)
        properties = asked["params"]["requestedSchema"]["properties"]
        assert properties["flavour"] == {"type": "string", "enum": ["vanilla", "chocolate"]}
        assert properties["toppings"] == {
            "type": "array", "items": {"type": "string", "enum": ["nuts", "sprinkles"]},
            }
        text = answer(peer, asked, {"action": "accept", "content": {
            "flavour": "vanilla", "toppings": ["nuts", "sprinkles"]}})
        assert text == "accept Pick(flavour='vanilla', toppings=['nuts', 'sprinkles'])"
        call(peer, "tags", 2)
        asked = check_version(peer.receive(), "ElicitRequest", NEW)
        assert answer(peer, asked, {"action": "accept", "content": {"tags": ["x", "y"]}}) \
            == "accept {'tags': ['x', 'y']}"


def test_dict_of_fields_and_titled_choices_downgraded_des_3() -> None:
    """DES-3, V1125-37: a dict of fields; a titled choice is oneOf in 2025-11-25 and the
    legacy enum + enumNames in 2025-06-18; ``X | None`` is optional."""
    with raw_session(make_server(), {"elicitation": {}}, version=NEW) as (peer, _):
        call(peer, "fields")
        asked = check_version(peer.receive(), "ElicitRequest", NEW)
        schema = asked["params"]["requestedSchema"]
        assert schema["required"] == ["name", "count"]
        assert schema["properties"]["plan"]["oneOf"][1] == {"const": "b", "title": "Plan B"}
        answer(peer, asked, {"action": "decline"})
    with raw_session(make_server(), {"elicitation": {}}, version=JUNE) as (peer, _):
        call(peer, "fields")
        asked = check_version(peer.receive(), "ElicitRequest", JUNE)
        assert asked["params"]["requestedSchema"]["properties"]["plan"] == {
            "type": "string", "enum": ["a", "b"], "enumNames": ["Plan A", "Plan B"]}
        assert answer(peer, asked, {"action": "accept", "content": {
            "name": "n", "count": 2}}) == "accept {'name': 'n', 'count': 2}"


def test_multi_select_refused_before_november_des_3() -> None:
    """DES-3: a multiple choice cannot be asked in a 2025-06-18 session; nothing sent."""
    with raw_session(make_server(), {"elicitation": {}}, version=JUNE) as (peer, _):
        text = peer.call(request("tools/call", {"name": "ask", "arguments": {"kind": "tags"}},
                                 1))["result"]["content"][0]["text"]
        assert text.startswith("ValueError: field 'tags': multiple choices need")


@pytest.mark.parametrize("kind", ["nested", "array"])
def test_nested_and_arrays_refused_locally_v0618_30(kind: str) -> None:
    """V0618-30: nested objects and arrays other than choices are refused before
    anything is sent."""
    with raw_session(make_server(), {"elicitation": {}}, version=NEW) as (peer, _):
        text = peer.call(request("tools/call", {"name": "ask", "arguments": {"kind": kind}},
                                 1))["result"]["content"][0]["text"]
        assert text.startswith("ValueError: field")


@pytest.mark.parametrize(("capabilities", "version", "expected"), [
    ({}, NEW, "did not declare the elicitation capability"),
    ({"elicitation": {}}, MARCH, "needs protocol version 2025-06-18"),
])
def test_gated_on_version_and_capability_v0618_9_des_5(
        capabilities: dict[str, Any], version: str, expected: str) -> None:
    """V0618-9, DES-5, NAMBIG-9: no elicitation/create to a client without the
    capability or in a session older than 2025-06-18; a clear local error."""
    with raw_session(make_server(), capabilities, version=version) as (peer, _):
        text = peer.call(request("tools/call", {"name": "ask",
                                                "arguments": {"kind": "profile"}}, 1))
        assert text["id"] == 1
        assert "CapabilityError" in text["result"]["content"][0]["text"]
        assert expected in text["result"]["content"][0]["text"]


def test_reject_read_as_decline_nambig_8() -> None:
    """V0618-31, NAMBIG-8: a stray "reject" from an older client is a decline."""
    with raw_session(make_server(), {"elicitation": {}}, version=JUNE) as (peer, _):
        call(peer, "contact")
        asked = peer.receive()
        assert answer(peer, asked, {"action": "reject"}) == "decline None"


def test_content_checked_on_receipt_v0618_34() -> None:
    """V0618-34: accepted content that breaks the schema is an error in the tool."""
    with raw_session(make_server(), {"elicitation": {}}, version=NEW) as (peer, _):
        call(peer, "contact")
        asked = peer.receive()
        peer.send({"jsonrpc": "2.0", "id": asked["id"],
                   "result": {"action": "accept", "content": {"email": 5}}})
        text = peer.receive()["result"]["content"][0]["text"]
        assert text.startswith("InvalidParams: the client's elicitation answer does not "
                               "fit the requested schema")
        assert "'weight' is a required property" in text


def test_url_mode_and_completion_v1125_40_41() -> None:
    """V1125-40/41: elicit_url sends mode url with its id (valid for the schema); after
    an accept the completion notice goes to this client with the same id."""
    modes = {"elicitation": {"form": {}, "url": {}}}
    with raw_session(make_server(), modes, version=NEW) as (peer, _):
        peer.send(request("tools/call", {"name": "visit"}, 1))
        asked = check_version(peer.receive(), "ElicitRequest", NEW)
        assert asked["params"] == {"mode": "url", "message": "Sign in at the provider",
                                   "url": "https://example.com/connect",
                                   "elicitationId": "e-1"}
        peer.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept"}})
        notice = check_version(peer.receive(), "ElicitationCompleteNotification", NEW)
        assert notice["params"] == {"elicitationId": "e-1"}
        assert peer.receive()["result"]["content"][0]["text"] == "accept e-1"


def test_url_mode_needs_the_url_capability_v1125_35() -> None:
    """V1125-35, DES-5: no URL-mode request to a form-only client."""
    with raw_session(make_server(), {"elicitation": {}}, version=NEW) as (peer, _):
        result = peer.call(request("tools/call", {"name": "visit"}, 1))["result"]
        assert result["isError"] is True
        assert "did not declare url-mode elicitation" in result["content"][0]["text"]


def test_tool_raising_url_elicitation_required_v1125_43() -> None:
    """V1125-43: a tool's UrlElicitationRequired is the -32042 error with its list, in a
    2025-11-25 session; before that it is an ordinary tool error."""
    with raw_session(make_server(), {"elicitation": {"url": {}}}, version=NEW) as (peer, _):
        answer_ = peer.call(request("tools/call", {"name": "needs_login"}, 1))
        error = answer_["error"]
        check_version(answer_, "URLElicitationRequiredError", NEW)
        assert error["code"] == -32042
        assert error["data"]["elicitations"] == [{
            "mode": "url", "message": "Authorise access", "url": "https://example.com/auth",
            "elicitationId": "e-2"}]
    with raw_session(make_server(), {"elicitation": {}}, version=JUNE) as (peer, _):
        result = peer.call(request("tools/call", {"name": "needs_login"}, 1))["result"]
        assert result["isError"] is True


def test_every_enum_shape_and_default_v1125_37_38_nambig_5() -> None:
    """V1125-37/38, NAMBIG-5: the five enum shapes and defaults on every primitive fit
    the 2025-11-25 schema; ``["a", "b"]`` validates as a multi-select answer, a value
    outside the choices or against ``pattern`` does not."""
    with raw_session(make_server(), {"elicitation": {}}, version=NEW) as (peer, _):
        call(peer, "shapes")
        asked = peer.receive()
        properties = asked["params"]["requestedSchema"]["properties"]
        assert properties == SCHEMAS["shapes"]
        without_pattern = {**asked, "params": {**asked["params"], "requestedSchema": {
            **asked["params"]["requestedSchema"], "properties": {
                **properties, "text": {"type": "string", "default": "hi"}}}}}
        check_version(without_pattern, "ElicitRequest", NEW)
        content = {"untitled": "b", "titled": "a", "legacy": "b", "many": ["a", "b"],
                   "titled_many": ["b"], "text": "hello", "number": 2}
        assert answer(peer, asked, {"action": "accept", "content": content}) == \
            f"accept {content!r}"
        call(peer, "shapes", 2)
        asked = peer.receive()
        text = answer(peer, asked, {"action": "accept", "content": {
            **content, "many": ["c"], "text": "bye"}})
        assert text.startswith("InvalidParams:")
        assert "'c' is not one of ['a', 'b']" in text and "'^h'" in text
    with raw_session(make_server(), {"elicitation": {}}, version=JUNE) as (peer, _):
        text = peer.call(request("tools/call", {"name": "ask",
                                                "arguments": {"kind": "shapes"}}, 1))
        assert "multiple choices need protocol version 2025-11-25" in \
            text["result"]["content"][0]["text"]
