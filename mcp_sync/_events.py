"""What an incoming message means: the events :meth:`Session.receive` returns.

Past tense, plain data; the engine acts on them (see ``_protocol``'s docstring).
"""

from __future__ import annotations

from typing import Any, TypeAlias

import attrs

from ._model import Model, use_fast_inits
from .jsonrpc import ErrorResponse, Notification, Request, RequestId, Response

__all__ = [
    "CancelRequested",
    "Event",
    "Ignored",
    "NotificationReceived",
    "ProgressReceived",
    "Reply",
    "RequestReceived",
    "ResponseReceived",
]


@attrs.frozen(repr=False, eq=False)
class Reply(Model):
    """The session answered the message itself; write ``message`` back."""

    message: Response | ErrorResponse


@attrs.frozen(repr=False, eq=False)
class RequestReceived(Model):
    """A request to hand to the application's handler."""

    request: Request
    progress_token: str | int | None


@attrs.frozen(repr=False, eq=False)
class NotificationReceived(Model):
    """A notification for the application, in arrival order."""

    notification: Notification


@attrs.frozen(repr=False, eq=False)
class ResponseReceived(Model):
    """The answer to a request we sent: ``result`` or ``error`` (an exception to raise)."""

    request_id: RequestId
    method: str
    result: dict[str, Any] | None = None
    error: Exception | None = None


@attrs.frozen(repr=False, eq=False)
class CancelRequested(Model):
    """The peer cancelled a request we are serving; its response will be suppressed."""

    request_id: RequestId
    reason: str | None


@attrs.frozen(repr=False, eq=False)
class ProgressReceived(Model):
    """Progress on a request we sent that asked for it."""

    request_id: RequestId
    progress: float
    total: float | None
    message: str | None


@attrs.frozen(repr=False, eq=False)
class Ignored(Model):
    """Nothing to do; ``reason`` is for the debug log."""

    reason: str


Event: TypeAlias = (
    "Reply | RequestReceived | NotificationReceived | ResponseReceived | CancelRequested"
    " | ProgressReceived | Ignored"
)

# Made for every message sent or received: the slot-setting __init__ the wire types have
# (a Request 1.0 to 0.45 µs, timeit).
use_fast_inits()
