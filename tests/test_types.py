"""Tests for mcp_sync.types and the converter, checked against the official JSON Schema.

Every definition of ``schema-2025-03-26.json`` is either mapped to our model (and sample
documents generated from the schema itself must survive a decode/encode round trip
unchanged and still validate) or listed in ``COVERED_ELSEWHERE`` with a reason. The protocol
digest's requirement IDs are named where a test checks one.
"""

from __future__ import annotations

import base64
import inspect
import json
import re
from typing import Any, get_args

import attrs
import cattrs
import jsonschema
import pytest

from mcp_sync import types
from mcp_sync.errors import ErrorCode, InvalidParams
from mcp_sync.protocol import _convert
from mcp_sync.protocol._convert import from_wire, to_wire
from mcp_sync.protocol._model import Model

from .conftest import SPEC_DIR

# Found by conftest: tests/spec, or where MCP_SYNC_SPEC_DIR points.
SCHEMA_FILE = SPEC_DIR / "schema-2025-03-26.json"
DEFS: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))["definitions"]

TEXT = "Zürich ✓"
BLOB = base64.b64encode(TEXT.encode("utf-8")).decode("ascii")

ALIASES: dict[str, Any] = {
    "Cursor": types.Cursor,
    "RequestId": types.RequestId,
    "ProgressToken": types.ProgressToken,
    "Role": types.Role,
    "LoggingLevel": types.LoggingLevel,
}
UNIONS: dict[str, Any] = {
    "ClientRequest": types.ClientRequest,
    "ServerRequest": types.ServerRequest,
    "ClientNotification": types.ClientNotification,
    "ServerNotification": types.ServerNotification,
    "ClientResult": types.ClientResult,
    "ServerResult": types.ServerResult,
    "ResourceContents": types.ResourceContents,
}
# In the schema ResourceContents is the common base object, not an anyOf.
EXPLICIT_ALTERNATIVES = {"ResourceContents": ("TextResourceContents", "BlobResourceContents")}
# Results carry no discriminator: the method of the request they answer picks the class.
DECODED_BY_METHOD = {"ClientResult", "ServerResult"}
COVERED_ELSEWHERE = {
    "JSONRPCRequest": "JSON-RPC envelope, built and parsed by mcp_sync.jsonrpc",
    "JSONRPCNotification": "JSON-RPC envelope, built and parsed by mcp_sync.jsonrpc",
    "JSONRPCResponse": "JSON-RPC envelope, built and parsed by mcp_sync.jsonrpc",
    "JSONRPCError": "JSON-RPC envelope; the error member is mcp_sync.errors.RpcError",
    "JSONRPCMessage": "union of the JSON-RPC envelopes, handled by mcp_sync.jsonrpc",
    "JSONRPCBatchRequest": "JSON-RPC batch array, handled by mcp_sync.jsonrpc",
    "JSONRPCBatchResponse": "JSON-RPC batch array, handled by mcp_sync.jsonrpc",
    "Request": "generic shape with a free method; every concrete request is mapped",
    "Notification": "generic shape with a free method; every concrete notification is mapped",
    "PaginatedRequest": "generic shape; the four paginated list requests are mapped",
    "PaginatedResult": "generic shape; the four paginated list results are mapped",
}
CLASS_DEFS = sorted(set(DEFS) - set(ALIASES) - set(UNIONS) - set(COVERED_ELSEWHERE))
VARIANTS = ("minimal", "full")


# ---------------------------------------------------------------- schema-driven samples


