"""A hand-written stdio server (no mcp_sync) that sends what no client should accept.

Run as ``fault_garbage.py MODE``. It answers ``initialize`` (except in ``init``) and
``ping``; on ``tools/call`` MODE decides what goes wrong, and the process then exits
with status 3:

* ``init``: answers ``initialize`` with a line that is not JSON.
* ``binary``: writes bytes that are not UTF-8 and not JSON.
* ``partial``: writes half a message without its newline.
* ``oversized``: writes 1 MiB with no newline at all.
* ``shapes``: writes JSON that is not JSON-RPC, an answer to an id never sent and an
  error with a null id, then exits.
* ``no-read``: after ``initialized`` stops reading its stdin for good (never exits by
  itself; the client must stop it).
"""

from __future__ import annotations

import json
import os
import sys
import threading

MODE = sys.argv[1]

GARBAGE = {
    "binary": b"\xff\xfe\x00garbage\x80\x81\n",
    "partial": b'{"jsonrpc":"2.0","id":',
    "oversized": b"z" * (1024 * 1024),
    "shapes": b'[1,2,3]\n{"foo":"bar"}\n{"jsonrpc":"2.0","id":"never-sent","result":{}}\n'
              b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}\n',
}


def send(message: dict[str, object]) -> None:
    os.write(1, json.dumps(message, separators=(",", ":")).encode() + b"\n")


def main() -> None:
    for line in sys.stdin.buffer:
        message = json.loads(line)
        method = message.get("method")
        if method == "initialize":
            if MODE == "init":
                os.write(1, b"<html>not an MCP server</html>\n")
                sys.exit(3)
            send({"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": "2025-03-26", "capabilities": {"tools": {}},
                "serverInfo": {"name": f"garbage-{MODE}", "version": "0"}}})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
        elif method == "notifications/initialized" and MODE == "no-read":
            threading.Event().wait()
        elif method == "tools/call":
            os.write(1, GARBAGE[MODE])
            sys.exit(3)


if __name__ == "__main__":
    main()
