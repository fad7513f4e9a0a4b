"""Benchmark mcp_sync against the official MCP SDK and against raw baselines, in one run.

Usage::

    python benchmarks/run.py             # everything, 3 repeats (about 8 minutes on 2 cores)
    python benchmarks/run.py --quick     # 1 repeat, small counts (under a minute)
    python benchmarks/run.py --only 'stdio' --repeat 5 --out bench.md

Each case (a client, a server, a transport) runs in its own process, which starts its
own server; cases alternate within each repeat (A, B, C, A, B, C, ...), and the tables
show medians over repeats. See docs/benchmarks.md for what each row means.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import json
import os
import platform
import re
import shutil
import site
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE / "servers")]

from _cases import SDK_MODES, Case, all_cases  # noqa: E402
from _proc import PYTHON, ROOT, become_subreaper, descendants, kill_all  # noqa: E402
from _report import WORKLOADS, Results, cross_table, errors, main_table  # noqa: E402
from _workloads import FULL, QUICK, Budget  # noqa: E402
from _wsgi import WSGI_THREADS  # noqa: E402

#: A case that has not finished after this long is killed and reported as "timeout".
FULL_CAP = 90.0
QUICK_CAP = 45.0


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def cpu_times() -> list[int] | None:
    """The machine's CPU time so far by kind (``/proc/stat``, in clock ticks), or None."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            return [int(field) for field in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None


def steal_line(before: list[int] | None, after: list[int] | None) -> str:
    """How much of the CPU time of the run the hypervisor gave to other guests.

    On a shared virtual machine that time is taken from under the processes measured,
    at moments nobody chooses: a run with much of it is slower throughout, and the
    medians of its absolute rows (connect) with it.
    """
    if before is None or after is None or len(before) < 8 or len(after) < 8:
        return "- CPU time stolen by the hypervisor during the run: unknown"
    spent = [b - a for a, b in zip(before, after, strict=False)]
    total = sum(spent[:8])  # user nice system idle iowait irq softirq steal
    share = 100 * spent[7] / total if total else 0.0
    return f"- CPU time stolen by the hypervisor during the run: {share:.1f}%"


def machine() -> str:
    load = os.getloadavg()
    return "\n".join([
        f"- date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}",
        f"- machine: {os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), "
        f"{_cpu_model()}, {platform.system()} {platform.release()}",
        f"- python: {platform.python_implementation()} {platform.python_version()}",
        f"- mcp_sync {_version('mcp_sync')}, mcp {_version('mcp')}, "
        f"werkzeug {_version('werkzeug')}, requests {_version('requests')}, "
        f"gunicorn {_version('gunicorn')}, waitress {_version('waitress')}, "
        f"uvicorn {_version('uvicorn')}",
        f"- eras: legacy rows negotiate 2025-11-25 with initialize (our client offers only the "
        f"legacy versions, the SDK client mode={SDK_MODES['legacy']!r}); rows marked modern "
        f"speak 2026-07-28 after server/discover (our client offers only it, the SDK client "
        f"mode={SDK_MODES['modern']!r}); HTTP servers: gunicorn gthread "
        f"(1 worker) and waitress with {WSGI_THREADS} threads, the embedded server "
        "(run_http, waitress) with its defaults, the SDK on its own uvicorn",
        f"- load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
    ])


def startup_line() -> str:
    """How long this Python takes to start and exit, with and without ``site``, and the
    ``.pth`` files that run code at every start-up: every connect row includes that time.
    An editable install's import hook is one of them (about 18 ms on the machine in
    docs/benchmarks.md), which a user's ordinary install does not have."""
    def median_ms(*flags: str) -> float:
        times = []
        for _ in range(7):
            start = time.perf_counter()
            subprocess.run([PYTHON, *flags, "-c", "pass"], check=True)
            times.append(time.perf_counter() - start)
        return statistics.median(times) * 1000
    hooks = sorted(path.name for folder in site.getsitepackages()
                   for path in Path(folder).glob("*.pth")
                   if any(line.startswith("import") for line in
                          path.read_text("utf-8", "replace").splitlines()))
    return (f"- python start-up: {median_ms():.1f} ms ({median_ms('-S'):.1f} without site); "
            f".pth files run at start-up: {', '.join(hooks) or 'none'}")


def compile_measured_code() -> str:
    """Byte-compile mcp_sync (where every process of the run will import it from) and
    the benchmark's own modules; the report's line saying so.

    An installed package comes with its bytecode (pip compiles it, as it did the SDK's),
    but a checkout or clone has none, and with ``PYTHONDONTWRITEBYTECODE`` set (common on
    CI machines) Python compiles such a package from source in every process it starts,
    without keeping the result: about 40 ms more of every server start-up, which the
    connect row would count as the library's own.
    """
    spec = importlib.util.find_spec("mcp_sync")
    places = [Path(p) for p in (spec.submodule_search_locations or [])] if spec else []
    unwritten = [str(place) for place in [*places, HERE]
                 if not compileall.compile_dir(str(place), quiet=1)]
    if unwritten:
        return f"- bytecode: compiled before the run, except in {', '.join(unwritten)}"
    return "- bytecode: compiled before the run"


