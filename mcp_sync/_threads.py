"""The only place mcp_sync starts threads.

Every thread is a named daemon owned by a :class:`ThreadGroup`, and the owner joins the
group when it closes. Daemon threads matter because a request handler is user code that
may block forever; it must never keep the interpreter from exiting.
"""

from __future__ import annotations

import collections
import itertools
import logging
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["LazyEvent", "ThreadGroup", "WorkerPool"]

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


_STOP = object()


class _Idle:
    """An idle worker, parked until a task is put in its hands."""

    __slots__ = ("task", "wake")

    def __init__(self) -> None:
        self.task: Any = None
        self.wake = threading.Lock()
        self.wake.acquire()


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
    """

    def __init__(self, group: ThreadGroup, role: str, max_workers: int,
                 max_queued: int | None = None) -> None:
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
        self._free_places = max_workers
        self._waiting_for_place = 0
        self._place_freed = threading.Condition(self._lock)
        self._closed = False
        self._relay_name = ""
        self._own = threading.local()  # a worker's own name, while it runs the relay

    def submit(self, fn: Callable[..., Any], *args: Any) -> bool:
        """Queue ``fn(*args)``; False (and nothing queued) once the pool is closed, or
        while ``max_queued`` tasks already wait for a worker."""
        with self._lock:
            if self._closed:
                return False
            if self._idle and not self._queue:
                idle = self._idle.pop()
                idle.task = (fn, args, True)
                idle.wake.release()
                return True
            if self._max_queued is not None and len(self._queue) >= self._max_queued:
                return False
            self._queue.append((fn, args, True))
            if self._workers < self._max_threads:
                self._start_worker()
        return True

    def queued(self) -> int:
        """How many tasks wait for a worker."""
        with self._lock:
            return len(self._queue)

    def _start_worker(self, first: Any = None) -> None:
        self._workers += 1
        try:
            self._group.start(f"{self._role}-{self._workers}", self._work, first)
        except BaseException:
            self._workers -= 1
            raise

    def start_relay(self, fn: Callable[[], None], role: str = "reader") -> None:
        """Start ``fn``, the pool's relay, on a worker of its own.

        The relay is a task that needs no place: a reader, blocked until there is work.
        Whoever runs it may hand it on to another worker with :meth:`pass_relay` and turn
        to that work itself. The pool keeps one thread beyond ``max_workers`` for it.
        The worker running the relay goes by ``role`` meanwhile (a thread dump then shows
        which one is reading), and by its own name again when it serves.
        """
        with self._lock:
            self._max_threads += 1
            self._relay_name = self._group.name(role)
            self._start_worker((fn, (), False))

    def pass_relay(self, relay: Callable[[], None], fn: Callable[..., Any], *args: Any) -> bool:
        """From the thread running the relay: hand ``relay`` to another worker, then run
        ``fn(*args)`` here, in one of the ``max_workers`` places.

        A request served this way runs on the thread that read it, with no hand-off in
        between; the next message is read by the worker that took the relay, woken while
        this one serves. False, with nothing done, when the pool is closed, tasks wait,
        every place is taken or no worker is free for the relay; the caller then keeps
        the relay and submits ``fn`` instead.
        """
        wake = None
        with self._lock:
            if (self._closed or self._waiting_for_place or self._queue
                    or not self._free_places):
                return False
            if self._idle:
                idle = self._idle.pop()
                idle.task = (relay, (), False)
                wake = idle.wake
            elif self._workers < self._max_threads:
                self._start_worker((relay, (), False))
            else:
                return False
            self._free_places -= 1
        if wake is not None:
            wake.release()
        own_name = getattr(self._own, "name", None)
        if own_name is not None:  # a worker of this pool, reading as the relay until now
            threading.current_thread().name = own_name
        try:
            fn(*args)
        except BaseException:  # the relay has gone on; this thread's task must end quietly
            log.exception("unhandled error in %s task", self._role)
        finally:
            with self._lock:
                self._give_back_place()
        return True

    def _next_task(self, idle: _Idle) -> Any:
        """The next task for this worker, waiting idle for one; _STOP when it is to end."""
        with self._lock:
            if self._queue:
                return self._queue.popleft()
            if self._closed:
                return _STOP
            self._idle.append(idle)
        idle.wake.acquire()
        task, idle.task = idle.task, None
        return task

    def _work(self, task: Any) -> None:
        idle = _Idle()
        me = threading.current_thread()
        self._own.name = own_name = me.name
        while True:
            if task is None:
                task = self._next_task(idle)
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
        for worker in idle:
            worker.task = _STOP
            worker.wake.release()


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
