"""Tests for mcp_sync.jsonrpc: framing of JSON-RPC envelopes in both directions.

Each table row names the digest items it checks. ``decode`` is given every frame both as
bytes and as text, since stdio hands it lines of bytes and other callers hand it strings.
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_sync.errors import (
    ErrorCode,
    InternalError,
    InvalidParams,
    MethodNotFound,
    ParseError,
    RpcError,
)
from mcp_sync.jsonrpc import (
    Batch,
    ErrorResponse,
    Invalid,
    Message,
    Notification,
    Request,
    Response,
    decode,
    encode,
    is_request_id,
    parse_message,
    to_wire,
)
from tests.conftest import WireLog, schema_errors, validator

PARSE = ErrorCode.PARSE_ERROR
INVALID = ErrorCode.INVALID_REQUEST
PARAMS = ErrorCode.INVALID_PARAMS


def frames(text: str) -> list[Any]:
    return [text, text.encode("utf-8")]


def wire(value: Any) -> str:
    return json.dumps(value)


def error_tuple(message: ErrorResponse) -> tuple[Any, type[RpcError], int, str, Any]:
    error = message.error
    return message.id, type(error), int(error.code), error.message, error.data


# --- decode: well-formed envelopes --------------------------------------------------------

VALID: list[Any] = [
    pytest.param({"jsonrpc": "2.0", "id": "a-1", "method": "ping"},
                 Request("a-1", "ping"), id="JSONRPC-2 request with a string id"),
    pytest.param({"jsonrpc": "2.0", "id": 0, "method": "ping", "params": {}},
                 Request(0, "ping", {}), id="JSONRPC-2/14 request with id 0 and empty params"),
    pytest.param({"jsonrpc": "2.0", "id": -7, "method": "m"},
                 Request(-7, "m"), id="JSONRPC-2 negative integer id"),
    pytest.param({"jsonrpc": "2.0", "id": 2**63, "method": "m"},
                 Request(2**63, "m"), id="JSONRPC-2 integer id beyond 64-bit signed"),
    pytest.param({"jsonrpc": "2.0", "id": "", "method": "m"},
                 Request("", "m"), id="JSONRPC-2 empty string id"),
    pytest.param({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                  "params": {"name": "x", "_meta": {"progressToken": 3}}},
                 Request(3, "tools/call", {"name": "x", "_meta": {"progressToken": 3}}),
                 id="JSONRPC-11 params with _meta kept verbatim"),
    pytest.param({"jsonrpc": "2.0", "id": 4, "method": "ping", "future": {"x": 1}},
                 Request(4, "ping"), id="GEN unknown envelope members tolerated"),
    pytest.param({"jsonrpc": "2.0", "id": 5, "method": "ping", "params": None},
                 Request(5, "ping"), id="JSONRPC-14 params null read as absent"),
    pytest.param({"jsonrpc": "2.0", "method": "notifications/initialized"},
                 Notification("notifications/initialized"), id="JSONRPC-9 notification"),
    pytest.param({"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": 1}},
                 Notification("notifications/cancelled", {"requestId": 1}),
                 id="JSONRPC-9 notification with params"),
    pytest.param({"jsonrpc": "2.0", "id": 1, "result": {}},
                 Response(1, {}), id="JSONRPC-8 response with empty result"),
    pytest.param({"jsonrpc": "2.0", "id": "1", "result": {"tools": []}},
                 Response("1", {"tools": []}), id="JSONRPC-6 response keeps a string id"),
]


@pytest.mark.parametrize(("value", "expected"), VALID)
def test_decode_valid_envelopes(value: Any, expected: Message) -> None:
    """JSONRPC-1/2/6/8/9/11/14: well-formed envelopes become the matching message."""
    for frame in frames(wire(value)):
        assert decode(frame) == expected
    assert parse_message(value) == expected


ERRORS: list[Any] = [
    pytest.param({"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": "nope"}},
                 (7, MethodNotFound, -32601, "nope", None), id="JSONRPC-8 error response"),
    pytest.param({"jsonrpc": "2.0", "id": "7",
                  "error": {"code": -32602, "message": "bad", "data": [1, 2]}},
                 ("7", InvalidParams, -32602, "bad", [1, 2]),
                 id="JSONRPC-6/8 error with string id and data"),
    pytest.param({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "p"}},
                 (None, ParseError, -32700, "p", None), id="AMBIG-3 error with null id"),
    pytest.param({"jsonrpc": "2.0", "error": {"code": -32600, "message": "r"}},
                 (None, type(RpcError.from_wire({"code": -32600, "message": ""})), -32600,
                  "r", None), id="AMBIG-3 error without id"),
    pytest.param({"jsonrpc": "2.0", "id": 1.5, "error": {"code": -32600, "message": "r"}},
                 (None, type(RpcError.from_wire({"code": -32600, "message": ""})), -32600,
                  "r", None), id="AMBIG-3 error with unusable id treated as id-less"),
    pytest.param({"jsonrpc": "2.0", "id": 2, "error": {"code": -32001, "message": "x"}},
                 (2, RpcError, -32001, "x", None), id="ERR unknown code kept as an int"),
    pytest.param({"jsonrpc": "2.0", "id": 2, "error": {"code": -1, "message": "declined"}},
                 (2, RpcError, -1, "declined", None), id="AMBIG-19 sampling rejection code"),
    pytest.param({"jsonrpc": "2.0", "id": 3, "error": "boom"},
                 (3, InternalError, -32603, "malformed error from peer: 'boom'", None),
                 id="JSONRPC-8 malformed error member still fails the request"),
    pytest.param({"jsonrpc": "2.0", "id": 3, "error": {"code": "x", "message": 5}},
                 (3, InternalError, -32603, "(no message)", None),
                 id="JSONRPC-8 error member with wrong types"),
    pytest.param({"jsonrpc": "2.0", "id": 3, "error": {"code": True, "message": "b"}},
                 (3, InternalError, -32603, "b", None),
                 id="JSONRPC-8 boolean error code is not an integer"),
]


@pytest.mark.parametrize(("value", "expected"), ERRORS)
def test_decode_error_responses(value: Any, expected: tuple[Any, ...]) -> None:
    """JSONRPC-8, AMBIG-3/19: error responses become ErrorResponse with the right class."""
    for frame in frames(wire(value)):
        message = decode(frame)
        assert isinstance(message, ErrorResponse)
        assert error_tuple(message) == expected


# --- decode: invalid envelopes ---------------------------------------------------------------

NOT_ANSWERED = False
ANSWERED = True

INVALIDS: list[Any] = [
    # ids (JSONRPC-2/3)
    pytest.param({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, INVALID, None, ANSWERED,
                 id="JSONRPC-2 fractional id"),
    pytest.param({"jsonrpc": "2.0", "id": 1.0, "method": "ping"}, INVALID, None, ANSWERED,
                 id="JSONRPC-2 float id even when whole"),
    pytest.param({"jsonrpc": "2.0", "id": True, "method": "ping"}, INVALID, None, ANSWERED,
                 id="JSONRPC-2 boolean id"),
    pytest.param({"jsonrpc": "2.0", "id": None, "method": "ping"}, INVALID, None, ANSWERED,
                 id="JSONRPC-3 AMBIG-3 null id"),
    pytest.param({"jsonrpc": "2.0", "id": {}, "method": "ping"}, INVALID, None, ANSWERED,
                 id="JSONRPC-2 object id"),
    pytest.param({"jsonrpc": "2.0", "id": [1], "method": "ping"}, INVALID, None, ANSWERED,
                 id="JSONRPC-2 array id"),
    # the jsonrpc member (JSONRPC-1)
    pytest.param({"jsonrpc": "1.0", "id": 1, "method": "ping"}, INVALID, 1, ANSWERED,
                 id="JSONRPC-1 wrong version answered with its id"),
    pytest.param({"id": "x", "method": "ping"}, INVALID, "x", ANSWERED,
                 id="JSONRPC-1 missing jsonrpc answered with its id"),
    pytest.param({"jsonrpc": 2.0, "id": 1, "method": "ping"}, INVALID, 1, ANSWERED,
                 id="JSONRPC-1 jsonrpc as a number"),
    pytest.param({"jsonrpc": "1.0", "id": 1.5, "method": "ping"}, INVALID, None, ANSWERED,
                 id="JSONRPC-1 wrong version and bad id answered with null"),
    pytest.param({"jsonrpc": "1.0", "method": "notifications/x"}, INVALID, None,
                 NOT_ANSWERED, id="JSONRPC-1/10 wrong version notification not answered"),
    pytest.param({"jsonrpc": "1.0", "id": 1, "result": {}}, INVALID, 1, NOT_ANSWERED,
                 id="JSONRPC-1 wrong version response not answered"),
    pytest.param({"id": 1, "error": {"code": 1, "message": "m"}}, INVALID, 1, NOT_ANSWERED,
                 id="JSONRPC-1 error without jsonrpc not answered"),
    pytest.param({}, INVALID, None, ANSWERED, id="JSONRPC-1 empty object"),
    pytest.param({"foo": "boo"}, INVALID, None, ANSWERED, id="JSONRPC-1 shapeless object"),
    # method, params (JSONRPC-10/14)
    pytest.param({"jsonrpc": "2.0", "id": 1, "method": 5}, INVALID, 1, ANSWERED,
                 id="JSONRPC-1 method not a string"),
    pytest.param({"jsonrpc": "2.0", "method": None}, INVALID, None, NOT_ANSWERED,
                 id="JSONRPC-10 notification with a bad method not answered"),
    pytest.param({"jsonrpc": "2.0", "id": 1, "method": "ping", "result": {}}, INVALID, 1,
                 ANSWERED, id="JSONRPC-7 request carrying a result"),
    pytest.param({"jsonrpc": "2.0", "method": "x", "error": {}}, INVALID, None,
                 NOT_ANSWERED, id="JSONRPC-10 notification carrying an error"),
    pytest.param({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": [1, 2]},
                 PARAMS, 9, ANSWERED, id="JSONRPC-14 positional params answered -32602"),
    pytest.param({"jsonrpc": "2.0", "id": "s", "method": "m", "params": "x"},
                 PARAMS, "s", ANSWERED, id="JSONRPC-14 string params answered -32602"),
    pytest.param({"jsonrpc": "2.0", "id": 9, "method": "m", "params": 3}, PARAMS, 9, ANSWERED,
                 id="JSONRPC-14 number params answered -32602"),
    pytest.param({"jsonrpc": "2.0", "method": "notifications/x", "params": [1]}, PARAMS, None,
                 NOT_ANSWERED, id="JSONRPC-10/14 notification with positional params"),
    pytest.param({"jsonrpc": "2.0", "method": "notifications/x", "params": False}, PARAMS,
                 None, NOT_ANSWERED, id="JSONRPC-10/14 notification with boolean params"),
    # responses (JSONRPC-7/8)
    pytest.param({"jsonrpc": "2.0", "id": 1, "result": {},
                  "error": {"code": 1, "message": "m"}}, INVALID, 1, NOT_ANSWERED,
                 id="JSONRPC-7 both result and error never answered"),
    pytest.param({"jsonrpc": "2.0", "id": 1}, INVALID, 1, NOT_ANSWERED,
                 id="JSONRPC-7 neither result nor error never answered"),
    pytest.param({"jsonrpc": "2.0", "id": None}, INVALID, None, NOT_ANSWERED,
                 id="JSONRPC-7 null id and nothing else never answered"),
    pytest.param({"jsonrpc": "2.0"}, INVALID, None, ANSWERED,
                 id="JSONRPC-1 nothing but jsonrpc"),
    pytest.param({"jsonrpc": "2.0", "id": 1, "result": []}, INVALID, 1, NOT_ANSWERED,
                 id="JSONRPC-8 result not an object"),
    pytest.param({"jsonrpc": "2.0", "id": 1, "result": None}, INVALID, 1, NOT_ANSWERED,
                 id="JSONRPC-8 null result"),
    pytest.param({"jsonrpc": "2.0", "id": None, "result": {}}, INVALID, None, NOT_ANSWERED,
                 id="JSONRPC-3 response with null id"),
    pytest.param({"jsonrpc": "2.0", "result": {}}, INVALID, None, NOT_ANSWERED,
                 id="JSONRPC-6 response without id"),
    pytest.param({"jsonrpc": "2.0", "id": 2.5, "result": {}}, INVALID, None, NOT_ANSWERED,
                 id="JSONRPC-2 response with fractional id"),
    # not objects at all
    pytest.param(1, INVALID, None, ANSWERED, id="JSONRPC-1 a number"),
    pytest.param("ping", INVALID, None, ANSWERED, id="JSONRPC-1 a string"),
    pytest.param(None, INVALID, None, ANSWERED, id="JSONRPC-1 null"),
    pytest.param(True, INVALID, None, ANSWERED, id="JSONRPC-1 a boolean"),
    pytest.param([], INVALID, None, ANSWERED, id="BATCH-5 empty batch is one error"),
]


@pytest.mark.parametrize(("value", "code", "reply_id", "reply"), INVALIDS)
def test_decode_invalid_envelopes(value: Any, code: int, reply_id: Any, reply: bool) -> None:
    """JSONRPC-1/2/3/7/10/14, BATCH-5: invalid envelopes, their codes and who is answered."""
    for frame in frames(wire(value)):
        invalid = decode(frame)
        assert isinstance(invalid, Invalid)
        assert (int(invalid.error.code), invalid.id, invalid.reply) == (code, reply_id, reply)
        answer = invalid.error_response()
        assert answer.id == reply_id and answer.error is invalid.error
        assert type(reply_id) is type(answer.id)  # JSONRPC-6: "1" never becomes 1


PARSE_ERRORS: list[Any] = [
    pytest.param(b"{bad json", id="STDIO-8 broken JSON"),
    pytest.param(b"", id="STDIO-8 empty frame"),
    pytest.param(b"   ", id="STDIO-8 only whitespace"),
    pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"ping"', id="STDIO-8 truncated"),
    pytest.param(b'{"jsonrpc":"2.0","method":"x"} {}', id="STDIO-8 two values in one frame"),
    pytest.param(b"{'jsonrpc':'2.0'}", id="STDIO-8 single quotes"),
    pytest.param(b"\xff\xfe{}", id="GEN-2 invalid UTF-8"),
    pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"\xc3\x28"}',
                 id="GEN-2 invalid UTF-8 inside a string"),
    pytest.param(b'{"jsonrpc":"2.0","id":"\xed\xa0\x80","method":"m"}',
                 id="GEN-2 UTF-8-encoded surrogate is not UTF-8"),
    pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":NaN}}',
                 id="JSONRPC-8 NaN rejected"),
    pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":Infinity}}',
                 id="JSONRPC-8 Infinity rejected"),
    pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":-Infinity}}',
                 id="JSONRPC-8 -Infinity rejected"),
    pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":1e400}}',
                 id="JSONRPC-8 number overflowing to infinity rejected"),
    pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":-1e400}}',
                 id="JSONRPC-8 number overflowing to -infinity rejected"),
    pytest.param(b"[" * 100_000 + b"]" * 100_000, id="STDIO-8 absurd nesting"),
    pytest.param(b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"m"}',
                 id="STDIO-8 integer too long to read"),
]


@pytest.mark.parametrize("frame", PARSE_ERRORS)
def test_decode_parse_errors(frame: bytes) -> None:
    """STDIO-8, GEN-2, AMBIG-3: unreadable frames are -32700 with a null id, answered."""
    candidates: list[bytes | str] = [frame]
    with contextlib.suppress(UnicodeDecodeError):
        candidates.append(frame.decode("utf-8"))
    for candidate in candidates:
        invalid = decode(candidate)
        assert isinstance(invalid, Invalid)
        assert isinstance(invalid.error, ParseError)
        assert (int(invalid.error.code), invalid.id, invalid.reply) == (PARSE, None, True)
        assert len(invalid.error.message) < 300


def test_decode_accepts_surrounding_whitespace_and_crlf() -> None:
    """STDIO-8: a line still carrying its \\r\\n is read normally."""
    assert decode(b'  {"jsonrpc":"2.0","method":"x"}\r\n') == Notification("x")


def test_decode_keeps_json_types_of_values() -> None:
    """JSONRPC-6/8: integers stay integers, floats floats, strings strings."""
    message = decode(b'{"jsonrpc":"2.0","id":"1","method":"m",'
                     b'"params":{"i":1,"f":1.0,"s":"1","big":12345678901234567890}}')
    assert isinstance(message, Request)
    assert message.id == "1"
    assert message.params == {"i": 1, "f": 1.0, "s": "1", "big": 12345678901234567890}
    assert message.params is not None
    assert [type(message.params[k]) for k in ("i", "f", "s", "big")] == [int, float, str, int]


# --- decode: batches ------------------------------------------------------------------------

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
NOTE = {"jsonrpc": "2.0", "method": "notifications/progress",
        "params": {"progressToken": 1, "progress": 1}}
RESULT = {"jsonrpc": "2.0", "id": 1, "result": {}}
FAILURE = {"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "m"}}


def test_batch_of_requests_and_notifications() -> None:
    """BATCH-1/3: an array of calls is a Batch, in order."""
    batch = decode(wire([PING, NOTE, {**PING, "id": "2"}]))
    assert batch == Batch((Request(1, "ping"), Notification(NOTE["method"], NOTE["params"]),
                           Request("2", "ping")))


def test_batch_of_responses() -> None:
    """BATCH-3/6: an array of answers is a Batch; order is kept as received."""
    batch = decode(wire([FAILURE, RESULT]))
    assert isinstance(batch, Batch)
    first, second = batch.items
    assert isinstance(first, ErrorResponse) and first.id == 2
    assert second == Response(1, {})


def test_empty_batch_is_one_invalid_request() -> None:
    """BATCH-5: [] is answered by one -32600 object, not by an array."""
    for frame in frames("[]"):
        invalid = decode(frame)
        assert isinstance(invalid, Invalid)
        assert (int(invalid.error.code), invalid.id, invalid.reply) == (INVALID, None, True)


@pytest.mark.parametrize("garbage", [
    pytest.param([1, 2, 3], id="numbers"),
    pytest.param([None], id="null"),
    pytest.param([[]], id="nested empty array"),
    pytest.param([[PING]], id="nested batch"),
    pytest.param(["ping", {}], id="string and empty object"),
])
def test_batch_of_garbage(garbage: list[Any]) -> None:
    """BATCH-5: each bad element becomes its own answered -32600 with a null id."""
    batch = decode(wire(garbage))
    assert isinstance(batch, Batch)
    assert len(batch.items) == len(garbage)
    for item in batch.items:
        assert isinstance(item, Invalid)
        assert (int(item.error.code), item.id, item.reply) == (INVALID, None, True)


def test_batch_keeps_good_elements_around_bad_ones() -> None:
    """BATCH-5: [r1, bad, r2] gives three items, the bad one an answered error."""
    batch = decode(wire([PING, {"jsonrpc": "2.0", "id": 5, "method": "m", "params": [1]},
                         {**PING, "id": 2}]))
    assert isinstance(batch, Batch)
    first, bad, last = batch.items
    assert first == Request(1, "ping") and last == Request(2, "ping")
    assert isinstance(bad, Invalid)
    assert (int(bad.error.code), bad.id, bad.reply) == (PARAMS, 5, True)


def test_batch_of_notifications_needs_no_answer() -> None:
    """BATCH-5: a batch of notifications (even malformed ones) asks for nothing back."""
    batch = decode(wire([NOTE, {"jsonrpc": "2.0", "method": "x", "params": [1]}]))
    assert isinstance(batch, Batch)
    assert not any(isinstance(item, Invalid) and item.reply for item in batch.items)


@pytest.mark.parametrize("mixed", [
    pytest.param([PING, RESULT], id="request and response"),
    pytest.param([NOTE, FAILURE], id="notification and error"),
    pytest.param([RESULT, 7, PING], id="with garbage between"),
])
def test_mixed_batch_is_invalid(mixed: list[Any]) -> None:
    """BATCH-3: requests and responses in one array is no defined shape: one -32600."""
    invalid = decode(wire(mixed))
    assert isinstance(invalid, Invalid)
    assert (int(invalid.error.code), invalid.id, invalid.reply) == (INVALID, None, True)


def test_initialize_inside_a_batch_is_still_decoded() -> None:
    """BATCH-4, AMBIG-5: framing accepts it; refusing it is the session's job."""
    batch = decode(wire([{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}]))
    assert batch == Batch((Request(1, "initialize", {}),))