class SampleMaker:
    """Builds a wire document from a schema: only required members, or every member."""

    def __init__(self, full: bool) -> None:
        self.full = full
        self.pick = -1 if full else 0  # anyOf / enum / type-list choice

    def make(self, schema: dict[str, Any]) -> Any:
        if "$ref" in schema:
            return self.make(DEFS[schema["$ref"].rsplit("/", 1)[1]])
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return schema["enum"][self.pick]
        if "anyOf" in schema:
            return self.make(schema["anyOf"][self.pick])
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = kind[self.pick]
        if kind == "object":
            return self._object(schema)
        if kind == "array":
            items = schema.get("items", {})
            if self.full and "anyOf" in items:
                return [self.make(alternative) for alternative in items["anyOf"]]
            return [self.make(items)]
        if kind == "string":
            fmt = schema.get("format")
            if fmt == "uri":
                return "file:///srv/Z%C3%BCrich/%E2%9C%93.txt"
            if fmt == "uri-template":
                return "file:///srv/{city}/{file}"
            return BLOB if fmt == "byte" else TEXT
        if kind == "integer":
            return 42
        if kind == "number":
            if not self.full:
                return 0.25
            # An int where a number is expected must come back as an int.
            return 3 if schema.get("maximum", 3) >= 3 else int(schema["maximum"])
        if kind == "boolean":
            return self.full
        # No type at all: any JSON value.
        return {"nested": [TEXT, 1, 0.5, None, True]} if self.full else TEXT

    def _object(self, schema: dict[str, Any]) -> dict[str, Any]:
        props = schema.get("properties", {})
        names = list(props) if self.full else schema.get("required", [])
        out = {name: self.make(props[name]) for name in names}
        additional = schema.get("additionalProperties")
        if self.full and additional not in (None, False):
            value_schema = additional if isinstance(additional, dict) else {}
            out["x-extra ✓" if props else "key ✓"] = self.make(value_schema)
        return out


def sample(name: str, variant: str) -> Any:
    return SampleMaker(full=variant == "full").make(DEFS[name])


