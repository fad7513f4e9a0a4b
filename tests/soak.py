"""The soak test: many threads, many clients, every answer matched to its caller.

Run on demand::

    python -m tests.soak --calls 100000

Half the calls (``--stdio-share``) go through one stdio Client shared by
``--stdio-threads`` threads; the rest through ``--http-clients`` Client.http instances,
each shared by ``--http-threads`` threads, against one Streamable HTTP server running as
a subprocess (``tests/servers/fault_server.py http``). Every call echoes a payload unique
to it and the answer is compared with what was sent. The report gives calls, threads,
calls/s, and for this process and each server process: peak and current resident set,
thread count and open file descriptors, at the start and at the end.

``tests/test_soak.py`` runs a short version of :func:`run` in CI.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from mcp_sync import Client, types

HERE = Path(__file__).resolve().parent
FAULT_SERVER = [sys.executable, str(HERE / "servers" / "fault_server.py")]


def process_figures(pid: int | str = "self") -> dict[str, int]:
    """Peak and current resident set (KiB), threads and open descriptors of a process."""
    figures: dict[str, int] = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmHWM", "VmRSS", "Threads"):
                figures[name] = int(value.split()[0])
    figures["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    return figures


class Tally:
    """Counts answers, mismatches and errors from many threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls = 0
        self.mismatches = 0
        self.failed = 0
        self.errors: list[str] = []

    def add(self, calls: int, mismatches: int, errors: list[str]) -> None:
        with self.lock:
            self.calls += calls
            self.mismatches += mismatches
            self.failed += len(errors)
            self.errors.extend(errors[:5])


def _hammer(client: Client, label: str, count: int, tally: Tally) -> None:
    mismatches = 0
    errors: list[str] = []
    serial = itertools.count()
    for _ in range(count):
        payload = f"{label}:{next(serial)}:{os.urandom(6).hex()}"
        try:
            result = client.call_tool("echo", {"text": payload})
            content = result.content[0]
            if not isinstance(content, types.TextContent) or content.text != payload:
                mismatches += 1
        except Exception as exc:
            errors.append(f"{label}: {exc!r}")
    tally.add(count, mismatches, errors)


def _run_threads(jobs: list[tuple[Client, str, int]], tally: Tally) -> float:
    threads = [threading.Thread(target=_hammer, args=(client, label, count, tally),
                                name=f"soak:{label}") for client, label, count in jobs]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.monotonic() - began