# --- encode --------------------------------------------------------------------------------


def test_encode_is_compact() -> None:
    """STDIO-2, JSONRPC-1: one compact object, jsonrpc first."""
    assert encode(Request(1, "ping")) == b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    assert encode(Notification("n")) == b'{"jsonrpc":"2.0","method":"n"}'
    assert encode(Response("a", {})) == b'{"jsonrpc":"2.0","id":"a","result":{}}'


def test_encode_never_contains_a_raw_newline() -> None:
    """STDIO-2: newlines inside strings and keys are escaped; the frame is one line."""
    text = "line 1\nline 2\r\nline 3\r\u2028\u0085end"
    message = Request(1, "tools/call", {"name": text, "arguments": {text: [text]}})
    frame = encode(message)
    assert b"\n" not in frame and b"\r" not in frame
    assert decode(frame) == message
    batch = [Response(1, {"content": [{"type": "text", "text": text}]}),
             ErrorResponse(2, InternalError(text, {"why": text}))]
    frame = encode(batch)
    assert b"\n" not in frame and b"\r" not in frame


def test_encode_is_utf8_not_ascii_escapes() -> None:
    """GEN-2: non-ASCII goes out as UTF-8 and comes back unchanged."""
    text = "Zürich ✓ 東京 🚀"
    frame = encode(Request(1, "tools/call", {"name": "t", "arguments": {"city": text}}))
    assert text.encode("utf-8") in frame
    assert b"\\u" not in frame
    decoded = decode(frame)
    assert isinstance(decoded, Request) and decoded.params is not None
    assert decoded.params["arguments"]["city"] == text