def _last_line(path: Path) -> str:
    lines = [line for line in path.read_text("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1].strip()[:200] if lines else "no output"


def run_case(case: Case, budget: Budget, cap: float, log_dir: Path,
             attempt: int) -> dict[str, dict[str, Any]]:
    """Run one case in a worker process; its records by workload, failures included."""
    spec = {**case.spec(), "budget": budget.to_dict(), "cap": cap}
    log_path = log_dir / f"{re.sub(r'[^A-Za-z0-9.-]+', '_', case.name)}.{attempt}.log"
    records: dict[str, dict[str, Any]] = {}
    with open(log_path, "wb") as log:
        worker = subprocess.Popen([PYTHON, str(HERE / "_worker.py"), json.dumps(spec)],
                                  cwd=str(ROOT), stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=log)
        timed_out = False
        try:
            output, _ = worker.communicate(timeout=cap)
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_all([worker.pid, *descendants(worker.pid)])
            output, _ = worker.communicate()
        finally:
            # Servers that outlived their worker were adopted by us (subreaper).
            kill_all(descendants(os.getpid()))
    for line in output.decode("utf-8", "replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        records[record.pop("workload")] = record
    for workload in WORKLOADS:
        if workload.key not in records:
            if timed_out:
                records[workload.key] = {"timeout": f"killed after {cap:g}s"}
            else:
                records[workload.key] = {
                    "error": f"no result, worker exit {worker.returncode}: "
                             f"{_last_line(log_path)} (log: {log_path})"}
    return records


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Benchmark mcp_sync against the official MCP SDK and raw baselines.")
    parser.add_argument("--quick", action="store_true",
                        help="one repeat with small counts (unless --repeat is given)")
    parser.add_argument("--repeat", type=int, default=None,
                        help="rounds over every case (default 3, or 1 with --quick)")
    parser.add_argument("--only", metavar="PATTERN", default=None,
                        help="run the cases whose name matches this regular expression")
    parser.add_argument("--out", metavar="FILE.md", type=Path,
                        help="also write the report to this file")
    parser.add_argument("--json", metavar="FILE.json", type=Path,
                        help="also write every record of every repeat to this file")
    parser.add_argument("--cap", type=float, default=None,
                        help="seconds before a case is killed (default 90, quick 45)")
    parser.add_argument("--list", action="store_true", help="list the case names and exit")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    cases = all_cases()
    if args.only:
        pattern = re.compile(args.only)
        cases = [case for case in cases if pattern.search(case.name)]
    if args.list or not cases:
        print("\n".join(case.name for case in all_cases() if case in cases) or
              "no case matches --only")
        return 0 if cases else 2
    budget = QUICK if args.quick else FULL
    repeat = args.repeat if args.repeat is not None else (1 if args.quick else 3)
    cap = args.cap if args.cap is not None else (QUICK_CAP if args.quick else FULL_CAP)
    become_subreaper()
    log_dir = Path(tempfile.mkdtemp(prefix="mcp-sync-bench-"))
    header = "\n".join([machine(), compile_measured_code(), startup_line()])
    print(header, file=sys.stderr)
    print(f"- logs: {log_dir}", file=sys.stderr)

    results: Results = {case.name: {} for case in cases}
    cpu_at_start = cpu_times()
    started = time.perf_counter()
    for attempt in range(1, repeat + 1):
        for case in cases:  # alternate: every case once per round, same order each round
            t0 = time.perf_counter()
            records = run_case(case, budget, cap, log_dir, attempt)
            for workload, record in records.items():
                results[case.name].setdefault(workload, []).append(record)
            summary = ", ".join(
                f"{k}={r['value']:.4g}" if "value" in r else f"{k}=FAILED"
                for k, r in records.items())
            print(f"[{attempt}/{repeat}] {case.name} ({time.perf_counter() - t0:.1f}s): "
                  f"{summary}", file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - started

    load = os.getloadavg()
    report = "\n".join([
        "# mcp_sync benchmark", "",
        header,
        f"- load average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
        steal_line(cpu_at_start, cpu_times()),
        f"- mode: {'quick' if args.quick else 'full'}, {repeat} repeat(s), "
        f"{len(cases)} case(s), {elapsed:.0f} s; medians over repeats",
        f"- budget per phase: {budget.seq_calls} sequential calls or {budget.seq_seconds}s; "
        f"{budget.conc_calls} calls by {budget.threads} callers or {budget.conc_seconds}s; "
        f"{budget.big_calls} x {budget.big_bytes} B echoes or {budget.big_seconds}s; "
        f"{budget.items_calls} x {budget.items}-item calls or {budget.items_seconds}s",
        "",
        "## ours vs SDK vs raw", "",
        main_table(results), "",
        "## cross: which side costs what", "",
        cross_table(results), "",
    ])
    failures = errors(results)
    if failures:
        report += "\n## failures\n\n" + "\n".join(f"- {line}" for line in failures) + "\n"
    else:
        shutil.rmtree(log_dir, ignore_errors=True)  # the logs only matter when a case failed
    print(report)
    if args.out:
        args.out.write_text(report)
    if args.json:
        args.json.write_text(json.dumps({"machine": header, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