def validate(name: str, document: Any) -> None:
    wrapped = {"$ref": f"#/definitions/{name}", "definitions": DEFS}
    jsonschema.Draft7Validator(wrapped).validate(document)


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON text, so 1 vs 1.0 vs True and str vs int all count as different."""
    def dump(value: Any) -> str:
        return json.dumps(value, sort_keys=True, ensure_ascii=False)

    return dump(a) == dump(b)


def round_trip(document: Any, cls: Any) -> Any:
    obj = from_wire(document, cls)
    out = to_wire(obj)
    assert same_json(out, document), f"lossy round trip:\n in: {document}\nout: {out}"
    return obj


# ------------------------------------------------------------ every schema definition


def test_every_definition_is_mapped_or_listed() -> None:
    """A definition added to the schema must get a class or a listed reason."""
    listed = set(ALIASES) | set(UNIONS) | set(COVERED_ELSEWHERE)
    assert not listed - set(DEFS), "stale names in the test's tables"
    unmapped = [n for n in CLASS_DEFS if not attrs.has(getattr(types, n, None) or object)]
    assert not unmapped, f"schema definitions without a class in mcp_sync.types: {unmapped}"
    assert len(DEFS) == 83


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", CLASS_DEFS)
def test_definition_round_trips_losslessly(name: str, variant: str) -> None:
    """Schema samples decode into the class, re-encode unchanged and still validate.

    The samples include non-ASCII text (GEN-2), ints in number fields (PROGRESS-4,
    CONTENT-6) and, in the full variant, every content type (CONTENT-1..5).
    """
    document = sample(name, variant)
    validate(name, document)
    cls = getattr(types, name)
    obj = round_trip(document, cls)
    assert type(obj) is cls
    validate(name, to_wire(obj))


def _alternatives(union: str) -> list[str]:
    if union in EXPLICIT_ALTERNATIVES:
        return list(EXPLICIT_ALTERNATIVES[union])
    return [ref["$ref"].rsplit("/", 1)[1] for ref in DEFS[union]["anyOf"]]


UNION_CASES = [(u, alt, v) for u in sorted(UNIONS) for alt in _alternatives(u) for v in VARIANTS]


@pytest.mark.parametrize(("union", "alternative", "variant"), UNION_CASES)
def test_union_alternative_round_trips(union: str, alternative: str, variant: str) -> None:
    """Each member of a union definition is in our alias and survives a round trip."""
    cls = getattr(types, alternative)
    assert cls in get_args(UNIONS[union])
    document = sample(alternative, variant)
    obj = round_trip(document, cls)
    if union not in DECODED_BY_METHOD:
        # The alias itself picks the member from the discriminator or the text/blob key.
        via_alias = round_trip(document, UNIONS[union])
        assert type(via_alias) is cls
        assert via_alias == obj
    validate(union, to_wire(obj))
    validate(alternative, to_wire(obj))


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", sorted(ALIASES))
def test_alias_accepts_schema_sample(name: str, variant: str) -> None:
    value = sample(name, variant)
    decoded = from_wire(value, ALIASES[name])
    assert decoded == value
    assert type(decoded) is type(value)
    assert to_wire(decoded) == value
    validate(name, decoded)


def test_literal_aliases_match_schema_enums() -> None:
    """LOGGING-2: the eight syslog levels, in severity order."""
    assert set(get_args(types.Role)) == set(DEFS["Role"]["enum"])
    assert set(get_args(types.LoggingLevel)) == set(DEFS["LoggingLevel"]["enum"])
    assert types.LOGGING_LEVELS == (
        "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency",
    )
    assert get_args(types.LoggingLevel) == types.LOGGING_LEVELS


def _method_defs() -> dict[str, str]:
    return {
        name: definition["properties"]["method"]["const"]
        for name, definition in DEFS.items()
        if "const" in definition.get("properties", {}).get("method", {})
    }


def test_method_tables_match_schema() -> None:
    """Every request/notification class, params class and table entry agrees with the schema."""
    def methods(union: str) -> set[str]:
        return {_method_defs()[alt] for alt in _alternatives(union)}

    assert set(types.REQUEST_TYPES) == methods("ClientRequest") | methods("ServerRequest")
    assert set(types.NOTIFICATION_TYPES) == (
        methods("ClientNotification") | methods("ServerNotification")
    )
    for name, method in _method_defs().items():
        cls = getattr(types, name)
        params = getattr(types, f"{name}Params")
        fields = attrs.fields_dict(cls)
        assert fields["method"].default == method
        params_required = "params" in DEFS[name].get("required", [])
        assert (fields["params"].default is attrs.NOTHING) == params_required, name
        if name.endswith("Request"):
            assert types.REQUEST_TYPES[method][0] is params
        else:
            assert types.NOTIFICATION_TYPES[method] is params
        assert "meta" in attrs.fields_dict(params), f"{name}Params lacks meta (JSONRPC-11)"


def test_result_unions_match_request_directions() -> None:
    """A client answers server requests and vice versa; results are decoded by method."""
    def results(union: str) -> set[type]:
        return {types.REQUEST_TYPES[_method_defs()[alt]][1] for alt in _alternatives(union)}

    assert results("ServerRequest") == set(get_args(types.ClientResult))
    assert results("ClientRequest") == set(get_args(types.ServerResult))


def test_classes_follow_the_conventions() -> None:
    for name in types.__all__:
        assert hasattr(types, name), name
    public_classes = [
        value for name, value in vars(types).items()
        if attrs.has(value) and not name.startswith("_")
    ]
    assert {cls.__name__ for cls in public_classes} <= set(types.__all__)
    for cls in public_classes:
        fields = attrs.fields(cls)
        assert fields[-1].name == "extra", cls
        assert all(field.kw_only for field in fields), cls
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            object.__new__(cls).extra = {}
    for name, definition in DEFS.items():
        if "_meta" in definition.get("properties", {}) and name in CLASS_DEFS:
            assert "meta" in attrs.fields_dict(getattr(types, name)), name


def _digest_examples() -> list[tuple[str, str, str, Any]]:
    """(example, definition, JSON pointer, document) for each "Checked as" entry."""
    text = (SCHEMA_FILE.parent / "DIGEST.md").read_text(encoding="utf-8")
    found = []
    pattern = r"### (Ex-\d+).*?\nChecked as: (.*?)\n\n```json\n(.*?)```"
    for example, checked, body in re.findall(pattern, text, re.S):
        message = json.loads(body)
        for name, pointer in re.findall(r"`(\w+)`(?: at `([/\w]*)`)?", checked):
            found.append((example, name, pointer, message))
    return found


# Results checked as ClientResult/ServerResult are also listed under their own class.
DECODABLE = set(CLASS_DEFS) | (set(UNIONS) - DECODED_BY_METHOD)
DIGEST_CASES = [case for case in _digest_examples() if case[1] in DECODABLE]


def test_digest_examples_were_found() -> None:
    assert {case[0] for case in DIGEST_CASES} >= {"Ex-1", "Ex-2", "Ex-6", "Ex-9", "Ex-10"}


@pytest.mark.parametrize(("example", "name", "pointer", "message"), DIGEST_CASES,
                         ids=[f"{c[0]}-{c[1]}{c[2]}" for c in DIGEST_CASES])
def test_digest_example_round_trips(example: str, name: str, pointer: str, message: Any) -> None:
    """The digest's wire examples decode and re-encode unchanged (jsonrpc/id land in extra)."""
    document = message
    for step in pointer.strip("/").split("/") if pointer else []:
        document = document[int(step)] if isinstance(document, list) else document[step]
    obj = round_trip(document, UNIONS.get(name) or getattr(types, name))
    validate(name, to_wire(obj))


