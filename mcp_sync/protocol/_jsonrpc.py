"""JSON-RPC 2.0 envelopes and their framing: text in, messages out, and back.

:func:`decode` turns one frame (a line on stdio, a POST body over HTTP) into a
:class:`Request`, :class:`Notification`, :class:`Response`, :class:`ErrorResponse`, a
:class:`Batch` of those, or an :class:`Invalid` that says which error to answer with.
:func:`encode` turns messages back into compact UTF-8 JSON with no raw newline in it, so
one message is always one line (see ``_codec`` for the JSON reading and writing).

Nothing here knows MCP methods; MCP's stricter rules on ids (never null, never fractional)
are applied because they are rules of the envelope.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeAlias, TypeGuard

import attrs

from ..errors import InvalidParams, InvalidRequest, ParseError, RpcError
from ._codec import dumps, loads
from ._model import Model

__all__ = [
    "Batch",
    "ErrorResponse",
    "Incoming",
    "Invalid",
    "Message",
    "Notification",
    "Request",
    "RequestId",
    "Response",
    "decode",
    "encode",
    "is_request_id",
    "parse_message",
    "to_wire",
]

RequestId: TypeAlias = "str | int"


def is_request_id(value: object) -> TypeGuard[str | int]:
    """True for the ids MCP allows: strings and integers (``bool`` and ``null`` are not)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


@attrs.frozen(repr=False, eq=False)
class Request(Model):
    """A call that expects exactly one :class:`Response` or :class:`ErrorResponse`."""

    id: RequestId
    method: str
    params: dict[str, Any] | None = None


@attrs.frozen(repr=False, eq=False)
class Notification(Model):
    """A one-way message: it has no id and is never answered."""

    method: str
    params: dict[str, Any] | None = None


@attrs.frozen(repr=False, eq=False)
class Response(Model):
    """The successful answer to the request with the same id."""

    id: RequestId
    result: dict[str, Any]


@attrs.frozen(repr=False, eq=False)
class ErrorResponse(Model):
    """The failed answer to a request; ``id`` is None only when the request's id was unreadable."""

    id: RequestId | None
    error: RpcError

    @property
    def code(self) -> int:
        return int(self.error.code)


Message: TypeAlias = "Request | Notification | Response | ErrorResponse"


@attrs.frozen(repr=False, eq=False)
class Invalid(Model):
    """A frame, or one element of a batch, that is not a valid message.

    ``reply`` says whether an error response should go back: it does for anything that
    might have been a request, never for something that looked like a response or a
    notification (those are never answered).
    """

    id: RequestId | None
    error: RpcError
    reply: bool = True

    def error_response(self) -> ErrorResponse:
        return ErrorResponse(self.id, self.error)


@attrs.frozen(repr=False, eq=False)
class Batch(Model):
    """A JSON array of messages received in one frame."""

    items: tuple[Message | Invalid, ...]


Incoming: TypeAlias = "Message | Invalid | Batch"


def decode(frame: bytes | str) -> Incoming:
    """Parse one frame into messages.

    Never raises for bad input: invalid UTF-8, invalid JSON, ``NaN``/``Infinity`` and
    numbers too large for a float become an :class:`Invalid` carrying a parse error
    (-32700); structurally wrong messages an :class:`Invalid` carrying -32600 or -32602.
    """
    try:
        value = loads(frame)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        return Invalid(None, ParseError(f"Parse error: {_short(exc)}"))
    if isinstance(value, list):
        if not value:
            return Invalid(None, InvalidRequest("Invalid Request: empty batch"))
        items = tuple(parse_message(item) for item in value)
        if _mixes_calls_and_answers(items):
            return Invalid(None, InvalidRequest(
                "Invalid Request: a batch may not mix requests and responses"))
        return Batch(items)
    return parse_message(value)


def _mixes_calls_and_answers(items: Sequence[Message | Invalid]) -> bool:
    calls = any(isinstance(item, (Request, Notification)) for item in items)
    answers = any(isinstance(item, (Response, ErrorResponse)) for item in items)
    return calls and answers


def parse_message(value: Any) -> Message | Invalid:
    """Check one decoded JSON value against the JSON-RPC 2.0 envelope rules."""
    if not isinstance(value, dict):
        return Invalid(None, InvalidRequest("Invalid Request: a message must be a JSON object"))
    raw_id = value.get("id")
    has_id = "id" in value
    id_ok = is_request_id(raw_id)
    reply_id = raw_id if id_ok else None
    if value.get("jsonrpc") != "2.0":
        return Invalid(reply_id, InvalidRequest('Invalid Request: "jsonrpc" must be "2.0"'),
                       reply=_wants_reply(value))
    if "method" in value:
        return _parse_call(value, has_id, id_ok, reply_id)
    if "result" in value or "error" in value:
        return _parse_answer(value, has_id, id_ok)
    return Invalid(reply_id, InvalidRequest("Invalid Request: no method, result or error"),
                   reply=_wants_reply(value))


