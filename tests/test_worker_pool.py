"""The bounded worker pool, and tasks run on their callers' threads in its places."""

from __future__ import annotations

import queue
import threading
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

import mcp_sync._threads as threads_module
from mcp_sync._threads import ThreadGroup, WorkerPool

WAIT = 10.0
# How long a test looks for something that must not happen (an event not set).
QUIET = 0.3


@pytest.fixture
def group() -> Iterator[ThreadGroup]:
    threads = ThreadGroup("test-pool")
    yield threads
    assert threads.join(WAIT) == []


def _blocked_task(started: threading.Event, release: threading.Event) -> None:
    started.set()
    assert release.wait(WAIT)


def test_run_here_runs_on_the_callers_thread(group: ThreadGroup) -> None:
    pool = WorkerPool(group, "w", 2)
    ran_on: list[threading.Thread] = []
    assert pool.run_here(lambda: ran_on.append(threading.current_thread()))
    assert ran_on == [threading.current_thread()]
    pool.close()


def test_run_here_takes_no_place_beyond_max_workers(group: ThreadGroup) -> None:
    pool = WorkerPool(group, "w", 2)
    release = threading.Event()
    starts = [threading.Event(), threading.Event()]
    for started in starts:
        assert pool.submit(_blocked_task, started, release)
    for started in starts:
        assert started.wait(WAIT)
    ran: list[bool] = []
    assert not pool.run_here(lambda: ran.append(True))  # both places are taken
    release.set()
    pool.close()
    assert ran == []


def test_a_submitted_task_waits_for_the_place_run_here_holds(group: ThreadGroup) -> None:
    pool = WorkerPool(group, "w", 1)
    second_ran = threading.Event()

    def first() -> None:
        assert pool.submit(second_ran.set)
        assert not second_ran.wait(QUIET)  # one place, and this task has it

    assert pool.run_here(first)
    assert second_ran.wait(WAIT)
    pool.close()


def _one_running_one_waiting(pool: WorkerPool) -> tuple[threading.Event, threading.Event]:
    """Fill the one place of ``pool`` with a blocked task and queue another behind it;
    returns the event that releases the first and the one the second sets."""
    release, started = threading.Event(), threading.Event()
    assert pool.submit(_blocked_task, started, release)
    assert started.wait(WAIT)
    queued_ran = threading.Event()
    assert pool.submit(queued_ran.set)
    return release, queued_ran


def test_waiting_tasks_go_before_run_here(group: ThreadGroup) -> None:
    pool = WorkerPool(group, "w", 1)
    release, queued_ran = _one_running_one_waiting(pool)
    assert not pool.run_here(lambda: None)
    release.set()
    assert queued_ran.wait(WAIT)
    assert pool.run_here(lambda: None)
    pool.close()


def test_run_here_refuses_once_closed(group: ThreadGroup) -> None:
    pool = WorkerPool(group, "w", 1)
    pool.close()
    assert not pool.run_here(lambda: None)


def test_run_here_gives_its_place_back_when_the_task_raises(group: ThreadGroup) -> None:
    pool = WorkerPool(group, "w", 1)

    def fail() -> None:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        pool.run_here(fail)
    assert pool.run_here(lambda: None)
    pool.close()


