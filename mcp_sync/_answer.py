"""The answer to one request we sent: set once, by whichever thread ends the call first.

Every call a client makes waits on one of these. ``concurrent.futures.Future`` did the job,
but it is built for an executor's many states (pending, running, cancelled): each one
makes a ``Condition`` over an ``RLock``, and each wait on it a lock more and an entry in
the condition's deque. Created, completed and read, one cost about 2.9 µs against 0.7 µs
for this one, whose only state is "answered or not" and whose waiting is one plain lock,
held from creation and released at completion. A client's echo call took about 13% fewer
instructions (callgrind) with it.

Completion may race: the reader brings the answer while the watchdog times the call out,
or the connection closes. The first to complete wins; the others are told they lost and
change nothing. Any number of threads may wait; each one lets the next through.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Answer"]

log = logging.getLogger("mcp_sync.engine")

T = TypeVar("T")

# Guards every answer's completion and callback list: held for a few attribute stores,
# so one lock for all of them costs less than one each.
_completing = threading.Lock()


class Answer(Generic[T]):
    """A one-shot result or error, with blocking waits and completion callbacks.

    Its reading side (:meth:`done`, :meth:`result`, :meth:`exception`,
    :meth:`add_done_callback`) behaves as ``concurrent.futures.Future``'s. Completing it
    twice is not an error: :meth:`set_result` and :meth:`set_exception` return False and
    leave it as it was.
    """

    __slots__ = ("__weakref__", "_answered", "_callbacks", "_done", "_error", "_result")

    def __init__(self) -> None:
        self._answered = threading.Lock()
        self._answered.acquire()  # released once, when the answer is set
        self._done = False
        self._result: T | None = None
        self._error: BaseException | None = None
        self._callbacks: list[Callable[[Answer[T]], object]] | None = None

    def done(self) -> bool:
        return self._done

    def set_result(self, result: T) -> bool:
        """Complete with ``result``; False if the answer was already set."""
        return self._complete(result, None)

    def set_exception(self, error: BaseException) -> bool:
        """Complete with ``error``; False if the answer was already set."""
        return self._complete(None, error)

    def result(self, timeout: float | None = None) -> T:
        """The result, waiting up to ``timeout`` seconds (forever if None).

        Raises:
            the error the answer was completed with.
            TimeoutError: no answer in time.
        """
        self._wait(timeout)
        if self._error is not None:
            raise self._error
        return self._result  # type: ignore[return-value]  # None only with an error

    def exception(self, timeout: float | None = None) -> BaseException | None:
        """The error the answer was completed with (None for a result), waiting as
        :meth:`result` does."""
        self._wait(timeout)
        return self._error

    def add_done_callback(self, callback: Callable[[Answer[T]], object]) -> None:
        """Call ``callback(answer)`` once it is complete: at once, on this thread, if it
        is already; otherwise on the thread that completes it. What it raises is logged."""
        with _completing:
            if not self._done:
                if self._callbacks is None:
                    self._callbacks = []
                self._callbacks.append(callback)
                return
        self._call(callback)

    def _wait(self, timeout: float | None) -> None:
        if self._done:
            return
        if not self._answered.acquire(True, -1 if timeout is None else max(timeout, 0.0)):
            raise TimeoutError()
        self._answered.release()  # for any other thread waiting

    def _complete(self, result: T | None, error: BaseException | None) -> bool:
        with _completing:
            if self._done:
                return False
            self._result = result
            self._error = error
            self._done = True
            callbacks, self._callbacks = self._callbacks, None
        self._answered.release()
        if callbacks is not None:
            for callback in callbacks:
                self._call(callback)
        return True

    def _call(self, callback: Callable[[Answer[T]], object]) -> None:
        try:
            callback(self)
        except Exception:
            log.exception("error in a callback of a request's answer")

    def __repr__(self) -> str:
        if not self._done:
            return "<Answer pending>"
        if self._error is not None:
            return f"<Answer raised {self._error.__class__.__name__}>"
        return "<Answer done>"
