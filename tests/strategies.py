"""Hypothesis strategies for the bad-input suite: junk bytes, arbitrary JSON, and
messages that are valid but for one field.

Everything here produces plain JSON values (or raw bytes) exactly as a peer would put
them on the wire; nothing goes through mcp_sync's own encoder.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

__all__ = [
    "BAD_IDS",
    "almost_valid_messages",
    "frame_bytes",
    "json_values",
    "junk_ids",
    "line_bytes",
    "strict_json",
]

#: Ids MCP forbids in a request: null (JSONRPC-3), fractional numbers, booleans and
#: structured values (JSONRPC-2).
BAD_IDS: list[Any] = [None, True, False, 1.5, -0.5, 1e3, {}, {"a": 1}, [], [1]]

_scalars = (st.none() | st.booleans()
            | st.integers(min_value=-(2**70), max_value=2**70)
            | st.floats(allow_nan=False, allow_infinity=False)
            | st.text(max_size=20))


def json_values(max_leaves: int = 12) -> st.SearchStrategy[Any]:
    """Any JSON value: scalars, and lists and objects of them, nested."""
    return st.recursive(
        _scalars,
        lambda children: st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=8), children, max_size=4),
        max_leaves=max_leaves)


def junk_ids() -> st.SearchStrategy[Any]:
    """Values that are not valid request ids (JSONRPC-2/3)."""
    return st.sampled_from(BAD_IDS) | st.floats(
        allow_nan=False, allow_infinity=False).filter(lambda f: not float(f).is_integer())


def frame_bytes(max_size: int = 64) -> st.SearchStrategy[bytes]:
    """Arbitrary non-empty bytes (an empty frame means the end on the memory transport)."""
    return st.binary(min_size=1, max_size=max_size)


def line_bytes(max_size: int = 64) -> st.SearchStrategy[bytes]:
    """Arbitrary bytes without a newline: one stdio line of junk."""
    return st.binary(min_size=1, max_size=max_size).map(lambda b: b.replace(b"\n", b" "))


# --- almost valid messages -----------------------------------------------------------------

#: Well-formed requests a server built by ``bad_input_support.make_server`` serves.
_VALID_REQUESTS: list[dict[str, Any]] = [
    {"method": "ping"},
    {"method": "tools/list", "params": {}},
    {"method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}},
    {"method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}},
    {"method": "resources/read", "params": {"uri": "config://app"}},
    {"method": "resources/read", "params": {"uri": "users://7/profile"}},
    {"method": "prompts/get", "params": {"name": "review", "arguments": {"code": "x"}}},
    {"method": "completion/complete", "params": {
        "ref": {"type": "ref/prompt", "name": "review"},
        "argument": {"name": "code", "value": "pr"}}},
    {"method": "logging/setLevel", "params": {"level": "error"}},
    {"method": "prompts/list", "params": {"cursor": None}},
]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    return found


def _set(value: dict[str, Any], path: tuple[Any, ...], new: Any, delete: bool) -> None:
    for key in path[:-1]:
        value = value[key]
    if delete:
        del value[path[-1]]
    else:
        value[path[-1]] = new


@st.composite
def almost_valid_messages(draw: st.DrawFn, request_id: int | str) -> dict[str, Any]:
    """A valid request carrying ``request_id`` with exactly one field changed or removed.

    The field may be anywhere: the envelope (``jsonrpc``, ``id``, ``method``, ``params``)
    or deep inside the params. The replacement is any JSON value, so the result is
    sometimes still valid; the test's oracle decides what the answer must be.
    """
    base = draw(st.sampled_from(_VALID_REQUESTS))
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id,
                               **json.loads(json.dumps(base))}
    path = draw(st.sampled_from(_paths(message)))
    delete = draw(st.booleans())
    if path == ("id",) and not delete:
        new: Any = draw(junk_ids() | json_values(4))
    else:
        new = draw(json_values(4))
    _set(message, path, new, delete)
    return message


def strict_json(data: bytes) -> tuple[bool, Any]:
    """(True, value) if ``data`` is UTF-8 JSON as RFC 8259 has it, else (False, None).

    An oracle independent of mcp_sync's decoder: no NaN/Infinity, no number that
    overflows a float.
    """
    def refuse(name: str) -> Any:
        raise ValueError(name)

    def finite(text: str) -> float:
        value = float(text)
        if value in (float("inf"), float("-inf")):
            raise ValueError(text)
        return value

    try:
        return True, json.loads(data.decode("utf-8"), parse_constant=refuse,
                                parse_float=finite)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False, None
