"""The bounded worker pool, and tasks run on their callers' threads in its places."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

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


def test_waiting_tasks_go_before_run_here(group: ThreadGroup) -> None:
    pool = WorkerPool(group, "w", 1)
    release, started = threading.Event(), threading.Event()
    assert pool.submit(_blocked_task, started, release)
    assert started.wait(WAIT)
    queued_ran = threading.Event()
    assert pool.submit(queued_ran.set)
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
