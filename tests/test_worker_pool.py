"""The bounded pool of daemon workers, and tasks run on their callers' threads in its places."""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Iterator

import pytest

from mcp_sync.engine._threads import ThreadGroup, WorkerPool

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


def test_close_stops_idle_workers_after_the_queued_tasks(group: ThreadGroup) -> None:
    """Queued tasks still run after close(); idle workers then end (the group joins)."""
    pool = WorkerPool(group, "w", 1)
    release = threading.Event()
    started = threading.Event()
    assert pool.submit(_blocked_task, started, release)
    assert started.wait(WAIT)
    ran = threading.Event()
    assert pool.submit(ran.set)
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



def test_tasks_beyond_the_bound_are_refused_and_accepted_again_once_served(
        group: ThreadGroup) -> None:
    """max_workers running plus max_queued waiting are accepted; the rest are refused and
    never run; a task that has ended admits one more."""
    pool = WorkerPool(group, "w", 1, max_queued=1)
    release = threading.Event()
    first, second = threading.Event(), threading.Event()
    refused = threading.Event()
    assert pool.submit(_blocked_task, first, release)
    assert first.wait(WAIT)
    assert pool.submit(_blocked_task, second, release)
    assert not pool.submit(refused.set)
    release.set()
    # One worker: the second task runs only once the first has ended and left.
    assert second.wait(WAIT)
    last = threading.Event()
    assert pool.submit(last.set)
    assert last.wait(WAIT)
    pool.close()
    assert group.join(WAIT) == []
    assert not refused.is_set()


def test_one_worker_runs_tasks_in_submission_order(group: ThreadGroup) -> None:
    pool = WorkerPool(group, "w", 1)
    seen: list[int] = []
    done = threading.Event()
    for n in range(200):
        assert pool.submit(seen.append, n)
    assert pool.submit(done.set)
    assert done.wait(WAIT)
    assert seen == list(range(200))
    pool.close()


def test_workers_are_named_daemons_and_never_more_than_max_workers(group: ThreadGroup) -> None:
    before = set(threading.enumerate())
    pool = WorkerPool(group, "w", 3)
    release = threading.Event()
    starts = [threading.Event() for _ in range(3)]
    for started in starts:
        assert pool.submit(_blocked_task, started, release)
    for started in starts:
        assert started.wait(WAIT)
    for _ in range(10):
        assert pool.submit(lambda: None)
    started_threads = set(threading.enumerate()) - before
    release.set()
    pool.close()
    assert len(started_threads) == 3
    assert all(t.daemon and t.name.startswith(group.name("w-")) for t in started_threads)


def test_a_task_that_raises_is_logged_and_its_worker_goes_on(
        group: ThreadGroup, caplog: pytest.LogCaptureFixture) -> None:
    pool = WorkerPool(group, "w", 1)
    ran = threading.Event()

    def fail() -> None:
        raise RuntimeError("boom")

    with caplog.at_level(logging.ERROR, logger="mcp_sync.threads"):
        assert pool.submit(fail)
        assert pool.submit(ran.set)
        assert ran.wait(WAIT)
    assert "unhandled error in w task" in caplog.text
    pool.close()


def test_a_task_stuck_past_close_is_reported_and_does_not_hold_the_join() -> None:
    """close() does not wait; the owner's join gives up after its timeout and names
    the thread still running user code, a daemon that cannot hold the interpreter."""
    group = ThreadGroup("test-stuck")
    pool = WorkerPool(group, "w", 1)
    release, started = threading.Event(), threading.Event()
    assert pool.submit(_blocked_task, started, release)
    assert started.wait(WAIT)
    pool.close()
    alive = group.join(0.05)
    assert [t.daemon for t in alive] == [True]
    release.set()
    assert group.join(WAIT) == []


def test_idle_workers_end_and_tasks_racing_their_end_still_run(group: ThreadGroup) -> None:
    """With ``idle_timeout`` a worker with nothing to do ends; a task submitted as it
    ends is run all the same, by it or by a new worker, and in order with one worker."""
    pool = WorkerPool(group, "w", 1, idle_timeout=0.001)
    ran: list[int] = []
    done = threading.Event()
    for round_ in range(200):
        pool.submit(ran.append, round_)
        if round_ % 20 == 0:
            pool.submit(done.set)
            assert done.wait(WAIT)
            done.clear()
            for thread in threading.enumerate():
                if thread.name.startswith(group.name("w-")):
                    thread.join(WAIT)  # every worker ends once idle
            assert not [t for t in threading.enumerate() if t.name.startswith(group.name("w-"))]
    pool.submit(done.set)
    assert done.wait(WAIT)
    assert ran == list(range(200))
    pool.close()
    with pytest.raises(ValueError, match="idle_timeout"):
        WorkerPool(group, "w", 1, idle_timeout=0)