def test_encode_lone_surrogate_still_valid_utf8() -> None:
    """GEN-2, JSONRPC-6: a peer's "\\ud800" id is echoed back exactly, in valid UTF-8."""
    request = decode(b'{"jsonrpc":"2.0","id":"a\\ud800","method":"m","params":{"k":"\xc3\xbc"}}')
    assert isinstance(request, Request)
    assert request.id == "a\ud800"
    frame = encode(Response(request.id, {"echo": request.params}))
    frame.decode("utf-8")  # strict: raises if the frame is not UTF-8
    assert b"\n" not in frame
    assert decode(frame) == Response("a\ud800", {"echo": {"k": "ü"}})


@pytest.mark.parametrize("request_id", ["1", 1, 0, "", "0", -1, 2**70, "id with spaces"])
def test_ids_keep_their_json_type(request_id: str | int) -> None:
    """JSONRPC-6: an id goes out with the value and JSON type it arrived with."""
    request = decode(wire({"jsonrpc": "2.0", "id": request_id, "method": "ping"}))
    assert isinstance(request, Request)
    for answer in (Response(request.id, {}), ErrorResponse(request.id, InternalError("x"))):
        sent = json.loads(encode(answer))
        assert sent["id"] == request_id and type(sent["id"]) is type(request_id)


