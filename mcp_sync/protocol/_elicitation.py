"""Elicitation rules both sides share: the result, the shape of a requested schema, checks.

``elicitation/create`` asks the client's user for a few values (form mode, a flat object
of primitive fields) or to visit a URL (URL mode, 2025-11-25). This module decides what a
requested schema may hold in each version, checks content against it and reads the
client's answer; it sends nothing. ``jsonschema`` is imported only when content is
checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, Literal, TypeVar

import attrs

from ..errors import InvalidParams
from ._versions import VersionProfile

__all__ = [
    "ElicitationResult",
    "check_requested_schema",
    "content_errors",
    "decode_result",
    "for_profile",
]

T = TypeVar("T")

Action = Literal["accept", "decline", "cancel"]
_ACTIONS = ("accept", "decline", "cancel")
_PRIMITIVES = ("string", "number", "integer", "boolean")


@attrs.frozen(kw_only=True)
class ElicitationResult(Generic[T]):
    """What the user did with an elicitation: ``accept`` (with ``content``), ``decline``
    or ``cancel``.

    ``content`` holds the accepted values as sent on the wire; ``value`` holds them as
    the schema's Python class (an attrs or dataclass instance, or a dict for a TypedDict
    or a dict schema), or None unless accepted. ``elicitation_id`` is set in URL mode:
    the id to complete the elicitation with once the user is done.
    """

    action: Action
    content: dict[str, Any] | None = None
    value: T | None = None
    elicitation_id: str | None = None

    @property
    def accepted(self) -> bool:
        """True when the user accepted (and ``content`` holds the values)."""
        return self.action == "accept"

    def to_wire(self) -> dict[str, Any]:
        """The ``elicitation/create`` result: ``action``, and ``content`` when accepted."""
        wire: dict[str, Any] = {"action": self.action}
        if self.action == "accept" and self.content is not None:
            wire["content"] = dict(self.content)
        return wire


def decode_result(raw: Mapping[str, Any]) -> ElicitationResult[Any]:
    """Read a client's answer; a stray ``"reject"`` is a decline (V0618-31, NAMBIG-8).

    Raises:
        InvalidParams: no known ``action``, or ``content`` is not an object.
    """
    action = raw.get("action")
    if action == "reject":
        action = "decline"
    if action not in _ACTIONS:
        raise InvalidParams(f"the elicitation result has no valid action: {action!r}")
    content = raw.get("content")
    if action != "accept":
        return ElicitationResult(action=action)
    if content is None:
        content = {}
    if not isinstance(content, dict):
        raise InvalidParams("the elicitation result's content is not an object")
    return ElicitationResult(action="accept", content=content)


def _is_multi_select(prop: Mapping[str, Any]) -> bool:
    items = prop.get("items")
    return (prop.get("type") == "array" and isinstance(items, Mapping)
            and ("enum" in items or "anyOf" in items))


def check_requested_schema(schema: Mapping[str, Any]) -> None:
    """Refuse what form mode cannot ask for: nesting, or arrays other than multi-select
    enums (V0618-29/30, V1125-37).

    Raises:
        ValueError: the schema is not a flat object of primitive or enum fields.
    """
    if schema.get("type") != "object" or not isinstance(schema.get("properties"), Mapping):
        raise ValueError('a requested schema is {"type": "object", "properties": {...}}')
    for name, prop in schema["properties"].items():
        if not isinstance(prop, Mapping):
            raise ValueError(f"field {name!r}: a field schema is an object")
        if "oneOf" in prop and prop.get("type", "string") == "string":
            continue  # a single choice with labels
        kind = prop.get("type")
        if kind == "array":
            if not _is_multi_select(prop):
                raise ValueError(f"field {name!r}: the only arrays form mode can ask for are "
                                 "multiple choices of strings")
            continue
        if kind not in _PRIMITIVES:
            raise ValueError(f"field {name!r}: form mode asks only for strings, numbers, "
                             f"integers, booleans and choices, not {kind!r}")


def for_profile(schema: dict[str, Any], profile: VersionProfile) -> dict[str, Any]:
    """``schema`` as a peer of ``profile``'s version can read it (DES-3).

    Before 2025-11-25, labelled single choices become the legacy ``enum`` + ``enumNames``
    and ``default`` stays only on booleans; multiple choices cannot be expressed.

    Raises:
        ValueError: a multiple choice, in a session older than 2025-11-25.
    """
    if profile.enum_v2_and_defaults:
        return schema
    properties: dict[str, Any] = {}
    for name, prop in schema["properties"].items():
        prop = dict(prop)
        if prop.get("type") == "array":
            raise ValueError(f"field {name!r}: multiple choices need protocol version "
                             f"2025-11-25; this session speaks {profile.version}")
        if "oneOf" in prop:
            options = prop.pop("oneOf")
            prop["type"] = "string"
            prop["enum"] = [option["const"] for option in options]
            prop["enumNames"] = [option.get("title", option["const"]) for option in options]
        if prop.get("type") != "boolean":
            prop.pop("default", None)
        properties[name] = prop
    return {**schema, "properties": properties}


def content_errors(schema: Mapping[str, Any], content: Mapping[str, Any]) -> list[str]:
    """Why ``content`` does not fit the requested ``schema`` (V0618-34); empty if it does.

    ``pattern`` is honoured where a peer sends it (NAMBIG-5).
    """
    import jsonschema  # type: ignore[import-untyped, unused-ignore]

    problems: list[str] = []
    for name, value in content.items():
        if not (isinstance(value, (str, int, float, bool)) or (
                isinstance(value, list) and all(isinstance(item, str) for item in value))):
            problems.append(f"{name}: {value!r} is not a string, number, boolean or "
                            "list of strings")
    validator = jsonschema.Draft202012Validator(
        {key: value for key, value in schema.items() if key != "$schema"})
    for error in validator.iter_errors(dict(content)):
        where = ".".join(str(part) for part in error.absolute_path)
        problems.append(f"{where}: {error.message}" if where else error.message)
    return problems
