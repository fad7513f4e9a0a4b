"""Giving up on calls the engine sent: deadlines, the watchdog, and queued cancellations.

A call we sent ends without an answer when its deadline passes, when the peer's request
it was made for is cancelled or finishes, or when its caller cancels it. This module
does the part that is the same every time: the peer is sent ``notifications/cancelled``
for a request it may have seen, and the caller's answer fails.

* **Deadlines.** A timed call is pushed on a heap by :meth:`Watchdog.schedule`. The heap
  is never updated in place: progress only moves ``deadline`` on the call itself, up to
  its ``hard_deadline`` (:meth:`Watchdog.progressed`, LIFECYCLE-11), and the watchdog
  puts the call back on the heap when its old entry comes due. Entries of calls no longer
  pending are dropped when they come due, or all at once when they outnumber the pending
  calls.
* **The watchdog** (one thread, started with the first timed call) sleeps until the
  earliest deadline, takes every call whose deadline passed out of the pending table and
  fails it with :class:`~mcp_sync.errors.RequestTimeout`.
* **The cancel outbox.** Neither the watchdog nor the reader (cancelling nested calls)
  ever waits for the write lock, so they only queue their cancellations;
  :meth:`Canceller.flush` writes the queue if the lock is free, and whoever holds it
  flushes after releasing it.

Locks: the engine's ``_lock`` guards the session, the pending table and the heap, and the
watchdog's condition is built on it. Methods documented as "called with the lock held"
expect it; everything that fails a call or writes runs without it. The outbox takes only
the engine's write lock, and never waits for it.
"""

from __future__ import annotations

import collections
import contextlib
import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError
from typing import Any

from ..errors import McpError, RequestCancelled, RequestTimeout
from ..protocol._jsonrpc import Notification, Request, RequestId
from ..protocol._record import Record
from ..protocol._session import Session
from ._threads import ThreadGroup

__all__ = ["Call", "Canceller", "Watchdog", "complete", "describe", "fail", "first_deadlines"]

log = logging.getLogger("mcp_sync.engine")

Taken = list[tuple["Call", "Notification | None"]]


class Call(Record):
    """A request we sent, until it is answered or given up on."""

    __slots__ = ("deadline", "future", "hard_deadline", "on_progress", "related_to",
                 "request", "request_id", "sent", "timeout")

    def __init__(self, request_id: RequestId, future: Future[dict[str, Any]],
                 on_progress: Callable[[float, float | None, str | None], None] | None,
                 timeout: float | None, deadline: float | None,
                 hard_deadline: float | None, related_to: RequestId | None = None,
                 request: Request | None = None) -> None:
        self.request_id = request_id
        self.request = request  # what was asked, named in a timeout's message
        self.future = future
        self.on_progress = on_progress
        self.timeout = timeout
        self.deadline = deadline  # moved back by progress, never past hard_deadline
        self.hard_deadline = hard_deadline
        self.related_to = related_to  # the peer's request this one is part of
        self.sent = False  # set under the lock just before the request is written


_NAMED = {"tools/call": "tool", "prompts/get": "prompt"}


def describe(request: Request | None) -> str:
    """What a request asked for, as a timeout's message names it: the tool, prompt or
    resource for the calls that have one, the method otherwise."""
    if request is None:
        return "the request"
    params = request.params or {}
    kind = _NAMED.get(request.method)
    name = params.get("name") if kind is not None else None
    if isinstance(name, str):
        return f"{request.method} of {kind} {name!r}"
    uri = params.get("uri") if request.method == "resources/read" else None
    if isinstance(uri, str):
        return f"resources/read of {uri!r}"
    return request.method


