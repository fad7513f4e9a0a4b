"""The only place mcp_sync starts threads: :class:`ThreadGroup` and :class:`WorkerPool`.

Every thread is a named daemon owned by a :class:`ThreadGroup`, and the owner joins the
group, for a bounded time, when it closes. Daemon threads matter because a request
handler is user code that may block forever; it must never keep ``close()`` from
returning, nor the interpreter from exiting.

That promise is why the pool is not ``concurrent.futures.ThreadPoolExecutor``. Its
threads are not daemons (since Python 3.9) and an exit hook joins every one of them
without a timeout, so a handler stuck forever would hang the interpreter's exit; and its
``shutdown(wait=True)`` has no timeout either. :class:`WorkerPool` is the same idea
(a ``queue.SimpleQueue`` of tasks, threads started as work arrives, a
``threading.BoundedSemaphore`` for the bound) on daemon threads of a ThreadGroup.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["ThreadGroup", "WorkerPool"]

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


_STOP = None  # what a worker takes from the queue to end


class WorkerPool:
    """A bounded pool of daemon worker threads, started as work arrives.

    With ``max_workers=1`` tasks run one at a time in submission order, which is how
    notifications reach user callbacks in the order they arrived. ``max_queued`` bounds
    the tasks waiting for a worker: with it, a semaphore admits at most
    ``max_workers + max_queued`` tasks queued or running, and :meth:`submit` refuses the
    rest (a peer that sends faster than it is served must not grow the queue without end).

    :meth:`run_here` serves a task on its caller's thread, in one of the ``max_workers``
    places, for a caller that would only wait for a worker to do it.

    With ``idle_timeout`` a worker that waited that many seconds without a task ends, and
    a later task starts a new one: a server holding many idle connections holds no
    worker threads for them. Without it (for tasks that keep per-thread state, such as
    an HTTP connection pool) workers live until :meth:`close`.
    """

    def __init__(self, group: ThreadGroup, role: str, max_workers: int,
                 max_queued: int | None = None, idle_timeout: float | None = None) -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        if idle_timeout is not None and idle_timeout <= 0:
            raise ValueError("idle_timeout must be positive")
        self._idle_timeout = idle_timeout
        self._group = group
        self._role = role
        self._max_workers = max_workers
        # Tasks queued or running that count against the bound (None: no bound).
        self._admission_limit = max_workers + max_queued if max_queued is not None else None
        self._admitted = 0
        self._tasks: queue.SimpleQueue[tuple[Callable[..., Any], tuple[Any, ...]] | None] = (
            queue.SimpleQueue())
        # Guards the counts below; workers waiting for a place wait on ``_place_freed``.
        self._lock = threading.Lock()
        self._place_freed = threading.Condition(self._lock)
        self._workers = 0
        self._idle = 0  # workers waiting for a task
        self._waiting = 0  # tasks submitted that no worker has taken yet
        self._running = 0  # tasks under way, on workers or on callers' threads (run_here)
        self._closed = False

    def submit(self, fn: Callable[..., Any], *args: Any) -> bool:
        """Queue ``fn(*args)``; False (and nothing queued) once the pool is closed, or
        while the bound is reached."""
        with self._lock:
            if self._closed:
                return False
            limit = self._admission_limit
            if limit is not None:
                if self._admitted >= limit:
                    return False
                self._admitted += 1
            self._waiting += 1
            start = self._idle < self._waiting and self._workers < self._max_workers
            if start:
                self._workers += 1
                role = f"{self._role}-{self._workers}"
        self._tasks.put((fn, args))
        if start:
            try:
                self._group.start(role, self._work)
            except BaseException:
                with self._lock:
                    self._workers -= 1
                raise
        return True

    def run_here(self, fn: Callable[..., Any], *args: Any) -> bool:
        """Run ``fn(*args)`` on the calling thread, taking one of the ``max_workers`` places.

        For a caller that would only wait for the task: it saves two thread hand-offs.
        False, with nothing run, when the pool is closed, tasks are waiting (they go
        first) or every place is taken; the caller then submits instead.
        """
        with self._lock:
            if self._closed or self._waiting or self._running >= self._max_workers:
                return False
            self._running += 1
        try:
            fn(*args)
        finally:
            self._end_task()
        return True

    def close(self) -> None:
        """Let queued tasks finish, then stop every worker; it does not wait for them.

        Queued tasks still run: each one is an answer or a callback that some caller is
        owed (a request the engine then refuses quickly, a call completed behind its
        progress callbacks).
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            workers = self._workers
        for _ in range(workers):
            self._tasks.put(_STOP)

    def _end_task(self, admitted: bool = False) -> None:
        with self._lock:
            self._running -= 1
            if admitted and self._admission_limit is not None:
                self._admitted -= 1
            self._place_freed.notify()

    def _work(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
            try:
                task = self._tasks.get(timeout=self._idle_timeout)
            except queue.Empty:
                with self._lock:
                    self._idle -= 1
                    # submit() counts idle workers under the lock before it queues; a
                    # task it left to the idle ones must find one of them still here.
                    if self._waiting <= self._idle:
                        self._workers -= 1
                        return
                continue
            with self._lock:
                self._idle -= 1
                if task is _STOP:
                    return
                self._waiting -= 1
                # A place taken by run_here is waited for; the bound is max_workers.
                while self._running >= self._max_workers:
                    self._place_freed.wait()
                self._running += 1
            fn, args = task
            try:
                fn(*args)
            except BaseException:  # a task must never take its worker down with it
                log.exception("unhandled error in %s task", self._role)
            finally:
                self._end_task(admitted=True)
            # Not held while idle: a task's arguments may be large (an HTTP request body).
            del task, fn, args
