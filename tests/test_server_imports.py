"""A stdio server loads only what serving needs: its start-up is what a user waits for.

Spawn to first result is mostly the server's import; a module it never uses costs every
start. Modules, not times, are checked here (the time is measured in benchmarks/).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Each is loaded only by the feature that needs it: the client and its HTTP stack,
# spawning processes, media and cursors (base64), guessing types from names (mimetypes),
# the in-memory transport pair, and the types of features this server does not offer or
# use (see types._LAZY). (concurrent.futures and queue are the engine's own threads.)
NOT_AT_START = ("base64", "mimetypes", "subprocess", "requests", "urllib3", "werkzeug",
                "http.client", "mcp_sync.transports.memory",
                "mcp_sync.client", "mcp_sync.transports.http_client",
                "mcp_sync.transports.http_server", "mcp_sync.server.http",
                "mcp_sync.protocol._types_prompts",
                "mcp_sync.protocol._types_completion", "mcp_sync.protocol._types_client_features",
                "mcp_sync.protocol._types_envelopes")

RESOURCE = '''@server.resource("file:///notes.txt", mime_type="text/plain")
def notes() -> str:
    return "notes"
'''

SERVER = """
import sys
from mcp_sync import Server

server = Server("lean")

@server.tool()
def echo(message: str) -> str:
    return message

""" + RESOURCE + """
server.run_stdio()
watched = {watched!r}
print(json.dumps(sorted(name for name in watched if name in sys.modules)), file=sys.stderr)
"""


def test_a_stdio_server_serves_without_loading_what_it_does_not_use() -> None:
    assert _modules_loaded_by_a_session(SERVER, NOT_AT_START) == []


def test_a_server_of_tools_alone_never_builds_the_resource_types() -> None:
    tools_only = SERVER.replace(RESOURCE, "")
    assert RESOURCE in SERVER and "resource" not in tools_only
    watched = (*NOT_AT_START, "mcp_sync.protocol._types_resources")
    assert _modules_loaded_by_a_session(tools_only, watched, read_resource=False) == []
    # The same session with a resource offered does build them: the check can fail.
    assert _modules_loaded_by_a_session(SERVER, watched) == ["mcp_sync.protocol._types_resources"]


def test_a_server_builds_attrs_classes_only_for_wire_types() -> None:
    # attrs compiles methods for every class it builds (docs/benchmarks.md, "Start-up"):
    # the library's own records are plain classes (mcp_sync.protocol._record).
    code = ("import json, sys, attrs\n"
            "import mcp_sync.server\n"
            "built = sorted({f'{value.__module__}.{value.__qualname__}'\n"
            "                for name, module in list(sys.modules.items())\n"
            "                if name.startswith('mcp_sync') and module is not None\n"
            "                for value in vars(module).values()\n"
            "                if isinstance(value, type) and attrs.has(value)})\n"
            "print(json.dumps(built))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    built: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    assert "mcp_sync.types.TextContent" in built and "mcp_sync.jsonrpc.Request" in built
    # The wire types, and the private bases some of them share (_types_messages).
    wire_modules = ("mcp_sync.types.", "mcp_sync.protocol._types_", "mcp_sync.jsonrpc.",
                    "mcp_sync.content.")
    assert [name for name in built if not name.startswith(wire_modules)] == []


def _modules_loaded_by_a_session(server_code: str, watched: tuple[str, ...], *,
                                 read_resource: bool = True) -> list[str]:
    """Serve initialize, a tool call and (optionally) a resource read over real stdio
    pipes; which of ``watched`` the server process had loaded when it exited."""
    code = "import json\n" + server_code.replace("{watched!r}", repr(watched))
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "echo", "arguments": {"message": "hi"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "resources/read",
         "params": {"uri": "file:///notes.txt"}},
    ][:4 if read_resource else 3]
    expected = [1, 2, 3] if read_resource else [1, 2]
    # A server that stops answering is killed, which ends the reads below; leaving the
    # with block closes the pipes and reaps it.
    with subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          cwd=ROOT) as server:
        watchdog = threading.Timer(30, server.kill)
        watchdog.start()
        try:
            assert server.stdin is not None and server.stdout is not None
            assert server.stderr is not None
            server.stdin.write("".join(json.dumps(message) + "\n" for message in messages))
            server.stdin.flush()
            # The answers are read before stdin closes: at EOF the calls still running
            # are cancelled, not answered (SHUTDOWN-5).
            answers = [json.loads(server.stdout.readline() or "null")
                       for _ in expected]
            server.stdin.close()
            errors = server.stderr.read()
            server.wait(timeout=30)
        finally:
            watchdog.cancel()
            watchdog.join()
    assert server.returncode == 0, errors
    assert None not in answers, errors
    assert sorted(answer["id"] for answer in answers) == expected
    by_id = {answer["id"]: answer for answer in answers}
    assert by_id[2]["result"]["content"] == [{"type": "text", "text": "hi"}]
    if read_resource:
        assert by_id[3]["result"]["contents"][0]["text"] == "notes"
    loaded: list[str] = json.loads(errors.strip().splitlines()[-1])
    return loaded