def test_notifications_have_no_id_member() -> None:
    """JSONRPC-9: not even "id": null; params left out when there are none."""
    assert json.loads(encode(Notification("notifications/initialized"))) == {
        "jsonrpc": "2.0", "method": "notifications/initialized"}
    sent = json.loads(encode(Notification("notifications/cancelled", {"requestId": 3})))
    assert "id" not in sent
    assert "params" not in json.loads(encode(Request(1, "ping")))


def test_error_response_wire_form() -> None:
    """JSONRPC-8, AMBIG-3: integer code, string message, data only when set, null id."""
    assert json.loads(encode(ErrorResponse(1, MethodNotFound("Method not found: x")))) == {
        "jsonrpc": "2.0", "id": 1,
        "error": {"code": -32601, "message": "Method not found: x"}}
    assert json.loads(encode(ErrorResponse(None, ParseError("Parse error", {"at": 3})))) == {
        "jsonrpc": "2.0", "id": None,
        "error": {"code": -32700, "message": "Parse error", "data": {"at": 3}}}
    assert json.loads(encode(ErrorResponse(2, RpcError("odd", code=-32042))))["error"] == {
        "code": -32042, "message": "odd"}


SCHEMA_CASES: list[Any] = [
    pytest.param(Request(1, "ping"), "JSONRPCRequest", id="request"),
    pytest.param(Request("r", "tools/call", {"name": "t", "arguments": {"a": 1},
                                              "_meta": {"progressToken": "r"}}),
                 "JSONRPCRequest", id="request with params and progress token"),
    pytest.param(Notification("notifications/initialized"), "JSONRPCNotification",
                 id="notification"),
    pytest.param(Notification("notifications/progress",
                              {"progressToken": 1, "progress": 0.5, "total": 1}),
                 "JSONRPCNotification", id="notification with params"),
    pytest.param(Response(1, {}), "JSONRPCResponse", id="empty result"),
    pytest.param(Response("x", {"tools": [], "_meta": {"k": 1}}), "JSONRPCResponse",
                 id="result with _meta"),
    pytest.param(ErrorResponse(1, InvalidParams("bad", {"field": "name"})), "JSONRPCError",
                 id="error"),
    pytest.param(ErrorResponse("s", RpcError("user rejected", code=-1)), "JSONRPCError",
                 id="error with custom code"),
    pytest.param([Request(1, "ping"), Notification("notifications/initialized"),
                  Request(2, "tools/list", {})], "JSONRPCBatchRequest", id="batch request"),
    pytest.param([Response(2, {"tools": []}), ErrorResponse(1, MethodNotFound("m"))],
                 "JSONRPCBatchResponse", id="batch response"),
]


