"""A JSON-lines echo child with no MCP: the floor for anything spoken over pipes.

Each line is ``{"id", "method", "params"}``; ``echo`` answers with the message as one text
item, ``many_items`` with ``n`` of them, in the same result shape an MCP tool call has.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def answer(request: dict[str, Any]) -> dict[str, Any]:
    params = request.get("params") or {}
    if request.get("method") == "many_items":
        content = [{"type": "text", "text": f"item {i}"} for i in range(params["n"])]
    else:
        content = [{"type": "text", "text": params.get("message", "")}]
    return {"jsonrpc": "2.0", "id": request.get("id"), "result": {"content": content}}


def main() -> None:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    for line in stdin:
        if not line.strip():
            continue
        stdout.write(json.dumps(answer(json.loads(line))).encode() + b"\n")
        stdout.flush()


if __name__ == "__main__":
    main()
