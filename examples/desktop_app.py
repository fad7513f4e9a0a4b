"""A Tkinter window that uses an MCP server without ever blocking its UI thread.

It starts examples/everything_server.py over stdio, lists the server's tools, and runs
its ``long_running`` tool with a progress bar and a Cancel button::

    python examples/desktop_app.py                 # the window
    python examples/desktop_app.py --demo          # unattended: one call, then exit
    python examples/desktop_app.py --demo-cancel   # unattended: cancel a call midway

On a machine without a display, run the demos under a virtual one:
``xvfb-run -a python examples/desktop_app.py --demo``.

Tk lets only its own thread touch widgets, and that thread must never wait, or the
window freezes. So:

* connecting (starting the server, the handshake) and listing the tools happen on a
  worker thread, whose outcome is handed back to the Tk thread;
* the call is made with ``call_tool_async``, which returns a Future at once;
* the client is given ``callback_executor=TkExecutor(root)``: progress reports and the
  Future's completion then run on the Tk thread, in the order the server sent them;
* Cancel calls ``future.cancel()``, which returns at once: the server is told to stop
  (the tool sees ``ctx.cancelled``) and the Future's callbacks run straight away.

A heartbeat, an ``after`` callback every 10 ms, counts "UI ticks": they keep coming
while a call runs. ``--demo`` prints how many fired during its call.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tkinter
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from tkinter import ttk

from mcp_sync import Client, types
from mcp_sync.errors import McpError
from mcp_sync.gui import TkExecutor

SERVER = [sys.executable, str(Path(__file__).with_name("everything_server.py"))]
TICK_MS = 10
WATCHDOG_SECONDS = 30


def connect(server: Sequence[str], ui: TkExecutor) -> tuple[Client, list[types.Tool]]:
    """Start the server, connect, list its tools; runs on a worker thread (it blocks)."""
    client = Client.stdio(list(server), callback_executor=ui, timeout=30)
    try:
        return client, client.list_tools()
    except BaseException:
        client.close()
        raise


class DesktopApp:
    """The window: the server's tools, the call's settings, a progress bar, the outcome.

    ``on_outcome`` hooks are called on the Tk thread with ``"done"``, ``"cancelled"``
    or ``"failed"`` when a call ends (the demos use them); ``on_connected`` once the
    tools are listed.
    """

    def __init__(self, root: tkinter.Tk, server: Sequence[str] = SERVER) -> None:
        self.root = root
        self.ui = TkExecutor(root)  # on the Tk thread, before any client exists
        self.client: Client | None = None
        self.call: Future[types.CallToolResult] | None = None
        self.ticks = 0
        self.closed = False
        self.on_connected: list[Callable[[], None]] = []
        self.on_outcome: list[Callable[[str], None]] = []
        self._build(root)
        self._heartbeat()
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="connect")
        self._connecting = self._worker.submit(connect, server, self.ui)
        self._connecting.add_done_callback(self._connect_finished)

    def _build(self, root: tkinter.Tk) -> None:
        root.title("mcp_sync desktop example")
        root.protocol("WM_DELETE_WINDOW", self._window_closed)
        frame = ttk.Frame(root, padding=10)
        frame.grid(sticky="nsew")
        root.columnconfigure(0, weight=1)
        root.rowconfigure(0, weight=1)
        frame.columnconfigure(0, weight=1)
        self.status = ttk.Label(frame, text="Starting the everything server...")
        self.status.grid(row=0, column=0, sticky="w")
        self.tools = tkinter.Listbox(frame, height=8, width=60)
        self.tools.grid(row=1, column=0, sticky="nsew", pady=5)
        frame.rowconfigure(1, weight=1)

        settings = ttk.Frame(frame)
        settings.grid(row=2, column=0, sticky="w")
        self.steps = tkinter.IntVar(value=50)
        self.delay = tkinter.DoubleVar(value=0.1)
        ttk.Label(settings, text="long_running steps").pack(side="left")
        ttk.Spinbox(settings, from_=1, to=1000, width=5,
                    textvariable=self.steps).pack(side="left", padx=(2, 10))
        ttk.Label(settings, text="delay (s)").pack(side="left")
        ttk.Spinbox(settings, from_=0.0, to=5.0, increment=0.05, width=5,
                    textvariable=self.delay).pack(side="left", padx=(2, 10))
        self.start_button = ttk.Button(settings, text="Run", command=self.start,
                                       state="disabled")
        self.start_button.pack(side="left")
        self.cancel_button = ttk.Button(settings, text="Cancel", command=self.cancel,
                                        state="disabled")
        self.cancel_button.pack(side="left", padx=5)

        self.progress = ttk.Progressbar(frame, maximum=1, length=400)
        self.progress.grid(row=3, column=0, sticky="ew", pady=5)
        self.outcome = ttk.Label(frame, text="")
        self.outcome.grid(row=4, column=0, sticky="w")
        self.heartbeat = ttk.Label(frame, text="UI ticks: 0", foreground="gray")
        self.heartbeat.grid(row=5, column=0, sticky="e")

    # --- connecting ------------------------------------------------------------------

    def _connect_finished(self, future: Future[tuple[Client, list[types.Tool]]]) -> None:
        # On the worker thread: only hand over. A window already closed refuses the
        # work; close() then finds the client in the worker's Future and closes it.
        with contextlib.suppress(RuntimeError):
            self.ui.submit(self._connected, future)

    def _connected(self, future: Future[tuple[Client, list[types.Tool]]]) -> None:
        error = future.exception()
        if error is not None:
            self.status.configure(text=f"Could not start the server: {error}")
            self._tell(self.on_outcome, "failed")
            return
        self.client, tools = future.result()
        info = self.client.server_info
        self.status.configure(text=f"Connected to {info.name} {info.version} "
                                   f"(protocol {self.client.protocol_version})")
        for tool in tools:
            summary = (tool.title or (tool.description or "").split("\n")[0])
            self.tools.insert("end", f"{tool.name}: {summary}")
        self.start_button.configure(state="normal")
        self._tell(self.on_connected)

    # --- the call ----------------------------------------------------------------------

    def start(self) -> None:
        """Run ``long_running`` with the chosen settings; returns at once."""
        if self.client is None or self.call is not None:
            return
        try:
            steps, delay = self.steps.get(), self.delay.get()
        except tkinter.TclError:  # not a number in a spinbox
            self.outcome.configure(text="Steps and delay must be numbers.")
            return
        self.progress.configure(maximum=steps, value=0)
        self.outcome.configure(text="Running...")
        # Errors found before sending (a closed client) are raised here, not through
        # the Future.
        try:
            call = self.client.call_tool_async(
                "long_running", {"steps": steps, "delay": delay},
                timeout=30, on_progress=self._progress)  # each report restarts it
        except McpError as exc:
            self.outcome.configure(text=f"Could not call the tool: {exc}")
            self._tell(self.on_outcome, "failed")
            return
        self.call = call
        self.start_button.configure(state="disabled")
        self.cancel_button.configure(state="normal")
        call.add_done_callback(self._finished)

    def cancel(self) -> None:
        """The Cancel button: returns at once; the server is told to stop the tool."""
        if self.call is not None:
            self.call.cancel()

    def _progress(self, progress: float, total: float | None, message: str | None) -> None:
        # On the Tk thread. A report that was queued before a Cancel may still arrive.
        if self.call is None or self.closed:
            return
        if total:
            self.progress.configure(maximum=total)
        self.progress.configure(value=progress)
        self.outcome.configure(text=message or f"{progress:g}")

    def _finished(self, call: Future[types.CallToolResult]) -> None:
        # On the Tk thread: through the TkExecutor when the server answered, or at once
        # in cancel() when the Cancel button (on this thread) cancelled it.
        if call is not self.call or self.closed:
            return
        self.call = None
        self.start_button.configure(state="normal")
        self.cancel_button.configure(state="disabled")
        if call.cancelled():
            self.outcome.configure(text="Cancelled: the server was told to stop.")
            self._tell(self.on_outcome, "cancelled")
            return
        try:
            result = call.result()
        except McpError as exc:  # a timeout, the server gone, ...
            self.outcome.configure(text=f"The call failed: {exc}")
            self._tell(self.on_outcome, "failed")
            return
        text = " ".join(item.text for item in result.content
                        if isinstance(item, types.TextContent))
        if result.is_error:
            self.outcome.configure(text=f"The tool failed: {text}")
            self._tell(self.on_outcome, "failed")
        else:
            self.outcome.configure(text=f"Result: {text}")
            self._tell(self.on_outcome, "done")

    # --- the rest --------------------------------------------------------------------------

    def _heartbeat(self) -> None:
        self.ticks += 1
        self.heartbeat.configure(text=f"UI ticks: {self.ticks}")
        self.root.after(TICK_MS, self._heartbeat)

    def _window_closed(self) -> None:
        # Hidden at once; the main loop ends, and main() then closes the client.
        self.root.withdraw()
        self.root.quit()

    def _tell(self, hooks: list[Callable[..., None]], *args: str) -> None:
        for hook in hooks:
            hook(*args)

    def close(self) -> None:
        """Once the main loop has ended: cancel a call still running, stop the server.

        The client's close blocks (for a moment, while the server exits), so it is
        left until the window is hidden and the main loop has ended.
        """
        self.closed = True
        if self.call is not None:
            self.call.cancel()
        self._worker.shutdown(wait=True)  # a connection being made is finished first
        if self._connecting.exception() is None:
            client, _ = self._connecting.result()
            client.close()


class Demo:
    """Drives the app unattended and reports on stdout; ``failed`` says how it went.

    ``--demo``: one call of ``long_running`` (20 steps of 0.05 s), counting the UI
    ticks that fired while it ran. ``--demo-cancel``: a call of 100 steps is cancelled
    with the Cancel button once its third step is shown; then a short call shows that
    the client still works. A watchdog ends either with an error after 30 s.
    """

    def __init__(self, app: DesktopApp, *, cancel: bool) -> None:
        self.app = app
        self.cancel_midway = cancel
        self.phase = "connecting"
        self.failed = True
        self.ticks_at_start = 0
        app.on_connected.append(self.run)
        app.on_outcome.append(self.outcome)
        app.root.after(WATCHDOG_SECONDS * 1000, self.give_up)

    def run(self) -> None:
        app = self.app
        self.phase = "long call" if self.cancel_midway else "call"
        app.steps.set(100 if self.cancel_midway else 20)
        app.delay.set(0.05)
        self.ticks_at_start = app.ticks
        app.start()
        if self.cancel_midway:
            self._cancel_after_third_step()

    def _cancel_after_third_step(self) -> None:
        # Presses Cancel as a user would, on the Tk thread, once three steps are shown.
        app = self.app
        if app.call is None:
            return
        shown = float(app.progress.cget("value"))
        if shown >= 3:
            print(f"demo: cancelling at step {shown:g} of 100", flush=True)
            self.phase = "cancelling"
            app.cancel_button.invoke()
        else:
            app.root.after(TICK_MS, self._cancel_after_third_step)

    def outcome(self, outcome: str) -> None:
        app = self.app
        print(f"demo: outcome {outcome}: {app.outcome.cget('text')}", flush=True)
        if self.phase == "call":
            print(f"demo: ui-ticks {app.ticks - self.ticks_at_start}", flush=True)
            self.finish(ok=outcome == "done")
        elif self.phase == "cancelling" and outcome == "cancelled":
            self.phase = "call after cancel"
            app.steps.set(3)
            app.delay.set(0.01)
            app.start()
        else:
            self.finish(ok=self.phase == "call after cancel" and outcome == "done")

    def give_up(self) -> None:
        print(f"demo: failed: still at \"{self.phase}\" after {WATCHDOG_SECONDS} s",
              file=sys.stderr, flush=True)
        self.finish(ok=False)

    def finish(self, *, ok: bool) -> None:
        self.failed = not ok
        if ok:
            print("demo: done", flush=True)
        self.app.root.quit()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--demo", action="store_true",
                      help="call long_running unattended, print the UI ticks, exit")
    mode.add_argument("--demo-cancel", action="store_true",
                      help="cancel a long_running call midway, unattended, and exit")
    options = parser.parse_args(argv)
    try:
        root = tkinter.Tk()
    except tkinter.TclError as exc:
        print(f"desktop_app: cannot open a window ({exc}); without a display, run it "
              "under xvfb-run", file=sys.stderr)
        return 2
    app = DesktopApp(root)
    demo = (Demo(app, cancel=options.demo_cancel)
            if options.demo or options.demo_cancel else None)
    try:
        root.mainloop()
    finally:
        root.withdraw()  # the window goes at once; closing the client takes a moment
        app.close()
        root.destroy()
    return 1 if demo is not None and demo.failed else 0


if __name__ == "__main__":
    sys.exit(main())
