"""The only place mcp_sync starts threads.

Every thread is a named daemon owned by a :class:`ThreadGroup`, and the owner joins the
group when it closes. Daemon threads matter because a request handler is user code that
may block forever; it must never keep the interpreter from exiting.
"""

from __future__ import annotations

import collections
import enum
import itertools
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["Held", "LazyEvent", "ThreadGroup", "WorkerPool"]

log = logging.getLogger("mcp_sync.threads")
_serial = itertools.count(1)


class ThreadGroup:
    """Starts named daemon threads and joins them all on :meth:`join`."""

    def __init__(self, owner: str) -> None:
        self.owner = f"{owner}-{next(_serial)}"
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def name(self, role: str) -> str:
        """The name of this group's thread in ``role``."""
        return f"mcp_sync:{self.owner}:{role}"

    def start(self, role: str, target: Callable[..., Any], *args: Any) -> threading.Thread:
        thread = threading.Thread(target=target, args=args, name=self.name(role), daemon=True)
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
        try:
            thread.start()
        except BaseException:
            # Out of threads: a thread that never started must not be joined later.
            with self._lock:
                self._threads.remove(thread)
            raise
        return thread

    def join(self, timeout: float) -> list[threading.Thread]:
        """Join every thread but the caller's own within ``timeout`` seconds in all.

        Returns the threads still alive afterwards (blocked in user code, most likely).
        """
        import time

        deadline = time.monotonic() + timeout
        current = threading.current_thread()
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            if thread is not current:
                thread.join(max(0.0, deadline - time.monotonic()))
        alive = [t for t in threads if t.is_alive() and t is not current]
        for thread in alive:
            log.warning("thread %s did not stop within %.1fs", thread.name, timeout)
        return alive


#: How long a request may be served on the thread that read it before another worker
#: takes the reading on. Longer saves more wake-ups under a steady stream of calls;
#: shorter bounds how late a message that arrives meanwhile (a cancellation, another
#: caller's request) is read.
HOLD_FOR = 0.002

_STOP = object()
# A task that is not one: "stand by for a hold of the relay" (see WorkerPool.serve_holding).
_GUARD = object()


class _Idle:
    """A worker between tasks, parked until a task is put in its hands.

    ``wake`` is released once for each task put in ``task`` while it was empty; a task put
    over one not yet taken replaces it without a second release. A worker ``guarding``
    waits with a timeout, to take the relay from a hold that lasts too long.
    """

    __slots__ = ("guarding", "holds_seen", "task", "wake")

    def __init__(self) -> None:
        self.task: Any = None
        self.wake = threading.Lock()
        self.wake.acquire()
        self.guarding = False
        self.holds_seen = -1

    def give(self, task: Any) -> threading.Lock | None:
        """Put ``task`` in this worker's hands (pool lock held); the lock to release after."""
        pending = self.task is not None
        self.task = task
        return None if pending else self.wake


class Held(enum.Enum):
    """What came of :meth:`WorkerPool.serve_holding`."""

    KEPT = "kept"  # served; the relay is still the caller's, to run on
    PASSED = "passed"  # served; meanwhile another worker took the relay
    REFUSED = "refused"  # nothing run; the caller keeps the relay and submits instead


class _Hold:
    """A request served by the thread running the relay, while a successor stands by."""

    __slots__ = ("due", "ident", "successor", "taken")

    def __init__(self, due: float, successor: _Idle) -> None:
        self.due = due
        self.successor = successor
        self.ident = threading.get_ident()
        self.taken = False


