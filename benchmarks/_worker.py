"""One benchmark case in its own process: start the server, run the client, report.

Run by ``run.py`` as ``python _worker.py SPEC_JSON``. Each measurement is written as one
JSON line to the original stdout as soon as it is known, so a case that is killed at its
time cap still reports what it finished. Everything else goes to stderr.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from _proc import PYTHON, SERVERS, free_port, http_server
from _workloads import Budget, run_blocking

SCRIPTS = {
    "ours": "ours_server.py",
    "sdk": "sdk_server.py",
    "raw_pipe": "raw_pipe_server.py",
    "raw_http": "raw_http_server.py",
}


def _results_channel() -> Any:
    # Libraries or servers that print must not corrupt the records: fd 1 becomes stderr.
    results = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    return results


def main() -> None:
    spec: dict[str, Any] = json.loads(sys.argv[1])
    results = _results_channel()

    def emit(name: str, **record: Any) -> None:
        results.write(json.dumps({"workload": name, **record}) + "\n")

    budget = Budget(**spec["budget"])
    client, server = spec["client"], spec["server"]
    script = str(SERVERS / SCRIPTS[server])
    log = sys.stderr.buffer
    sys.stderr.flush()
    era = spec.get("era", "legacy")
    if spec["transport"] == "stdio":
        _stdio(client, script, budget, emit, spec["cap"], log, era)
    else:
        port = free_port()
        argv = [PYTHON, script, "--http", str(port)]
        if spec.get("mode") == "json":
            argv.append("--json-response")
        if server != "sdk":
            argv += ["--wsgi", spec["wsgi"]]
        path = "/" if server == "raw_http" else "/mcp"
        url = f"http://127.0.0.1:{port}{path}"
        with http_server(argv, port, log) as process:
            _http(client, url, script, process.pid, budget, emit, spec["cap"], era)
    results.close()


def _stdio(client: str, script: str, budget: Budget, emit: Any, cap: float, log: Any,
           era: str) -> None:
    if client == "sdk":
        import anyio
        from _sdk_driver import drive, stdio_target

        params, root = stdio_target(script)
        anyio.run(drive, params, script, root, budget, emit, cap, era)
        return
    from _peers import OursPeer, RawPipePeer, RawThreadsPeer

    if client == "ours":
        import mcp_sync.client  # noqa: F401 - imported before the connect clock starts

        run_blocking(lambda: OursPeer.stdio(script, log, era), budget, emit)
    elif client == "raw_pipe":
        run_blocking(lambda: RawPipePeer(script, log), budget, emit,
                     concurrent=lambda peer, b: peer.pipelined(b))  # type: ignore[attr-defined]
    elif client == "raw_threads":
        run_blocking(lambda: RawThreadsPeer(script, log), budget, emit)
    else:
        raise ValueError(f"no stdio client {client!r}")


def _http(client: str, url: str, script: str, server_pid: int, budget: Budget, emit: Any,
          cap: float, era: str) -> None:
    if client == "sdk":
        import anyio
        from _sdk_driver import drive

        anyio.run(drive, url, script, server_pid, budget, emit, cap, era)
        return
    from _peers import OursPeer, RawHttpPeer

    if client == "ours":
        import mcp_sync.client
        import mcp_sync.transports.http_client  # noqa: F401 - before the connect clock

        run_blocking(lambda: OursPeer.http(url, script, server_pid, era), budget, emit)
    elif client == "raw_http":
        run_blocking(lambda: RawHttpPeer(url, server_pid, script), budget, emit)
    else:
        raise ValueError(f"no HTTP client {client!r}")


if __name__ == "__main__":
    main()
