"""The workloads, run the same way against every client that blocks (ours and the raw ones).

A peer is anything with ``echo(message) -> str`` and ``items(n) -> int`` that may be called
from many threads at once; :func:`run_blocking` connects it, times each phase and emits one
record per measurement. The SDK's async client has its twin in ``_sdk_driver``.
"""

from __future__ import annotations

import itertools
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from _proc import LoadSampler

MESSAGE = "hello, benchmark"
CONNECT_MESSAGE = "hi"


@dataclass(frozen=True)
class Budget:
    """How much each phase does: it stops at its call count or its seconds, first reached."""

    seq_calls: int
    seq_seconds: float
    conc_calls: int
    conc_seconds: float
    big_calls: int
    big_seconds: float
    items_calls: int
    items_seconds: float
    threads: int = 32
    big_bytes: int = 1 << 20
    items: int = 10_000
    warmup: int = 20

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


FULL = Budget(seq_calls=5000, seq_seconds=2.0, conc_calls=10_000, conc_seconds=2.0,
              big_calls=40, big_seconds=2.0, items_calls=60, items_seconds=2.0)
QUICK = Budget(seq_calls=300, seq_seconds=0.5, conc_calls=600, conc_seconds=0.5,
               big_calls=2, big_seconds=0.5, items_calls=2, items_seconds=0.5, warmup=5)


def big_payload(size: int) -> str:
    """``size`` ASCII characters (so ``size`` bytes in JSON), not one repeated letter."""
    pattern = "abcdefghijklmnopqrstuvwxyz0123456789"
    return (pattern * (size // len(pattern) + 1))[:size]


Emit = Callable[..., None]


class Peer(Protocol):
    def echo(self, message: str) -> str: ...
    def items(self, n: int) -> int: ...
    def server_pid(self) -> int | None: ...
    def close(self) -> None: ...


def _check(got: object, expected: object) -> None:
    if got != expected:
        raise AssertionError(f"wrong answer: {str(got)[:80]!r} != {str(expected)[:80]!r}")


def timed_loop(call: Callable[[], None], calls: int, seconds: float) -> tuple[int, float]:
    """Call until ``calls`` are done or ``seconds`` passed; (calls done, elapsed)."""
    started = time.perf_counter()
    deadline = started + seconds
    done = 0
    while done < calls:
        call()
        done += 1
        if time.perf_counter() >= deadline:
            break
    return done, time.perf_counter() - started


def threaded_loop(call: Callable[[], None], threads: int, calls: int,
                  seconds: float) -> tuple[int, float]:
    """``threads`` threads share ``calls``; the same stopping rule as :func:`timed_loop`."""
    tickets: Iterator[int] = itertools.count()
    done = itertools.count()
    failures: list[BaseException] = []
    start = threading.Barrier(threads + 1)
    deadline = [0.0]

    def worker() -> None:
        start.wait()
        try:
            while next(tickets) < calls and time.perf_counter() < deadline[0]:
                call()
                next(done)
        except BaseException as exc:  # reported once every thread stopped
            failures.append(exc)

    pool = [threading.Thread(target=worker, name=f"bench-caller-{i}", daemon=True)
            for i in range(threads)]
    for thread in pool:
        thread.start()
    started = time.perf_counter()
    deadline[0] = started + seconds
    start.wait()
    for thread in pool:
        thread.join()
    elapsed = time.perf_counter() - started
    if failures:
        raise failures[0]
    return next(done), elapsed


def phase(emit: Emit, names: tuple[str, ...], body: Callable[[], None]) -> None:
    """Run one phase; a failure becomes an error record for each of its measurements."""
    try:
        body()
    except BaseException as exc:
        detail = f"{type(exc).__name__}: {exc}"[:200]
        traceback.print_exc()
        for name in names:
            emit(name, error=detail)
        if not isinstance(exc, Exception):
            raise


def run_blocking(connect: Callable[[], Peer], budget: Budget, emit: Emit,
                 concurrent: Callable[[Peer, Budget], tuple[int, float]] | None = None,
                 ) -> None:
    """Connect, then run every phase against the peer, emitting as each one ends.

    Args:
        connect: starts the server (stdio) or opens the connection (HTTP); the clock for
            ``connect_ms`` runs from its call to the first echo result.
        budget: how much each phase does.
        emit: ``emit(name, value=...)`` or ``emit(name, error=...)``.
        concurrent: the concurrent phase, when it is not ``threads`` threads sharing the
            peer (the raw pipe pipelines from one thread instead).
    """
    started = time.perf_counter()
    try:
        peer = connect()
        _check(peer.echo(CONNECT_MESSAGE), CONNECT_MESSAGE)
    except BaseException as exc:
        traceback.print_exc()
        for name in ("connect_ms", "seq", "conc", "threads", "rss_mib", "big", "items"):
            emit(name, error=f"connect: {type(exc).__name__}: {exc}"[:200])
        return
    emit("connect_ms", value=(time.perf_counter() - started) * 1000)
    try:
        pid = peer.server_pid()

        def echo() -> None:
            _check(peer.echo(MESSAGE), MESSAGE)

        def seq() -> None:
            for _ in range(budget.warmup):
                echo()
            done, elapsed = timed_loop(echo, budget.seq_calls, budget.seq_seconds)
            emit("seq", value=done / elapsed, calls=done)

        def conc() -> None:
            with LoadSampler(pid) as sampler:
                if concurrent is not None:
                    done, elapsed = concurrent(peer, budget)
                else:
                    done, elapsed = threaded_loop(echo, budget.threads, budget.conc_calls,
                                                  budget.conc_seconds)
            emit("conc", value=done / elapsed, calls=done)
            if pid is not None:
                emit("threads", value=sampler.max_threads)
                emit("rss_mib", value=sampler.peak_kib / 1024)

        payload = big_payload(budget.big_bytes)

        def big_call() -> None:
            got = peer.echo(payload)
            if len(got) != len(payload):
                raise AssertionError(f"echoed {len(got)} of {len(payload)} characters")

        def big() -> None:
            big_call()
            done, elapsed = timed_loop(big_call, budget.big_calls, budget.big_seconds)
            # Request and response each carry the payload once: count both.
            emit("big", value=2 * len(payload) * done / elapsed / 1e6, calls=done)

        def items_call() -> None:
            _check(peer.items(budget.items), budget.items)

        def items() -> None:
            items_call()
            done, elapsed = timed_loop(items_call, budget.items_calls, budget.items_seconds)
            emit("items", value=done / elapsed, calls=done)

        phase(emit, ("seq",), seq)
        phase(emit, ("conc", "threads", "rss_mib"), conc)
        phase(emit, ("big",), big)
        phase(emit, ("items",), items)
    finally:
        peer.close()
