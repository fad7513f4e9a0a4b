"""A Flask application that uses an MCP server: one client, shared by every request.

Run it with ``python examples/flask_client.py`` and open
``http://127.0.0.1:5001/add?a=1&b=2``, ``/echo?message=hi`` or ``/tools``. Under a
production server: ``gunicorn -k gthread --threads 8 'flask_client:create_app()'``
(``--preload`` is fine: the client is made in each worker, at its first request, never
before the fork).

The views run on many threads at once and all call through the one client, whose
requests pipeline over one connection to one server process. It is made once per
process, on first use, with ``reconnect=True``: should the server process die, the
request in flight gets an error (503 here) and the next one starts a new server. When
the application stops, :func:`close_mcp_client` closes it and stops the server; it is
registered with ``atexit``, and mcp_sync would close a client left open at exit anyway,
but saying so keeps the intent visible.
"""

from __future__ import annotations

import atexit
import sys
import threading
from pathlib import Path

from flask import Flask, Response, jsonify, request

from mcp_sync import Client, types
from mcp_sync.errors import ConnectionClosed, McpError

SERVER = [sys.executable, str(Path(__file__).with_name("demo_server.py"))]

_client: Client | None = None
_client_lock = threading.Lock()
_closed = False


def mcp_client() -> Client:
    """This process's client, made at the first call (so after any fork).

    Raises:
        ConnectionClosed: :func:`close_mcp_client` was called: the app is stopping.
    """
    global _client
    with _client_lock:
        if _closed:
            raise ConnectionClosed("the application is shutting down")
        if _client is None:
            _client = Client.stdio(SERVER, reconnect=True, timeout=10)
        return _client


def close_mcp_client() -> None:
    """Close the client, stopping its server; later calls of :func:`mcp_client` fail."""
    global _client, _closed
    with _client_lock:
        _closed = True
        client, _client = _client, None
    if client is not None:
        client.close()


atexit.register(close_mcp_client)


def text_of(result: types.CallToolResult) -> str:
    return "".join(item.text for item in result.content
                   if isinstance(item, types.TextContent))


def create_app() -> Flask:
    app = Flask(__name__)

    @app.get("/add")
    def add() -> tuple[str, int]:
        arguments = {"a": request.args.get("a", 0, type=int),
                     "b": request.args.get("b", 0, type=int)}
        return f"{text_of(mcp_client().call_tool('add', arguments))}\n", 200

    @app.get("/echo")
    def echo() -> tuple[str, int]:
        message = request.args.get("message")
        if message is None:
            return "give a message: /echo?message=...\n", 400
        return f"{text_of(mcp_client().call_tool('echo', {'message': message}))}\n", 200

    @app.get("/tools")
    def tools() -> Response:
        return jsonify([{"name": tool.name, "description": tool.description}
                        for tool in mcp_client().list_tools()])

    @app.errorhandler(McpError)
    def mcp_failed(exc: McpError) -> tuple[str, int]:
        # The server is gone, did not answer in time, or the app is stopping.
        return f"the MCP server failed: {exc}\n", 503

    return app


if __name__ == "__main__":
    try:
        create_app().run(host="127.0.0.1", port=5001, threaded=True)
    finally:
        close_mcp_client()
