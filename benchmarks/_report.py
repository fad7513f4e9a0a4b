"""Medians, ratios and targets, as markdown tables."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from _cases import HTTP_MODES, RAW_WSGI_SERVERS, WSGI_SERVERS

#: results[case name][workload] = one record per repeat: {"value": x} or {"error": why}.
Results = dict[str, dict[str, list[dict[str, Any]]]]


@dataclass(frozen=True)
class Workload:
    key: str
    label: str
    unit: str
    digits: int


WORKLOADS = [
    Workload("seq", "sequential echo", "calls/s", 0),
    Workload("conc", "32 callers, one client", "calls/s", 0),
    Workload("big", "1 MiB echo (req+resp bytes)", "MB/s", 1),
    Workload("items", "10,000-item result", "calls/s", 1),
    Workload("connect_ms", "spawn/connect to 1st result", "ms", 0),
    Workload("rss_mib", "server peak RSS (VmHWM)", "MiB", 1),
    Workload("threads", "server threads under load", "", 0),
]


@dataclass(frozen=True)
class Cell:
    value: float | None
    note: str = ""  # "error", "timeout", or "(1 err)" beside a median


def cell(results: Results, case: str | None, workload: str) -> Cell | None:
    """The median over repeats; None when the case was not run."""
    if case is None or case not in results:
        return None
    records = results[case].get(workload, [])
    values = [r["value"] for r in records if "value" in r]
    failed = [r for r in records if "value" not in r]
    if not values:
        if not failed:
            return Cell(None, "n/a")
        return Cell(None, "timeout" if any("timeout" in r for r in failed) else "error")
    note = f"({len(failed)} err)" if failed else ""
    return Cell(statistics.median(values), note)


def fmt(c: Cell | None, digits: int) -> str:
    if c is None:
        return ""
    if c.value is None:
        return c.note
    text = f"{c.value:,.{digits}f}"
    return f"{text} {c.note}" if c.note else text


def ratio(a: Cell | None, b: Cell | None) -> float | None:
    if a is None or b is None or a.value is None or b.value is None or b.value == 0:
        return None
    return a.value / b.value


def fmt_ratio(r: float | None) -> str:
    return "" if r is None else f"{r:.2f}x"


@dataclass(frozen=True)
class Row:
    transport: str
    ours: str | None
    sdk: str | None
    raw: str | None
    raw_threads: str | None


def raw_server(wsgi: str) -> str:
    """The server of the raw HTTP baseline for a row: the embedded server is waitress."""
    return wsgi if wsgi in RAW_WSGI_SERVERS else "waitress"


def rows() -> list[Row]:
    found = [Row("stdio", "ours/ours:stdio", "sdk/sdk:stdio", "raw-pipe:stdio",
                 "raw-threads:stdio")]
    for mode in HTTP_MODES:
        for wsgi in WSGI_SERVERS:
            found.append(Row(f"http-{mode} {wsgi}", f"ours/ours:http-{mode}:{wsgi}",
                             f"sdk/sdk:http-{mode}:uvicorn", f"raw-http:http:{raw_server(wsgi)}",
                             None))
    # The modern era, against the same baselines as its legacy twin.
    found.append(Row("stdio modern", "ours/ours:stdio:modern", "sdk/sdk:stdio:modern",
                     "raw-pipe:stdio", "raw-threads:stdio"))
    found.append(Row("http-json embedded modern", "ours/ours:http-json:embedded:modern",
                     "sdk/sdk:http-json:uvicorn:modern", "raw-http:http:waitress", None))
    return found


Check = Callable[[Cell | None, Cell | None, Cell | None, Cell | None], bool | None]


def _at_least(factor: float, which: str) -> Check:
    def check(ours: Cell | None, sdk: Cell | None, raw: Cell | None,
              raw_threads: Cell | None) -> bool | None:
        other = {"sdk": sdk, "raw": raw, "raw_threads": raw_threads}[which]
        r = ratio(ours, other)
        return None if r is None else r >= factor
    return check


def _below(limit: float) -> Check:
    def check(ours: Cell | None, *_: Cell | None) -> bool | None:
        return None if ours is None or ours.value is None else ours.value < limit
    return check


def targets(workload: str, transport: str) -> list[tuple[str, Check]]:
    stdio = transport.startswith("stdio")
    if workload in ("seq", "conc"):
        if stdio:
            return [(">=5x SDK", _at_least(5, "sdk")),
                    (">=0.5x raw+thr", _at_least(0.5, "raw_threads"))]
        return [(">=2x SDK", _at_least(2, "sdk"))]
    if workload == "big" and stdio:
        return [(">=0.8x raw", _at_least(0.8, "raw"))]
    if workload == "items":
        return [(">=10x SDK", _at_least(10, "sdk"))]
    if workload == "connect_ms":
        return [("<150 ms", _below(150))]
    if workload == "rss_mib":
        return [("<40 MiB", _below(40))]
    return []


def main_table(results: Results) -> str:
    lines = [
        "| workload | transport | ours | SDK | raw | raw+thr | ours/SDK | ours/raw "
        "| ours/raw+thr | target | met |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|---|---|",
    ]
    for workload in WORKLOADS:
        for row in rows():
            cells = [cell(results, name, workload.key)
                     for name in (row.ours, row.sdk, row.raw, row.raw_threads)]
            if all(c is None for c in cells):
                continue
            ours, sdk, raw, raw_threads = cells
            goals = targets(workload.key, row.transport)
            verdicts = [check(ours, sdk, raw, raw_threads) for _, check in goals]
            met = ", ".join("?" if v is None else ("ok" if v else "MISS") for v in verdicts)
            label = f"{workload.label} ({workload.unit})" if workload.unit else workload.label
            lines.append("| " + " | ".join([
                label, row.transport, *(fmt(c, workload.digits) for c in cells),
                fmt_ratio(ratio(ours, sdk)), fmt_ratio(ratio(ours, raw)),
                fmt_ratio(ratio(ours, raw_threads)),
                "; ".join(text for text, _ in goals), met]) + " |")
    return "\n".join(lines)


def cross_table(results: Results) -> str:
    lines = [
        "| workload | transport | ours→ours | SDK→SDK | SDK→ours | ours→SDK "
        "| our client (ours→SDK / SDK→SDK) | our server (SDK→ours / SDK→SDK) |",
        "|---|---|--:|--:|--:|--:|--:|--:|",
    ]
    transports = [("stdio", "stdio", "stdio", "stdio")]
    transports += [(f"http-{m}", f"http-{m}:embedded", f"http-{m}:uvicorn",
                    f"http-{m}:embedded") for m in HTTP_MODES]
    for workload in WORKLOADS[:5]:
        for label, ours_t, sdk_t, cross_ours_t in transports:
            names = (f"ours/ours:{ours_t}", f"sdk/sdk:{sdk_t}", f"sdk/ours:{cross_ours_t}",
                     f"ours/sdk:{sdk_t}")
            cells = [cell(results, name, workload.key) for name in names]
            if all(c is None for c in cells):
                continue
            _ours, sdk, sdk_ours, ours_sdk = cells
            lines.append("| " + " | ".join([
                f"{workload.label} ({workload.unit})", label,
                *(fmt(c, workload.digits) for c in cells),
                fmt_ratio(ratio(ours_sdk, sdk)), fmt_ratio(ratio(sdk_ours, sdk))]) + " |")
    return "\n".join(lines)


def errors(results: Results) -> list[str]:
    """One line per case and distinct failure, naming the workloads and repeats it hit."""
    found: dict[tuple[str, str], tuple[list[str], set[int]]] = {}
    for case, workloads in results.items():
        for workload, records in workloads.items():
            for repeat, record in enumerate(records, 1):
                if "value" in record:
                    continue
                reason = str(record.get("error") or record.get("timeout") or "?")
                names, repeats = found.setdefault((case, reason), ([], set()))
                if workload not in names:
                    names.append(workload)
                repeats.add(repeat)
    return [f"{case} ({', '.join(names)}; repeat {', '.join(map(str, sorted(repeats)))}): "
            f"{reason}" for (case, reason), (names, repeats) in found.items()]
