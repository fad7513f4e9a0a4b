"""Faults over stdio with real child processes: killed servers, garbage, stalled pipes.

The servers are ``tests/servers/fault_server.py`` (built on mcp_sync) and
``tests/servers/fault_garbage.py`` (hand-written, breaks the rules on purpose). Every
wait is a Future, an Event, a join or a ``Popen.wait`` with a timeout; elapsed times
are measured only to check that a bound holds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_sync import Client
from mcp_sync.errors import ConnectionClosed, ConnectionLost, McpError, RequestTimeout
from mcp_sync.transports.stdio import StdioClientTransport
from tests.conftest import HERE
from tests.helpers import LEGACY_ERA

FAULT_SERVER = [sys.executable, str(HERE / "servers" / "fault_server.py")]
GARBAGE = [sys.executable, str(HERE / "servers" / "fault_garbage.py")]


def status_kib(pid: int | str, field: str) -> int:
    """A ``VmRSS``/``VmHWM`` figure of a process, in KiB."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name == field:
                return int(value.split()[0])
    raise KeyError(field)


# --- a server killed mid-call ------------------------------------------------------------------


@pytest.mark.timeout(30)
def test_sigkill_mid_call_fails_every_caller_promptly_shutdown_5() -> None:
    """SHUTDOWN-5: SIGKILL while eight calls run: each caller has ConnectionLost within
    a second, a new call fails at once, close() is quick and the child is reaped."""
    started = threading.Semaphore(0)
    pids: set[int] = set()
    lock = threading.Lock()

    def on_progress(progress: float, total: float | None, message: str | None) -> None:
        assert message is not None
        with lock:
            pids.add(int(message))
        started.release()

    transport = StdioClientTransport(FAULT_SERVER, close_timeout=1.0)
    client = Client(transport, timeout=30)
    try:
        futures = [client.call_tool_async("block", on_progress=on_progress) for _ in range(8)]
        for _ in range(8):
            assert started.acquire(timeout=10)
        assert pids == {transport.process.pid}
        os.kill(transport.process.pid, signal.SIGKILL)
        began = time.monotonic()
        for future in futures:
            with pytest.raises(ConnectionLost):
                future.result(timeout=5.0)
        assert time.monotonic() - began < 5.0
        began = time.monotonic()
        with pytest.raises(ConnectionLost):
            client.call_tool("echo", {"text": "after"})
        assert time.monotonic() - began < 5.0  # failed fast, not at its timeout
        assert client.closed
    finally:
        began = time.monotonic()
        client.close()
        assert time.monotonic() - began < 10.0
    assert transport.process.returncode == -signal.SIGKILL
    with pytest.raises(ChildProcessError):
        os.waitpid(transport.process.pid, os.WNOHANG)  # reaped: no zombie


# --- a server that writes garbage, then exits ----------------------------------------------------


@pytest.mark.timeout(30)
@pytest.mark.parametrize("mode", ["binary", "partial", "oversized", "shapes"])
def test_garbage_then_exit_is_a_typed_error_stdio_8_shutdown_3(mode: str, wire: Any) -> None:
    """STDIO-8, SHUTDOWN-3/5: bytes that are not UTF-8, half a message, an endless line,
    JSON that is not JSON-RPC: the call fails with ConnectionLost once the server exits,
    nothing hangs, and its exit status is collected."""
    transport = StdioClientTransport([*GARBAGE, mode], stderr=subprocess.DEVNULL,
                                     max_message_size=64 * 1024)
    with wire.allow_invalid():  # the client answers garbage with id-less errors (AMBIG-3)
        client = Client(transport, timeout=10)
        try:
            client.ping()
            began = time.monotonic()
            with pytest.raises(ConnectionLost):
                client.call_tool("anything")
            assert time.monotonic() - began < 5.0
            with pytest.raises(ConnectionLost):
                client.ping()
        finally:
            client.close()
    assert transport.process.returncode == 3


@pytest.mark.timeout(30)
def test_garbage_instead_of_initialize_result_shutdown_5(wire: Any) -> None:
    """SHUTDOWN-5, LIFECYCLE-1: a program that is no MCP server answers initialize
    with HTML and exits: Client.stdio raises ConnectionLost at once, leaving nothing."""
    began = time.monotonic()
    with wire.allow_invalid(), pytest.raises(ConnectionLost):
        Client.stdio([*GARBAGE, "init"], stderr=subprocess.DEVNULL, timeout=10, **LEGACY_ERA)
    assert time.monotonic() - began < 5.0


# --- a peer that stops reading -----------------------------------------------------------------