@pytest.mark.parametrize(("message", "definition"), SCHEMA_CASES)
def test_encode_matches_the_official_schema(message: Any, definition: str) -> None:
    """JSONRPC-1/7/8/9, BATCH-3: every kind of encoded message validates against its
    envelope definition and against JSONRPCMessage."""
    sent = json.loads(encode(message))
    assert [e.message for e in validator(definition).iter_errors(sent)] == []
    assert schema_errors(sent) == []


def test_encode_round_trips_through_decode() -> None:
    """JSONRPC-6/9: decode(encode(m)) gives m back for every message kind."""
    for message in (Request(1, "a", {"x": [1, 2.5, None, True, "s"]}), Notification("n"),
                    Notification("n", {}), Response("1", {"r": {}})):
        assert decode(encode(message)) == message
    answer = decode(encode(ErrorResponse(4, InvalidParams("p", [1]))))
    assert isinstance(answer, ErrorResponse)
    assert error_tuple(answer) == (4, InvalidParams, -32602, "p", [1])


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_encode_refuses_non_finite_numbers(value: float) -> None:
    """JSONRPC-8: NaN and infinities are not JSON; nothing invalid is ever produced."""
    with pytest.raises(ValueError):
        encode(Response(1, {"value": value}))


def _nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = {"down": [value]}
    return value