# ----------------------------------------------------------------- encoding details


def test_unset_optional_fields_are_left_out() -> None:
    assert to_wire(types.TextContent(text="x")) == {"type": "text", "text": "x"}
    assert to_wire(types.CallToolResult(content=[])) == {"content": []}
    assert to_wire(types.Tool(name="t", input_schema={"type": "object"})) == {
        "name": "t", "inputSchema": {"type": "object"},
    }
    assert to_wire(types.ToolAnnotations()) == {}


def test_discriminators_are_always_written() -> None:
    """JSONRPC-14: params may be absent, the method never is."""
    assert to_wire(types.PingRequest()) == {"method": "ping"}
    assert to_wire(types.ListToolsRequest(params=types.ListToolsRequestParams())) == {
        "method": "tools/list", "params": {},
    }
    assert to_wire(types.PromptReference(name="p")) == {"type": "ref/prompt", "name": "p"}
    for document in ({"method": "ping"}, {"method": "ping", "params": {}}):
        round_trip(document, types.PingRequest)
    with pytest.raises(InvalidParams, match=r"\$\.type"):
        from_wire({"text": "no type"}, types.TextContent)


def test_content_shapes_content_1_to_4() -> None:
    """CONTENT-1..4: text, image, audio and embedded resource items on the wire."""
    annotations = types.Annotations(audience=["user"], priority=0.5)
    assert to_wire(types.TextContent(text=TEXT, annotations=annotations)) == {
        "type": "text", "text": TEXT, "annotations": {"audience": ["user"], "priority": 0.5},
    }
    assert to_wire(types.ImageContent(data=BLOB, mime_type="image/png")) == {
        "type": "image", "data": BLOB, "mimeType": "image/png",
    }
    assert to_wire(types.AudioContent(data=BLOB, mime_type="audio/wav")) == {
        "type": "audio", "data": BLOB, "mimeType": "audio/wav",
    }
    embedded = types.EmbeddedResource(resource=types.BlobResourceContents(uri="a:b", blob=BLOB))
    assert to_wire(embedded) == {"type": "resource", "resource": {"uri": "a:b", "blob": BLOB}}


def test_extra_never_overrides_known_members() -> None:
    content = types.TextContent(text="kept", extra={"text": "ignored", "title": "T"})
    assert to_wire(content) == {"type": "text", "text": "kept", "title": "T"}


# ------------------------------------------------------- members from newer revisions


def test_tool_keeps_unknown_members_tools_3() -> None:
    """TOOLS-3: a 2025-06-18 tool (title, outputSchema, _meta) survives decode/encode."""
    document = {
        "name": "add",
        "title": "Adder ✓",
        "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}}},
        "outputSchema": {"type": "object", "properties": {"sum": {"type": "number"}}},
        "_meta": {"vendor/x": 1},
        "annotations": {"readOnlyHint": True, "title": "Adder"},
    }
    tool = round_trip(document, types.Tool)
    # V0618-8, V0618-16, V0618-17: these are fields of Tool now, not unknown members.
    assert not tool.extra
    assert tool.title == "Adder ✓" and tool.meta == {"vendor/x": 1}
    assert tool.output_schema == document["outputSchema"]
    assert tool.input_schema == document["inputSchema"]
    assert tool.annotations == types.ToolAnnotations(read_only_hint=True, title="Adder")


