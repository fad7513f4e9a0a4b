"""Tools whose input schema is written by hand: JSON Schema 2020-12 kept intact, arguments
validated under the schema's dialect (V1125-2, V1125-3, V1125-4, DES-11)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mcp_sync import Client, Context, Server
from mcp_sync.errors import InvalidParams, ToolOutputError
from mcp_sync.testing import open_client
from tests.helpers import EXAMPLES, ScriptedServer, load_module

pytestmark = pytest.mark.timeout(30)

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
DRAFT_07 = "http://json-schema.org/draft-07/schema#"

#: Every 2020-12 feature a derived schema never has: $schema, $defs with $anchor, $ref,
#: allOf/anyOf, if/then/else and additionalProperties (the conformance suite's schema).
CONTACT: dict[str, Any] = load_module(
    EXAMPLES / "conformance_server.py").JSON_SCHEMA_2020_12


def contact_server() -> tuple[Server, list[dict[str, Any]]]:
    server = Server("contacts")
    calls: list[dict[str, Any]] = []

    @server.tool(input_schema=CONTACT, title="Save a contact")
    def save_contact(ctx: Context, **contact: Any) -> str:
        """Save a contact."""
        assert isinstance(ctx, Context)
        calls.append(contact)
        return f"saved {contact.get('name')}"

    return server, calls


@pytest.mark.parametrize("version", ["2025-11-25", "2025-03-26"])
def test_the_schema_is_published_exactly_as_given_v1125_2(version: str) -> None:
    """V1125-2, V1125-4: $schema, $defs, $anchor, $ref, allOf/anyOf, if/then/else and
    additionalProperties reach the client unchanged, in every version."""
    server, _ = contact_server()
    with open_client(server, protocol_version=version) as client:
        [tool] = client.list_tools()
    assert tool.input_schema == CONTACT
    assert tool.description == "Save a contact."
    assert tool.title == "Save a contact"


def test_arguments_are_validated_against_the_schema_v1125_3() -> None:
    """V1125-3: valid arguments reach the function unconverted, beside its context;
    arguments that break the conditional or the anyOf are refused before the call, as
    isError results in 2025-11-25 sessions (V1125-32)."""
    server, calls = contact_server()
    good = {"name": "Ada", "contactMethod": "phone", "phone": "123",
            "address": {"city": "London"}}
    with open_client(server) as client:
        assert client.call_tool("save_contact", good).content[0].text == "saved Ada"
        refused = client.call_tool("save_contact", {"name": "Bo", "contactMethod": "phone",
                                                    "email": "b@example.com"})
        assert refused.is_error
        assert "phone" in refused.content[0].text
        extra = client.call_tool("save_contact", {"email": "c@example.com", "age": 3})
        assert extra.is_error and "age" in extra.content[0].text
    assert calls == [good]


def test_argument_errors_are_invalid_params_before_2025_11_25_v1125_32() -> None:
    """V1125-32: a 2025-03-26 session gets -32602 for arguments that break the schema."""
    server, calls = contact_server()
    with open_client(server, protocol_version="2025-03-26") as client, \
            pytest.raises(InvalidParams, match="address"):
        client.call_tool("save_contact", {"email": "a@example.com", "address": "London"})
    assert calls == []


def test_a_schema_without_dollar_schema_is_2020_12_v1125_2() -> None:
    """V1125-2: without $schema the schema means what it means in 2020-12: prefixItems
    is checked (draft 7 would ignore it)."""
    server = Server("pairs")

    @server.tool(input_schema={"type": "object", "properties": {
        "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]}}})
    def first(pair: list[Any]) -> str:
        return str(pair[0])

    with open_client(server) as client:
        assert client.call_tool("first", {"pair": [1, "a"]}).content[0].text == "1"
        assert client.call_tool("first", {"pair": ["a", 1]}).is_error


def test_dollar_schema_selects_another_dialect_v1125_3() -> None:
    """V1125-3: a draft-07 schema is checked as draft 7: its array form of ``items``
    validates each position. The same schema without $schema is not valid 2020-12."""
    server = Server("pairs")
    schema = {"$schema": DRAFT_07, "type": "object", "required": ["pair"], "properties": {
        "pair": {"type": "array", "items": [{"type": "integer"}, {"type": "string"}]}}}

    @server.tool(input_schema=schema)
    def first(pair: list[Any]) -> str:
        return str(pair[0])

    with open_client(server) as client:
        assert client.list_tools()[0].input_schema == schema
        assert client.call_tool("first", {"pair": [1, "a"]}).content[0].text == "1"
        assert client.call_tool("first", {"pair": ["a", "b"]}).is_error
    undeclared = {key: value for key, value in schema.items() if key != "$schema"}
    with pytest.raises(ValueError, match="not a valid JSON Schema"):
        server.add_tool(first, name="second", input_schema=undeclared)


def test_an_unsupported_dialect_is_refused_with_an_error_that_says_so_v1125_3() -> None:
    """V1125-3: a schema naming a dialect that cannot be checked is refused at
    registration, with an error naming it; so is an explicit output schema."""
    server = Server("dialects")
    unknown = "https://example.com/my-dialect"

    def tool(x: int) -> str:
        return str(x)

    schema = {"$schema": unknown, "type": "object", "properties": {"x": {"type": "integer"}}}
    with pytest.raises(ValueError, match="unsupported JSON Schema dialect") as raised:
        server.add_tool(tool, input_schema=schema)
    assert unknown in str(raised.value)
    with pytest.raises(ValueError, match="unsupported JSON Schema dialect"):
        server.add_tool(tool, output_schema={"$schema": unknown, "type": "object"})
    assert server.tools == []


@pytest.mark.parametrize(("schema", "error", "words"), [
    ({"type": "array"}, TypeError, '"type": "object"'),
    ({"type": "object", "properties": {"x": {"type": "integer"}, "y": {}}}, TypeError,
     "['y']"),
    ({"type": "object", "properties": {}}, TypeError, "needs ['x']"),
    ({"type": "object", "properties": {"x": {"type": "integr"}}}, ValueError,
     "not a valid JSON Schema at properties/x/type"),
])
def test_a_schema_the_function_cannot_serve_is_refused_v1125_4(
        schema: dict[str, Any], error: type[Exception], words: str) -> None:
    """V1125-4: the schema must be a valid object schema, and name exactly the
    arguments a function without **kwargs takes (those with defaults may be left out)."""
    server = Server("refusals")

    def tool(x: int, flag: bool = False) -> str:
        return str(x)

    with pytest.raises(error) as raised:
        server.add_tool(tool, input_schema=schema)
    assert words in str(raised.value)
    assert server.tools == []


def test_the_schema_given_is_copied_not_shared() -> None:
    """Editing the dict after registration changes nothing that is published."""
    server = Server("copies")
    schema = copy.deepcopy(CONTACT)
    server.add_tool(lambda **contact: "ok", name="save", input_schema=schema)
    schema["properties"]["name"]["type"] = "integer"
    with open_client(server) as client:
        assert client.list_tools()[0].input_schema == CONTACT


def test_the_client_refuses_to_guess_an_unknown_output_dialect_v1125_3(
        scripted: Any) -> None:
    """V1125-3: a result whose listed output schema names an unsupported dialect raises
    ToolOutputError saying so, rather than being checked under another dialect."""
    tools = {"tools": [{"name": "sum", "inputSchema": {"type": "object"},
                        "outputSchema": {"$schema": "https://example.com/d", "type": "object"}}]}
    result = {"content": [{"type": "text", "text": "{}"}], "structuredContent": {}}
    server: ScriptedServer = scripted({"tools": {}}, {
        "tools/list": lambda params: tools, "tools/call": lambda params: result},
        version="2025-11-25")
    with Client(server.peer.transport) as client:
        client.list_tools()
        with pytest.raises(ToolOutputError, match="unsupported JSON Schema dialect"):
            client.call_tool("sum")
