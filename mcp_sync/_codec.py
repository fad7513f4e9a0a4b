"""JSON text in and out: ``json`` reads, orjson writes.

Reading uses the standard library's decoder, strictly: ``NaN`` and ``Infinity`` are
refused, as is a number too large for a float. It keeps what orjson would not: integers
beyond 64 bits stay integers (orjson reads them as floats) and a lone surrogate escape
(``"\\ud800"``, which orjson refuses) reads as the string it stands for.

Writing is compact UTF-8 from orjson, many times faster than ``json`` on a large
result. Where the two differ, the message is written as ``json`` writes it, or refused
as ``json`` refuses it:

* a value orjson refuses (a lone surrogate, which has no UTF-8 form; an integer beyond
  64 bits; a dict with keys other than strings; a value nested deeper than orjson goes;
  a dataclass, ``datetime`` or other object) is written by ``json`` instead: a lone
  surrogate as a ``\\u`` escape, a large integer in full, an ``int`` key as a string;
  what ``json`` refuses too raises its error;
* orjson writes ``NaN`` and the infinities as ``null``; JSON has no such numbers and we
  refuse them (``ValueError``) rather than change a value on its way out, so a text
  holding ``null`` is checked by ``json`` before it goes.
"""

from __future__ import annotations

import json
import math
from typing import Any

import orjson

__all__ = ["dumps", "loads"]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    # A literal such as 1e400 is valid JSON but overflows to infinity, which could
    # never be written back out.
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:40]} is out of range")
    return value


_decoder = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)
# Without the table of containers seen: a value holding itself ends in a RecursionError.
_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False,
                            check_circular=False)
_ascii_encoder = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), allow_nan=False,
                                  check_circular=False)
# Objects orjson would write in a form of its own go to ``json``, which refuses them.
_OPTIONS = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME


def loads(text: str) -> Any:
    """The JSON value of ``text``.

    Raises:
        ValueError: ``text`` is not JSON (``json.JSONDecodeError``), or holds ``NaN``,
            an infinity or a number beyond a float's range.
        RecursionError: ``text`` is nested too deeply.
    """
    return _decoder.decode(text)


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON for ``value``, with no raw newline in it.

    Raises:
        ValueError: ``value`` holds ``NaN``, an infinity, or itself.
        TypeError: ``value`` holds something that is not JSON data.
    """
    try:
        text = orjson.dumps(value, option=_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return _json_dumps(value)
    if b"null" in text:
        _json_dumps(value)  # raises ValueError for a NaN or an infinity
    return text


def _json_dumps(value: Any) -> bytes:
    try:
        return _encoder.encode(value).encode("utf-8")
    except RecursionError:
        raise ValueError("the value refers to itself or is nested too deeply") from None
    except UnicodeEncodeError:
        # A lone surrogate (from a peer's "\ud800" escape, or a surrogate-escaped file
        # name) has no UTF-8 form; as a \u escape it is still JSON and reaches the peer
        # unchanged.
        return _ascii_encoder.encode(value).encode("ascii")
