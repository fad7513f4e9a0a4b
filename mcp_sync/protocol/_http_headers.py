"""The headers a modern (2026-07-28) Streamable HTTP request mirrors from its body.

A modern POST repeats what an intermediary may want to route on in HTTP headers, so that
a load balancer or gateway need not parse JSON-RPC: ``MCP-Protocol-Version`` (the body's
``_meta`` version), ``Mcp-Method`` (the method), ``Mcp-Name`` (the tool or prompt name,
or the resource URI) and, for ``tools/call``, one ``Mcp-Param-<Token>`` header for each
argument whose input-schema property carries ``"x-mcp-header": "<Token>"`` (SEP-2243).
The server reads the body and must refuse a request whose headers do not say the same:
an intermediary may have acted on the headers. This module holds the rules both sides
share; it does no I/O.

A value that would not survive as an HTTP field value (non-ASCII, control characters,
surrounding whitespace) travels base64-encoded as ``=?base64?<payload>?=``; anything not
wrapped exactly so is the literal value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypeGuard

__all__ = [
    "HEADER_MISMATCH",
    "METHOD_HEADER",
    "NAME_HEADER",
    "NAME_PARAMS",
    "PARAM_HEADER_PREFIX",
    "X_MCP_HEADER",
    "check_param_headers",
    "decode_header_value",
    "encode_header_value",
    "header_parameters",
    "is_header_token",
    "param_header_values",
]

#: ``HeaderMismatch``: a mirrored header is missing, malformed or says something the
#: body does not (HTTP 400).
HEADER_MISMATCH = -32020

METHOD_HEADER = "Mcp-Method"
NAME_HEADER = "Mcp-Name"
PARAM_HEADER_PREFIX = "Mcp-Param-"
#: The input-schema keyword naming the header a tool argument is mirrored into.
X_MCP_HEADER = "x-mcp-header"

#: The methods whose target is mirrored in ``Mcp-Name``, and the param holding it.
NAME_PARAMS: Mapping[str, str] = {"tools/call": "name", "prompts/get": "name",
                                  "resources/read": "uri"}

#: The JSON Schema types an ``x-mcp-header`` property may have (a number has no
#: portable text form, so ``number`` is not one).
_HEADER_TYPES = frozenset({"string", "integer", "boolean"})

_SENTINEL = re.compile(r"=\?base64\?(.*)\?=", re.DOTALL)
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_SAFE_VALUE = re.compile(r"[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?")
_DECIMAL = re.compile(r"-?[0-9]+(\.0+)?")


def is_header_token(name: object) -> TypeGuard[str]:
    """Whether ``name`` may follow ``Mcp-Param-`` in a header name (an RFC 9110 token)."""
    return isinstance(name, str) and _TOKEN.fullmatch(name) is not None


def encode_header_value(value: str) -> str:
    """``value`` as a header value: itself when it is safe there, base64-wrapped if not."""
    if value and _SAFE_VALUE.fullmatch(value) and not _SENTINEL.fullmatch(value):
        return value
    import base64  # here: a server that never sees a header (stdio) never loads it

    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def decode_header_value(raw: str) -> str | None:
    """The value a header carries: ``raw`` without surrounding whitespace, decoded when
    base64-wrapped; None when the wrapped payload is not valid (canonical) base64 or
    not UTF-8."""
    raw = raw.strip(" \t")
    wrapped = _SENTINEL.fullmatch(raw)
    if wrapped is None:
        return raw
    payload = wrapped.group(1)
    import base64  # here: a server that never sees a header (stdio) never loads it

    try:
        data = base64.b64decode(payload, validate=True)
    except ValueError:  # binascii.Error is one
        return None
    if base64.b64encode(data).decode("ascii") != payload:
        return None  # bits beyond the last byte, or padding left out
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def header_parameters(input_schema: Mapping[str, Any] | None) -> dict[str, str]:
    """The arguments of a tool mirrored into headers: argument name -> header token.

    Only a property of the schema's top-level ``properties`` counts, with a string,
    integer or boolean ``type`` and a token for a value; any other annotation is not
    one a client acts on, and is not enforced.
    """
    properties = input_schema.get("properties") if input_schema else None
    if not isinstance(properties, Mapping):
        return {}
    found: dict[str, str] = {}
    for name, schema in properties.items():
        if not isinstance(schema, Mapping):
            continue
        token = schema.get(X_MCP_HEADER)
        if is_header_token(token) and schema.get("type") in _HEADER_TYPES:
            found[name] = token
    return found


def _as_text(value: Any) -> str | None:
    """An argument as a client writes it into a header; None if it has no header form."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int)):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return None


def param_header_values(input_schema: Mapping[str, Any] | None,
                        arguments: Mapping[str, Any]) -> dict[str, str]:
    """The ``Mcp-Param-*`` headers (name -> value) a client sends with ``tools/call``;
    an argument that is absent or null gets none."""
    headers: dict[str, str] = {}
    for name, token in header_parameters(input_schema).items():
        text = _as_text(arguments.get(name))
        if text is not None:
            headers[PARAM_HEADER_PREFIX + token] = encode_header_value(text)
    return headers


def _same(value: Any, schema_type: Any, header: str) -> bool:
    text = _as_text(value)
    if text is None:
        return False
    if schema_type == "integer" and not isinstance(value, bool) and _DECIMAL.fullmatch(header):
        return int(header.split(".")[0]) == int(value)  # 42 and 42.0 are the same integer
    return header == text


def check_param_headers(input_schema: Mapping[str, Any] | None, arguments: Any,
                        headers: Mapping[str, str]) -> str | None:
    """What is wrong with the ``Mcp-Param-*`` headers of a ``tools/call``, or None.

    Args:
        input_schema: the called tool's input schema.
        arguments: the call's ``arguments``.
        headers: the request's headers, by lower-case name.

    Each annotated argument present (and not null) in ``arguments`` needs its header,
    carrying the same value; one absent needs none.
    """
    if not isinstance(arguments, Mapping):
        arguments = {}
    properties = (input_schema or {}).get("properties") or {}
    for name, token in header_parameters(input_schema).items():
        header = PARAM_HEADER_PREFIX + token
        raw = headers.get(header.lower())
        value = arguments.get(name)
        if value is None:
            if raw is not None:
                return f"the {header} header is sent but argument {name!r} is not"
            continue
        if raw is None:
            return f"the {header} header is missing; argument {name!r} is sent"
        decoded = decode_header_value(raw)
        if decoded is None:
            return f"the {header} header is not valid base64 inside =?base64?...?="
        if not _same(value, properties[name].get("type"), decoded):
            return f"the {header} header does not match argument {name!r}"
    return None
