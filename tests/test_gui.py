"""mcp_sync.gui: a Tk application gets the client's callbacks on its Tk thread.

The Tk tests run against a virtual X display: each starts Xvfb on a free display
(``-displayfd`` tells which) and skips, saying why, only when Xvfb or tkinter is
missing. The Qt executor is tested when a Qt binding is installed, on Qt's offscreen
platform.
"""

from __future__ import annotations

import gc
import importlib
import os
import select
import shutil
import subprocess
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_sync import Context, Server
from mcp_sync.gui import QtExecutor, TkExecutor
from mcp_sync.testing import open_client

try:
    import tkinter
except ImportError:  # a Python built without Tk
    tkinter = None  # type: ignore[assignment]

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def tk_root() -> Iterator[tkinter.Tk]:
    """A hidden Tk root window on a fresh Xvfb display, shared by the module's tests.

    Shared because Tk keeps its connection to a display (and a pipe of its notifier)
    open for the life of the process once it has made one; made before each test
    starts, they are no leak of that test's.
    """
    if tkinter is None:
        pytest.skip("tkinter is not available in this Python")
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        pytest.skip("Xvfb is not installed (apt-get install xvfb)")
    read_end, write_end = os.pipe()
    try:
        process = subprocess.Popen(
            [xvfb, "-displayfd", str(write_end), "-nolisten", "tcp", "-screen", "0",
             "320x240x24"], pass_fds=(write_end,),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finally:
        os.close(write_end)
    try:
        number = b""
        while not number.endswith(b"\n"):
            ready, _, _ = select.select([read_end], [], [], 20)
            chunk = os.read(read_end, 16) if ready else b""
            if not chunk:
                pytest.fail(f"Xvfb did not start (exit status {process.poll()})")
            number += chunk
        root = tkinter.Tk(screenName=f":{int(number)}")
        root.withdraw()
        root.after(1, root.quit)
        root.mainloop()  # once, so that Tcl's notifier has made its pipe before the tests
        try:
            yield root
        finally:
            root.destroy()
            # Tk objects must be freed on the thread that made them: Tcl aborts the
            # process when the collector frees one later on some other thread.
            gc.collect()
    finally:
        os.close(read_end)
        process.terminate()
        process.wait(10)


@pytest.fixture(autouse=True)
def free_tk_objects_here() -> Iterator[None]:
    """Whatever Tk objects a test left in reference cycles (an executor, a client holding
    one) are freed here, on the thread that made them, not by a later collection on
    another test's thread."""
    yield
    gc.collect()


def run_until(root: tkinter.Tk, done: threading.Event) -> None:
    """Run Tk's main loop until ``done`` is set (by a callback on the Tk thread)."""
    def check() -> None:
        if done.is_set():
            root.quit()
        else:
            root.after(5, check)

    give_up = root.after(20_000, root.quit)
    check()
    root.mainloop()
    root.after_cancel(give_up)
    assert done.is_set(), "Tk's main loop gave up waiting"


def progress_server() -> Server:
    server = Server("progress")

    @server.tool()
    def count(steps: int, ctx: Context) -> str:
        """Count, reporting progress and logging at each step."""
        for step in range(1, steps + 1):
            ctx.info(f"step {step}")
            ctx.report_progress(step, steps)
        return f"counted {steps}"

    return server


def test_progress_reaches_a_tk_executor_on_the_tk_thread(tk_root: tkinter.Tk) -> None:
    executor = TkExecutor(tk_root)
    tk_thread = threading.get_ident()
    seen: list[tuple[str, Any, int]] = []
    results: list[str] = []
    finished = threading.Event()
    try:
        with open_client(progress_server(), callback_executor=executor,
                         on_log=lambda params: seen.append(
                             ("log", params.data, threading.get_ident()))) as client:
            client.set_logging_level("info")
            future = client.call_tool_async(
                "count", {"steps": 5},
                on_progress=lambda progress, total, message: seen.append(
                    ("progress", progress, threading.get_ident())))

            def done(future: Any) -> None:
                results.append(future.result().content[0].text)
                seen.append(("result", None, threading.get_ident()))
                finished.set()

            future.add_done_callback(done)
            run_until(tk_root, finished)
    finally:
        executor.shutdown()
    assert results == ["counted 5"]
    assert [value for kind, value, _ in seen if kind == "progress"] == [1, 2, 3, 4, 5]
    assert [value for kind, value, _ in seen if kind == "log"] == [
        f"step {n}" for n in range(1, 6)]
    assert {thread for _, _, thread in seen} == {tk_thread}
    assert seen[-1][0] == "result"  # after every progress report


def test_tk_executor_runs_calls_from_other_threads_and_refuses_after_shutdown(
        tk_root: tkinter.Tk) -> None:
    executor = TkExecutor(tk_root)
    ran = threading.Event()
    ran_on: list[int] = []
    futures: list[Any] = []

    def work() -> int:
        ran_on.append(threading.get_ident())
        ran.set()
        return 42

    try:
        submitter = threading.Thread(target=lambda: futures.append(executor.submit(work)),
                                     name="test:submitter")
        submitter.start()
        submitter.join(5)
        run_until(tk_root, ran)
        assert futures[0].result(0) == 42
        assert ran_on == [threading.get_ident()]
        queued = executor.submit(work)
        executor.shutdown()
        assert queued.cancelled()  # the loop never turned again: nothing runs late
        with pytest.raises(RuntimeError):
            executor.submit(work)
    finally:
        executor.shutdown()


def test_closing_the_window_shuts_its_tk_executor_down(tk_root: tkinter.Tk) -> None:
    window = tkinter.Toplevel(tk_root)
    executor = TkExecutor(window)
    tkinter.Label(window, text="child").pack()
    queued = executor.submit(lambda: None)
    window.winfo_children()[0].destroy()  # a child's end is not the window's
    assert executor.submit(lambda: None) is not None
    window.destroy()
    assert queued.cancelled()
    with pytest.raises(RuntimeError):
        executor.submit(lambda: None)


def test_progress_reaches_a_qt_executor_on_the_qt_thread(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for binding in ("PySide6", "PyQt6", "PySide2", "PyQt5"):  # QtExecutor's order
        try:
            qt_core: Any = importlib.import_module(f"{binding}.QtCore")
            break
        except ImportError:
            continue
    else:
        pytest.skip("no Qt binding (PySide6, PyQt6, PySide2, PyQt5) is installed")
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    app = qt_core.QCoreApplication.instance() or qt_core.QCoreApplication([])
    executor = QtExecutor()
    qt_thread = threading.get_ident()
    seen: list[tuple[float, int]] = []
    with open_client(progress_server(), callback_executor=executor) as client:
        future = client.call_tool_async(
            "count", {"steps": 3},
            on_progress=lambda progress, total, message: seen.append(
                (progress, threading.get_ident())))
        future.add_done_callback(lambda f: app.quit())
        qt_core.QTimer.singleShot(20_000, app.quit)
        app.exec() if hasattr(app, "exec") else app.exec_()
        assert future.result(0).content[0].text == "counted 3"
    executor.shutdown()
    assert seen == [(1, qt_thread), (2, qt_thread), (3, qt_thread)]
