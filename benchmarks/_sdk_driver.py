"""The workloads for the official SDK's client, in one anyio event loop.

The fair twin of 32 threads sharing one mcp_sync Client is 32 tasks sharing one SDK
``Client`` (one ClientSession) in one loop. Phases, budgets and records match
:func:`_workloads.run_blocking`.
"""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from _cases import SDK_MODES
from _proc import PYTHON, ROOT, LoadSampler, serving_process
from _workloads import CONNECT_MESSAGE, MESSAGE, Budget, Emit, big_payload
from mcp.client import Client as SdkClient
from mcp.client.stdio import StdioServerParameters


async def _timed(call: Callable[[], Awaitable[None]], calls: int,
                 seconds: float) -> tuple[int, float]:
    started = time.perf_counter()
    deadline = started + seconds
    done = 0
    while done < calls:
        await call()
        done += 1
        if time.perf_counter() >= deadline:
            break
    return done, time.perf_counter() - started


async def _tasks(call: Callable[[], Awaitable[None]], tasks: int, calls: int,
                 seconds: float) -> tuple[int, float]:
    counters = {"tickets": 0, "done": 0}
    started = time.perf_counter()
    deadline = started + seconds

    async def worker() -> None:
        while counters["tickets"] < calls and time.perf_counter() < deadline:
            counters["tickets"] += 1
            await call()
            counters["done"] += 1

    async with anyio.create_task_group() as group:
        for _ in range(tasks):
            group.start_soon(worker)
    return counters["done"], time.perf_counter() - started


async def _phase(emit: Emit, names: tuple[str, ...],
                 body: Callable[[], Awaitable[None]], cap: float) -> None:
    try:
        with anyio.fail_after(cap):
            await body()
    except Exception as exc:
        traceback.print_exc()
        detail = f"{type(exc).__name__}: {exc}"[:200]
        for name in names:
            emit(name, error=detail)


async def drive(target: Any, script: str, pid_root: int, budget: Budget, emit: Emit,
                cap: float, era: str) -> None:
    """Connect to ``target`` (a URL or stdio parameters) in ``era`` and run every phase."""
    emitted: set[str] = set()

    def record(name: str, **fields: Any) -> None:
        emitted.add(name)
        emit(name, **fields)

    started = time.perf_counter()
    try:
        # Each phase has its own cap; this one bounds connecting and closing too.
        with anyio.fail_after(cap * 6):
            async with SdkClient(target, mode=SDK_MODES[era], cache=None) as client:
                modern = client.protocol_version == "2026-07-28"
                if modern != (era == "modern"):
                    raise AssertionError(f"the {era} case speaks {client.protocol_version}")
                await _phases(client, started, script, pid_root, budget, record, cap)
    except Exception as exc:
        traceback.print_exc()
        for name in ALL_NAMES:
            if name not in emitted:
                emit(name, error=f"{type(exc).__name__}: {exc}"[:200])


ALL_NAMES = ("connect_ms", "seq", "conc", "threads", "rss_mib", "big", "items")


async def _phases(client: SdkClient, started: float, script: str, pid_root: int,
                  budget: Budget, emit: Emit, cap: float) -> None:
    async def call_echo(message: str) -> str:
        result = await client.call_tool("echo", {"message": message})
        text: str = result.content[0].text  # type: ignore[union-attr]
        return text

    async def echo() -> None:
        if await call_echo(MESSAGE) != MESSAGE:
            raise AssertionError("wrong answer")

    if await call_echo(CONNECT_MESSAGE) != CONNECT_MESSAGE:
        raise AssertionError("wrong answer")
    emit("connect_ms", value=(time.perf_counter() - started) * 1000)
    pid = serving_process(pid_root, script)

    async def seq() -> None:
        for _ in range(budget.warmup):
            await echo()
        done, elapsed = await _timed(echo, budget.seq_calls, budget.seq_seconds)
        emit("seq", value=done / elapsed, calls=done)

    async def conc() -> None:
        with LoadSampler(pid) as sampler:
            done, elapsed = await _tasks(echo, budget.threads, budget.conc_calls,
                                         budget.conc_seconds)
        emit("conc", value=done / elapsed, calls=done)
        if pid is not None:
            emit("threads", value=sampler.max_threads)
            emit("rss_mib", value=sampler.peak_kib / 1024)

    payload = big_payload(budget.big_bytes)

    async def big_call() -> None:
        if len(await call_echo(payload)) != len(payload):
            raise AssertionError("short echo")

    async def big() -> None:
        await big_call()
        done, elapsed = await _timed(big_call, budget.big_calls, budget.big_seconds)
        emit("big", value=2 * len(payload) * done / elapsed / 1e6, calls=done)

    async def items_call() -> None:
        result = await client.call_tool("many_items", {"n": budget.items})
        if len(result.content) != budget.items:
            raise AssertionError(f"{len(result.content)} items")

    async def items() -> None:
        await items_call()
        done, elapsed = await _timed(items_call, budget.items_calls, budget.items_seconds)
        emit("items", value=done / elapsed, calls=done)

    await _phase(emit, ("seq",), seq, cap)
    await _phase(emit, ("conc", "threads", "rss_mib"), conc, cap)
    await _phase(emit, ("big",), big, cap)
    await _phase(emit, ("items",), items, cap)


def stdio_target(script: str) -> tuple[StdioServerParameters, int]:
    """Parameters that spawn ``script`` as the SDK would, and where to look for its pid."""
    params = StdioServerParameters(command=PYTHON, args=[script], cwd=str(ROOT),
                                   env={"PYTHONPATH": str(ROOT)})
    return params, os.getpid()