class _Parked:
    """Which workers are parked idle: wraps each idle worker's wake lock (through
    ``mcp_sync._threads._Idle``) so a test can wait until a worker is back in the idle
    list instead of guessing how long finishing a task takes."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.changed = threading.Condition()
        self.threads: set[threading.Thread] = set()
        parked = self

        class Wake:
            def __init__(self, lock: Any) -> None:
                self._lock = lock

            def acquire(self) -> bool:
                # A worker parks after it has put itself in the idle list, under the pool's
                # lock; from here a task submitted goes to it or to one idle before it.
                with parked.changed:
                    parked.threads.add(threading.current_thread())
                    parked.changed.notify_all()
                try:
                    return bool(self._lock.acquire())
                finally:
                    with parked.changed:
                        parked.threads.discard(threading.current_thread())

            def release(self) -> None:
                self._lock.release()

        class WatchedIdle(threads_module._Idle):
            def __init__(self) -> None:
                super().__init__()
                self.wake = Wake(self.wake)  # type: ignore[assignment]

        monkeypatch.setattr(threads_module, "_Idle", WatchedIdle)

    def wait_for(self, count: int) -> bool:
        """True once ``count`` workers are parked idle (False after WAIT)."""
        with self.changed:
            return self.changed.wait_for(lambda: len(self.threads) == count, WAIT)

    def wait_parked(self, thread: threading.Thread) -> bool:
        """True once ``thread`` is parked idle, its task's place given back (False after
        WAIT)."""
        with self.changed:
            return self.changed.wait_for(lambda: thread in self.threads, WAIT)


def test_one_task_at_a_time_keeps_meeting_the_same_idle_worker(
        group: ThreadGroup, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a burst has left several workers idle, tasks go to the one idle last: one
    caller at a time keeps its thread (and so its warm connection), not a tour of all."""
    parked = _Parked(monkeypatch)
    pool = WorkerPool(group, "w", 4)
    release = threading.Event()
    starts = [threading.Event() for _ in range(4)]
    for started in starts:
        assert pool.submit(_blocked_task, started, release)
    for started in starts:
        assert started.wait(WAIT)
    burst = {t.name for t in threading.enumerate() if t.name.startswith("mcp_sync:test-pool")}
    assert len(burst) == 4
    release.set()
    # All four finish their blocked task and go idle, in an order the scheduler picks.
    assert parked.wait_for(4)
    ran_on: list[str] = []
    for _ in range(30):
        done = threading.Event()
        assert pool.submit(lambda done=done: (ran_on.append(threading.current_thread().name),
                                              done.set()))
        assert done.wait(WAIT)
        # The worker sets ``done`` before it is idle again; the next caller comes once
        # it is (a worker still finishing may otherwise take the next task: that is not
        # what is checked here).
        assert parked.wait_for(4)
    # Every task met the worker idle last, the same one each time.
    assert len(set(ran_on)) == 1
    assert set(ran_on) <= burst
    pool.close()


def test_close_stops_idle_workers_after_the_queued_tasks(group: ThreadGroup) -> None:
    """Queued tasks still run after close(); idle workers then end (the group joins)."""
    pool = WorkerPool(group, "w", 1)
    release = threading.Event()
    started = threading.Event()
    assert pool.submit(_blocked_task, started, release)
    assert started.wait(WAIT)
    ran = threading.Event()
    assert pool.submit(ran.set)
    assert pool.queued() == 1
    pool.close()
    assert not pool.submit(ran.set)
    release.set()
    assert ran.wait(WAIT)


def test_an_idle_worker_holds_nothing_of_its_last_task(group: ThreadGroup) -> None:
    """A task's arguments (an HTTP client's request body, say) are let go once it ran,
    not kept until the worker's next task."""

    class Payload:
        pass

    payload = Payload()
    gone = threading.Event()
    weakref.finalize(payload, gone.set)
    ran = threading.Event()
    pool = WorkerPool(group, "w", 1)
    assert pool.submit(lambda _: ran.set(), payload)
    del payload
    assert ran.wait(WAIT)
    assert gone.wait(WAIT)
    pool.close()


# --- the relay: a reader that serves what it read and lets another worker read on ----------


class _Reader:
    """A relay reading "messages" from a queue: each is served on the thread that read it
    when the pool lets the reading go on elsewhere, and submitted otherwise."""

    def __init__(self, pool: WorkerPool) -> None:
        self.pool = pool
        self.inbox: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self.read_by: dict[str, threading.Thread] = {}
        self.names: dict[str, tuple[str, str]] = {}  # the thread's name reading, serving
        self.served_by: dict[str, threading.Thread] = {}
        self.served: dict[str, threading.Event] = {}
        self.ended = threading.Event()

    def send(self, message: str) -> threading.Event:
        self.served[message] = threading.Event()
        self.inbox.put(message)
        return self.served[message]

    def relay(self) -> None:
        while True:
            message = self.inbox.get(timeout=WAIT)
            if message is None:
                self.ended.set()
                return
            self.read_by[message] = threading.current_thread()
            self.names[message] = (threading.current_thread().name, "")
            if self.pool.pass_relay(self.relay, self.serve, message):
                return
            assert self.pool.submit(self.serve, message)

    def serve(self, message: str) -> None:
        self.served_by[message] = threading.current_thread()
        self.names[message] = (self.names[message][0], threading.current_thread().name)
        self.served[message].set()


