"""Processes for the benchmark: ports, readiness, /proc readings, and cleanup by pid.

Linux only: memory and thread counts come from ``/proc/<pid>/status``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SERVERS = HERE / "servers"
PYTHON = sys.executable


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_port(port: int, process: subprocess.Popen[bytes], bound: float = 30.0) -> float:
    """Poll until ``port`` accepts a connection; return the seconds it took.

    Raises:
        RuntimeError: the process exited first, or the bound passed.
    """
    started = time.perf_counter()
    while time.perf_counter() - started < bound:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1.0).close()
            return time.perf_counter() - started
        except OSError:
            pass
        try:
            process.wait(0.01)
        except subprocess.TimeoutExpired:
            continue
        raise RuntimeError(f"server exited with {process.returncode} before listening")
    raise RuntimeError(f"server did not listen on {port} within {bound}s")


def status(pid: int) -> dict[str, int]:
    """``VmHWM``/``VmRSS`` (KiB) and ``Threads`` of a process; empty once it is gone."""
    wanted = {"VmHWM", "VmRSS", "Threads"}
    found: dict[str, int] = {}
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return found
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in wanted:
            found[key] = int(value.split()[0])
    return found


def _parents() -> dict[int, int]:
    table: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: split after the last ')'.
        fields = stat[stat.rindex(")") + 2:].split()
        table[int(entry)] = int(fields[1])
    return table


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid``, parents before children."""
    parents = _parents()
    found: list[int] = []
    frontier = [pid]
    while frontier:
        current = frontier.pop(0)
        children = sorted(p for p, parent in parents.items() if parent == current)
        found.extend(children)
        frontier.extend(children)
    return found


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def serving_process(root: int, script: str) -> int | None:
    """The deepest process under (or being) ``root`` that runs ``script``.

    For gunicorn that is the worker, not the arbiter; for everything else the server.
    """
    candidates = [root, *descendants(root)]
    matching = [pid for pid in candidates if script in cmdline(pid)]
    return matching[-1] if matching else None


def kill_all(pids: list[int]) -> None:
    """SIGKILL each pid (children first) and reap the ones that are ours."""
    for pid in reversed(pids):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    for pid in pids:
        with contextlib.suppress(OSError):
            os.waitpid(pid, 0)


def become_subreaper() -> bool:
    """Adopt orphaned descendants, so that none escapes :func:`kill_all` (Linux)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_child_subreaper = 36
        return bool(libc.prctl(pr_set_child_subreaper, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


@contextlib.contextmanager
def http_server(argv: list[str], port: int, log: IO[bytes]) -> Iterator[subprocess.Popen[bytes]]:
    """Run a server subprocess until the block ends; it is listening on entry."""
    process = subprocess.Popen(argv, cwd=str(ROOT), stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=log)
    try:
        wait_port(port, process)
        yield process
    finally:
        pids = [process.pid, *descendants(process.pid)]
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(5.0)
        kill_all([pid for pid in pids if pid != process.pid])
        if process.poll() is None:
            process.kill()
            process.wait()


class LoadSampler:
    """Reads a process's thread count and peak memory while a phase runs."""

    def __init__(self, pid: int | None, interval: float = 0.02) -> None:
        self._pid = pid
        self._interval = interval
        self._stop = threading.Event()
        self.max_threads = 0
        self.peak_kib = 0
        self._thread = threading.Thread(target=self._run, name="bench-sampler", daemon=True)

    def __enter__(self) -> LoadSampler:
        if self._pid is not None:
            self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        if self._pid is not None:
            self._thread.join()
            self._read()

    def _read(self) -> None:
        assert self._pid is not None
        found = status(self._pid)
        self.max_threads = max(self.max_threads, found.get("Threads", 0))
        self.peak_kib = max(self.peak_kib, found.get("VmHWM", 0))

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self._read()
