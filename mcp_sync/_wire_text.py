"""JSON text for a list of wire classes in an answer, written straight from the objects.

Encoding a large result was most of the time a server spent on it that was not the
tool's own: turning 10,000 content objects into dicts, then ``json`` walking all those
dicts again (5-6 ms of it, against about 1 ms to write the text from the objects). So in
the result of a request we answer (``_convert.to_answer``) a list of classes stays a
:class:`DeferredList` of the objects, which writes its JSON text in one loop compiled
once per list type (a short list: item by item, by a function compiled once per class);
``jsonrpc.encode`` splices that text into the response. The wire
dicts are made only if something asks for them (a batch, the ASCII fallback, a list
nested deeper): :meth:`DeferredList.wire`, which :func:`dump` calls by itself.

The text is exactly what ``json`` would write for the dicts (the same separators and
escaping, members in the same order, defaults left out by the same rule); a list the
compiled function does not handle plainly is written from its wire dicts instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any, Literal, get_args, get_origin

import attrs

from mcp_sync._model import NO_EXTRA

__all__ = ["DeferredList", "ItemText", "ListText", "Unlisted", "compile_item_text",
           "compile_list_text", "dump", "dump_ascii"]

ListText = Callable[[Sequence[Any]], str]
ItemText = Callable[[Any], str]


class Unlisted(Exception):
    """An item of a class the list's text function was not compiled for."""


class DeferredList:
    """A list of wire classes in an answer, kept as the objects until it is encoded.

    Not a list, so that nothing can mistake it for an empty one: ``json`` refuses it,
    and :func:`dump` asks it for its wire dicts.
    """

    __slots__ = ("_items", "_make_wire", "_write")

    def __init__(self, items: Sequence[Any], write: ListText,
                 make_wire: Callable[[Sequence[Any]], list[Any]]) -> None:
        self._items = tuple(items)  # the list as it was when it was answered
        self._write = write
        self._make_wire = make_wire

    def json_text(self) -> str | None:
        """The list as JSON text, or None if it is for :meth:`wire` and ``json``."""
        try:
            return self._write(self._items)
        except Exception:
            return None

    def wire(self) -> list[Any]:
        """The list as wire data: the dicts ``to_wire`` makes of its items.

        Raises:
            TypeError: an item cannot be turned into wire data.
        """
        try:
            return self._make_wire(self._items)
        except (TypeError, ValueError):
            raise
        except Exception as exc:
            raise TypeError(f"a result item cannot be written as JSON: {exc}") from exc

    def __repr__(self) -> str:
        return f"DeferredList({list(self._items)!r})"


def _wire_of_deferred(value: Any) -> Any:
    """``json``'s ``default``: a deferred list's wire data; anything else is refused."""
    if value.__class__ is DeferredList:
        return value.wire()
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def _compact_encoder(ensure_ascii: bool) -> Callable[[Any], str]:
    """Compact, strict JSON for one value, exactly as ``JSONEncoder.encode`` writes it.

    ``encode`` builds a new C encoder for every value it is given, which cost a short
    message more than writing it; this one is built once. Encoders skip the check for
    containers that contain themselves: it keeps a table of every container encoded, a
    sixth of the time of a large message, and a value that refers to itself still fails,
    as a RecursionError.
    """
    encoder = json.JSONEncoder(ensure_ascii=ensure_ascii, separators=(",", ":"),
                               allow_nan=False, check_circular=False,
                               default=_wire_of_deferred)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # an interpreter without json's C accelerator
        return encoder.encode
    c_encode = make(None, _wire_of_deferred,
                    encode_basestring_ascii if ensure_ascii else encode_basestring,
                    None, ":", ",", False, False, False)
    join = "".join

    def dump(value: Any) -> str:
        return join(c_encode(value, 0))

    return dump


#: The library's JSON encoding of one value, as ``jsonrpc.encode`` writes it.
dump = _compact_encoder(ensure_ascii=False)
#: The same with every character beyond ASCII escaped (for text with lone surrogates).
dump_ascii = _compact_encoder(ensure_ascii=True)


def _braces(text: str) -> str:
    """``text`` as literal text inside an f-string."""
    return text.replace("{", "{{").replace("}", "}}")


def _is_string(field_type: Any) -> bool:
    return field_type is str or (
        get_origin(field_type) is Literal
        and all(isinstance(arg, str) for arg in get_args(field_type)))