def test_a_relayed_message_is_served_where_it_was_read_and_the_next_read_elsewhere(
        group: ThreadGroup, monkeypatch: pytest.MonkeyPatch) -> None:
    parked = _Parked(monkeypatch)
    pool = WorkerPool(group, "w", 2)
    reader = _Reader(pool)
    pool.start_relay(reader.relay)
    for message in ("a", "b", "c"):
        assert reader.send(message).wait(WAIT)
        # The thread that served it sets the event before it gives its place back; the
        # next message comes once it has (with both places still held by the two before
        # it, "c" would rightly be queued for a free place, not served where it was read).
        assert parked.wait_parked(reader.served_by[message])
    for message in ("a", "b", "c"):
        assert reader.served_by[message] is reader.read_by[message]
        # Named as the reader while it read, by its own name again while it served.
        assert reader.names[message][0] == group.name("reader")
        assert reader.names[message][1].startswith(group.name("w-"))
    # Whoever served a message had passed the reading on: the next one was read elsewhere.
    assert reader.read_by["b"] is not reader.read_by["a"]
    assert reader.read_by["c"] is not reader.read_by["b"]
    reader.inbox.put(None)
    assert reader.ended.wait(WAIT)
    pool.close()


def test_the_relay_stays_put_while_every_place_is_taken(group: ThreadGroup) -> None:
    pool = WorkerPool(group, "w", 1)
    release, started = threading.Event(), threading.Event()
    assert pool.submit(_blocked_task, started, release)
    assert started.wait(WAIT)
    reader = _Reader(pool)
    pool.start_relay(reader.relay)
    served = reader.send("a")
    assert not served.wait(QUIET)  # submitted: it waits for the one place
    release.set()
    assert served.wait(WAIT)
    assert reader.served_by["a"] is not reader.read_by["a"]
    reader.inbox.put(None)  # the reading went on where it was
    assert reader.ended.wait(WAIT)
    pool.close()


def test_pass_relay_refuses_while_tasks_wait_and_once_closed(group: ThreadGroup) -> None:
    pool = WorkerPool(group, "w", 1)
    release, queued_ran = _one_running_one_waiting(pool)
    relay_ran: list[bool] = []
    ran: list[bool] = []
    assert not pool.pass_relay(lambda: relay_ran.append(True), lambda: ran.append(True))
    release.set()
    assert queued_ran.wait(WAIT)
    pool.close()
    assert not pool.pass_relay(lambda: relay_ran.append(True), lambda: ran.append(True))
    assert ran == [] and relay_ran == []


def test_the_relay_has_one_thread_beyond_max_workers(group: ThreadGroup) -> None:
    pool = WorkerPool(group, "w", 1)
    reader = _Reader(pool)
    before = set(threading.enumerate())
    pool.start_relay(reader.relay)
    release, queued_ran = _one_running_one_waiting(pool)
    assert not queued_ran.wait(QUIET)  # no place, and no third thread for it
    assert len(set(threading.enumerate()) - before) == 2
    release.set()
    assert queued_ran.wait(WAIT)
    reader.inbox.put(None)
    assert reader.ended.wait(WAIT)
    pool.close()


def test_a_relayed_task_that_raises_is_logged_and_gives_its_place_back(
        group: ThreadGroup, caplog: pytest.LogCaptureFixture) -> None:
    pool = WorkerPool(group, "w", 1)
    relay_ran = threading.Event()

    def fail() -> None:
        raise RuntimeError("handler bug")

    name = threading.current_thread().name
    assert pool.pass_relay(relay_ran.set, fail)
    assert relay_ran.wait(WAIT)
    assert threading.current_thread().name == name  # not a worker: its name is its own
    assert "handler bug" in caplog.text
    assert pool.run_here(lambda: None)  # the place came back
    pool.close()