def test_encode_refuses_self_reference_and_runaway_nesting(wire: WireLog) -> None:
    """JSONRPC-8: a value that is no finite JSON text is a ValueError, never a hang."""
    looped: dict[str, Any] = {"name": "loop"}
    looped["self"] = [looped]
    # The schema check of the conftest cannot walk these either; neither is ever sent.
    with wire.allow_invalid():
        with pytest.raises(ValueError, match="refers to itself"):
            encode(Response(1, looped))
        with pytest.raises(ValueError, match="nested too deeply"):
            encode(Notification("notifications/message",
                                {"level": "info", "data": _nested(100_000)}))
    # Deep but ordinary nesting is still encoded.
    assert json.loads(encode(Response(2, _nested(100))))["result"]["down"][0]["down"]


def test_encode_refuses_empty_and_mixed_batches() -> None:
    """BATCH-3/5: never send [] nor an array mixing calls and answers."""
    with pytest.raises(ValueError, match="at least one"):
        encode([])
    with pytest.raises(ValueError, match="mix"):
        encode([Request(1, "ping"), Response(1, {})])


def test_is_request_id() -> None:
    """JSONRPC-2/3: strings and integers only."""
    assert all(is_request_id(v) for v in ("", "a", 0, -1, 2**80))
    assert not any(is_request_id(v) for v in (None, True, False, 1.0, 1.5, [], {}, b"1"))


