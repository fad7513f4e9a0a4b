"""The Future that ``Client.*_async`` returns: cancelling it cancels the call.

A plain ``concurrent.futures.Future`` only forgets a call when cancelled: the server
never hears of it and the tool runs to its end. :class:`CallFuture` also cancels the
call itself (the server is sent ``notifications/cancelled``, or never sees a request
that was not yet sent), and reports a cancelled call as
:class:`~mcp_sync.errors.RequestCancelled`; what it raises is also the
``concurrent.futures.CancelledError`` that code written for plain futures catches.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import CancelledError, Future
from typing import TypeVar

from ..errors import RequestCancelled

__all__ = ["CallFuture", "FutureCancelled"]

T = TypeVar("T")


class CallFuture(Future[T]):
    """A call's Future; :meth:`cancel` works from any thread and does not wait for the
    server."""

    def __init__(self, cancel_call: Callable[[], object]) -> None:
        super().__init__()
        self._cancel_call = cancel_call

    def cancel(self) -> bool:
        """Cancel the call unless its answer is already being delivered.

        Returns:
            True if the call was cancelled: whoever waits on the Future gets
            :class:`~mcp_sync.errors.RequestCancelled`, and the server is told.
        """
        if not super().cancel():
            return False
        self._cancel_call()
        return True

    def result(self, timeout: float | None = None) -> T:
        """As ``Future.result``, raising RequestCancelled for a cancelled call."""
        try:
            return super().result(timeout)
        except CancelledError as exc:
            if isinstance(exc, RequestCancelled):
                raise
            raise FutureCancelled("the call was cancelled") from None

    def exception(self, timeout: float | None = None) -> BaseException | None:
        """As ``Future.exception``, raising RequestCancelled for a cancelled call."""
        try:
            return super().exception(timeout)
        except CancelledError:
            raise FutureCancelled("the call was cancelled") from None


class FutureCancelled(RequestCancelled, CancelledError):
    """What a cancelled :class:`CallFuture` raises: RequestCancelled, and also the
    CancelledError any cancelled Future raises."""
