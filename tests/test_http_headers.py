"""The rules of the headers a modern request mirrors from its body (SEP-2243), sans-IO:
the base64 sentinel, which arguments an input schema mirrors, and the comparison."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_sync.protocol._http_headers import (
    check_param_headers,
    decode_header_value,
    encode_header_value,
    header_parameters,
    param_header_values,
)

SCHEMA: dict[str, Any] = {"type": "object", "properties": {
    "region": {"type": "string", "x-mcp-header": "Region"},
    "count": {"type": "integer", "x-mcp-header": "Count"},
    "force": {"type": "boolean", "x-mcp-header": "Force"},
    "ratio": {"type": "number", "x-mcp-header": "Ratio"},
    "tags": {"type": "array", "items": {"type": "string", "x-mcp-header": "Tag"}},
    "note": {"type": "string"},
}}


@given(st.text())
def test_every_value_survives_encoding_sep_2243(value: str) -> None:
    """Whatever the text, what the client writes decodes to it, and what it writes is a
    valid header value (printable ASCII, no surrounding whitespace)."""
    encoded = encode_header_value(value)
    assert decode_header_value(encoded) == value
    assert encoded.isascii() and encoded == encoded.strip()
    assert all(" " <= char <= "~" for char in encoded)


@pytest.mark.parametrize(("value", "wrapped"), [
    ("us-west1", False), ("Hello world", False), ("Zürich", True), (" padded", True),
    ("line\nbreak", True), ("", True), ("=?base64?SGk=?=", True)])
def test_only_unsafe_values_are_wrapped_sep_2243(value: str, wrapped: bool) -> None:
    assert encode_header_value(value).startswith("=?base64?") is wrapped


@pytest.mark.parametrize(("raw", "value"), [
    ("=?base64?SGVsbG8=?=", "Hello"), ("  plain\t", "plain"), ("SGVsbG8=", "SGVsbG8="),
    ("=?base64?SGVsbG8=", "=?base64?SGVsbG8="), ("=?BASE64?SGVsbG8=?=", "=?BASE64?SGVsbG8=?="),
    ("=?base64?SGVsbG8?=", None), ("=?base64?SGVs!!!bG8=?=", None), ("=?base64?SGVsbG9=?=", None),
    ("=?base64?/w==?=", None)])
def test_decoding_refuses_broken_base64_and_keeps_literals_sep_2243(
        raw: str, value: str | None) -> None:
    """Missing padding, characters outside the alphabet, stray bits and bytes that are
    not UTF-8 are refused; anything not wrapped exactly so is literal."""
    assert decode_header_value(raw) == value


def test_only_top_level_string_integer_and_boolean_properties_are_mirrored() -> None:
    assert header_parameters(SCHEMA) == {"region": "Region", "count": "Count",
                                         "force": "Force"}
    assert header_parameters(None) == {}


def test_a_client_mirrors_present_arguments_only() -> None:
    headers = param_header_values(SCHEMA, {"region": "Zürich", "count": 3, "force": False,
                                           "note": "n", "ratio": 0.5})
    assert headers == {"Mcp-Param-Region": encode_header_value("Zürich"),
                       "Mcp-Param-Count": "3", "Mcp-Param-Force": "false"}
    assert param_header_values(SCHEMA, {"region": None}) == {}


@pytest.mark.parametrize(("arguments", "headers", "problem"), [
    ({"region": "a"}, {"mcp-param-region": "a"}, None),
    ({"count": 7}, {"mcp-param-count": "7.00"}, None),
    ({"count": 7.0}, {"mcp-param-count": "7"}, None),
    ({}, {}, None),
    ({"region": None}, {}, None),
    ({"region": "a"}, {}, "missing"),
    ({}, {"mcp-param-region": "a"}, "is not"),
    ({"region": "a"}, {"mcp-param-region": "b"}, "does not match"),
    ({"count": 7}, {"mcp-param-count": "7.5"}, "does not match"),
    ({"force": True}, {"mcp-param-force": "True"}, "does not match"),
    ({"region": "a"}, {"mcp-param-region": "=?base64?YQ?="}, "base64"),
    ({"region": ["a"]}, {"mcp-param-region": "a"}, "does not match"),
])
def test_checking_headers_against_arguments_sep_2243(
        arguments: dict[str, Any], headers: dict[str, str], problem: str | None) -> None:
    found = check_param_headers(SCHEMA, arguments, headers)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found