def _wants_reply(value: dict[str, Any]) -> bool:
    # With a method it was meant as a request or a notification; with an id but no method
    # it was meant as a response (one carrying neither result nor error). Answering an
    # answer could start an endless exchange of errors, so only requests and shapeless
    # objects get a reply.
    if "method" in value:
        return "id" in value
    return not ("id" in value or "result" in value or "error" in value)


def _parse_call(value: dict[str, Any], has_id: bool, id_ok: bool,
                reply_id: RequestId | None) -> Message | Invalid:
    method = value["method"]
    if not isinstance(method, str):
        return Invalid(reply_id, InvalidRequest('Invalid Request: "method" must be a string'),
                       reply=has_id)
    if "result" in value or "error" in value:
        return Invalid(reply_id, InvalidRequest(
            "Invalid Request: a request may not carry a result or an error"), reply=has_id)
    if has_id and not id_ok:
        # MCP forbids null ids; the JSON-RPC rule for an unreadable id is to answer with null.
        return Invalid(None, InvalidRequest(
            'Invalid Request: "id" must be a string or an integer'))
    params = value.get("params")
    if params is not None and not isinstance(params, dict):
        return Invalid(reply_id, InvalidParams(
            'Invalid params: "params" must be an object'), reply=has_id)
    if has_id:
        return Request(value["id"], method, params)
    return Notification(method, params)


def _parse_answer(value: dict[str, Any], has_id: bool, id_ok: bool) -> Message | Invalid:
    if "result" in value and "error" in value:
        return Invalid(value.get("id") if id_ok else None, InvalidRequest(
            "Invalid Request: a response carries both result and error"), reply=False)
    if "error" in value:
        error = value["error"]
        answer_id = value.get("id") if id_ok else None
        if not isinstance(error, dict):
            error = {"code": -32603, "message": f"malformed error from peer: {error!r:.200}"}
        return ErrorResponse(answer_id, RpcError.from_wire(error))
    if not id_ok:
        return Invalid(None, InvalidRequest(
            'Invalid Request: a response needs a string or integer "id"'), reply=False)
    result = value["result"]
    if not isinstance(result, dict):
        return Invalid(value["id"], InvalidRequest(
            'Invalid Request: "result" must be an object'), reply=False)
    return Response(value["id"], result)


def to_wire(message: Message | Sequence[Message]) -> Any:
    """The JSON value of a message, or of a batch given as a sequence of messages.

    Raises:
        ValueError: the batch is empty, or mixes requests and notifications with
            responses; neither is a shape JSON-RPC allows on the wire.
    """
    if isinstance(message, Request):
        wire: dict[str, Any] = {"jsonrpc": "2.0", "id": message.id, "method": message.method}
        if message.params is not None:
            wire["params"] = message.params
        return wire
    if isinstance(message, Notification):
        wire = {"jsonrpc": "2.0", "method": message.method}
        if message.params is not None:
            wire["params"] = message.params
        return wire
    if isinstance(message, Response):
        return {"jsonrpc": "2.0", "id": message.id, "result": message.result}
    if isinstance(message, ErrorResponse):
        return {"jsonrpc": "2.0", "id": message.id, "error": message.error.to_wire()}
    items = list(message)
    if not items:
        raise ValueError("a batch must hold at least one message")
    if _mixes_calls_and_answers(items):
        raise ValueError("a batch may not mix requests and responses")
    return [to_wire(item) for item in items]


def encode(message: Message | Sequence[Message]) -> bytes:
    """Compact UTF-8 JSON for one message or a batch; it never contains a raw newline.

    Raises:
        ValueError: the message holds something JSON cannot express (NaN, infinity, a
            value that contains itself), or is an empty or mixed batch.
        TypeError: the message holds a value that is not JSON data.
    """
    return dumps(to_wire(message))


def _short(exc: BaseException) -> str:
    text = str(exc)
    return text if len(text) <= 200 else text[:197] + "..."



# The message classes belong to the public module mcp_sync.jsonrpc, which re-exports
# them: their reprs and pickles name it, wherever the implementation lives.
for _public in (Request, Notification, Response, ErrorResponse, Invalid, Batch):
    _public.__module__ = "mcp_sync.jsonrpc"
del _public