def first_deadlines(now: float, timeout: float | None, progress_resets_timeout: bool,
                    max_timeout: float | None) -> tuple[float | None, float | None]:
    """The deadline of a call starting at ``now``, and the latest progress may push it to.

    Without ``max_timeout`` (or with ``progress_resets_timeout`` off) the two are equal,
    so progress does not extend the call (LIFECYCLE-11).
    """
    deadline = now + timeout if timeout is not None else None
    hard = deadline
    if deadline is not None and progress_resets_timeout and max_timeout is not None:
        hard = max(deadline, now + max_timeout)
    return deadline, hard


def fail(future: Future[Any], error: BaseException) -> None:
    """Fail ``future`` unless something completed it first.

    Completion may race: the reader brings the answer while the watchdog times the call
    out, or the connection closes. The first to complete wins; ``Future`` refuses the
    others (InvalidStateError), which change nothing.
    """
    with contextlib.suppress(InvalidStateError):
        future.set_exception(error)


def complete(future: Future[Any], result: dict[str, Any] | None,
             error: BaseException | None) -> None:
    """Complete ``future`` with the peer's answer, unless something completed it first."""
    if error is not None:
        fail(future, error)
        return
    with contextlib.suppress(InvalidStateError):
        future.set_result(result or {})


def complete_late(future: Future[Any], result: dict[str, Any] | None,
                  error: BaseException | None, closed: Callable[[], McpError | None]) -> None:
    """Complete a call behind its progress callbacks, which may have closed the connection
    meanwhile: then the call fails as every pending call did (``closed()`` gives the
    error), rather than returning as though nothing happened."""
    error_now = closed()
    complete(future, result, error if error_now is None else error_now)


class Canceller:
    """Gives up on calls and queues what the peer must be told, for the write lock's holder.

    Args:
        session: the engine's session, which decides whether a cancellation is due.
        pending: the engine's table of calls waiting for an answer.
        write_lock: the engine's lock that makes each message one write.
        write: writes one notification; called with ``write_lock`` held.
    """

    def __init__(self, session: Session, pending: dict[RequestId, Call],
                 write_lock: threading.Lock, write: Callable[[Notification], None]) -> None:
        self._session = session
        self._pending = pending
        self._write_lock = write_lock
        self._write = write
        self._queue: collections.deque[Notification] = collections.deque()

    def give_up(self, call: Call, reason: str | None) -> Notification | None:
        """The notification to send for ``call``, if any. Called with the lock held.

        A request still waiting to be written is simply not sent; only one the peer may
        have seen is cancelled (CANCEL-2).
        """
        if not call.sent:
            self._session.forget(call.request_id)
            return None
        return self._session.cancel(call.request_id, reason)

    def take_call(self, future: Future[dict[str, Any]], reason: str | None) -> Taken:
        """Remove the pending call whose Future is ``future`` (none if it has ended).

        Called with the lock held; pass the result to :meth:`cancel_taken` once released.
        """
        call = next((c for c in self._pending.values() if c.future is future), None)
        if call is None:
            return []
        del self._pending[call.request_id]
        return [(call, self.give_up(call, reason))]

    def take_nested(self, request_id: RequestId, reason: str) -> Taken:
        """Remove the calls made on behalf of the peer's request ``request_id``.

        Called with the lock held; pass the result to :meth:`cancel_taken` once released.
        """
        if not self._pending:  # the usual case for a server: it asked the peer nothing
            return []
        nested = [call for call in self._pending.values() if call.related_to == request_id]
        for call in nested:
            del self._pending[call.request_id]
        return [(call, self.give_up(call, reason)) for call in nested]

    def cancel_taken(self, taken: Taken, error: str) -> None:
        """Fail the calls from :meth:`take_nested` and tell the peer; never blocks."""
        for call, notification in taken:
            fail(call.future, RequestCancelled(error))
            if notification is not None:
                self._queue.append(notification)
        if taken:
            self.flush()

    def put(self, notification: Notification) -> None:
        """Queue ``notification``; it is sent by the next :meth:`flush`."""
        self._queue.append(notification)

    def flush(self) -> None:
        """Write what is queued if the write lock is free; never blocks.

        Whoever holds the write lock now calls this after releasing it, and sees anything
        queued before our failed acquire.
        """
        while self._queue:
            if not self._write_lock.acquire(blocking=False):
                return
            try:
                while self._queue:
                    notification = self._queue.popleft()
                    try:
                        self._write(notification)
                    except McpError as exc:
                        log.debug("could not write %r: %s", notification, str(exc))
            finally:
                self._write_lock.release()


