"""The one-shot answer every call we send waits on."""

from __future__ import annotations

import logging
import threading
import weakref

import pytest

from mcp_sync._answer import Answer

WAIT = 10.0


def test_a_result_is_returned_and_an_error_raised() -> None:
    answered: Answer[dict[str, int]] = Answer()
    assert not answered.done()
    assert answered.set_result({"n": 1})
    assert answered.done()
    assert answered.result(0) == {"n": 1}
    assert answered.exception(0) is None

    failed: Answer[dict[str, int]] = Answer()
    error = ValueError("no")
    assert failed.set_exception(error)
    assert failed.exception(0) is error
    with pytest.raises(ValueError) as raised:
        failed.result(0)
    assert raised.value is error


def test_the_first_completion_wins_and_the_others_change_nothing() -> None:
    answer: Answer[str] = Answer()
    assert answer.set_result("first")
    assert not answer.set_result("second")
    assert not answer.set_exception(RuntimeError("late"))
    assert answer.result(0) == "first"


def test_racing_completions_have_exactly_one_winner() -> None:
    for _ in range(50):
        answer: Answer[int] = Answer()
        start = threading.Barrier(4)
        won: list[int] = []

        def complete(value: int, answer: Answer[int] = answer,
                     start: threading.Barrier = start, won: list[int] = won) -> None:
            start.wait(WAIT)
            if answer.set_result(value):
                won.append(value)

        threads = [threading.Thread(target=complete, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT)
        assert len(won) == 1
        assert answer.result(0) == won[0]


def test_waiting_without_an_answer_times_out() -> None:
    answer: Answer[int] = Answer()
    with pytest.raises(TimeoutError):
        answer.result(0.05)
    with pytest.raises(TimeoutError):
        answer.exception(0)
    with pytest.raises(TimeoutError):  # a negative timeout is "no time", not an error
        answer.result(-1.5)
    assert not answer.done()
    assert answer.set_result(3)  # a wait that timed out leaves it answerable
    assert answer.result(0) == 3


def test_every_waiting_thread_gets_the_answer() -> None:
    answer: Answer[str] = Answer()
    got: list[str] = []
    lock = threading.Lock()

    def wait() -> None:
        value = answer.result(WAIT)
        with lock:
            got.append(value)

    threads = [threading.Thread(target=wait) for _ in range(5)]
    for thread in threads:
        thread.start()
    assert answer.set_result("here")
    for thread in threads:
        thread.join(WAIT)
    assert got == ["here"] * 5
    assert answer.result(0) == "here"  # and it stays answered for later readers


def test_a_callback_runs_on_the_completing_thread_or_at_once() -> None:
    answer: Answer[int] = Answer()
    calls: list[tuple[Answer[int], str]] = []
    answer.add_done_callback(lambda done: calls.append((done, threading.current_thread().name)))
    assert calls == []
    completer = threading.Thread(target=answer.set_result, args=(1,), name="completer")
    completer.start()
    completer.join(WAIT)
    assert calls == [(answer, "completer")]

    answer.add_done_callback(lambda done: calls.append((done, threading.current_thread().name)))
    assert calls[1] == (answer, threading.current_thread().name)


def test_a_failing_callback_is_logged_and_the_rest_still_run(
        caplog: pytest.LogCaptureFixture) -> None:
    answer: Answer[int] = Answer()
    ran: list[str] = []

    def broken(_: Answer[int]) -> None:
        raise RuntimeError("callback broke")

    answer.add_done_callback(broken)
    answer.add_done_callback(lambda _: ran.append("second"))
    with caplog.at_level(logging.ERROR, logger="mcp_sync.engine"):
        assert answer.set_result(1)
    assert ran == ["second"]
    assert "callback broke" in caplog.text
    assert answer.result(0) == 1


def test_an_answer_can_be_referred_to_weakly() -> None:
    answer: Answer[int] = Answer()
    ref = weakref.ref(answer)
    assert ref() is answer
    del answer
    assert ref() is None
