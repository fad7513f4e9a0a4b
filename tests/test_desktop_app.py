"""examples/desktop_app.py, run as a user would on a machine without a screen: under
``xvfb-run`` (Debian's xvfb), which gives it a virtual X display.

Skipped, saying why, only when xvfb-run or tkinter is missing (.ci/run installs xvfb).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys

import pytest

from tests.conftest import EXAMPLES, ROOT

pytestmark = pytest.mark.timeout(120)

XVFB_RUN = shutil.which("xvfb-run")


def run_under_xvfb(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``python ARGS`` under ``xvfb-run -a``; on a timeout the whole process group
    (xvfb-run, Xvfb, the app, its server) is killed, so nothing is left behind."""
    if XVFB_RUN is None:
        pytest.skip("xvfb-run is not installed (apt-get install xvfb)")
    try:
        import tkinter  # noqa: F401
    except ImportError:
        pytest.skip("tkinter is not available in this Python")
    for _ in range(3):
        process = subprocess.Popen(
            [XVFB_RUN, "-a", sys.executable, *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True)
        try:
            stdout, stderr = process.communicate(timeout=50)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
            pytest.fail(f"the example did not exit within 50 s: {stdout}{stderr}")
        # xvfb-run -a picks a free display number by looking for lock files: another
        # run starting at the same moment may take it first. Then try again.
        if "Xvfb failed to start" not in stderr:
            break
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def test_the_demo_calls_long_running_while_the_ui_keeps_ticking() -> None:
    """PROGRESS-1, PROGRESS-3: the window's call of ``long_running`` (20 steps of 0.05 s)
    gets its progress and result through the Tk executor, while the Tk thread's own
    ``after`` callbacks keep firing: the UI thread never blocked."""
    completed = run_under_xvfb(str(EXAMPLES / "desktop_app.py"), "--demo")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    lines = completed.stdout.splitlines()
    assert "demo: outcome done: Result: done" in lines
    assert lines[-1] == "demo: done"
    ticks = re.search(r"^demo: ui-ticks (\d+)$", completed.stdout, re.MULTILINE)
    assert ticks is not None, completed.stdout
    assert int(ticks.group(1)) >= 10


def test_the_cancel_button_cancels_the_call_and_the_client_stays_usable() -> None:
    """CANCEL-1: the Cancel button calls ``future.cancel()`` on the Tk thread; the window
    shows the cancellation at once, and the next call on the same client succeeds."""
    completed = run_under_xvfb(str(EXAMPLES / "desktop_app.py"), "--demo-cancel")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    first, *rest = completed.stdout.splitlines()
    step = re.fullmatch(r"demo: cancelling at step (\d+) of 100", first)
    assert step is not None, completed.stdout
    assert 3 <= int(step.group(1)) < 100
    assert rest == [
        "demo: outcome cancelled: Cancelled: the server was told to stop.",
        "demo: outcome done: Result: done",
        "demo: done",
    ]


CLOSE_DURING_A_CALL = """
import importlib.util, os, sys, time
spec = importlib.util.spec_from_file_location("desktop_app", sys.argv[1])
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)
made = []

class App(example.DesktopApp):
    def __init__(self, root, server=example.SERVER):
        super().__init__(root, server)
        made.append(self)
        self.on_connected.append(self.run_then_close)

    def run_then_close(self):
        self.steps.set(300)
        self.delay.set(0.1)
        self.start()
        # As the window manager's close button does, once the call is under way.
        self.root.after(300, lambda: self.root.tk.call(self.root.protocol("WM_DELETE_WINDOW")))

example.DesktopApp = App
started = time.monotonic()
status = example.main([])
print("status", status)
print("call was running", made[0].call is not None)
print("seconds", time.monotonic() - started)
pid = os.getpid()
with open(f"/proc/{pid}/task/{pid}/children") as children:
    print("children", children.read().split())
"""


def test_closing_the_window_during_a_call_stops_the_server_and_exits() -> None:
    """CANCEL-1: the window closed while ``long_running`` (300 steps of 0.1 s) runs: the
    call is cancelled, the server process stopped, and the program ends well before the
    call would have."""
    completed = run_under_xvfb("-c", CLOSE_DURING_A_CALL, str(EXAMPLES / "desktop_app.py"))
    assert completed.returncode == 0, completed.stdout + completed.stderr
    lines = completed.stdout.splitlines()
    assert lines[:2] == ["status 0", "call was running True"], completed.stdout
    assert float(lines[2].split()[1]) < 20  # not the 30 s of the call
    assert lines[3] == "children []"


CANCEL_THEN_ASK_THE_SERVER = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("desktop_app", sys.argv[1])
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)

class App(example.DesktopApp):
    def __init__(self, root, server=example.SERVER):
        super().__init__(root, [sys.executable, sys.argv[2]])
        self.on_connected.append(self.run)
        self.on_outcome.append(self.ended)

    def run(self):
        self.steps.set(1000)
        self.delay.set(0.05)
        self.start()
        self.press_cancel_once_running()

    def press_cancel_once_running(self):
        if float(self.progress.cget("value")) >= 2:
            self.cancel_button.invoke()
        else:
            self.root.after(10, self.press_cancel_once_running)

    def ended(self, outcome):
        print("outcome", outcome, "|", self.outcome.cget("text"))
        asked = self.client.call_tool_async("saw_cancel", {"timeout": 10})
        asked.add_done_callback(self.answered)

    def answered(self, future):
        print("the server saw the cancel:", future.result().content[0].text)
        self.root.quit()

example.DesktopApp = App
print("status", example.main([]))
"""


def test_the_cancel_button_reaches_the_server() -> None:
    """CANCEL-1, CANCEL-4: pressing Cancel sends ``notifications/cancelled``; the tool on
    the server sees it and stops."""
    completed = run_under_xvfb("-c", CANCEL_THEN_ASK_THE_SERVER,
                               str(EXAMPLES / "desktop_app.py"),
                               str(ROOT / "tests" / "servers" / "long_running_server.py"))
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stdout.splitlines() == [
        "outcome cancelled | Cancelled: the server was told to stop.",
        "the server saw the cancel: yes",
        "status 0",
    ]


def test_without_a_display_the_example_says_so() -> None:
    """Started with no X display, the example exits with status 2 and one clear line."""
    try:
        import tkinter  # noqa: F401
    except ImportError:
        pytest.skip("tkinter is not available in this Python")
    environment = {key: value for key, value in os.environ.items() if key != "DISPLAY"}
    completed = subprocess.run(
        [sys.executable, str(EXAMPLES / "desktop_app.py"), "--demo"], env=environment,
        capture_output=True, text=True, timeout=30)
    assert completed.returncode == 2
    assert "cannot open a window" in completed.stderr
    assert "xvfb-run" in completed.stderr
    assert "Traceback" not in completed.stderr
