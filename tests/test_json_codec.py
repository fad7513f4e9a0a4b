"""The library's JSON: read and written by orjson, and where the two libraries differ,
the value or the text is what ``json`` would give, or is refused as ``json`` refuses it."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_sync import jsonrpc
from mcp_sync.protocol._codec import dumps, loads

REFERENCE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def outcome(function: Any, value: Any) -> str:
    try:
        return repr(function(value))
    except (ValueError, TypeError, RecursionError) as exc:
        return type(exc).__name__


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(value=json_values)
def test_any_value_reads_back_as_it_was_written(value: Any) -> None:
    """Whatever the text (orjson's, or json's for a lone surrogate or a huge integer),
    reading it gives the value back, and the text is compact UTF-8 on one line."""
    text = dumps(value)
    assert b"\n" not in text
    text.decode("utf-8")  # strict: raises if not UTF-8
    assert loads(text.decode("utf-8")) == value == json.loads(REFERENCE.encode(value))
    assert loads(text) == value


json_texts = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(min_value=2**63 - 5)
    | st.integers(max_value=-(2**63) + 5) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12).map(lambda value: json.dumps(value, ensure_ascii=False))


@settings(max_examples=300, deadline=None)
@given(text=json_texts)
def test_any_text_reads_as_json_reads_it(text: str) -> None:
    """Bytes or string, the value read is the one ``json`` reads, of the same types:
    integers at the edges of 64 bits and beyond stay integers."""
    expected = json.loads(text)
    for frame in (text, text.encode("utf-8")):
        value = loads(frame)
        assert value == expected and repr(value) == repr(expected)


@pytest.mark.parametrize("frame", [b'"\\ud800"', '"\\udfff x"', b'{"a":"\\ud83d"}',
                                   '"lone \ud800 in the string itself"'])
def test_a_lone_surrogate_is_read_as_the_string_it_stands_for(frame: bytes | str) -> None:
    """orjson refuses these; they read as ``json`` reads them."""
    text = frame.decode() if isinstance(frame, bytes) else frame
    assert loads(frame) == json.loads(text)


@pytest.mark.parametrize("frame", [b"\xff{}", b'"\xed\xa0\x80"', b"\xef\xbb\xbf{}",
                                   b'"tab\there"', b"[1,]", b"01"])
def test_bytes_that_are_not_json_or_not_utf8_are_refused(frame: bytes) -> None:
    with pytest.raises(ValueError):
        loads(frame)
    invalid = jsonrpc.decode(frame)
    assert isinstance(invalid, jsonrpc.Invalid) and invalid.error.code == -32700


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf"),
                                   [1, {"a": float("nan")}], {"ok": None, "bad": math.inf}])
def test_non_finite_numbers_are_refused_not_written_as_null(value: Any) -> None:
    """JSON has no NaN or infinity; orjson would write null, changing the value: refused,
    as ``json`` refuses it."""
    with pytest.raises(ValueError):
        dumps(value)
    with pytest.raises(ValueError):
        jsonrpc.encode(jsonrpc.Response(1, {"value": value}))


def test_null_itself_is_written() -> None:
    assert dumps({"a": None, "b": [None]}) == b'{"a":null,"b":[null]}'


@pytest.mark.parametrize("value", ["lone \ud800 surrogate", "\udfff", "a\ud83d"])
def test_a_lone_surrogate_goes_out_as_an_escape_and_comes_back(value: str) -> None:
    """orjson refuses it (no UTF-8 form); json writes it as a \\u escape, which reads back."""
    text = dumps({"text": value, "other": "ü"})
    text.decode("utf-8")
    assert b"\\u" in text
    assert loads(text.decode("utf-8")) == {"text": value, "other": "ü"}


@pytest.mark.parametrize("value", [2**64, 2**64 - 1, -(2**63) - 1, 2**70, -(10**30)])
def test_integers_beyond_64_bits_are_written_and_read_in_full(value: int) -> None:
    """orjson refuses to write them and reads them as floats; they stay integers."""
    text = dumps({"id": value})
    assert text == f'{{"id":{value}}}'.encode()
    for frame in (text, text.decode()):
        read = loads(frame)["id"]
        assert read == value and type(read) is int


@pytest.mark.parametrize("text", ["NaN", "-Infinity", "1e999", "[1, 2", '{"a":1} x', ""])
def test_what_is_not_json_is_refused_on_reading(text: str) -> None:
    with pytest.raises(ValueError):
        loads(text)
    invalid = jsonrpc.decode(text)
    assert isinstance(invalid, jsonrpc.Invalid) and invalid.error.code == -32700


@pytest.mark.parametrize("value", [{1: "int key"}, {(1,): 2}, object(), b"bytes",
                                   {"when": __import__("datetime").date(2025, 1, 1)}])
def test_values_json_refuses_or_rewrites_come_out_as_json_gives_them(value: Any) -> None:
    """Where orjson would write an object in a form of its own, or refuses a key, the
    result is json's: the same text, or the same kind of error."""
    assert outcome(dumps, value) == outcome(lambda v: REFERENCE.encode(v).encode(), value)


def test_a_value_that_contains_itself_is_refused_not_looped_on() -> None:
    looped: list[Any] = []
    looped.append(looped)
    with pytest.raises(ValueError, match="refers to itself"):
        jsonrpc.encode(jsonrpc.Response(1, {"content": looped}))


def test_deep_nesting_orjson_refuses_is_written_by_json() -> None:
    value: Any = "bottom"
    for _ in range(300):
        value = [value]
    assert loads(dumps(value).decode()) == value
