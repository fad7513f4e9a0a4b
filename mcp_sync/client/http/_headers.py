"""The headers a modern (2026-07-28) request carries over Streamable HTTP.

Every modern POST names its version in ``MCP-Protocol-Version`` (equal to the one in its
``_meta``), its method in ``Mcp-Method`` and, for ``tools/call``, ``prompts/get`` and
``resources/read``, the tool, prompt or resource in ``Mcp-Name``, so that a gateway can
route it without reading the body. A tool argument whose input-schema property carries
``x-mcp-header: NAME`` is mirrored in ``Mcp-Param-NAME``. A value that would not survive
as an HTTP field (not printable ASCII, whitespace at either end, or already looking like
the sentinel) is sent as ``=?base64?<UTF-8, base64>?=``.

A tool whose schema misuses ``x-mcp-header`` (empty or not an RFC 9110 token, on a type
other than string, integer or boolean, twice the same name ignoring case, or off the
plain ``properties`` path) cannot be called correctly: :func:`header_problem` names the
fault, and the client leaves such tools out of its lists.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["encode_value", "header_paths", "header_problem", "request_headers"]

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_PRINTABLE = re.compile(r"[\x20-\x7e]*")
_SENTINEL = re.compile(r"=\?base64\?.*\?=")
_HEADER_TYPES = frozenset({"string", "integer", "boolean"})
#: Keywords whose value is one subschema, a list of them, or a map of them: a
#: ``x-mcp-header`` below any of them is off the ``properties`` path.
_ONE = frozenset({"items", "contains", "additionalProperties", "propertyNames", "not", "if",
                  "then", "else", "unevaluatedItems", "unevaluatedProperties",
                  "contentSchema"})
_LIST = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_MAP = frozenset({"$defs", "definitions", "patternProperties", "dependentSchemas"})
_NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def _positions(schema: Any) -> Iterator[tuple[tuple[str, ...] | None, dict[str, Any]]]:
    # (path of property names from the root, or None once off that path; the subschema)
    stack: list[tuple[tuple[str, ...] | None, Any]] = [((), schema)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, dict):
            continue
        yield path, node
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                stack.extend(((*path, name) if path is not None else None, sub)
                             for name, sub in value.items())
            elif key in _ONE:
                stack.append((None, value))
            elif key in _LIST and isinstance(value, list):
                stack.extend((None, sub) for sub in value)
            elif key in _MAP and isinstance(value, dict):
                stack.extend((None, sub) for sub in value.values())


def header_problem(schema: Any) -> str | None:
    """What is wrong with the ``x-mcp-header`` annotations of an input schema, or None."""
    seen: dict[str, tuple[str, ...]] = {}
    for path, node in _positions(schema):
        if "x-mcp-header" not in node:
            continue
        name = node["x-mcp-header"]
        if not path:
            return "x-mcp-header outside the plain properties of the arguments"
        where = ".".join(path)
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            return f"x-mcp-header {name!r} of {where!r} is not a header name"
        if node.get("type") not in _HEADER_TYPES:
            return (f"x-mcp-header of {where!r} is on a {node.get('type')!r} property; only "
                    "string, integer and boolean may be mirrored")
        if name.lower() in seen:
            first = ".".join(seen[name.lower()])
            return f"x-mcp-header {name!r} names both {first!r} and {where!r}"
        seen[name.lower()] = path
    return None


def header_paths(schema: Any) -> dict[tuple[str, ...], str]:
    """Each argument path (property names) mirrored in a header, with its header name."""
    return {path: node["x-mcp-header"] for path, node in _positions(schema)
            if path and isinstance(node.get("x-mcp-header"), str)}


def encode_value(value: str) -> str:
    """``value`` as an HTTP field value, in the base64 sentinel when it must be."""
    if _PRINTABLE.fullmatch(value) and value == value.strip() and not _SENTINEL.fullmatch(value):
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def _rendered(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, str, float)):
        return str(value)
    return None


def request_headers(method: str, params: Mapping[str, Any] | None, version: str,
                    tool_headers: Mapping[str, dict[tuple[str, ...], str]]) -> dict[str, str]:
    """The headers of one modern request's POST (besides Accept and Content-Type)."""
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    params = params or {}
    named = params.get(_NAMED.get(method, ""))
    if isinstance(named, str):
        headers["Mcp-Name"] = encode_value(named)
    arguments = params.get("arguments")
    if method == "tools/call" and isinstance(named, str) and isinstance(arguments, Mapping):
        for path, header in tool_headers.get(named, {}).items():
            value: Any = arguments
            for key in path:
                value = value.get(key) if isinstance(value, Mapping) else None
            text = _rendered(value)
            if text is not None:
                headers[f"Mcp-Param-{header}"] = encode_value(text)
    return headers