# --- properties ------------------------------------------------------------------------------

JSON_SCALARS = (st.none() | st.booleans() | st.integers(-(2**64), 2**64)
                | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8))
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                 max_size=4),
    max_leaves=20,
)
ENVELOPE_KEYS = st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error"])
ENVELOPE_VALUES = (JSON_VALUES | st.just("2.0") | st.sampled_from(["ping", "initialize"])
                   | st.fixed_dictionaries({"code": st.integers(), "message": st.text()}))
ENVELOPES = st.dictionaries(ENVELOPE_KEYS, ENVELOPE_VALUES, max_size=6)
ANY_TEXT = st.text(st.characters() | st.characters(categories=["Cs"])
                   | st.sampled_from('\n\r\u2028"\\{}[]:,'))

DOCUMENTED = (Request, Notification, Response, ErrorResponse)


def _check_decoded(result: object) -> None:
    assert isinstance(result, (*DOCUMENTED, Invalid, Batch))
    if isinstance(result, Batch):
        assert result.items
        for item in result.items:
            assert isinstance(item, (*DOCUMENTED, Invalid))
        calls = any(isinstance(i, (Request, Notification)) for i in result.items)
        answers = any(isinstance(i, (Response, ErrorResponse)) for i in result.items)
        assert not (calls and answers)
    if isinstance(result, Invalid):
        assert int(result.error.code) in (PARSE, INVALID, PARAMS)
        assert result.id is None or is_request_id(result.id)
    if isinstance(result, (Request, Response)):
        assert is_request_id(result.id)