class Watchdog:
    """The deadline heap and the thread that fails calls whose deadline passed.

    Args:
        lock: the engine's lock, guarding the heap and ``pending``.
        threads: where the watchdog thread is started (as ``watchdog``).
        pending: the engine's table of calls waiting for an answer.
        canceller: gives up on expired calls and sends what the peer must be told.
    """

    def __init__(self, lock: threading.Lock, threads: ThreadGroup,
                 pending: dict[RequestId, Call], canceller: Canceller) -> None:
        self._lock = lock
        self._threads = threads
        self._pending = pending
        self._canceller = canceller
        # Entries name a call by its id and are checked against ``pending`` when due. They
        # hold no Call: an answered call's entry may wait in the heap a long time, and a
        # Call keeps its Future, and so the whole answer, alive (64 answers of 10,000
        # items each were once kept, and scanned by every full garbage collection).
        self._heap: list[tuple[float, int, RequestId]] = []
        self._seq = itertools.count()
        # Made with the thread: most connections (a stateless HTTP request's) never
        # start one.
        self._cond: threading.Condition | None = None
        self._stopped = False

    def schedule(self, call: Call) -> None:
        """Watch ``call`` if it has a deadline. Called with the lock held."""
        deadline = call.deadline
        if deadline is None:
            return
        first = not self._heap or deadline < self._heap[0][0]
        heapq.heappush(self._heap, (deadline, next(self._seq), call.request_id))
        if len(self._heap) > 64 and len(self._heap) > 4 * len(self._pending):
            self._heap = [entry for entry in self._heap if entry[2] in self._pending]
            heapq.heapify(self._heap)
        if self._cond is None:
            self._cond = threading.Condition(self._lock)
            self._threads.start("watchdog", self._watch)
        elif first:
            self._cond.notify()

    @staticmethod
    def progressed(call: Call) -> None:
        """Push the deadline of ``call`` back after progress, up to its hard deadline.

        Called with the lock held. The heap entry stays; the watchdog finds the new
        deadline when the old one comes due.
        """
        if call.timeout is not None and call.deadline is not None:
            assert call.hard_deadline is not None
            call.deadline = min(time.monotonic() + call.timeout, call.hard_deadline)

    def stop(self) -> None:
        """Forget every deadline and let the thread return. Called with the lock held."""
        self._stopped = True
        self._heap.clear()
        if self._cond is not None:
            self._cond.notify_all()

    def _watch(self) -> None:
        cond = self._cond
        assert cond is not None
        while True:
            expired: Taken = []
            with self._lock:
                if self._stopped:
                    return
                now = time.monotonic()
                while self._heap and self._heap[0][0] <= now:
                    _, _, request_id = heapq.heappop(self._heap)
                    call = self._pending.get(request_id)
                    if call is None:
                        continue
                    # The call's own deadline decides: progress may have moved it back, and
                    # the entry may even be an older call's with the same id.
                    if call.deadline is None or call.deadline > now:
                        if call.deadline is not None:
                            heapq.heappush(self._heap,
                                           (call.deadline, next(self._seq), request_id))
                        continue
                    del self._pending[call.request_id]
                    expired.append((call, self._canceller.give_up(call, "timed out")))
                if not expired:
                    cond.wait(self._heap[0][0] - now if self._heap else None)
            for call, notification in expired:
                fail(call.future, RequestTimeout(
                    f"no answer to {describe(call.request)} within {call.timeout}s "
                    f"(request id {call.request_id!r})"))
                if notification is not None:
                    self._canceller.put(notification)
            self._canceller.flush()