@pytest.mark.timeout(30)
def test_server_not_reading_calls_time_out_and_memory_stays_flat_lifecycle_9() -> None:
    """LIFECYCLE-9: once a write to a server that stopped reading is stuck, every later
    call still ends at its own timeout, nothing it sent is buffered (50 calls of 1 MiB
    leave the resident set flat), and close() stops the server within its bounds."""
    transport = StdioClientTransport([*GARBAGE, "no-read"], close_timeout=0.3,
                                     stderr=subprocess.DEVNULL)
    client = Client(transport, timeout=10)
    stuck_outcome: list[BaseException] = []

    def stuck_call() -> None:
        try:
            client.call_tool("echo", {"text": "s" * (4 * 1024 * 1024)}, timeout=60)
        except McpError as exc:
            stuck_outcome.append(exc)

    stuck = threading.Thread(target=stuck_call, name="test:stuck-writer")
    try:
        stuck.start()
        # The 4 MiB request fills the pipe (64 KiB) and its write blocks for good; any
        # later call waits for the write lock until its own deadline.
        with pytest.raises(RequestTimeout):
            client.ping(timeout=0.5)
        rss_before = status_kib("self", "VmRSS")
        payload = "p" * (1024 * 1024)
        began = time.monotonic()
        for _ in range(50):
            with pytest.raises(RequestTimeout):
                client.call_tool("echo", {"text": payload}, timeout=0.05)
        elapsed = time.monotonic() - began
        growth_kib = status_kib("self", "VmRSS") - rss_before
        assert elapsed < 50 * 0.05 + 5.0
        assert growth_kib < 32 * 1024, f"resident set grew by {growth_kib} KiB"
    finally:
        began = time.monotonic()
        client.close()
        assert time.monotonic() - began < 5.0
        stuck.join(5)
    assert not stuck.is_alive()
    assert len(stuck_outcome) == 1 and isinstance(stuck_outcome[0], ConnectionClosed)
    assert transport.process.returncode == -signal.SIGTERM


@pytest.mark.timeout(30)
def test_call_whose_write_is_stuck_ends_at_its_timeout_lifecycle_9() -> None:
    """LIFECYCLE-9: the call whose 4 MiB write is stuck raises RequestTimeout at its
    own deadline, like every other call."""
    transport = StdioClientTransport([*GARBAGE, "no-read"], close_timeout=0.3,
                                     stderr=subprocess.DEVNULL)
    client = Client(transport, timeout=10)
    outcome: list[tuple[BaseException, float]] = []

    def call() -> None:
        began = time.monotonic()
        try:
            client.call_tool("echo", {"text": "s" * (4 * 1024 * 1024)}, timeout=0.5)
        except McpError as exc:
            outcome.append((exc, time.monotonic() - began))

    caller = threading.Thread(target=call, name="test:stuck-caller")
    caller.start()
    try:
        caller.join(10.0)
        assert not caller.is_alive(), "the call was still blocked 9.5 s after its timeout"
        assert isinstance(outcome[0][0], RequestTimeout)
    finally:
        client.close()
        caller.join(5)


@pytest.mark.timeout(60)
def test_client_not_reading_server_buffers_what_it_was_sent_then_answers_all_gen_3(
        record_property: Any, tmp_path: Path) -> None:
    """A client that stops reading the server's stdout: the server's writes block (the
    pipe holds 64 KiB), its handlers wait for the write lock, later requests queue;
    once the client reads again every answer arrives, each matched to its request. The
    server's peak memory growth is recorded (docs/reliability.md)."""
    server_log = tmp_path / "server.log"
    with server_log.open("wb") as log_file:
        process = subprocess.Popen(FAULT_SERVER, stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=log_file)
    assert process.stdin is not None and process.stdout is not None

    def receive() -> Any:
        line = process.stdout.readline()  # type: ignore[union-attr]
        assert line, f"the server ended: {server_log.read_text()[-2000:]}"
        return json.loads(line)

    try:
        process.stdin.write(json.dumps({
            "jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                       "clientInfo": {"name": "slow", "version": "0"}}}).encode() + b"\n")
        process.stdin.flush()
        assert receive()["id"] == "init"
        process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        peak_before = status_kib(process.pid, "VmHWM")
        count, size = 200, 64 * 1024
        for n in range(count):
            process.stdin.write(json.dumps({
                "jsonrpc": "2.0", "id": n, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": f"{n:08d}" * (size // 8)}},
            }).encode() + b"\n")
        process.stdin.flush()
        answers: dict[int, str] = {}
        while len(answers) < count:
            message = receive()
            answers[message["id"]] = message["result"]["content"][0]["text"]
        assert all(text == f"{n:08d}" * (size // 8) for n, text in answers.items())
        growth = status_kib(process.pid, "VmHWM") - peak_before
        record_property("server_peak_growth_kib", growth)
        # What was sent is about 12.5 MiB; the server holds at most a few copies of it.
        assert growth < 256 * 1024, f"server peak grew by {growth} KiB"
    finally:
        process.stdin.close()
        process.wait(10)
        process.stdout.close()
    assert process.returncode == 0
