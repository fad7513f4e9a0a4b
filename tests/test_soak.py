"""The short soak for CI: a few thousand calls through shared stdio and HTTP clients.

The full run is ``python -m tests.soak --calls 100000`` (see tests/soak.py); this one
checks the same things on a budget: every answer is the caller's own, and threads and
file descriptors are back where they started once every client is closed.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.soak import run


@pytest.mark.timeout(60)
def test_short_soak_every_answer_matched_and_nothing_left_jsonrpc_4_jsonrpc_13(
        record_property: Any) -> None:
    """JSONRPC-4/13, SHUTDOWN-5: 3,000 calls, half through one stdio client shared by 8
    threads, half through 4 HTTP clients with 4 threads each; every call echoes a
    payload of its own and gets exactly that back; afterwards this process has the
    threads and descriptors it started with (memory is reported, not judged, beyond a
    generous bound)."""
    report = run(3000, stdio_threads=8, http_clients=4, http_threads=4, timeout=15)
    for name in ("calls_per_second", "seconds"):
        record_property(name, report[name])
    record_property("rss_growth_kib",
                    report["self_end"]["VmRSS"] - report["self_start"]["VmRSS"])
    assert report["errors"] == [] and report["failed"] == 0
    assert report["mismatches"] == 0
    assert report["answered"] == 3000
    assert report["python_threads_after"] == report["python_threads_before"]
    # The kernel's count may still include a thread of an earlier test that Python had
    # already joined (a joined thread's OS thread ends a moment later): none may be added.
    assert report["self_end"]["Threads"] <= report["self_start"]["Threads"]
    assert report["self_end"]["fds"] == report["self_start"]["fds"]
    assert report["self_end"]["VmRSS"] - report["self_start"]["VmRSS"] < 256 * 1024
