"""A hand-written MCP server (no mcp_sync) that breaks the stdio rules on purpose.

Run as ``raw_server.py MODE``. Every mode answers ``initialize`` and ``ping``; MODE says
what goes wrong:

* ``ignore-eof``: keeps running after its stdin closes (SHUTDOWN-2 needs SIGTERM).
* ``ignore-term``: the same, and ignores SIGTERM too (SHUTDOWN-2 needs SIGKILL).
* ``garbage``: answers ``tools/call`` with lines that are not JSON, then exits with 3.
* ``close-stdout``: on ``tools/call`` closes its stdout, then exits once stdin closes.
* ``crlf``: ends every line with CRLF and puts blank lines between messages.
* ``no-read``: after ``initialized`` stops reading stdin, and ignores its end.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading

MODE = sys.argv[1]


def send(message: dict[str, object]) -> None:
    data = json.dumps(message, separators=(",", ":")).encode()
    if MODE == "crlf":
        data = b"\r\n" + data + b"\r\n\r\n"
    else:
        data += b"\n"
    os.write(1, data)


def answer(request_id: object, result: dict[str, object]) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def forever() -> None:
    threading.Event().wait()


def main() -> None:
    if MODE == "ignore-term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for line in sys.stdin.buffer:
        message = json.loads(line)
        method = message.get("method")
        if method == "initialize":
            answer(message["id"], {
                "protocolVersion": "2025-03-26", "capabilities": {"tools": {}},
                "serverInfo": {"name": f"raw-{MODE}", "version": "0"}})
        elif method == "ping":
            answer(message["id"], {})
        elif method == "notifications/initialized" and MODE == "no-read":
            forever()
        elif method == "tools/call":
            if MODE == "garbage":
                os.write(1, b"this is not json\n{\"half\": \n")
                sys.exit(3)
            if MODE == "close-stdout":
                os.close(1)
                continue
            answer(message["id"], {"content": [{"type": "text", "text": "ok"}]})
    if MODE in ("ignore-eof", "ignore-term"):
        forever()


if __name__ == "__main__":
    main()
