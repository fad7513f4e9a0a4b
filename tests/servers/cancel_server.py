"""A server whose tool waits to be cancelled, and tells whether it was; for test_cancel.

Run as a script it serves on stdio; ``make_server()`` gives a fresh one in-process.

``block`` reports progress once (so the caller knows it runs), then waits until it is
cancelled; ``saw_cancel`` answers whether a ``block`` call has seen its cancellation,
waiting up to ``timeout`` seconds for it; ``count`` says how many ``block`` calls
started; ``echo`` returns its text.
"""

from __future__ import annotations

import threading

from mcp_sync import Context, Server


def make_server() -> Server:
    server = Server("cancel", version="1.0.0")
    saw = threading.Event()
    lock = threading.Lock()
    started: list[int] = []

    @server.tool()
    def block(ctx: Context) -> str:
        """Report progress once, then wait until cancelled."""
        with lock:
            started.append(1)
        ctx.report_progress(1, 2)
        if ctx.wait_cancelled(30):
            saw.set()
            return "cancelled"
        return "never cancelled"

    @server.tool()
    def saw_cancel(timeout: float) -> str:
        """Whether a block call has seen its cancellation (waits up to ``timeout``)."""
        return "yes" if saw.wait(timeout) else "no"

    @server.tool()
    def count() -> int:
        """How many block calls started."""
        with lock:
            return len(started)

    @server.tool()
    def echo(text: str) -> str:
        """Return the text."""
        return text

    return server


if __name__ == "__main__":
    make_server().run_stdio()
