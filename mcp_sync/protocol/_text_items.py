"""Lists of content items in which plain text items are decoded and encoded directly.

cattrs' generated functions decode an item through four calls (the union's hook, the
class's hook, the generated function, the string's hook) before attrs' ``__init__``
builds it, and encode it through three. A 10,000-item tool result is nearly all items
of one shape, ``{"type": "text", "text": "..."}`` with nothing else, and those calls
cost more than attrs' ``__init__`` building the items: without this module the
10,000-item benchmark row falls short of its target (figures in docs/benchmarks.md,
"Large results"). A text item of exactly that shape is built or written here in the list's own
loop; any other item, and any list in which a text item is not plain, goes through the
converter's hooks as ever, which also find and report what is wrong.

A decoded plain text item is filled through the class's slots rather than attrs'
``__init__``, which sets each of its members through a bound ``object.__setattr__``:
the instance is the same (the class has no validator, converter or hook on its members,
which :func:`_text_item_factory` checks, falling back to the constructor otherwise).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from ._model import NO_EXTRA
from ._types_common import TextContent

__all__ = ["structure_with_text", "unstructure_with_text"]


def _text_item_factory() -> Callable[[str], TextContent]:
    """A function making ``TextContent(text=text)``, through the slots where that is
    the same as the constructor."""
    fields = attrs.fields(TextContent)
    plain = ([field.name for field in fields] == ["type", "text", "annotations", "meta", "extra"]
             and [field.default for field in fields[2:]] == [None, None, NO_EXTRA]
             and all(field.validator is None and field.converter is None
                     and field.on_setattr is None for field in fields)
             and not hasattr(TextContent, "__attrs_post_init__"))
    if not plain:
        return lambda text: TextContent(text=text)
    new = object.__new__
    # One setter per member, called in line: a loop over the defaults costs a third more.
    set_type, set_text, set_annotations, set_meta, set_extra = (
        getattr(TextContent, field.name).__set__ for field in fields)

    def text_item(text: str) -> TextContent:
        item = new(TextContent)
        set_type(item, "text")
        set_text(item, text)
        set_annotations(item, None)
        set_meta(item, None)
        set_extra(item, NO_EXTRA)
        return item

    return text_item


_text_item = _text_item_factory()


def structure_with_text(item_type: Any, item_hook: Callable[[Any, Any], Any]
                        ) -> Callable[[list[Any]], list[Any]]:
    """Decode a list of ``item_type`` (which admits :class:`TextContent`), taking plain
    text items straight to ``TextContent`` and any other item to ``item_hook``."""

    text_item = _text_item

    def structure(values: list[Any]) -> list[Any]:
        decoded: list[Any] = []
        append = decoded.append
        for value in values:
            if value.__class__ is dict and len(value) == 2 and value.get("type") == "text":
                text = value.get("text")
                if text.__class__ is str:
                    append(text_item(text))
                    continue
            append(item_hook(value, item_type))
        return decoded

    return structure


def unstructure_with_text(item_hook: Callable[[Any], Any]
                          ) -> Callable[[list[Any]], list[Any]]:
    """Encode a list of content, writing a plain ``TextContent`` (nothing but its text)
    directly and any other item through ``item_hook``."""

    def unstructure(values: list[Any]) -> list[Any]:
        return [{"type": "text", "text": item.text}
                if item.__class__ is TextContent and item.extra is NO_EXTRA
                and item.annotations is None and item.meta is None
                else item_hook(item) for item in values]

    return unstructure
