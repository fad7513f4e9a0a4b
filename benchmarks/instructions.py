"""Instructions per call, counted by valgrind: a measure that load does not move.

    python benchmarks/instructions.py [--eras legacy modern] [--cases memory http]

Each case runs ``echo`` calls under ``valgrind --tool=callgrind`` twice, 100 and 600 of
them, and prints the difference divided by 500: the instructions of one call, start-up
left out. ``memory`` is a client and a server in one process over the in-memory
transport (both sides of a call); ``http`` is werkzeug's test client POSTing to
``Server.wsgi_app(json_response=True)`` (the server's side of a request, werkzeug's
test client included). Counts of two runs of the same code differ by up to 2% (hash
seeds, garbage collection). Needs valgrind (Debian: ``apt-get install valgrind``);
compare two checkouts by running each one's copy of this script.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FEW, MANY = 100, 600
MODERN = "2026-07-28"
LEGACY = "2025-11-25"


def run_memory(era: str, calls: int) -> None:
    sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks" / "servers")]
    import ours_server

    from mcp_sync.testing import open_client

    version = MODERN if era == "modern" else LEGACY
    with open_client(ours_server.server, supported_versions=(version,)) as client:
        for _ in range(calls):
            client.call_tool("echo", {"message": "hi"})


def run_http(era: str, calls: int) -> None:
    sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks" / "servers")]
    import ours_server
    from werkzeug.test import Client as TestClient

    headers = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}
    with ours_server.server.wsgi_app(json_response=True, max_get_streams=0) as app:
        client = TestClient(app)
        params: dict[str, object] = {"name": "echo", "arguments": {"message": "hi"}}
        if era == "modern":
            headers.update({"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call",
                            "Mcp-Name": "echo"})
            params["_meta"] = {"io.modelcontextprotocol/protocolVersion": MODERN,
                               "io.modelcontextprotocol/clientCapabilities": {},
                               "io.modelcontextprotocol/clientInfo": {"name": "count",
                                                                      "version": "1"}}
        else:
            opened = client.post("/mcp", headers=headers, data=json.dumps({
                "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": LEGACY, "capabilities": {},
                    "clientInfo": {"name": "count", "version": "1"}}}))
            headers.update({"Mcp-Session-Id": opened.headers["Mcp-Session-Id"],
                            "MCP-Protocol-Version": LEGACY})
            client.post("/mcp", headers=headers, data=json.dumps(
                {"jsonrpc": "2.0", "method": "notifications/initialized"}))
        for number in range(1, calls + 1):
            answer = client.post("/mcp", headers=headers, data=json.dumps(
                {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params}))
            if answer.status_code != 200 or b'"hi"' not in answer.data:
                raise SystemExit(f"unexpected answer: {answer.status_code} {answer.data!r}")


def count(case: str, era: str, calls: int) -> int:
    """Instructions of a whole run of ``case`` with ``calls`` calls."""
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
               sys.executable, __file__, "--run", case, era, str(calls)]
    finished = subprocess.run(command, capture_output=True, text=True, check=False)
    found = re.search(r"Collected : (\d+)", finished.stderr)
    if finished.returncode != 0 or found is None:
        raise SystemExit(f"valgrind failed for {case} {era}:\n{finished.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eras", nargs="+", default=["legacy", "modern"],
                        choices=["legacy", "modern"])
    parser.add_argument("--cases", nargs="+", default=["memory", "http"],
                        choices=["memory", "http"])
    parser.add_argument("--run", nargs=3, metavar=("CASE", "ERA", "CALLS"),
                        help=argparse.SUPPRESS)  # one counted run, under valgrind
    args = parser.parse_args()
    if args.run:
        case, era, calls = args.run
        (run_memory if case == "memory" else run_http)(era, int(calls))
        return
    for case in args.cases:
        for era in args.eras:
            per_call = (count(case, era, MANY) - count(case, era, FEW)) // (MANY - FEW)
            print(f"{case:6} {era:6} {per_call:>10,} instructions per call", flush=True)


if __name__ == "__main__":
    main()
