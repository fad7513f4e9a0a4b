"""The fast paths decode and encode exactly what the detailed paths do.

``mcp_sync._fast_structure`` compiles, per class, a straight-line decoder for plainly valid
data and hands anything else to cattrs' detailed structuring. These tests hold the two to
the same answers: every schema sample, and the same samples with one member changed to any
JSON value or removed, must give an equal instance (equal as JSON too, so ``1`` and
``True`` are told apart) or the same error message from both. The digest IDs concerned are
those of the member types: GEN-2 (any Unicode text), PROGRESS-4 and CONTENT-6 (numbers keep
their type), JSONRPC-11 (``_meta`` is kept), CONTENT-1..5 (content unions).
"""

from __future__ import annotations

import copy
import json
import pickle
import weakref
from collections.abc import Mapping
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_sync import _convert, types
from mcp_sync._convert import converter, from_wire, to_wire
from mcp_sync._model import NO_EXTRA, Model, mutable_twin
from mcp_sync.errors import InvalidParams

from .strategies import json_values
from .test_types import CLASS_DEFS, UNIONS, VARIANTS, same_json, sample

DETAILED = _convert.make_converter(fast_path=False)
CASES = [(name, variant) for name in CLASS_DEFS for variant in VARIANTS]

# Every test here runs with lists handled both ways (see conftest.inline_from).
pytestmark = pytest.mark.usefixtures("inline_from")


def decode(data: Any, cls: Any, using: Any, consume: bool = False) -> tuple[str, Any]:
    try:
        return "ok", from_wire(copy.deepcopy(data), cls, using, consume=consume)
    except InvalidParams as exc:
        return "error", str(exc)


def assert_same_outcome(data: Any, cls: Any) -> None:
    """The fast path, and the fast path using the data up, give the detailed outcome."""
    detailed = decode(data, cls, DETAILED)
    for fast in (decode(data, cls, converter), decode(data, cls, converter, consume=True)):
        assert fast[0] == detailed[0], f"fast {fast!r} but detailed {detailed!r} for {data!r}"
        if fast[0] == "error":
            assert fast[1] == detailed[1]
            continue
        assert type(fast[1]) is type(detailed[1])
        assert fast[1] == detailed[1]
        assert same_json(to_wire(fast[1]), to_wire(detailed[1], DETAILED))


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in ``value`` a member or an item can be replaced or removed."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _changed(document: Any, path: tuple[Any, ...], new: Any, delete: bool) -> Any:
    changed = copy.deepcopy(document)
    target = changed
    for key in path[:-1]:
        target = target[key]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = new
    return changed


def test_every_class_has_a_fast_path() -> None:
    """A class silently left on the slow path would only show up in the benchmarks."""
    slow = [name for name in CLASS_DEFS
            if getattr(converter.get_structure_hook(getattr(types, name)), "fast_spec",
                       None) is None]
    assert slow == []


def test_every_class_is_filled_through_a_mutable_twin() -> None:
    """Plain stores into a twin of the same layout, then its class set: without the twin
    (a layout CPython will not swap) decoding falls back to a descriptor call a member."""
    without = [name for name in CLASS_DEFS if mutable_twin(getattr(types, name)) is None]
    assert without == []


def test_twins_are_made_by_a_plain_call() -> None:
    """Decoding makes a twin by calling it with no arguments; a ``__new__`` or ``__init__``
    of its own (one added to Model, say) would fail every fast decode, which would then
    quietly fall back to the detailed path."""
    twins = [mutable_twin(getattr(types, name)) for name in CLASS_DEFS]
    assert all(twin.__new__ is object.__new__ and twin.__init__ is object.__init__
               for twin in twins)
    assert all(isinstance(twin(), twin) for twin in twins)


def test_decoded_instances_are_of_their_class_frozen_and_weakly_referable() -> None:
    """What the twin made is, in every way that shows, an instance built the usual way."""
    content = [{"type": "text", "text": f"item {i}"} for i in range(40)]
    result = from_wire({"content": content}, types.CallToolResult)
    decoded = [result, *result.content, from_wire(content[0], types.TextContent)]
    built = types.TextContent(text="item 0")
    for item in decoded:
        assert type(item) in (types.CallToolResult, types.TextContent)
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            item.extra = {}
        assert weakref.ref(item)() is item
        assert pickle.loads(pickle.dumps(item)) == item
    assert decoded[1] == decoded[-1] == built
    assert repr(decoded[1]) == repr(built)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class _Named(Model):
    name: str
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class _Sized(_Named):
    size: int = 0


