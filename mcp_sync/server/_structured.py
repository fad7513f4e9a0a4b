"""Structured tool output (2025-06-18): a tool's output schema and its checked results.

A tool's ``outputSchema`` comes from its return annotation when that is an attrs class, a
dataclass, a TypedDict or a ``dict[str, ...]``: objects are described as they are. Other
types a schema can describe (``int``, ``list[str]``, ``Point | None``, ...) are wrapped as
``{"result": value}`` with a matching schema (NAMBIG-4, the convention of the official
Python SDK). A ``str`` return, a content type, ``None``, or a hint with ``Any`` in it
(``list[Any]``, ``dict[str, Any]``) stays plain content with no schema; ``output_schema=``
gives a schema explicitly, or ``False`` declares none.

Each result is checked against the schema before it is sent (V0618-19) and carries the
same data as JSON text in its first content block (V0618-21): the object itself, or
for a wrapped value the value (``5`` for ``{"result": 5}``). The generated schemas are
portable: no ``$ref``/``$defs`` (NAMBIG-3). jsonschema is imported at the first check, not
when a server starts.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import json
import math
from collections.abc import Mapping
from typing import Any, get_args, get_origin

import attrs

from .. import types
from ..protocol._schema_check import SchemaCheck, check_schema
from ._schema import _build, _is_class

__all__ = ["OutputMismatch", "OutputSchema", "output_schema_for", "structured_result"]


class OutputSchema(SchemaCheck):
    """A tool's output schema; ``wrapped`` when the value goes under ``"result"``."""

    __slots__ = ("wrapped",)

    def __init__(self, schema: dict[str, Any], wrapped: bool) -> None:
        super().__init__(schema)
        self.wrapped = wrapped


_CONTAINERS = frozenset({
    list, tuple, set, frozenset, dict, collections.abc.Iterable, collections.abc.Collection,
    collections.abc.Sequence, collections.abc.MutableSequence, collections.abc.Set,
    collections.abc.MutableSet, collections.abc.Mapping, collections.abc.MutableMapping,
})


def _is_content_or_open(hint: Any) -> bool:
    # Content objects, CallToolResult, Image, Audio are what a tool returns as content;
    # ``Any`` (``list[Any]``) may hold them too, and says nothing a schema could check.
    if hint is Any or (_is_class(hint) and hint.__module__.startswith("mcp_sync.")):
        return True
    if (get_origin(hint) or hint) in _CONTAINERS and not get_args(hint):
        return True  # a bare ``list`` or ``dict`` is ``list[Any]``, ``dict[Any, Any]``
    return any(_is_content_or_open(arg) for arg in get_args(hint))


def output_schema_for(hint: Any, explicit: Mapping[str, Any] | bool | None,
                      where: str) -> OutputSchema | None:
    """The output schema of a tool whose return annotation is ``hint``.

    Args:
        hint: the resolved return annotation (None when there is none).
        explicit: ``output_schema=`` as given to the decorator.
        where: names the tool in error messages.

    Raises:
        TypeError: ``explicit`` is not an object schema.
    """
    if explicit is False:
        return None
    if explicit is not None and explicit is not True:
        if not isinstance(explicit, Mapping) or explicit.get("type") != "object":
            raise TypeError(f"{where}: output_schema must be a JSON Schema with "
                            '"type": "object" (V0618-17)')
        given = json.loads(json.dumps(explicit))
        check_schema(given, where)
        return OutputSchema(given, False)
    if hint in (None, type(None), str) or _is_content_or_open(hint) or isinstance(hint, str):
        return None
    try:
        node = _build(hint, ())
    except TypeError:
        return None  # a hint no schema describes: the value is sent as content only
    if "any" in node.kinds:
        return None
    schema = json.loads(json.dumps(node.schema))
    if schema.get("type") == "object":
        return OutputSchema(schema, False)
    return OutputSchema({"type": "object", "properties": {"result": schema},
                         "required": ["result"]}, True)


def _plain(value: Any) -> Any:
    """``value`` as the JSON data its schema describes (field aliases, enum values)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, enum.Enum):
        return _plain(value.value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if attrs.has(type(value)):
        return {field.alias: _plain(getattr(value, field.name))
                for field in attrs.fields(type(value)) if field.init}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: _plain(getattr(value, field.name))
                for field in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (set, frozenset)):
        try:
            value = sorted(value)
        except TypeError:
            value = list(value)
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return str(value)


class OutputMismatch(Exception):
    """A tool's return does not conform to its output schema (V0618-19)."""


def structured_result(value: Any, output: OutputSchema, name: str) -> types.CallToolResult:
    """The checked ``tools/call`` result of a tool with an output schema.

    Raises:
        OutputMismatch: the value does not conform; nothing of it is to be sent.
    """
    if isinstance(value, types.CallToolResult):
        if value.is_error:
            return value
        data = value.structured_content
        if data is None:
            raise OutputMismatch(f"tool {name!r} declares an output schema but returned "
                                 "no structured content")
    else:
        data = _plain(value)
        if output.wrapped:
            data = {"result": data}
    problems = output.problems(data)
    if problems:
        raise OutputMismatch(f"tool {name!r} returned output that does not match its "
                             f"output schema: {'; '.join(problems)}")
    if isinstance(value, types.CallToolResult):
        if value.content:
            return value
        return attrs.evolve(value, content=[types.TextContent(text=_json_text(data))])
    if output.wrapped:
        # The text of a wrapped value is the value's own JSON (``5``, not
        # ``{"result": 5}``), as the official SDKs write it and as a text-only client
        # saw it before: json.loads(text) == structured["result"].
        return types.CallToolResult(content=[types.TextContent(text=_json_text(data["result"]))],
                                    structured_content=data)
    return types.CallToolResult(content=[types.TextContent(text=_json_text(data))],
                                structured_content=data)


def _json_text(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False)