class WorkerPool:
    """A bounded pool of daemon worker threads, started as work arrives.

    With ``max_workers=1`` tasks run one at a time in submission order, which is how
    notifications reach user callbacks in the order they arrived. ``max_queued`` bounds
    the tasks waiting for a worker (a peer that sends faster than it is served must not
    grow the queue without end).

    A task goes to the worker that became idle last. After a burst of concurrent work has
    left many workers idle, one caller at a time then keeps meeting the same thread, with
    its stack and its connection (an HTTP client sends on the sending thread's
    connection, which a threaded server serves on one thread) still warm. Handed round the
    idle workers in turn, 20 sequential calls after a burst went out from 11 threads.

    The pool may carry a *relay* (:meth:`start_relay`): a task that needs no place, a
    reader blocked until there is work. Whoever runs it may serve what it read itself
    with :meth:`serve_holding` while an idle worker stands by to take the relay on,
    which it does when the serving lasts ``hold_for`` seconds or calls
    :meth:`pass_held`. A short request is then served with no thread woken at all.
    """

    def __init__(self, group: ThreadGroup, role: str, max_workers: int,
                 max_queued: int | None = None, hold_for: float | None = None) -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self._max_queued = max_queued
        self._group = group
        self._role = role
        self._max_threads = max_workers  # one more once the pool carries a relay
        # Everything below is guarded by one C lock; threading.Semaphore and queue.Queue
        # are Python code, and cost a short call more than its handler.
        self._lock = threading.Lock()
        # Tasks no worker has taken yet, oldest first: (fn, args, needs a place).
        self._queue: collections.deque[tuple[Callable[..., Any], tuple[Any, ...], bool]] = (
            collections.deque())
        self._idle: list[_Idle] = []  # the worker idle longest first
        self._workers = 0
        # A place for each task under way, on a worker or on its caller's thread (see
        # run_here); a worker that has a task but no place waits for one.
        self._places = self._free_places = max_workers
        self._submitted = 0  # tasks submitted and not yet ended
        self._waiting_for_place = 0
        self._place_freed = threading.Condition(self._lock)
        self._closed = False
        self._relay: tuple[Callable[[], None], tuple[()], bool] | None = None
        self._relay_name = ""
        self._own = threading.local()  # a worker's own name, while it runs the relay
        self._hold_for = HOLD_FOR if hold_for is None else hold_for
        self._hold: _Hold | None = None
        self._holds = 0  # how many holds began: a standby still needed stays on guard

    def submit(self, fn: Callable[..., Any], *args: Any) -> bool:
        """Queue ``fn(*args)``; False (and nothing queued) once the pool is closed, or
        while ``max_queued`` tasks already wait for a worker."""
        wake = None
        with self._lock:
            if self._closed:
                return False
            if self._idle and not self._queue:
                wake = self._idle.pop().give((fn, args, True))
            else:
                if self._max_queued is not None and len(self._queue) >= self._max_queued:
                    return False
                self._queue.append((fn, args, True))
                if self._workers < self._max_threads:
                    self._start_worker()
            self._submitted += 1
        if wake is not None:
            wake.release()
        return True

    def queued(self) -> int:
        """How many tasks wait for a worker."""
        with self._lock:
            return len(self._queue)

    def _start_worker(self, first: Any = None, idle: _Idle | None = None) -> None:
        self._workers += 1
        try:
            self._group.start(f"{self._role}-{self._workers}", self._work, first, idle)
        except BaseException:
            self._workers -= 1
            raise

    def start_relay(self, fn: Callable[[], None], role: str = "reader") -> None:
        """Start ``fn``, the pool's relay, on a worker of its own.

        The pool keeps one thread beyond ``max_workers`` for it. The worker running the
        relay goes by ``role`` meanwhile (a thread dump then shows which one is reading),
        and by its own name again once another worker has taken the relay on.
        """
        with self._lock:
            self._max_threads += 1
            self._relay_name = self._group.name(role)
            self._relay = (fn, (), False)
            self._start_worker(self._relay)

    def serve_holding(self, fn: Callable[..., Any], *args: Any) -> Held:
        """From the thread running the relay: run ``fn(*args)`` here, in one of the
        ``max_workers`` places, while an idle worker stands by.

        The standby takes the relay on (runs it anew) if ``fn`` is still running after
        ``hold_for`` seconds, or at once when ``fn`` calls :meth:`pass_held`; and at once
        if other tasks are under way, since then the reading keeps them coming. Returns
        KEPT when ``fn`` ended first: the caller carries on with the relay, and no thread
        was woken. Returns PASSED when the relay was taken on: the caller must return
        from it. REFUSED, with nothing run, when the pool is closed, tasks wait, every
        place is taken or no worker can stand by.
        """
        wake = None
        with self._lock:
            if (self._closed or self._relay is None or self._waiting_for_place
                    or self._queue or not self._free_places):
                return Held.REFUSED
            # With other requests under way (or handed to workers not yet running them)
            # the peer is likely sending more: reading on at once keeps them coming.
            busy = self._submitted or self._free_places < self._places
            first = self._relay if busy else _GUARD
            if self._idle:
                successor = self._idle.pop()
                if busy or not successor.guarding:
                    wake = successor.give(first)
            elif self._workers < self._max_threads:
                successor = _Idle()
                self._start_worker(first, successor)
            else:
                return Held.REFUSED
            self._free_places -= 1
            hold = _Hold(time.monotonic() + self._hold_for, successor)
            if busy:
                hold.taken = True
            else:
                self._holds += 1
                self._hold = hold
        if wake is not None:
            wake.release()
        # Serving, a worker goes by its own name, as it would on any worker.
        own_name = getattr(self._own, "name", None)
        if own_name is not None:
            threading.current_thread().name = own_name
        try:
            fn(*args)
        except BaseException:  # the relay may have gone on; this task must end quietly
            log.exception("unhandled error in %s task", self._role)
        finally:
            wake = None
            with self._lock:
                self._give_back_place()
                if self._hold is hold:
                    self._hold = None
                if not hold.taken and not self._closed:
                    if self._queue:  # queued while every worker was busy: one is free now
                        wake = successor.give(self._queue.popleft())
                    else:
                        self._idle.append(successor)
            if wake is not None:
                wake.release()
        if hold.taken:
            return Held.PASSED
        if own_name is not None:
            threading.current_thread().name = self._relay_name
        return Held.KEPT

    def pass_held(self) -> None:
        """From a thread serving in :meth:`serve_holding`: let the standby take the relay
        on now, because this thread is about to wait for what only a reader brings (the
        answer to a request it sends). Does nothing on any other thread."""
        hold = self._hold
        if hold is None or hold.ident != threading.get_ident():
            return
        with self._lock:
            if self._hold is not hold or hold.taken or self._relay is None:
                return
            hold.taken = True
            self._hold = None
            wake = hold.successor.give(self._relay)
        if wake is not None:
            wake.release()

    def _next_task(self, idle: _Idle) -> Any:
        """The next task for this worker, waiting idle for one; _STOP when it is to end."""
        with self._lock:
            if self._queue:
                return self._queue.popleft()
            if self._closed:
                return _STOP
            self._idle.append(idle)
        return self._await_task(idle)

    def _await_task(self, idle: _Idle) -> Any:
        """Wait for a task put in ``idle``'s hands. While guarding a hold, wake when it is
        due and take the relay on; stay on guard while holds keep coming, then park."""
        # None: look at the pool before waiting at all (a standby just started); -1: wait
        # with no timeout.
        timeout: float | None = None if idle.guarding else -1.0
        while True:
            if timeout is not None and idle.wake.acquire(timeout=timeout):
                task, idle.task = idle.task, None
                if task is not _GUARD:
                    idle.guarding = False
                    return task
                idle.guarding = True
            with self._lock:
                if idle.task is not None:  # given a task as the wait ended: it is coming
                    timeout = -1.0
                    continue
                hold = self._hold
                if hold is not None and hold.successor is idle and not hold.taken:
                    now = time.monotonic()
                    if now >= hold.due and self._relay is not None and not self._closed:
                        idle.guarding = False
                        hold.taken = True
                        self._hold = None
                        return self._relay
                    timeout = max(hold.due - now, 1e-4)
                elif idle.guarding and idle.holds_seen != self._holds and not self._closed:
                    idle.holds_seen = self._holds
                    timeout = self._hold_for
                else:
                    idle.guarding = False
                    timeout = -1.0

    def _work(self, task: Any, idle: _Idle | None = None) -> None:
        if idle is None:
            idle = _Idle()
        me = threading.current_thread()
        self._own.name = own_name = me.name
        while True:
            if task is None:
                task = self._next_task(idle)
            elif task is _GUARD:
                idle.guarding = True
                task = self._await_task(idle)
            if task is _STOP:
                return
            fn, args, placed = task
            if not placed:  # the relay
                me.name = self._relay_name
                try:
                    fn()
                except BaseException:
                    log.exception("unhandled error in %s relay", self._role)
                finally:
                    me.name = own_name
                task = fn = args = None
                continue
            with self._lock:
                while not self._free_places:
                    self._waiting_for_place += 1
                    try:
                        self._place_freed.wait()
                    finally:
                        self._waiting_for_place -= 1
                self._free_places -= 1
            try:
                fn(*args)
            except BaseException:  # a task must never take its worker down with it
                log.exception("unhandled error in %s task", self._role)
            finally:
                with self._lock:
                    self._submitted -= 1
                    self._give_back_place()
            # Not held while idle: a task's arguments may be large (an HTTP request body).
            task = fn = args = None

    def _give_back_place(self) -> None:
        self._free_places += 1
        if self._waiting_for_place:
            self._place_freed.notify()

    def run_here(self, fn: Callable[..., Any], *args: Any) -> bool:
        """Run ``fn(*args)`` on the calling thread, taking one of the ``max_workers`` places.

        For a caller that would only wait for the task: it saves two thread hand-offs.
        False, with nothing run, when the pool is closed, tasks are waiting (they go
        first) or every place is taken; the caller then submits instead.
        """
        with self._lock:
            if (self._closed or self._waiting_for_place or self._queue
                    or not self._free_places):
                return False
            self._free_places -= 1
        try:
            fn(*args)
        finally:
            with self._lock:
                self._give_back_place()
        return True

    def close(self) -> None:
        """Let queued tasks finish, then stop every worker; it does not wait for them."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            idle, self._idle = self._idle, []
            hold = self._hold
            if hold is not None and not hold.taken:
                idle.append(hold.successor)
            wakes = [worker.give(_STOP) for worker in idle]
        for wake in wakes:
            if wake is not None:
                wake.release()


class LazyEvent:
    """``threading.Event``'s ``set``, ``is_set`` and ``wait``, with the Event made on demand.

    Every request served gets a cancellation flag, but few are ever waited on; a real
    Event (a Condition and its lock) for each would cost more than the rest of a short
    call's bookkeeping.
    """

    __slots__ = ("_event", "_is_set")
    _creation = threading.Lock()  # one for all: held only to make or read ``_event``

    def __init__(self) -> None:
        self._is_set = False
        self._event: threading.Event | None = None

    def set(self) -> None:
        with LazyEvent._creation:
            self._is_set = True
            event = self._event
        if event is not None:
            event.set()

    def is_set(self) -> bool:
        return self._is_set

    def wait(self, timeout: float | None = None) -> bool:
        with LazyEvent._creation:
            if self._is_set:
                return True
            if self._event is None:
                self._event = threading.Event()
            event = self._event
        return event.wait(timeout)