attrs.resolve_types(_Named)
attrs.resolve_types(_Sized)


def test_a_class_without_a_twin_is_filled_through_its_slots() -> None:
    """A subclass of a subclass has no twin; it decodes the same, only not as fast."""
    assert mutable_twin(_Named) is not None
    assert mutable_twin(_Sized) is None
    decoded = from_wire({"name": "a", "size": 2, "more": True}, _Sized)
    assert type(decoded) is _Sized
    assert decoded == _Sized(name="a", size=2, extra={"more": True})
    assert from_wire({"name": "b"}, _Named) == _Named(name="b")


@pytest.mark.parametrize(("name", "variant"), CASES)
def test_schema_samples_decode_alike(name: str, variant: str) -> None:
    assert_same_outcome(sample(name, variant), getattr(types, name))


@pytest.mark.parametrize("union", sorted(set(UNIONS) - {"ClientResult", "ServerResult"}))
def test_union_samples_decode_alike(union: str) -> None:
    for member in attrs_members(UNIONS[union]):
        for variant in VARIANTS:
            assert_same_outcome(sample(member.__name__, variant), UNIONS[union])


def attrs_members(union: Any) -> list[type[Any]]:
    return [m for m in getattr(union, "__args__", ()) if attrs.has(m)]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_one_member_changed_decodes_alike(data: st.DataObject) -> None:
    name, variant = data.draw(st.sampled_from(CASES))
    document = sample(name, variant)
    paths = _paths(document)
    if not paths:
        assert_same_outcome(data.draw(json_values(4)), getattr(types, name))
        return
    path = data.draw(st.sampled_from(paths))
    delete = data.draw(st.booleans())
    new = None if delete else data.draw(
        json_values(4) | st.sampled_from([True, False, 0, 1, 1.0, "", None, [], {}]))
    assert_same_outcome(_changed(document, path, new, delete), getattr(types, name))


@pytest.mark.parametrize("bad", [
    {"type": "text", "text": 1},
    {"type": "text"},
    {"text": "no type"},
    {"type": "text", "text": "x", "annotations": {"priority": "high"}},
    {"type": "text", "text": "x", "annotations": {"audience": ["robot"]}},
    {"type": "image", "data": "AA==", "mimeType": None},
    {"type": "text", "text": "x", "annotations": []},
])
def test_content_errors_name_the_member_content_1(bad: dict[str, Any]) -> None:
    """An item the fast path refuses still gets the detailed path's exact error."""
    document = {"content": [{"type": "text", "text": "fine"}, bad]}
    with pytest.raises(InvalidParams) as fast:
        from_wire(document, types.CallToolResult)
    with pytest.raises(InvalidParams) as detailed:
        from_wire(document, types.CallToolResult, DETAILED)
    assert str(fast.value) == str(detailed.value)
    assert "$.content[1]" in str(fast.value)


def test_lists_of_every_member_and_of_unknown_kinds_decode_alike_content_1() -> None:
    """A list decoded in one loop: each tag its own class, an unknown tag (the detailed
    path's fallback class) or an item with extra members included."""
    blob = {"uri": "a://b", "blob": "AA=="}
    content = [
        {"type": "text", "text": "a"},
        {"type": "image", "data": "AA==", "mimeType": "image/png"},
        {"type": "audio", "data": "AA==", "mimeType": "audio/wav",
         "annotations": {"priority": 0.5}},
        {"type": "resource", "resource": blob},
        {"type": "text", "text": "b", "x-new": {"k": [1]}},
    ]
    for items in (content, [*content, {"type": "hologram", "depth": 3}]):
        fast = from_wire({"content": items}, types.CallToolResult)
        assert fast == from_wire({"content": items}, types.CallToolResult, DETAILED)
        assert same_json(to_wire(fast), {"content": items})
    tools = [{"name": f"t{i}", "inputSchema": {"type": "object"}} for i in range(3)]
    listed = from_wire({"tools": tools}, types.ListToolsResult)
    assert listed == from_wire({"tools": tools}, types.ListToolsResult, DETAILED)
    assert [tool.name for tool in listed.tools] == ["t0", "t1", "t2"]