def test_resource_link_decodes_and_unknown_content_is_kept_v0618_24() -> None:
    """V0618-22/24, CONTENT-5: resource_link decodes as ResourceLink in tool results and
    prompt messages; a content type still unknown is kept, not rejected."""
    link = {"type": "resource_link", "uri": "file:///a.txt", "name": "a", "mimeType": "x/y",
            "title": "A", "size": 3, "_meta": {"k": 1},
            "annotations": {"lastModified": "2025-01-12T15:00:58Z"}}
    result = round_trip({"content": [{"type": "text", "text": "see"}, link]}, types.CallToolResult)
    decoded = result.content[1]
    assert isinstance(decoded, types.ResourceLink)
    assert (decoded.uri, decoded.name, decoded.title, decoded.mime_type, decoded.meta) == (
        "file:///a.txt", "a", "A", "x/y", {"k": 1})
    message = from_wire({"role": "user", "content": link}, types.PromptMessage)
    assert isinstance(message.content, types.ResourceLink)
    unknown = round_trip({"content": [{"type": "hologram", "uri": "x:y"}]},
                         types.CallToolResult)
    assert unknown.content[0] == types.UnknownContent(type="hologram", extra={"uri": "x:y"})


def test_sampling_content_is_limited_sampling_3() -> None:
    """SAMPLING-3 / CONTENT-5: a sampling message takes text, image or audio only."""
    resource = {"type": "resource", "resource": {"uri": "a:b", "text": "t"}}
    with pytest.raises(InvalidParams, match=r"\$\.content\.type"):
        from_wire({"role": "user", "content": resource}, types.SamplingMessage)
    round_trip({"role": "user", "content": resource}, types.PromptMessage)


def test_meta_is_not_an_argument_jsonrpc_11() -> None:
    """JSONRPC-11: params._meta (with unknown keys) is metadata, never a tool argument."""
    document = {"name": "t", "arguments": {"x": 1}, "_meta": {"progressToken": "p", "k": [1]}}
    params = round_trip(document, types.CallToolRequestParams)
    assert params.arguments == {"x": 1}
    assert params.meta == {"progressToken": "p", "k": [1]}
    assert params.extra == {}


# ---------------------------------------------------------------------- strictness


def test_wrong_type_names_the_field() -> None:
    with pytest.raises(InvalidParams, match=r"\$\.name") as info:
        from_wire({"name": 3, "version": "1"}, types.Implementation)
    assert info.value.code == ErrorCode.INVALID_PARAMS
    assert isinstance(info.value.__cause__, cattrs.BaseValidationError)


def test_missing_required_field() -> None:
    with pytest.raises(InvalidParams, match=r"required field missing @ \$\.version"):
        from_wire({"name": "x"}, types.Implementation)


@pytest.mark.parametrize("document", [[], "x", None, 3])
def test_non_object_is_rejected(document: Any) -> None:
    with pytest.raises(InvalidParams, match="expected object"):
        from_wire(document, types.Tool)


@pytest.mark.parametrize("bad", [True, 1.5, "3"])
def test_integer_fields_take_only_integers(bad: Any) -> None:
    with pytest.raises(InvalidParams, match=r"\$\.maxTokens"):
        from_wire({"messages": [], "maxTokens": bad}, types.CreateMessageRequestParams)
    with pytest.raises(InvalidParams, match=r"\$\.completion\.total"):
        from_wire({"completion": {"values": [], "total": bad}}, types.CompleteResult)


def test_null_for_a_required_field_is_rejected() -> None:
    with pytest.raises(InvalidParams, match=r"\$\.maxTokens"):
        from_wire({"messages": [], "maxTokens": None}, types.CreateMessageRequestParams)


@pytest.mark.parametrize("bad", [1, "true", []])
def test_boolean_fields_take_only_booleans(bad: Any) -> None:
    with pytest.raises(InvalidParams, match=r"\$\.isError"):
        from_wire({"content": [], "isError": bad}, types.CallToolResult)


@pytest.mark.parametrize("bad", [1, True, None, ["x"]])
def test_string_fields_take_only_strings(bad: Any) -> None:
    with pytest.raises(InvalidParams, match=r"\$\.text"):
        from_wire({"type": "text", "text": bad}, types.TextContent)


