"""The bounded worker pool, and tasks run on their callers' threads in its places."""

from __future__ import annotations

import queue
import threading
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

import mcp_sync._threads as threads_module
from mcp_sync._threads import Held, ThreadGroup, WorkerPool

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

            def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
                if timeout >= 0:  # standing by for a hold: not parked
                    return bool(self._lock.acquire(blocking, timeout))
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


# --- the relay: a reader that serves what it read while a standby waits to read on --------


class _Reader:
    """A relay reading "messages" from a queue: each is served on the thread that read it
    (``serve_holding``) when the pool allows, and submitted otherwise. ``blockers`` makes
    the serving of a message wait for an event; ``pass_held`` lets it call
    ``pool.pass_held()`` first."""

    def __init__(self, pool: WorkerPool) -> None:
        self.pool = pool
        self.inbox: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self.read_by: dict[str, threading.Thread] = {}
        self.names: dict[str, tuple[str, str]] = {}  # the thread's name reading, serving
        self.served_by: dict[str, threading.Thread] = {}
        self.served: dict[str, threading.Event] = {}
        self.serving: dict[str, threading.Event] = {}
        self._outcomes: dict[str, Held] = {}
        self._decided: dict[str, threading.Event] = {}
        self.blockers: dict[str, threading.Event] = {}
        self.pass_held: set[str] = set()
        self.ended = threading.Event()

    def send_blocked(self, message: str) -> tuple[threading.Event, threading.Event]:
        """Send ``message``, whose serving waits for the event returned second."""
        self.blockers[message] = release = threading.Event()
        return self.send(message), release

    def send(self, message: str) -> threading.Event:
        self.served[message] = threading.Event()
        self.serving[message] = threading.Event()
        self._decided[message] = threading.Event()
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
            outcome = self._outcomes[message] = self.pool.serve_holding(self.serve, message)
            self._decided[message].set()
            if outcome is Held.PASSED:
                return
            if outcome is Held.REFUSED:
                assert self.pool.submit(self.serve, message)

    def serve(self, message: str) -> None:
        self.served_by[message] = threading.current_thread()
        self.names[message] = (self.names[message][0], threading.current_thread().name)
        self.serving[message].set()
        if message in self.pass_held:
            self.pool.pass_held()
        if message in self.blockers:
            assert self.blockers[message].wait(WAIT)
        self.served[message].set()

    def outcome(self, message: str) -> Held:
        """What serve_holding returned for ``message``, once it has."""
        assert self._decided[message].wait(WAIT)
        return self._outcomes[message]

    def end(self) -> None:
        self.inbox.put(None)
        assert self.ended.wait(WAIT)


def _relayed(group: ThreadGroup, max_workers: int,
             hold_for: float | None = None) -> tuple[WorkerPool, _Reader]:
    """A pool whose relay is a started ``_Reader``."""
    pool = WorkerPool(group, "w", max_workers, hold_for=hold_for)
    reader = _Reader(pool)
    pool.start_relay(reader.relay)
    return pool, reader


def _workers(group: ThreadGroup) -> set[threading.Thread]:
    return {thread for thread in threading.enumerate()
            if thread.name.startswith(f"mcp_sync:{group.owner}:")}


def test_a_short_request_is_served_where_it_was_read_and_the_reading_stays(
        group: ThreadGroup) -> None:
    pool, reader = _relayed(group, 2, hold_for=3600)
    for message in ("a", "b", "c"):
        assert reader.send(message).wait(WAIT)
    reader.end()
    for message in ("a", "b", "c"):
        assert reader.outcome(message) is Held.KEPT
        assert reader.served_by[message] is reader.read_by[message]
        # Named as the reader while it read, by its own name while it served.
        assert reader.names[message][0] == group.name("reader")
        assert reader.names[message][1].startswith(group.name("w-"))
    # The reading never moved: one thread read all three.
    assert reader.read_by["a"] is reader.read_by["b"] is reader.read_by["c"]
    # One standby was started for the first and stood by for the others: two threads.
    assert len(_workers(group)) == 2
    pool.close()


def test_a_long_serve_lets_the_standby_read_on(group: ThreadGroup) -> None:
    pool, reader = _relayed(group, 2, hold_for=0.01)
    served_a, release_a = reader.send_blocked("a")
    # "a" is still being served, yet "b" is read (by the standby, once hold_for passed).
    assert reader.send("b").wait(WAIT)
    assert not served_a.is_set()
    release_a.set()
    assert served_a.wait(WAIT)
    reader.end()
    assert reader.outcome("a") is Held.PASSED
    assert reader.read_by["b"] is not reader.read_by["a"]
    assert reader.served_by["a"] is reader.read_by["a"]
    pool.close()


def test_pass_held_lets_the_standby_read_on_at_once(group: ThreadGroup) -> None:
    # hold_for is far beyond the test's timeout: only pass_held can move the reading.
    pool, reader = _relayed(group, 2, hold_for=3600)
    reader.pass_held.add("a")
    served_a, release_a = reader.send_blocked("a")
    assert reader.send("b").wait(WAIT)
    release_a.set()
    assert served_a.wait(WAIT)
    reader.end()
    assert reader.outcome("a") is Held.PASSED
    assert reader.read_by["b"] is not reader.read_by["a"]
    pool.close()


