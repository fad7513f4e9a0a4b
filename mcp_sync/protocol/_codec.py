"""JSON text in and out, through orjson, with ``json`` where the two would differ.

Reading is strict: ``NaN`` and ``Infinity`` are refused, as is a number too large for a
float. orjson reads a frame unless it could read it differently from ``json``, which then
reads it instead:

* an integer beyond 64 bits, which orjson reads as a float: a frame with a run of 19 or
  more digits anywhere (in a string too) goes to ``json``, which keeps it an integer;
* a lone surrogate escape (``"\\ud800"``), invalid UTF-8, or anything else orjson refuses:
  ``json`` reads it as the string it stands for, or refuses it with its own message.

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


# Every digit becomes "0" and everything else a space: a run of 19 zeros then marks a
# number orjson might read as a float (beyond the 64-bit range at 19 or 20 digits).
_DIGITS_AS_ZEROS = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_LONG_DIGIT_RUN = b"0" * 19


def loads(text: bytes | str) -> Any:
    """The JSON value of ``text`` (UTF-8 bytes, or a string).

    Raises:
        ValueError: ``text`` is not JSON (``json.JSONDecodeError``), is not UTF-8
            (``UnicodeDecodeError``), or holds ``NaN``, an infinity or a number beyond a
            float's range.
        RecursionError: ``text`` is nested too deeply.
    """
    try:
        data = text.encode("utf-8") if isinstance(text, str) else text
    except UnicodeEncodeError:  # a lone surrogate in the string: json's to read
        data = None
    if data is not None and (
            len(data) < len(_LONG_DIGIT_RUN)
            or _LONG_DIGIT_RUN not in data.translate(_DIGITS_AS_ZEROS)):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass  # json reads it, or refuses it with its own message
    if isinstance(text, bytes):
        text = text.decode("utf-8")
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