def test_numbers_keep_their_type_progress_4() -> None:
    """PROGRESS-3/4: fractional progress is fine and an int stays an int."""
    for progress, total in ((40, 100), (0.25, 1.0)):
        document = {"progressToken": "tok", "progress": progress, "total": total}
        params = round_trip(document, types.ProgressNotificationParams)
        assert type(params.progress) is type(progress)
    with pytest.raises(InvalidParams, match=r"\$\.progress"):
        from_wire({"progressToken": "tok", "progress": True}, types.ProgressNotificationParams)


@pytest.mark.parametrize("good", ["1", 1, 0, ""])
def test_request_ids_keep_their_json_type_jsonrpc_6(good: Any) -> None:
    """JSONRPC-2/6: ids and tokens are strings or integers and keep their JSON type."""
    params = round_trip({"requestId": good}, types.CancelledNotificationParams)
    assert type(params.request_id) is type(good)


@pytest.mark.parametrize("bad", [1.5, True, None, {}, []])
def test_request_ids_reject_other_types_jsonrpc_2(bad: Any) -> None:
    with pytest.raises(InvalidParams, match=r"\$\.requestId"):
        from_wire({"requestId": bad}, types.CancelledNotificationParams)
    with pytest.raises(InvalidParams):
        from_wire(bad, types.ProgressToken)


def test_nested_errors_report_wire_paths() -> None:
    document = {"content": [{"type": "text", "text": "ok"}, {"type": "text", "text": 5}, 7]}
    with pytest.raises(InvalidParams) as info:
        from_wire(document, types.CallToolResult)
    message = str(info.value)
    assert "$.content[1].text" in message
    assert "$.content[2]" in message


def test_prompt_arguments_are_strings_prompts_3() -> None:
    """PROMPTS-3: prompt argument values are strings only."""
    round_trip({"name": "p", "arguments": {"city": TEXT}}, types.GetPromptRequestParams)
    with pytest.raises(InvalidParams, match=r"\$\.arguments\['n'\]"):
        from_wire({"name": "p", "arguments": {"n": 1}}, types.GetPromptRequestParams)


def test_invalid_log_level_logging_6() -> None:
    """LOGGING-6: an unknown level is invalid params."""
    with pytest.raises(InvalidParams, match=r"\$\.level"):
        from_wire({"level": "verbose"}, types.SetLevelRequestParams)
    assert from_wire({"level": "warning"}, types.SetLevelRequestParams).level == "warning"


def test_resource_contents_by_member_resources_4() -> None:
    """RESOURCES-4: text and blob contents are told apart by their member."""
    text = from_wire({"uri": "a:b", "text": TEXT}, types.ResourceContents)
    blob = from_wire({"uri": "a:b", "blob": BLOB, "mimeType": "x/y"}, types.ResourceContents)
    assert isinstance(text, types.TextResourceContents)
    assert isinstance(blob, types.BlobResourceContents)
    with pytest.raises(InvalidParams, match="'text' or 'blob'"):
        from_wire({"uri": "a:b"}, types.ResourceContents)


@pytest.mark.parametrize("subscribe", [None, False, True])
@pytest.mark.parametrize("list_changed", [None, False, True])
def test_resource_capability_flags_resources_1(subscribe: Any, list_changed: Any) -> None:
    """RESOURCES-1: subscribe and listChanged are independent optional flags."""
    flags = types.ResourcesCapability(subscribe=subscribe, list_changed=list_changed)
    document = to_wire(types.ServerCapabilities(resources=flags))
    assert from_wire(document, types.ServerCapabilities).resources == flags
    validate("ServerCapabilities", document)


def test_tool_annotations_stay_unset_tools_9() -> None:
    """TOOLS-9: an absent hint stays None so the client can apply the spec's default."""
    hints = round_trip({"destructiveHint": False}, types.ToolAnnotations)
    assert hints.destructive_hint is False
    assert hints.read_only_hint is None
    assert hints.open_world_hint is None