def test_with_other_tasks_under_way_the_reading_moves_on_at_once(group: ThreadGroup) -> None:
    pool = WorkerPool(group, "w", 3, hold_for=3600)
    release, started = threading.Event(), threading.Event()
    assert pool.submit(_blocked_task, started, release)
    assert started.wait(WAIT)
    reader = _Reader(pool)
    pool.start_relay(reader.relay)
    served_a, release_a = reader.send_blocked("a")
    assert reader.send("b").wait(WAIT)  # read while "a" is served, long before hold_for
    release_a.set()
    release.set()
    assert served_a.wait(WAIT)
    reader.end()
    assert reader.outcome("a") is Held.PASSED
    assert reader.served_by["a"] is reader.read_by["a"]
    assert reader.read_by["b"] is not reader.read_by["a"]
    pool.close()


def test_pass_held_does_nothing_on_another_thread(group: ThreadGroup) -> None:
    pool, reader = _relayed(group, 2, hold_for=3600)
    served_a, release_a = reader.send_blocked("a")
    served_b = reader.send("b")
    pool.pass_held()  # not the serving thread: the reading stays where it is
    assert not served_b.wait(QUIET)
    release_a.set()
    assert served_a.wait(WAIT) and served_b.wait(WAIT)
    reader.end()
    assert reader.outcome("a") is Held.KEPT
    assert reader.read_by["b"] is reader.read_by["a"]
    pool.close()


def test_the_standby_parks_once_holds_stop(
        group: ThreadGroup, monkeypatch: pytest.MonkeyPatch) -> None:
    """Between holds the standby waits with a timeout; with none for hold_for it parks
    (waits with none): an idle connection wakes no thread."""
    parked = _Parked(monkeypatch)
    pool, reader = _relayed(group, 2, hold_for=0.01)
    assert reader.send("a").wait(WAIT)
    standby = _workers(group) - {reader.read_by["a"]}
    assert len(standby) == 1
    assert parked.wait_parked(standby.pop())
    reader.end()
    pool.close()


def test_a_task_queued_during_a_hold_runs_when_it_ends(group: ThreadGroup) -> None:
    # One place: the hold has it, and the standby is the only other thread.
    pool, reader = _relayed(group, 1, hold_for=3600)
    served_a, release_a = reader.send_blocked("a")
    assert reader.serving["a"].wait(WAIT)
    ran = threading.Event()
    assert pool.submit(ran.set)
    assert pool.queued() == 1
    release_a.set()
    assert served_a.wait(WAIT)
    assert ran.wait(WAIT)
    reader.end()
    assert reader.outcome("a") is Held.KEPT
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
    assert reader.outcome("a") is Held.REFUSED
    assert reader.served_by["a"] is not reader.read_by["a"]
    reader.end()  # the reading went on where it was
    pool.close()


def test_serve_holding_refuses_while_tasks_wait_without_a_relay_and_once_closed(
        group: ThreadGroup) -> None:
    pool = WorkerPool(group, "w", 1)
    ran: list[bool] = []
    assert pool.serve_holding(lambda: ran.append(True)) is Held.REFUSED  # no relay
    reader = _Reader(pool)
    pool.start_relay(reader.relay)
    release, queued_ran = _one_running_one_waiting(pool)
    assert pool.serve_holding(lambda: ran.append(True)) is Held.REFUSED
    release.set()
    assert queued_ran.wait(WAIT)
    reader.end()
    pool.close()
    assert pool.serve_holding(lambda: ran.append(True)) is Held.REFUSED
    assert ran == []


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
    reader.end()
    pool.close()


def test_a_held_task_that_raises_is_logged_and_gives_its_place_back(
        group: ThreadGroup, caplog: pytest.LogCaptureFixture) -> None:
    pool, reader = _relayed(group, 1, hold_for=3600)
    outcome: list[Held] = []

    def fail() -> None:
        raise RuntimeError("handler bug")

    # From the test's thread, standing in for the relay's: its name is left alone.
    name = threading.current_thread().name
    outcome.append(pool.serve_holding(fail))
    assert outcome == [Held.KEPT]
    assert threading.current_thread().name == name
    assert "handler bug" in caplog.text
    assert pool.run_here(lambda: None)  # the place came back
    reader.end()
    pool.close()


def test_close_during_a_hold_stops_the_standby(group: ThreadGroup) -> None:
    pool, reader = _relayed(group, 2, hold_for=3600)
    served_a, release_a = reader.send_blocked("a")
    assert reader.serving["a"].wait(WAIT)
    pool.close()
    release_a.set()
    assert served_a.wait(WAIT)
    reader.end()
    assert reader.outcome("a") is Held.KEPT
    # The group fixture then finds every thread ended: the standby too.