def test_a_list_that_is_not_plain_gets_the_detailed_error() -> None:
    for content, where in (([{"type": "text", "text": "a"}, "b"], "$.content[1]"),
                           ({"type": "text", "text": "a"}, "$.content")):
        with pytest.raises(InvalidParams) as fast:
            from_wire({"content": content}, types.CallToolResult)
        with pytest.raises(InvalidParams) as detailed:
            from_wire({"content": content}, types.CallToolResult, DETAILED)
        assert str(fast.value) == str(detailed.value) and where in str(fast.value)


def test_unknown_members_are_kept_in_extra() -> None:
    item = from_wire({"type": "text", "text": "x", "x-new": [1]}, types.TextContent)
    assert dict(item.extra) == {"x-new": [1]}
    assert to_wire(item) == {"type": "text", "text": "x", "x-new": [1]}


def test_instances_share_one_read_only_empty_extra() -> None:
    built = types.TextContent(text="x")
    decoded = from_wire({"type": "text", "text": "x"}, types.TextContent)
    assert built.extra is NO_EXTRA and decoded.extra is NO_EXTRA
    assert built == decoded and repr(decoded) == repr(built)
    with pytest.raises(TypeError):
        decoded.extra["x"] = 1  # type: ignore[index]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        decoded.text = "changed"  # type: ignore[misc]


def test_large_result_decodes_alike() -> None:
    """The case the fast path exists for: a result of many small items."""
    wire = {"content": [{"type": "text", "text": f"item {i}"} for i in range(2000)],
            "isError": False, "_meta": {"k": 1}}
    text = json.dumps(wire)
    fast = from_wire(json.loads(text), types.CallToolResult)
    assert fast == from_wire(json.loads(text), types.CallToolResult, DETAILED)
    assert same_json(to_wire(fast), wire)


def test_lists_either_side_of_the_cut_off_decode_alike_content_1(inline_from: int) -> None:
    """Below the cut-off each item goes through its own class's hook, from it on the list
    through one loop; both give what the detailed path gives, consumed or not."""
    kinds = [{"type": "text", "text": "a"},
             {"type": "image", "data": "AA==", "mimeType": "image/png"},
             {"type": "text", "text": "b", "x-new": [1]},
             {"type": "hologram", "depth": 3}]
    for count in sorted({0, 1, max(inline_from - 1, 0), inline_from, inline_from + 1}):
        assert_same_outcome({"content": [kinds[i % 4] for i in range(count)]},
                            types.CallToolResult)
        assert_same_outcome({"content": [*[kinds[0]] * count, {"type": "text", "text": 5}]},
                            types.CallToolResult)


def _many_items(count: int) -> list[dict[str, Any]]:
    return [{"type": "text", "text": f"item {i}"} for i in range(count)]


def test_consuming_decode_uses_the_lists_up() -> None:
    """With ``consume`` the items' dicts are let go as they are decoded: what the caller
    gave up holds None in their place, and the instance is the one decoded without it."""
    wire = {"content": [*_many_items(3000), {"type": "image", "data": "AA==",
                                              "mimeType": "image/png", "x-new": [1]}],
            "isError": False}
    given = copy.deepcopy(wire)
    decoded = from_wire(given, types.CallToolResult, consume=True)
    assert decoded == from_wire(copy.deepcopy(wire), types.CallToolResult)
    assert given["content"] == [None] * 3001
    assert same_json(to_wire(decoded), wire)


