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

from tests.conftest import EXAMPLES

pytestmark = pytest.mark.timeout(120)

XVFB_RUN = shutil.which("xvfb-run")


def run_under_xvfb(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the example under ``xvfb-run -a``; on a timeout the whole process group
    (xvfb-run, Xvfb, the app, its server) is killed, so nothing is left behind."""
    if XVFB_RUN is None:
        pytest.skip("xvfb-run is not installed (apt-get install xvfb)")
    try:
        import tkinter  # noqa: F401
    except ImportError:
        pytest.skip("tkinter is not available in this Python")
    for _ in range(3):
        process = subprocess.Popen(
            [XVFB_RUN, "-a", sys.executable, str(EXAMPLES / "desktop_app.py"), *args],
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
    completed = run_under_xvfb("--demo")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    lines = completed.stdout.splitlines()
    assert "demo: done: Result: done" in lines
    assert lines[-1] == "demo: done"
    ticks = re.search(r"^demo: ui-ticks (\d+)$", completed.stdout, re.MULTILINE)
    assert ticks is not None, completed.stdout
    assert int(ticks.group(1)) >= 10


def test_the_cancel_button_cancels_the_call_and_the_client_stays_usable() -> None:
    """CANCEL-1: the Cancel button calls ``future.cancel()`` on the Tk thread; the window
    shows the cancellation at once, and the next call on the same client succeeds."""
    completed = run_under_xvfb("--demo-cancel")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    first, *rest = completed.stdout.splitlines()
    step = re.fullmatch(r"demo: cancelling at step (\d+) of 100", first)
    assert step is not None, completed.stdout
    assert 3 <= int(step.group(1)) < 100
    assert rest == [
        "demo: cancelled: Cancelled: the server was told to stop.",
        "demo: done: Result: done",
        "demo: done",
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