@given(st.binary(max_size=200))
def test_decode_never_raises_on_bytes(frame: bytes) -> None:
    """STDIO-8: arbitrary bytes never raise; the result is a documented type."""
    _check_decoded(decode(frame))


@given(ANY_TEXT)
def test_decode_never_raises_on_text(frame: str) -> None:
    """STDIO-8: arbitrary text (surrogates included) never raises."""
    _check_decoded(decode(frame))


@given(JSON_VALUES | ENVELOPES | st.lists(ENVELOPES | JSON_VALUES, max_size=4))
def test_decode_never_raises_on_json_values(value: Any) -> None:
    """JSONRPC-1..14, BATCH-3/5: any JSON value decodes to a documented type."""
    _check_decoded(decode(json.dumps(value)))
    if not isinstance(value, list):
        _check_decoded(parse_message(value))


# Text that can round-trip through JSON: lone surrogates included (they go out as
# \uXXXX escapes and come back), but never a high surrogate followed by a low one. JSON
# writes that pair as the same two escapes as the one astral character it stands for, so
# it comes back as that character: no encoder can tell them apart (a rare draw).
_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
WIRE_TEXT = ANY_TEXT.filter(lambda text: not _SURROGATE_PAIR.search(text))
IDS = st.integers(-(2**63), 2**63) | WIRE_TEXT
# Method names outside MCP's catalogue, so the fixture's per-method schema check stays out
# of the way; keys never start with "_" for the same reason (_meta has a schema).
METHODS = WIRE_TEXT.map(lambda text: "x/" + text)
PARAMS_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**64), 2**64)
    | st.floats(allow_nan=False, allow_infinity=False) | WIRE_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(WIRE_TEXT, inner, max_size=3),
    max_leaves=10,
)
OBJECTS = st.dictionaries(WIRE_TEXT.filter(lambda key: not key.startswith("_")),
                          PARAMS_VALUES, max_size=4)
MESSAGES = st.one_of(
    st.builds(Request, IDS, METHODS, st.none() | OBJECTS),
    st.builds(Notification, METHODS, st.none() | OBJECTS),
    st.builds(Response, IDS, OBJECTS),
)


@settings(max_examples=300)
@given(MESSAGES)
def test_encode_round_trip_property(message: Message) -> None:
    """STDIO-2, GEN-2, JSONRPC-6/9: any message encodes to one UTF-8 line that decodes
    back to the same message, ids keeping their type."""
    frame = encode(message)
    assert b"\n" not in frame and b"\r" not in frame
    frame.decode("utf-8")
    assert decode(frame) == message
    assert to_wire(message) == json.loads(frame)


@given(IDS, st.integers(-(2**31), 2**31), WIRE_TEXT, PARAMS_VALUES)
def test_error_response_round_trip_property(request_id: str | int, code: int, message: str,
                                            data: Any) -> None:
    """JSONRPC-6/8: error responses keep id, code, message and data through the wire."""
    frame = encode(ErrorResponse(request_id, RpcError(message, data, code=code)))
    assert b"\n" not in frame
    answer = decode(frame)
    assert isinstance(answer, ErrorResponse)
    assert (answer.id, int(answer.error.code), answer.error.message, answer.error.data) == (
        request_id, code, message, data)
