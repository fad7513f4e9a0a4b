"""What an incoming message means: the events :meth:`Session.receive` returns.

Past tense, plain data; the engine acts on them (see ``_protocol``'s docstring). One is
made for every message received, so they are plain records (see ``_record``), equal when
of one class with equal members.
"""

from __future__ import annotations

from typing import Any, TypeAlias

from ._jsonrpc import ErrorResponse, Notification, Request, RequestId, Response
from ._record import Record

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


class _Event(Record):
    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        members: tuple[str, ...] = self.__slots__
        return all(getattr(self, name) == getattr(other, name) for name in members)

    __hash__ = None  # type: ignore[assignment] # equal by value, and may hold dicts


class Reply(_Event):
    """The session answered the message itself; write ``message`` back."""

    __slots__ = ("message",)

    def __init__(self, message: Response | ErrorResponse) -> None:
        self.message = message


class RequestReceived(_Event):
    """A request to hand to the application's handler.

    ``scope`` is the :class:`~mcp_sync.protocol._modern.RequestScope` of a modern
    request, None for a request of the legacy session.
    """

    __slots__ = ("progress_token", "request", "scope")

    def __init__(self, request: Request, progress_token: str | int | None,
                 scope: Any = None) -> None:
        self.request = request
        self.progress_token = progress_token
        self.scope = scope


class NotificationReceived(_Event):
    """A notification for the application, in arrival order."""

    __slots__ = ("notification",)

    def __init__(self, notification: Notification) -> None:
        self.notification = notification


class ResponseReceived(_Event):
    """The answer to a request we sent: ``result`` or ``error`` (an exception to raise)."""

    __slots__ = ("error", "method", "request_id", "result")

    def __init__(self, request_id: RequestId, method: str,
                 result: dict[str, Any] | None = None, error: Exception | None = None) -> None:
        self.request_id = request_id
        self.method = method
        self.result = result
        self.error = error


class CancelRequested(_Event):
    """The peer cancelled a request we are serving; its response will be suppressed."""

    __slots__ = ("reason", "request_id")

    def __init__(self, request_id: RequestId, reason: str | None) -> None:
        self.request_id = request_id
        self.reason = reason


class ProgressReceived(_Event):
    """Progress on a request we sent that asked for it."""

    __slots__ = ("message", "progress", "request_id", "total")

    def __init__(self, request_id: RequestId, progress: float, total: float | None,
                 message: str | None) -> None:
        self.request_id = request_id
        self.progress = progress
        self.total = total
        self.message = message


class Ignored(_Event):
    """Nothing to do; ``reason`` is for the debug log."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


Event: TypeAlias = (
    "Reply | RequestReceived | NotificationReceived | ResponseReceived | CancelRequested"
    " | ProgressReceived | Ignored"
)