def compile_list_text(
    members: Sequence[tuple[type[Any], str | None, Callable[[Any], Any]]],
    hooks: Callable[[Any], Callable[[Any], Any]],
    wire_name: Callable[[str], str],
    identities: Collection[Callable[[Any], Any]],
) -> ListText | None:
    """The function writing a list of instances of ``members`` as JSON text, or None.

    Each member is a class, the member of it never left out (its discriminator) and the
    converter's hook for it. An item is written as that hook would make it: members under
    their wire names in field order, one equal to its default left out, each value through
    its type's hook (``identities`` are hooks that return the value as it is); an item with
    members in ``extra`` is written from the class hook's dict. The items are written in
    one loop with no call per item; an item of any other class raises :class:`Unlisted`.
    """
    names, name = _namespace()
    lines = ["def list_text(values):", "    parts = []", "    append = parts.append",
             "    for obj in values:", "        cls = obj.__class__"]
    for index, (cls, never_omitted, class_hook) in enumerate(members):
        body = _item_lines(cls, hooks, wire_name, never_omitted, identities, name)
        if body is None:
            return None
        lines.append(f"        {'if' if index == 0 else 'elif'} cls is {name(cls)}:")
        lines.append("            if obj.extra is not NO_EXTRA:")
        lines.append(f"                append(dump({name(class_hook)}(obj)))")
        lines.append("                continue")
        lines.extend(f"            {line}" for line in body)
    lines.extend(["        else:", "            raise UNLISTED",
                  "    return '[' + ','.join(parts) + ']'"])
    label = "|".join(cls.__name__ for cls, _, _ in members)
    exec(compile("\n".join(lines), f"<mcp_sync list text {label}>", "exec"), names)
    list_text: ListText = names["list_text"]
    return list_text


def compile_item_text(
    cls: type[Any],
    never_omitted: str | None,
    class_hook: Callable[[Any], Any],
    hooks: Callable[[Any], Callable[[Any], Any]],
    wire_name: Callable[[str], str],
    identities: Collection[Callable[[Any], Any]],
) -> ItemText | None:
    """The function writing one instance of ``cls`` as JSON text, exactly as an item of
    :func:`compile_list_text`'s function is written; None if it has none.

    For a short list: compiling the one loop for every class of a union costs more than a
    call per item saves on a few items, and an answer holding one kind of item compiles
    only the function for that kind.
    """
    names, name = _namespace()
    body = _item_lines(cls, hooks, wire_name, never_omitted, identities, name, take="return")
    if body is None:
        return None
    lines = ["def item_text(obj):", "    if obj.extra is not NO_EXTRA:",
             f"        return dump({name(class_hook)}(obj))", *(f"    {line}" for line in body)]
    exec(compile("\n".join(lines), f"<mcp_sync item text {cls.__name__}>", "exec"), names)
    item_text: ItemText = names["item_text"]
    return item_text


def _namespace() -> tuple[dict[str, Any], Callable[[Any], str]]:
    """The globals of generated source, and what adds a value to them under a new name."""
    names: dict[str, Any] = {"NO_EXTRA": NO_EXTRA, "enc": encode_basestring, "dump": dump,
                             "UNLISTED": Unlisted}

    def name(value: Any) -> str:
        key = f"_g{len(names)}"
        names[key] = value
        return key

    return names, name


def _item_lines(cls: type[Any], hooks: Callable[[Any], Callable[[Any], Any]],
                wire_name: Callable[[str], str], never_omitted: str | None,
                identities: Collection[Callable[[Any], Any]],
                name: Callable[[Any], str], take: str = "append") -> list[str] | None:
    """Lines that pass the JSON text of ``obj`` (of ``cls``, empty ``extra``) to ``take``
    (``append``, or ``return``)."""
    lines: list[str] = []
    pieces: list[str] = []  # f-string parts, each member starting with its comma
    for index, field in enumerate(attrs.fields(cls)):
        if field.name == "extra":
            continue
        if isinstance(field.default, attrs.Factory):  # type: ignore[arg-type]
            return None
        var = f"v{index}"
        lines.append(f"{var} = obj.{field.name}")
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
            lines.append(f"{var} = {written}")
            pieces.append(_braces(member) + "{" + var + "}")
        else:
            # As cattrs leaves out a member equal to its default (``is`` for None, which
            # is the same for wire data and quicker).
            same = "is None" if field.default is None else f"== {name(field.default)}"
            lines.append(f"{var} = '' if {var} {same} else {member!r} + {written}")
            pieces.append("{" + var + "}")
    if not pieces:
        lines.append(f"{take}('{{}}')")
    elif pieces[0].startswith(_braces(",")):
        # The first member is always there: one f-string, its comma left out.
        lines.append(f"{take}(f'{{{{{''.join(pieces)[1:]}}}}}')")
    else:
        lines.append(f"{take}('{{' + f'{''.join(pieces)}'[1:] + '}}')")
    return lines
