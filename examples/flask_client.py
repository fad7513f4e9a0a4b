"""A Flask application that uses an MCP server: one client, shared by every request.

Run it with ``python examples/flask_client.py`` and open
``http://127.0.0.1:5001/add?a=1&b=2``. Under a production server:
``gunicorn -k gthread --threads 8 'flask_client:create_app()'`` (``--preload`` is fine:
the client is made in each worker, at its first request, never before the fork).

The client is made once per process, on first use, with ``reconnect=True``: should the
server process die, the request in flight gets an error and the next one starts a new
server. It is closed when the process exits (``atexit``; mcp_sync would also close a
client left open, but saying so keeps the intent visible).
"""

from __future__ import annotations

import atexit
import sys
import threading
from pathlib import Path

from flask import Flask, request

from mcp_sync import Client
from mcp_sync.errors import McpError

SERVER = [sys.executable, str(Path(__file__).with_name("demo_server.py"))]

_client: Client | None = None
_client_lock = threading.Lock()


def mcp_client() -> Client:
    """This process's client, made at the first call (so after any fork)."""
    global _client
    with _client_lock:
        if _client is None:
            _client = Client.stdio(SERVER, reconnect=True, timeout=10)
            atexit.register(_client.close)
        return _client


def create_app() -> Flask:
    app = Flask(__name__)

    @app.get("/add")
    def add() -> tuple[str, int]:
        arguments = {"a": request.args.get("a", 0, type=int),
                     "b": request.args.get("b", 0, type=int)}
        try:
            result = mcp_client().call_tool("add", arguments)
        except McpError as exc:  # the server is gone, or did not answer in time
            return f"the MCP server failed: {exc}\n", 503
        return f"{result.content[0].text}\n", 200

    return app


if __name__ == "__main__":
    create_app().run(host="127.0.0.1", port=5001, threaded=True)
