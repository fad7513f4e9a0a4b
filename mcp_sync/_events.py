"""What an incoming message means: the events :meth:`Session.receive` returns.

Past tense, plain data; the engine acts on them (see ``_protocol``'s docstring).
"""

from __future__ import annotations

from typing import Any, TypeAlias

import attrs

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


@attrs.frozen
class Reply:
    """The session answered the message itself; write ``message`` back."""

    message: Response | ErrorResponse


@attrs.frozen
class RequestReceived:
    """A request to hand to the application's handler."""

    request: Request
    progress_token: str | int | None


@attrs.frozen
class NotificationReceived:
    """A notification for the application, in arrival order."""

    notification: Notification


@attrs.frozen
class ResponseReceived:
    """The answer to a request we sent: ``result`` or ``error`` (an exception to raise)."""

    request_id: RequestId
    method: str
    result: dict[str, Any] | None = None
    error: Exception | None = None


@attrs.frozen
class CancelRequested:
    """The peer cancelled a request we are serving; its response will be suppressed."""

    request_id: RequestId
    reason: str | None


@attrs.frozen
class ProgressReceived:
    """Progress on a request we sent that asked for it."""

    request_id: RequestId
    progress: float
    total: float | None
    message: str | None


@attrs.frozen
class Ignored:
    """Nothing to do; ``reason`` is for the debug log."""

    reason: str


Event: TypeAlias = (
    "Reply | RequestReceived | NotificationReceived | ResponseReceived | CancelRequested"
    " | ProgressReceived | Ignored"
)
