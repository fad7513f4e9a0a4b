"""Asking the client's user for input: ``elicitation/create`` in form and URL mode.

:class:`~mcp_sync.Context` calls these. A form's requested schema comes from an attrs
class, a dataclass, a TypedDict, or a dict of fields (name -> type hint or field schema),
through the same type-hint compiler as tool arguments; it is checked (flat, primitive and
enum fields only), fitted to the session's version (DES-3), and sent only when the
session's version and the client's capabilities allow it (V0618-9, DES-5). The answer is
checked against the schema on receipt (V0618-34). The same code asks in both eras,
through an asker (:mod:`mcp_sync.server._rounds`).
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from ..errors import CapabilityError, InvalidParams
from ..protocol._elicitation import (
    ElicitationResult,
    check_requested_schema,
    content_errors,
    decode_result,
    for_profile,
)
from ..protocol._versions import VersionProfile
from ._schema import _build, _is_typeddict

if TYPE_CHECKING:
    from .. import types
    from ._rounds import Asker

__all__ = ["client_modes", "elicit_form", "elicit_url", "requested_schema"]

_Maker = Callable[[dict[str, Any]], Any]


def client_modes(capabilities: types.ClientCapabilities | None) -> frozenset[str]:
    """The elicitation modes a client declared; ``{}`` is form only (V1125-34)."""
    if capabilities is None:
        return frozenset()
    declared = capabilities.elicitation
    if not isinstance(declared, Mapping):
        return frozenset()
    modes = frozenset(mode for mode in ("form", "url") if mode in declared)
    return modes or frozenset({"form"})


def _plain(prop: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """A compiled field schema made flat: ``X | None`` is an optional ``X``."""
    prop = dict(prop)
    optional = False
    alternatives = prop.get("anyOf")
    if isinstance(alternatives, list) and {"type": "null"} in alternatives:
        rest = [alt for alt in alternatives if alt != {"type": "null"}]
        if len(rest) == 1:
            del prop["anyOf"]
            prop = {**rest[0], **prop}
            optional = True
    if prop.get("default", 0) is None:
        del prop["default"]
    return prop, optional


def requested_schema(schema: Any) -> tuple[dict[str, Any], _Maker | None]:
    """The requested schema for ``schema``, and what turns accepted content into its
    Python value (None for a dict schema: the content itself).

    Raises:
        TypeError: ``schema`` is none of the accepted kinds, or a field's type hint is
            not supported.
        ValueError: a field is nested, or an array other than a multiple choice.
    """
    maker: _Maker | None = None
    if isinstance(schema, type) and (attrs.has(schema) or dataclasses.is_dataclass(schema)
                                     or _is_typeddict(schema)):
        node = _build(schema, ())
        compiled = node.schema
        fields = {name: _plain(prop) for name, prop in compiled["properties"].items()}
        required = [name for name in compiled.get("required", ())
                    if not fields[name][1]]

        def maker(content: dict[str, Any], convert: Any = node.convert) -> Any:
            return convert(content, "")
    elif isinstance(schema, Mapping):
        if schema.get("type") == "object" and "properties" in schema:
            check_requested_schema(schema)
            return dict(schema), None
        fields = {}
        required = []
        for name, field in schema.items():
            if isinstance(field, Mapping):
                fields[name] = (dict(field), "default" in field)
            else:
                fields[name] = _plain(_build(field, ()).schema)
            if not fields[name][1]:
                required.append(name)
    else:
        raise TypeError("an elicitation schema is an attrs class, a dataclass, a "
                        f"TypedDict or a dict of fields, not {schema!r}")
    wire: dict[str, Any] = {"type": "object",
                            "properties": {name: prop for name, (prop, _) in fields.items()}}
    if required:
        wire["required"] = required
    check_requested_schema(wire)
    return wire, maker


def _check_mode(asker: Asker, mode: str) -> VersionProfile:
    profile = asker.profile
    if profile is None or not profile.elicitation:
        version = profile.version if profile is not None else "(none yet)"
        raise CapabilityError(f"elicitation needs protocol version 2025-06-18 or newer; "
                              f"this session speaks {version}")
    # The modern era keeps URL mode, without its id, completion notice and -32042.
    if mode == "url" and not (profile.elicitation_url or asker.modern):
        raise CapabilityError(f"URL-mode elicitation needs protocol version 2025-11-25; "
                              f"this session speaks {profile.version}")
    modes = client_modes(asker.capabilities)
    if not modes:
        raise asker.missing("the client did not declare the elicitation capability",
                            {"elicitation": {}})
    if mode not in modes:
        raise asker.missing(f"the client did not declare {mode}-mode elicitation",
                            {"elicitation": {mode: {}}})
    return profile


def elicit_form(asker: Asker, message: str, schema: Any, *, timeout: float | None,
                key: str | None = None) -> ElicitationResult[Any]:
    """Ask for a form-mode ``elicitation/create`` and read the answer; see Context.elicit."""
    profile = _check_mode(asker, "form")
    wire, maker = requested_schema(schema)
    wire = for_profile(wire, profile)
    params: dict[str, Any] = {"message": message, "requestedSchema": wire}
    if profile.elicitation_url or asker.modern:
        params = {"mode": "form", **params}
    raw = asker.request("elicitation/create", params, timeout=timeout, key=key)
    try:
        result = decode_result(raw)
    except InvalidParams as exc:
        asker.refuse(exc)
    if not result.accepted:
        return result
    assert result.content is not None
    problems = content_errors(wire, result.content)
    if problems:
        asker.refuse(InvalidParams("the client's elicitation answer does not fit the "
                                   "requested schema: " + "; ".join(problems),
                                   {"content": result.content}))
    value: Any = dict(result.content)
    if maker is not None:
        try:
            value = maker(dict(result.content))
        except Exception as exc:
            asker.refuse(InvalidParams(f"the client's elicitation answer does not fit the "
                                       f"requested schema: {exc}"))
    return attrs.evolve(result, value=value)


def elicit_url(asker: Asker, message: str, url: str, *, elicitation_id: str | None,
               timeout: float | None, key: str | None = None) -> ElicitationResult[Any]:
    """Ask for a URL-mode ``elicitation/create``; see Context.elicit_url."""
    _check_mode(asker, "url")
    if not isinstance(url, str) or "://" not in url:
        raise ValueError(f"not a URL: {url!r}")
    params = {"mode": "url", "message": message, "url": url}
    if not asker.modern:  # the modern era has no elicitation ids
        elicitation_id = elicitation_id or secrets.token_urlsafe(16)
        params["elicitationId"] = elicitation_id
    else:
        elicitation_id = None
    raw = asker.request("elicitation/create", params, timeout=timeout, key=key)
    try:
        result = decode_result(raw)
    except InvalidParams as exc:
        asker.refuse(exc)
    return attrs.evolve(result, content=None, elicitation_id=elicitation_id)
