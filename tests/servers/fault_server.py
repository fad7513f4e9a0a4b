"""An mcp_sync server over stdio for the fault tests: tools that block, echo and report.

Run as ``fault_server.py`` to serve on stdio, or as ``fault_server.py http`` to serve
Streamable HTTP on a free loopback port: the endpoint's URL is printed as the first line
of stdout, and the server stops when its stdin closes. ``fault_server.py linger`` serves
on stdio and then ignores the end of its stdin, living on until a signal ends it.

``block`` reports the process id as progress, then waits until cancelled; ``echo``
returns its text; ``rss`` reports this process's memory and thread count.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

from mcp_sync import Context, Server
from mcp_sync.transports.http_server import serve_http

server = Server("faults", version="1.0.0")


@server.tool()
def block(ctx: Context) -> str:
    """Report our pid as progress, then wait until cancelled."""
    ctx.report_progress(1, message=str(os.getpid()))
    ctx.wait_cancelled(120)
    return "released"


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def rss() -> dict[str, int]:
    """This process's resident set (now and peak, in KiB) and thread count."""
    fields: dict[str, int] = {}
    with open("/proc/self/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                fields[name] = int(value.split()[0])
    fields["threads"] = threading.active_count()
    return fields


def serve_http_until_stdin_closes() -> None:
    with serve_http(server, port=0) as handle:
        print(handle.url, flush=True)
        sys.stdin.buffer.read()


if __name__ == "__main__":
    if sys.argv[1:] == ["http"]:
        serve_http_until_stdin_closes()
    else:
        server.run_stdio()
        if sys.argv[1:] == ["linger"]:
            signal.pause()