@pytest.mark.parametrize("wire", [
    # An item refused half-way through the list: the items before it were used up.
    {"content": [*_many_items(50), {"type": "text", "text": 5}, *_many_items(3)]},
    # An unknown kind, which only the detailed path decodes (into the fallback class).
    {"content": [*_many_items(50), {"type": "hologram", "depth": 3}]},
    # The whole list used up, then a later member refused.
    {"content": _many_items(50), "isError": "yes"},
    {"content": _many_items(50), "_meta": [1]},
    # Lists inside items of a list.
    {"tools": [{"name": f"t{i}", "inputSchema": {"type": "object"},
                "annotations": {"title": "x"}} for i in range(20)] + [{"name": 1}]},
])
def test_consuming_decode_puts_back_what_it_used_up(wire: dict[str, Any]) -> None:
    """Whenever the fast path gives up, the lists used up so far are put back as wire data
    and the detailed path decodes them: the same instance or the same error as ever."""
    cls = types.ListToolsResult if "tools" in wire else types.CallToolResult
    assert_same_outcome(wire, cls)
    given = copy.deepcopy(wire)
    key = "tools" if "tools" in wire else "content"
    try:
        from_wire(given, cls, consume=True)
    except InvalidParams:
        # Put back: decoded again, what the caller gave up decodes as it did before.
        assert None not in given[key]
        assert decode(given, cls, converter) == decode(wire, cls, converter)
    else:
        # Used up, or put back where only the detailed path could decode the list.
        used_up = given[key] == [None] * len(wire[key])
        assert used_up or decode(given, cls, converter) == decode(wire, cls, converter)


@pytest.mark.parametrize("consume", [False, True])
def test_decoded_items_share_the_declared_tag_string(inline_from: int, consume: bool) -> None:
    """json.loads makes a fresh "text" per item; a large result keeps one, not 10,000."""
    declared = types.TextContent(text="").type
    content = [{"type": "text", "text": "item"},
               {"type": "image", "data": "AA==", "mimeType": "image/png"}] * 3
    content.append({"type": "text", "text": "with annotations", "annotations": {}})
    text = json.dumps({"content": content})
    items = from_wire(json.loads(text), types.CallToolResult, consume=consume).content
    assert [item.type for item in items] == [item["type"] for item in content]
    assert all(item.type is declared for item in items if item.type == "text")
    assert all(item.type is types.ImageContent(data="", mime_type="").type
               for item in items if item.type == "image")
    with pytest.raises(InvalidParams, match="type"):
        from_wire({"type": "texts", "text": "x"}, types.TextContent)


def test_list_items_with_extra_members_keep_them_content_1() -> None:
    """The list encoder skips the extra step for items without extra, not for the rest."""
    result = types.CallToolResult(content=[
        types.TextContent(text="a", extra={"x-new": [1]}), types.TextContent(text="b"),
        types.TextContent(text="c", extra={})])
    assert to_wire(result) == to_wire(result, DETAILED) == {"content": [
        {"type": "text", "text": "a", "x-new": [1]}, {"type": "text", "text": "b"},
        {"type": "text", "text": "c"}]}


def test_list_items_of_an_unlisted_class_are_still_encoded_content_1() -> None:
    """The per-class table of the list encoder falls back to the converter for a subclass."""

    @attrs.frozen(kw_only=True, repr=False, eq=False)
    class Stamped(types.TextContent):
        stamp: str = "now"

    result = types.CallToolResult(content=[types.TextContent(text="a"),
                                           Stamped(text="b", stamp="later")])
    assert to_wire(result) == to_wire(result, DETAILED) == {"content": [
        {"type": "text", "text": "a"}, {"type": "text", "text": "b", "stamp": "later"}]}


@pytest.mark.parametrize("item", [
    {"type": "text", "text": "only what must be there"},
    {"type": "text", "x-other": "as many keys, one required missing"},
    {"text": "as many keys", "annotations": None},
    {"type": "image", "data": "AA=="},
    {"type": "image", "data": "AA==", "mimeType": "image/png"},
    {"type": "image", "data": "AA==", "x": 1},
    {"type": "resource", "resource": {"uri": "file:///a", "text": "t"}},
    {"type": "resource", "resource": {"uri": "file:///a", "blob": "AA==", "x": 1}},
])
def test_items_with_only_their_required_members_decode_alike_content_1(
        item: dict[str, Any]) -> None:
    """Items holding exactly as many members as must be there take a shorter branch;
    it gives what the detailed path gives, errors included, alone and in a list."""
    assert_same_outcome(item, types.Content)
    assert_same_outcome({"content": [item, dict(item)]}, types.CallToolResult)
