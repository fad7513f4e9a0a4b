"""Lists of wire classes in an answer are written as JSON text straight from the objects.

Whatever the path, the bytes must be exactly those of encoding the wire dicts, which is
what the detailed converter (without the fast paths) leads to.
"""

from __future__ import annotations

import json
import math
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_sync import _convert, types
from mcp_sync._convert import from_wire, to_answer, to_wire
from mcp_sync._wire_text import DeferredList
from mcp_sync.jsonrpc import Response, encode

from .test_types import CLASS_DEFS, VARIANTS, sample

DETAILED = _convert.make_converter(fast_path=False)

# Every test here runs with lists handled both ways (see conftest.inline_from).
pytestmark = pytest.mark.usefixtures("inline_from")


def plain_bytes(result: Any) -> bytes:
    """The response as encoding its detailed wire dicts (ordinary lists) gives it."""
    wire = to_wire(result, DETAILED)
    assert DeferredList not in {value.__class__ for value in wire.values()}
    return encode(Response(7, wire))


@pytest.mark.parametrize(("name", "variant"),
                         [(name, variant) for name in CLASS_DEFS for variant in VARIANTS])
def test_every_class_is_written_byte_for_byte_alike(name: str, variant: str) -> None:
    value = from_wire(sample(name, variant), getattr(types, name))
    wire = to_answer(value)
    if isinstance(wire, dict):
        assert encode(Response(7, wire)) == plain_bytes(value)


def test_a_large_result_is_written_from_its_text() -> None:
    result = types.CallToolResult(content=[types.TextContent(text=f"item {i}")
                                           for i in range(1000)])
    wire = to_answer(result)
    assert wire["content"].__class__ is DeferredList
    dicts = [{"type": "text", "text": f"item {i}"} for i in range(1000)]
    assert json.loads(wire["content"].json_text()) == dicts == wire["content"].wire()
    assert encode(Response(7, wire)) == plain_bytes(result)
    # It is no list: json refuses it rather than write it as an empty one.
    with pytest.raises(TypeError, match="DeferredList is not JSON serializable"):
        json.dumps(wire)
    # Anything but an answer gets the ordinary list of dicts, and decoding takes it back.
    assert to_wire(result)["content"] == dicts
    assert from_wire(to_wire(result), types.CallToolResult) == result


def test_answers_in_a_batch_are_written_from_their_wire_dicts() -> None:
    results = [types.CallToolResult(content=[types.TextContent(text=f"{n}-{i}")
                                             for i in range(3)]) for n in range(2)]
    batch = encode([Response(n, to_answer(result)) for n, result in enumerate(results)])
    assert json.loads(batch) == [json.loads(plain_bytes(result)) | {"id": n}
                                 for n, result in enumerate(results)]


def test_an_item_that_is_no_wire_data_fails_as_encoding_does() -> None:
    result = types.CallToolResult(content=[object()])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="not JSON serializable"):
        encode(Response(7, to_answer(result)))


texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
annotations = st.none() | st.builds(
    types.Annotations,
    audience=st.none() | st.lists(st.sampled_from(["user", "assistant"]), max_size=2),
    priority=st.none() | st.floats(0, 1) | st.integers(0, 1))
extras = st.just({}) | st.dictionaries(st.sampled_from(["x-a", "x-b", "text"]),
                                       texts | st.integers(), max_size=2)
items = st.one_of(
    st.builds(lambda t, a, x: types.TextContent(text=t, annotations=a, extra=x) if x
              else types.TextContent(text=t, annotations=a), texts, annotations, extras),
    st.builds(lambda d, a: types.ImageContent(data=d, mime_type="image/png", annotations=a),
              texts, annotations),
    st.builds(lambda u, t: types.EmbeddedResource(
        resource=types.TextResourceContents(uri=u, text=t)), texts, texts),
)


@settings(max_examples=200, deadline=None)
@given(content=st.lists(items, max_size=6), is_error=st.none() | st.booleans())
def test_any_content_is_written_byte_for_byte_alike(content: list[Any],
                                                    is_error: bool | None) -> None:
    result = (types.CallToolResult(content=content) if is_error is None
              else types.CallToolResult(content=content, is_error=is_error))
    assert encode(Response(7, to_answer(result))) == plain_bytes(result)


@pytest.mark.parametrize("item", [
    types.TextContent(text=5),  # type: ignore[arg-type] # attrs does not check
    types.TextContent(type="other", text="x"),  # type: ignore[arg-type]
    types.TextContent(text="lone \ud800 surrogate"),
    types.TextContent(text="quote \" backslash \\ newline \n tab \t nul \x00 é ☃"),
])
def test_odd_values_are_written_as_json_would(item: types.TextContent) -> None:
    result = types.CallToolResult(content=[item, types.TextContent(text="fine")])
    # (A lone surrogate has no UTF-8 form: both ways fall back to the ASCII encoder.)
    assert encode(Response(7, to_answer(result))) == plain_bytes(result)


def test_what_json_refuses_is_still_refused() -> None:
    bad = types.CallToolResult(content=[types.TextContent(
        text="x", annotations=types.Annotations(priority=math.nan))])
    with pytest.raises(ValueError):
        encode(Response(7, to_answer(bad)))


def test_items_of_an_unlisted_class_are_written_from_their_wire_dicts() -> None:
    @attrs.frozen(kw_only=True, repr=False, eq=False)
    class Stamped(types.TextContent):
        stamp: str = "now"

    # Short, and long enough to be written in one loop (see the cut-off).
    for count in (1, _convert.INLINE_FROM):
        result = types.CallToolResult(content=[*[types.TextContent(text="a")] * count,
                                               Stamped(text="b")])
        wire = to_answer(result)
        assert wire["content"].json_text() is None
        assert encode(Response(7, wire)) == plain_bytes(result)


def test_lists_either_side_of_the_cut_off_are_written_alike(inline_from: int) -> None:
    """A short list is written item by item, a long one in one loop; both from the objects."""
    kinds = [types.TextContent(text="t"), types.ImageContent(data="AA==", mime_type="image/png"),
             types.TextContent(text="u", annotations=types.Annotations(priority=0.5)),
             types.TextContent(text="v", extra={"x-new": [1]})]
    for count in sorted({0, 1, max(inline_from - 1, 0), inline_from, inline_from + 1}):
        result = types.CallToolResult(content=[kinds[i % 4] for i in range(count)])
        wire = to_answer(result)
        assert wire["content"].__class__ is DeferredList
        assert wire["content"].json_text() is not None
        assert encode(Response(7, wire)) == plain_bytes(result)