def test_completion_reference_by_type_completion_2() -> None:
    """COMPLETION-2: ref is a prompt or a resource reference, chosen by type."""
    base = {"argument": {"name": "a", "value": "Zü"}}
    prompt = round_trip({**base, "ref": {"type": "ref/prompt", "name": "p"}},
                        types.CompleteRequestParams)
    resource = round_trip({**base, "ref": {"type": "ref/resource", "uri": "file:///{x}"}},
                          types.CompleteRequestParams)
    assert isinstance(prompt.ref, types.PromptReference)
    assert isinstance(resource.ref, types.ResourceReference)
    with pytest.raises(InvalidParams, match=r"\$\.ref\.type"):
        from_wire({**base, "ref": {"type": "ref/tool", "name": "p"}}, types.CompleteRequestParams)


def test_unknown_method_in_request_union() -> None:
    with pytest.raises(InvalidParams, match=r"ClientRequest: .* @ \$\.method"):
        from_wire({"method": "tools/frobnicate"}, types.ClientRequest)
    request = from_wire({"method": "tools/call", "params": {"name": "t"}}, types.ClientRequest)
    assert request == types.CallToolRequest(params=types.CallToolRequestParams(name="t"))


def test_odd_member_names_survive() -> None:
    """Any member name, even one that looks internal, comes back unchanged."""
    document = {"type": "text", "text": "x", "__mcp_sync_extra__": 1, "extra": 2, "\x00": 3}
    assert round_trip(document, types.TextContent).extra == {
        "__mcp_sync_extra__": 1, "extra": 2, "\x00": 3,
    }


def test_converter_is_private() -> None:
    assert _convert.converter is not cattrs.global_converter
    assert _convert.make_converter() is not _convert.make_converter()


@pytest.mark.parametrize("name", CLASS_DEFS)
def test_both_converters_decode_well_formed_data_alike(name: str) -> None:
    """The converter without detailed validation and the detailed one, which explains a
    failure, build the same instance from valid data."""
    cls = getattr(types, name)
    data = to_wire(from_wire(sample(name, "full"), cls))
    quick = _convert.make_converter().structure(data, cls)
    detailed = _convert.make_converter(detailed_validation=True).structure(data, cls)
    assert quick == detailed == from_wire(data, cls)


def test_tool_annotation_defaults_tools_9() -> None:
    """TOOLS-9: absent hints read as the spec's defaults."""
    from mcp_sync.types import ToolAnnotations

    empty = ToolAnnotations()
    assert (empty.read_only, empty.destructive, empty.idempotent, empty.open_world) == (
        False, True, False, True)
    given = ToolAnnotations(read_only_hint=True, destructive_hint=False,
                            idempotent_hint=True, open_world_hint=False)
    assert (given.read_only, given.destructive, given.idempotent, given.open_world) == (
        True, False, True, False)


# --- construction --------------------------------------------------------------------------


def _attrs_signature(cls: type[Any]) -> inspect.Signature:
    """The signature attrs gives ``cls``'s ``__init__`` (every class is keyword-only)."""
    parameters = [inspect.Parameter(
        field.alias, inspect.Parameter.KEYWORD_ONLY,
        default=inspect.Parameter.empty if field.default is attrs.NOTHING else field.default,
        annotation=field.type) for field in attrs.fields(cls)]
    return inspect.Signature(parameters, return_annotation=None)


@pytest.mark.parametrize("name", CLASS_DEFS)
def test_a_class_builds_what_decoding_builds(name: str) -> None:
    """Every wire class takes its members as keyword arguments and builds what decoding
    builds: equal, with the same repr and the same wire form, and frozen."""
    cls = getattr(types, name)
    decoded = from_wire(sample(name, "full"), cls)
    built = cls(**{field.alias: getattr(decoded, field.name) for field in attrs.fields(cls)})
    assert type(built) is cls
    assert built == decoded and repr(built) == repr(decoded)
    assert to_wire(built) == to_wire(decoded)
    signature = inspect.signature(cls)
    assert [(p.name, p.kind, p.default) for p in signature.parameters.values()] == [
        (p.name, p.kind, p.default) for p in _attrs_signature(cls).parameters.values()]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        built.extra = {}


def test_a_class_refuses_wrong_arguments() -> None:
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'text'"):
        types.TextContent()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'txt'"):
        types.TextContent(txt="x")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="positional"):
        types.TextContent("x")  # type: ignore[misc]