def _split(total: int, parts: int) -> list[int]:
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def run(calls: int = 100_000, *, stdio_threads: int = 16, http_clients: int = 8,
        http_threads: int = 4, stdio_share: float = 0.5, timeout: float = 60.0,
        progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run the soak and return its figures (see the module docstring).

    ``timeout`` is each call's timeout. The HTTP server's stderr is kept in a temporary
    file and its last lines are in the report under ``http_server_stderr`` when
    anything failed.
    """
    with tempfile.TemporaryFile() as server_log:
        return _run(calls, stdio_threads, http_clients, http_threads, stdio_share, timeout,
                    progress, server_log)


def _run(calls: int, stdio_threads: int, http_clients: int, http_threads: int,
         stdio_share: float, timeout: float, progress: Callable[[str], None] | None,
         server_log: IO[bytes]) -> dict[str, Any]:
    say = progress or (lambda text: None)
    start_self = process_figures()
    threads_before = threading.active_count()
    stdio_calls = round(calls * stdio_share)
    http_calls = calls - stdio_calls
    report: dict[str, Any] = {"calls": calls, "self_start": start_self}

    http_process = subprocess.Popen([*FAULT_SERVER, "http"], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=server_log)
    assert http_process.stdin is not None and http_process.stdout is not None
    tally = Tally()
    elapsed = 0.0
    try:
        url = http_process.stdout.readline().decode().strip()
        if not url.startswith("http://"):
            raise RuntimeError(f"the HTTP server did not start: {url!r}")
        clients: list[Client] = []
        try:
            stdio = Client.stdio(FAULT_SERVER, timeout=timeout)
            clients.append(stdio)
            stdio_pid = stdio._engine.transport.process.pid  # type: ignore[attr-defined]
            for _ in range(http_clients):
                clients.append(Client.http(url, timeout=timeout))
            report["stdio_server_start"] = process_figures(stdio_pid)
            report["http_server_start"] = process_figures(http_process.pid)
            jobs: list[tuple[Client, str, int]] = []
            if stdio_calls:
                jobs += [(stdio, f"stdio-{i}", count) for i, count in
                         enumerate(_split(stdio_calls, stdio_threads)) if count]
            if http_calls:
                counts = iter(_split(http_calls, http_clients * http_threads))
                jobs += [(clients[1 + c], f"http-{c}-{t}", next(counts))
                         for c in range(http_clients) for t in range(http_threads)]
            say(f"{calls} calls: {stdio_calls} over stdio ({stdio_threads} threads), "
                f"{http_calls} over HTTP ({http_clients} clients x {http_threads} threads)")
            report["threads_calling"] = len(jobs)
            elapsed = _run_threads(jobs, tally)
            report["stdio_server_end"] = process_figures(stdio_pid)
            report["http_server_end"] = process_figures(http_process.pid)
            report["self_busy"] = process_figures()
        finally:
            for client in clients:
                client.close()
    finally:
        http_process.stdin.close()
        try:
            http_process.wait(15)
        except subprocess.TimeoutExpired:
            http_process.kill()
            http_process.wait(5)
        http_process.stdout.close()
        server_log.seek(0)
        stderr_tail = server_log.read().decode("utf-8", "replace").splitlines()[-20:]
    if tally.failed or tally.mismatches:
        report["http_server_stderr"] = stderr_tail
    report.update(
        answered=tally.calls - tally.failed, mismatches=tally.mismatches,
        failed=tally.failed, errors=tally.errors, seconds=round(elapsed, 2),
        calls_per_second=round(tally.calls / elapsed) if elapsed else 0,
        self_end=process_figures(),
        python_threads_before=threads_before, python_threads_after=threading.active_count())
    return report


def _format(report: dict[str, Any]) -> str:
    def figures(name: str) -> str:
        data = report.get(name)
        if not data:
            return "-"
        return (f"peak RSS {data['VmHWM'] / 1024:.1f} MiB, RSS {data['VmRSS'] / 1024:.1f} MiB, "
                f"threads {data['Threads']}, fds {data['fds']}")

    lines = [
        f"calls: {report['calls']}  answered: {report['answered']}  "
        f"mismatched: {report['mismatches']}  failed: {report['failed']}",
        f"calling threads: {report['threads_calling']}  time: {report['seconds']} s  "
        f"calls/s: {report['calls_per_second']}",
        f"this process, start: {figures('self_start')}",
        f"this process, busy:  {figures('self_busy')}",
        f"this process, end:   {figures('self_end')}",
        f"stdio server, start: {figures('stdio_server_start')}",
        f"stdio server, end:   {figures('stdio_server_end')}",
        f"HTTP server, start:  {figures('http_server_start')}",
        f"HTTP server, end:    {figures('http_server_end')}",
    ]
    lines += [f"error: {error}" for error in report["errors"][:10]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.soak", description=__doc__.split(
        "\n\n")[0])
    parser.add_argument("--calls", type=int, default=100_000, help="calls in all")
    parser.add_argument("--stdio-threads", type=int, default=16)
    parser.add_argument("--http-clients", type=int, default=8)
    parser.add_argument("--http-threads", type=int, default=4, help="threads per HTTP client")
    parser.add_argument("--stdio-share", type=float, default=0.5,
                        help="the share of calls made over stdio (0 to 1)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    options = parser.parse_args(argv)
    report = run(options.calls, stdio_threads=options.stdio_threads,
                 http_clients=options.http_clients, http_threads=options.http_threads,
                 stdio_share=options.stdio_share,
                 progress=lambda text: print(text, file=sys.stderr, flush=True))
    print(json.dumps(report, indent=2) if options.json else _format(report))
    return 0 if report["mismatches"] == 0 and not report["failed"] else 1


if __name__ == "__main__":
    sys.exit(main())
