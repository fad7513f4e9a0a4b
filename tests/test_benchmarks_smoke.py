"""The benchmark runner (``benchmarks/run.py``) still runs and still prints its table.

Only the two cheapest cases run, in the smallest mode; no timing is asserted, because the
numbers depend on the machine. The runner is a child process, as it is for its users.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUNNER = ROOT / "benchmarks" / "run.py"
#: The whole run usually takes 2-4 s; the bound leaves room for a loaded machine.
RUN_BOUND = 25.0
NUMBER = r"\d[\d,]*(?:\.\d+)?"


def _row(table: str, label: str) -> list[str]:
    for line in table.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) > 2 and cells[0] == label and cells[1] == "stdio":
            return cells
    raise AssertionError(f"no stdio row {label!r} in:\n{table}")


@pytest.mark.timeout(30)
def test_quick_run_prints_ours_and_raw_stdio_rows() -> None:
    """Our stdio case and the raw pipe baseline each yield a number in the main table.

    STDIO-1, TOOLS-4 (exercised end to end: the runner spawns our stdio server and calls
    its ``echo`` tool); the rest checks the benchmark tooling, not a requirement.
    """
    completed = subprocess.run(
        [sys.executable, str(RUNNER), "--quick", "--repeat", "1", "--cap", "12",
         "--only", r"^(ours/ours:stdio|raw-pipe:stdio)$"],
        cwd=str(ROOT), capture_output=True, text=True, timeout=RUN_BOUND, check=False)
    assert completed.returncode == 0, completed.stderr[-3000:]
    report = completed.stdout
    assert "mcp_sync" in report and "mcp 2." in report  # the machine header
    # The measured package was byte-compiled, and the interpreter's own start-up is given.
    assert "- bytecode: compiled before the run" in report
    assert re.search(rf"- python start-up: {NUMBER} ms \({NUMBER} without site\)", report)
    # How much CPU time other guests of the machine took while it ran (Linux /proc/stat).
    assert re.search(rf"- CPU time stolen by the hypervisor during the run: {NUMBER}%", report)

    # Columns: workload, transport, ours, SDK, raw, raw+thr, ratios..., target, met.
    sequential = _row(report, "sequential echo (calls/s)")
    assert re.fullmatch(NUMBER, sequential[2]), sequential  # ours
    assert re.fullmatch(NUMBER, sequential[4]), sequential  # raw pipe
    assert sequential[3] == ""  # the SDK case did not run
    assert re.fullmatch(r"\d+\.\d\dx", sequential[7]), sequential  # ours/raw
    for label in ("32 callers, one client (calls/s)", "1 MiB echo (req+resp bytes) (MB/s)",
                  "10,000-item result (calls/s)", "spawn/connect to 1st result (ms)",
                  "server peak RSS (VmHWM) (MiB)"):
        row = _row(report, label)
        assert re.fullmatch(NUMBER, row[2]) and re.fullmatch(NUMBER, row[4]), row
    assert "## failures" not in report, report