def test_a_class_with_attrs_features_on_the_base_works_as_attrs_says() -> None:
    """Factories, validators and post-init hooks run as attrs runs them."""
    seen: list[str] = []

    @attrs.frozen(kw_only=True, repr=False, eq=False)
    class Checked(Model):
        name: str = attrs.field(validator=attrs.validators.instance_of(str))
        tags: list[str] = attrs.field(factory=list)

        def __attrs_post_init__(self) -> None:
            seen.append(self.name)

    first, second = Checked(name="a"), Checked(name="b")
    assert first.tags == [] and first.tags is not second.tags and seen == ["a", "b"]
    with pytest.raises(TypeError):
        Checked(name=1)  # type: ignore[arg-type]


def test_classes_built_on_a_wire_class_are_filled_as_ever() -> None:
    """An application's class built on one of ours, with attrs or plainly, is made and
    compared as its own."""
    @attrs.frozen(kw_only=True, repr=False, eq=False)
    class Base(Model):
        name: str
        note: str | None = None

    assert Base(name="first").name == "first"

    @attrs.frozen(kw_only=True, repr=False, eq=False)
    class Child(Base):
        age: int = 0

    class Plain(Base):
        __slots__ = ()

    child = Child(name="c", note="n", age=3)
    assert (type(child), child.name, child.note, child.age) == (Child, "c", "n", 3)
    assert repr(child).endswith("Child(name='c', note='n', age=3)")
    plain = Plain(name="p")
    assert (type(plain), plain.name, plain.note) == (Plain, "p", None)
    assert Base(name="b") == Base(name="b") != plain
    for obj in (child, plain, Base(name="b")):
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            obj.name = "changed"
    with pytest.raises(TypeError, match="unexpected keyword argument 'age'"):
        Plain(name="p", age=1)  # type: ignore[call-arg]


def test_content_lists_decode_and_encode_every_kind_of_text_item_alike() -> None:
    """Plain text items, text items with more members, other kinds and bad items in one
    list: each comes back as it went, and a bad one is reported with its index."""
    items: list[Any] = [
        {"type": "text", "text": "plain"},
        {"type": "text", "text": "noted", "annotations": {"priority": 0.5}},
        {"type": "text", "text": "newer", "title": "kept in extra"},
        {"type": "text", "text": "with meta", "_meta": {"example.com/k": 1}},
        {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        {"type": "text", "text": "plain again"},
    ]
    result = from_wire({"content": items}, types.CallToolResult)
    assert result.content[0] == types.TextContent(text="plain")
    assert result.content[2].extra == {"title": "kept in extra"}
    assert result.content[3].meta == {"example.com/k": 1}
    assert to_wire(result) == {"content": items}
    assert to_wire(types.TextContent(text="m", meta={"k": 2})) == {
        "type": "text", "text": "m", "_meta": {"k": 2}}
    for bad, problem in (({"type": "text", "text": 1}, r"\$\.content\[1\]\.text"),
                         ({"type": "text"}, r"\$\.content\[1\]\.text"),
                         ({"type": 7, "text": "x"}, r"\$\.content\[1\]\.type"),
                         ("text", r"\$\.content\[1\]")):
        with pytest.raises(InvalidParams, match=problem):
            from_wire({"content": [items[0], bad]}, types.CallToolResult)


def test_a_decoded_plain_text_item_is_the_item_built_by_hand() -> None:
    """The items of a large text result, decoded the short way, behave as constructed ones:
    equal, same hash and repr, frozen, copied, evolved, pickled and written back alike."""
    import copy
    import pickle

    result = from_wire({"content": [{"type": "text", "text": "a"},
                                    {"type": "text", "text": "b", "annotations": {"priority": 1}}]},
                       types.CallToolResult)
    decoded, annotated = result.content
    built = types.TextContent(text="a")
    assert type(decoded) is types.TextContent
    assert decoded == built and hash(decoded) == hash(built) and repr(decoded) == repr(built)
    assert decoded.annotations is None and not decoded.extra
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        decoded.text = "changed"  # type: ignore[misc]
    assert copy.deepcopy(decoded) == built == pickle.loads(pickle.dumps(decoded))
    assert attrs.evolve(decoded, text="c") == types.TextContent(text="c")
    assert to_wire(decoded) == {"type": "text", "text": "a"}
    assert annotated.annotations == types.Annotations(priority=1)
