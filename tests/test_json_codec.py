"""The library's JSON reading and writing give exactly what ``json`` gives.

``jsonrpc`` calls json's C scanner and a C encoder built once instead of going through
``JSONDecoder.decode`` and ``JSONEncoder.encode``; values, text and errors must not change.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_sync import jsonrpc
from mcp_sync._wire_text import dump, dump_ascii

REFERENCE_DECODER = json.JSONDecoder(parse_constant=jsonrpc._reject_constant,
                                     parse_float=jsonrpc._finite_float)


def outcome(function: Any, value: Any) -> str:
    try:
        return repr(function(value))
    except (ValueError, TypeError, RecursionError) as exc:
        return f"{type(exc).__name__}: {exc}"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12)
padding = st.sampled_from(["", " ", "\n", " \t\r\n", "\x0c"])


@pytest.mark.parametrize("text", [
    "", " ", "{", '{"a":1} x', '{"a":1}  \n x', "[1,2", '{"a":1}\n', " \n{} \n", "NaN",
    "-Infinity", "1e999", '{"a":"\\x"}', "\ufeff{}", "\x0c{}", '"\\ud800"', "[] []",
])
def test_awkward_text_reads_as_json_reads_it(text: str) -> None:
    assert outcome(jsonrpc._loads, text) == outcome(REFERENCE_DECODER.decode, text)


@settings(max_examples=300, deadline=None)
@given(value=json_values, before=padding, after=padding, junk=st.sampled_from(["", "x", "]"]))
def test_any_json_reads_as_json_reads_it(value: Any, before: str, after: str,
                                         junk: str) -> None:
    text = before + json.dumps(value) + after + junk
    assert outcome(jsonrpc._loads, text) == outcome(REFERENCE_DECODER.decode, text)


@settings(max_examples=300, deadline=None)
@given(value=json_values | st.text())
def test_any_value_is_written_as_json_writes_it(value: Any) -> None:
    for ensure_ascii, ours in ((False, dump), (True, dump_ascii)):
        reference = json.JSONEncoder(ensure_ascii=ensure_ascii, separators=(",", ":"),
                                     allow_nan=False, check_circular=False)
        assert outcome(ours, value) == outcome(reference.encode, value)


@pytest.mark.parametrize("value", [
    float("nan"), [float("inf")], {(1,): 2}, {1: "int key"}, object(), "\ud800", b"bytes",
])
def test_values_json_refuses_or_rewrites_come_out_the_same(value: Any) -> None:
    reference = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False,
                                 check_circular=False)
    assert outcome(dump, value) == outcome(reference.encode, value)


def test_a_value_that_contains_itself_is_refused_not_looped_on() -> None:
    looped: list[Any] = []
    looped.append(looped)
    with pytest.raises(ValueError, match="refers to itself"):
        jsonrpc.encode(jsonrpc.Response(1, {"content": looped}))
