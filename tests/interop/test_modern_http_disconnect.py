"""The modern era over a real socket: a client that closes its connection mid-request
cancels the request (2026-07-28: "HTTP: closing the response stream is the cancel").

Our server runs with waitress on 127.0.0.1; the client is ``requests``, streaming.
"""

from __future__ import annotations

import json
import threading

import pytest
import requests

from mcp_sync import Context, Server
from mcp_sync.transports.http_server import serve_http
from tests.http_server_helpers import read_events
from tests.server_support import MODERN, modern_request

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60)]


def test_a_client_closing_its_connection_cancels_the_request() -> None:
    """The tool sees ctx.cancelled soon after the client hangs up (within a keep-alive
    interval), and the server serves the next request as usual."""
    server = Server("hang-up")
    started, ended = threading.Event(), threading.Event()
    outcome: dict[str, bool] = {}

    @server.tool()
    def until_cancelled(ctx: Context) -> str:
        ctx.report_progress(1)
        started.set()
        outcome["cancelled"] = ctx.wait_cancelled(20)
        ended.set()
        return "never read"

    with serve_http(server, keepalive_interval=0.1) as handle:
        message = modern_request("tools/call", {"name": "until_cancelled", "arguments": {},
                                                "_meta": {"progressToken": "t"}})
        headers = {"Accept": "application/json, text/event-stream",
                   "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call",
                   "Mcp-Name": "until_cancelled"}
        with requests.post(handle.url, json=message, headers=headers, stream=True,
                           timeout=10) as response:
            assert response.headers["Content-Type"].startswith("text/event-stream")
            first = next(event for event in read_events(response) if event.data)
            assert json.loads(first.data)["method"] == "notifications/progress"
        assert started.is_set()
        assert ended.wait(10)
        assert outcome["cancelled"] is True
        listing = {**headers, "Mcp-Method": "tools/list"}
        del listing["Mcp-Name"]
        again = requests.post(handle.url, json=modern_request("tools/list"), timeout=10,
                              headers=listing)
        assert again.status_code == 200 and again.json()["result"]["tools"]
