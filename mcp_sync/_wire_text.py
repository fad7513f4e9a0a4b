"""JSON text for a list of wire classes, written together with its wire data.

Encoding a large result was most of the time a server spent on it that was not the
tool's own: turning 10,000 content objects into dicts, then ``json`` walking all those
dicts again (5-6 ms of it, against under 1 ms to write the text from the objects). So
the converter returns a list of classes as an :class:`EncodedList`: the same wire dicts
as ever, which is all any reader of the message sees, plus the list's JSON text, written
straight from the objects by a function compiled once per class. ``jsonrpc.encode``
splices that text into a response instead of encoding the dicts a second time.

The text is exactly what ``json`` would write for the dicts (the same separators and
escaping, members in the same order, defaults left out by the same rule); anything the
compiled function does not handle plainly makes the list an ordinary one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from json.encoder import encode_basestring
from typing import Any, Literal, get_args, get_origin

import attrs

from mcp_sync._model import NO_EXTRA

__all__ = ["EncodedList", "compile_item_text", "dump"]

#: The library's JSON encoding of one value, as ``jsonrpc.encode`` writes it.
dump: Callable[[Any], str] = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False).encode

ItemText = Callable[[Any], str]


class EncodedList(list):  # type: ignore[type-arg]
    """Wire data (a list of dicts) that also carries its own JSON text."""

    __slots__ = ("json_text",)

    json_text: str


def _braces(text: str) -> str:
    """``text`` as literal text inside an f-string."""
    return text.replace("{", "{{").replace("}", "}}")


def _is_string(field_type: Any) -> bool:
    return field_type is str or (
        get_origin(field_type) is Literal
        and all(isinstance(arg, str) for arg in get_args(field_type)))


def compile_item_text(
    cls: type[Any],
    hooks: Callable[[Any], Callable[[Any], Any]],
    wire_name: Callable[[str], str],
    never_omitted: str | None,
    identities: Collection[Callable[[Any], Any]],
    class_hook: Callable[[Any], Any],
) -> ItemText | None:
    """The function writing one instance of ``cls`` as JSON text, or None.

    It follows the converter's class hook: members under their wire names in field order,
    one equal to its default left out unless it is ``never_omitted``, each value through
    its type's hook (``identities`` are hooks that return the value as it is). An instance
    with members in ``extra`` is written from ``class_hook``'s dict.
    """
    names: dict[str, Any] = {"NO_EXTRA": NO_EXTRA, "enc": encode_basestring, "dump": dump,
                             "whole": class_hook}

    def name(value: Any) -> str:
        key = f"_g{len(names)}"
        names[key] = value
        return key

    lines = ["def item_text(obj):", "    if obj.extra is not NO_EXTRA:",
             "        return dump(whole(obj))"]
    pieces: list[str] = []  # f-string parts, each member starting with its comma
    for index, field in enumerate(attrs.fields(cls)):
        if field.name == "extra":
            continue
        if isinstance(field.default, attrs.Factory):  # type: ignore[arg-type]
            return None
        var = f"v{index}"
        lines.append(f"    {var} = obj.{field.name}")
        hook = hooks(field.type)
        if hook not in identities:
            written = f"dump({name(hook)}({var}))"
        elif _is_string(field.type):
            # A str member holding something else (attrs does not check) is written as
            # json would write it. A one-value literal (a discriminator) nearly always
            # holds the very string the class declares, written once here.
            written = f"(enc({var}) if {var}.__class__ is str else dump({var}))"
            allowed = get_args(field.type)
            if len(allowed) == 1:
                written = (f"({dump(allowed[0])!r} if {var} is {name(allowed[0])} "
                           f"else {written})")
        else:
            written = f"dump({var})"
        member = "," + dump(wire_name(field.name)) + ":"
        if field.default is attrs.NOTHING or field.name == never_omitted:
            # Worked out before the f-string, whose expressions may not hold its quote.
            lines.append(f"    {var} = {written}")
            pieces.append(_braces(member) + "{" + var + "}")
        else:
            # As cattrs leaves out a member equal to its default (``is`` for None, which
            # is the same for wire data and quicker).
            same = "is None" if field.default is None else f"== {name(field.default)}"
            lines.append(f"    {var} = '' if {var} {same} else {member!r} + {written}")
            pieces.append("{" + var + "}")
    if not pieces:
        lines.append("    return '{}'")
    elif pieces[0].startswith(_braces(",")):
        # The first member is always there: one f-string, its comma left out.
        lines.append(f"    return f'{{{{{''.join(pieces)[1:]}}}}}'")
    else:
        lines.append(f"    return '{{' + f'{''.join(pieces)}'[1:] + '}}'")
    exec(compile("\n".join(lines), f"<mcp_sync item text {cls.__name__}>", "exec"), names)
    item_text: ItemText = names["item_text"]
    return item_text
