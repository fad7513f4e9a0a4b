"""Interop: the official MCP SDK's Streamable HTTP client against our server with SSE
polling on (2025-11-25: priming event, ``retry:``, the server hanging up early).

The SDK client skips the priming event, and when our server ends a call's stream before
the answer it comes back with GET and ``Last-Event-ID`` after the ``retry:`` delay and
gets the progress and the result sent meanwhile (V1125-12..17).
"""

from __future__ import annotations

import threading
from typing import Any

import anyio
import pytest
from mcp.client import Client as SdkClient

from mcp_sync import Context, Server
from mcp_sync.protocol._versions import KNOWN_VERSIONS
from mcp_sync.transports.http_server import serve_http
from tests.conftest import schema_errors
from tests.interop.test_http_sdk_client import _recorded_http
from tests.interop.test_official_sdk import _Traffic

pytestmark = pytest.mark.interop

WAIT = 20.0


class _Resumes:
    """WSGI middleware that notes each GET resuming a POST's stream (``Last-Event-ID: p…``)."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.seen = threading.Event()

    def wrap(self, app: Any) -> Any:
        def recorded(environ: dict[str, Any], start_response: Any) -> Any:
            last = environ.get("HTTP_LAST_EVENT_ID")
            if environ["REQUEST_METHOD"] == "GET" and last and last.startswith("p"):
                self.ids.append(last)
                self.seen.set()
            return app(environ, start_response)
        return recorded


def _server(resumes: _Resumes) -> Server:
    # Polling is of the legacy era (2025-11-25): a server that speaks only legacy
    # versions keeps the SDK there.
    server = Server("http-polling", version="1.0.0", supported_versions=KNOWN_VERSIONS)

    @server.tool()
    def two_step(hang_up: bool, ctx: Context) -> str:
        """Report progress, wait until the client came back for the rest (after ending
        the response ourselves, with ``hang_up``), report, answer."""
        ctx.report_progress(1, 2, "before")
        if hang_up:
            assert ctx.close_sse_stream()
        resumed = resumes.seen.wait(WAIT)
        ctx.report_progress(2, 2, "after")
        return "done" if resumed else "never resumed"

    return server


async def _drive(url: str, hang_up: bool) -> dict[str, Any]:
    traffic = _Traffic()
    seen: dict[str, Any] = {"traffic": traffic, "progress": []}

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen["progress"].append((progress, message))

    with anyio.fail_after(WAIT * 2):
        async with SdkClient(_recorded_http(url, traffic)) as client:
            seen["protocol_version"] = client.protocol_version
            seen["answer"] = await client.call_tool("two_step", {"hang_up": hang_up},
                                                    progress_callback=on_progress)
    return seen


@pytest.mark.timeout(60)
@pytest.mark.parametrize("hang_up", [False, True], ids=["sse_poll_after", "close_sse_stream"])
def test_sdk_client_polls_our_server_v1125_12_13_14_17(hang_up: bool) -> None:
    """V1125-12/13/14/17, DES-8: the SDK client negotiates 2025-11-25, skips the priming
    event, resumes the call's stream by GET after our hang-up (after ``sse_poll_after``,
    or when the tool ends its response), and gets the progress and result sent while
    it was away."""
    resumes = _Resumes()
    options: dict[str, Any] = {} if hang_up else {"sse_poll_after": 0.2}
    with serve_http(_server(resumes), sse_retry=0.05, wrap=resumes.wrap,
                    **options) as handle:
        seen = anyio.run(_drive, handle.url, hang_up)

    assert seen["protocol_version"] == "2025-11-25"
    assert [c.text for c in seen["answer"].content] == ["done"]
    assert seen["progress"] == [(1, "before"), (2, "after")]
    assert resumes.ids and all(":" in last for last in resumes.ids)
    traffic: _Traffic = seen["traffic"]
    for message in traffic.received:
        assert isinstance(message, dict), f"the SDK could not parse a message: {message!r}"
        assert not schema_errors(message), (message, schema_errors(message))
