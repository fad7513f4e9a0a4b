"""A ``long_running`` tool like the everything server's that remembers being cancelled;
for the desktop example's tests.

``long_running`` reports progress after each step and stops when cancelled;
``saw_cancel`` answers whether a ``long_running`` call saw its cancellation, waiting up
to ``timeout`` seconds for it.
"""

from __future__ import annotations

import threading

from mcp_sync import Context, Server


def make_server() -> Server:
    server = Server("long-running", version="1.0.0")
    saw = threading.Event()

    @server.tool()
    def long_running(ctx: Context, steps: int = 5, delay: float = 0.01) -> str:
        """Work through some steps, reporting progress after each; stops if cancelled."""
        for step in range(1, steps + 1):
            if step > 1 and ctx.wait_cancelled(delay):
                saw.set()
                return "cancelled"
            ctx.report_progress(step, steps, f"step {step} of {steps}")
        return "done"

    @server.tool()
    def saw_cancel(timeout: float) -> str:
        """Whether a long_running call has seen its cancellation (waits up to ``timeout``)."""
        return "yes" if saw.wait(timeout) else "no"

    return server


if __name__ == "__main__":
    make_server().run_stdio()
