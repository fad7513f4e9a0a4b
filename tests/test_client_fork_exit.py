"""A client across ``os.fork()`` and at interpreter exit.

A forked child (gunicorn ``--preload``, multiprocessing) that uses a client made before
the fork fails at once with a clear error, or connects afresh with ``reconnect=True``;
the parent is unaffected. A program that forgets ``close()`` still stops its stdio
server (SHUTDOWN-2) and ends its HTTP session with DELETE (HTTP-32) as it exits.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from mcp_sync import Client
from tests.conftest import HERE, ROOT
from tests.http_server_helpers import make_server

FAULT_SERVER = [sys.executable, str(HERE / "servers" / "fault_server.py")]

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def in_child(work: Callable[[], Any]) -> dict[str, Any]:
    """Run ``work`` in a forked child; what it returned or raised, and how long it took.

    The child ends with ``os._exit``: it never runs the parent's test machinery.
    """
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        outcome: dict[str, Any] = {}
        try:
            # A child that hangs must not outlive the test by much: the default action
            # of SIGALRM ends the process (the parent's handler is not wanted here).
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            signal.alarm(15)
            os.close(read_end)
            began = time.monotonic()
            try:
                outcome["returned"] = work()
            except BaseException as exc:
                outcome["raised"] = type(exc).__name__
                outcome["message"] = str(exc)
            outcome["seconds"] = time.monotonic() - began
            os.write(write_end, json.dumps(outcome).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    result: dict[str, Any] = json.loads(data)
    return result


@pytest.mark.timeout(40)
def test_a_forked_childs_call_fails_at_once_with_a_clear_error() -> None:
    """The child's call fails within a second with ConnectionClosed naming os.fork();
    the child's close() leaves the parent's server alone, and the parent goes on."""
    with Client.stdio(FAULT_SERVER, timeout=30, close_timeout=1.0) as client:
        assert client.call_tool("echo", {"text": "before"}).content[0].text == "before"

        def use_then_close() -> str:
            try:
                client.call_tool("echo", {"text": "child"})
            finally:
                closed_here = client.closed
                client.close()
            return f"answered (closed: {closed_here})"

        outcome = in_child(use_then_close)
        assert outcome["raised"] == "ConnectionClosed", outcome
        assert "os.fork()" in outcome["message"] and "reconnect=True" in outcome["message"]
        assert outcome["seconds"] < 1.0

        assert client.call_tool("echo", {"text": "after"}).content[0].text == "after"
        assert not client.closed


@pytest.mark.timeout(40)
def test_a_forked_child_with_reconnect_starts_its_own_server() -> None:
    """With reconnect=True the child's call starts a server of the child's own and is
    answered; the parent's server keeps serving the parent."""
    pids: list[int] = []
    reported = threading.Event()

    def keep_pid(progress: float, total: float | None, message: str | None) -> None:
        assert message is not None
        pids.append(int(message))
        reported.set()

    with Client.stdio(FAULT_SERVER, timeout=30, close_timeout=1.0, reconnect=True) as client:
        client.call_tool_async("block", on_progress=keep_pid)
        assert reported.wait(10)

        def call_in_child() -> list[Any]:
            try:
                text = client.call_tool("echo", {"text": "child"}).content[0].text
                seen = threading.Event()
                child_pids: list[str] = []

                def keep(progress: float, total: float | None, message: str | None) -> None:
                    child_pids.append(str(message))
                    seen.set()

                client.call_tool_async("block", on_progress=keep)
                assert seen.wait(10)
                return [text, int(child_pids[0])]
            finally:
                client.close()

        outcome = in_child(call_in_child)
        assert "raised" not in outcome, outcome
        text, child_server = outcome["returned"]
        assert text == "child"
        assert child_server != pids[0]
        assert client.call_tool("echo", {"text": "parent"}).content[0].text == "parent"


@pytest.mark.timeout(40)
def test_the_parent_closes_its_stdio_server_cleanly_while_a_forked_child_lives_shutdown_2(
        ) -> None:
    """SHUTDOWN-2: a child forked while the client was open does not keep the server's
    stdin open: the parent's close() still ends the server with EOF, without waiting
    for ``close_timeout`` and SIGTERM."""
    client = Client.stdio(FAULT_SERVER, timeout=30, close_timeout=10.0)
    go_read, go_write = os.pipe()
    try:
        client.ping()
        pid = os.fork()
        if pid == 0:  # the child: wait until the parent is done, then leave
            try:
                signal.signal(signal.SIGALRM, signal.SIG_DFL)
                signal.alarm(15)
                os.read(go_read, 1)
            finally:
                os._exit(0)
        began = time.monotonic()
        client.close()
        assert time.monotonic() - began < 5.0  # EOF reached the server
    finally:
        client.close()
        os.write(go_write, b"x")
        os.close(go_write)
        os.close(go_read)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


# --- at exit --------------------------------------------------------------------------------


def run_script(source: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(source), *args],
                          capture_output=True, text=True, timeout=30, env=env, check=False)


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@contextlib.contextmanager
def killed_afterwards(pids: Iterable[int]) -> Any:
    # Should the test fail, what it left running must not outlive it.
    try:
        yield
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.timeout(40)
def test_a_stdio_server_is_stopped_when_the_program_exits_without_close_shutdown_2() -> None:
    """SHUTDOWN-2: a script makes a client, starts a call and exits without close();
    the server (one that ignores the end of its stdin) is stopped and reaped before the
    script's process is gone."""
    script = """
        import sys, threading
        from mcp_sync import Client

        reported = threading.Event()
        pids = []
        client = Client.stdio([sys.executable, sys.argv[1], "linger"], close_timeout=0.5)
        client.call_tool_async("block", on_progress=lambda p, t, m: (pids.append(m),
                                                                     reported.set()))
        assert reported.wait(10)
        print(pids[0], flush=True)
    """
    finished = run_script(script, FAULT_SERVER[1])
    assert finished.returncode == 0, finished.stderr
    server_pid = int(finished.stdout.split()[0])
    with killed_afterwards([server_pid]):
        assert gone(server_pid), "the server outlived the program that started it"


@pytest.mark.timeout(40)
def test_an_http_session_is_deleted_when_the_program_exits_without_close_http_32() -> None:
    """HTTP-32: a script opens a session and exits without close(); the server receives
    DELETE for that session."""
    from mcp_sync.transports.http_server import serve_http

    seen: list[tuple[str, str | None]] = []
    lock = threading.Lock()

    def recording(app: Any) -> Any:
        def wrapped(environ: dict[str, Any], start_response: Any) -> Any:
            with lock:
                seen.append((environ["REQUEST_METHOD"], environ.get("HTTP_MCP_SESSION_ID")))
            return app(environ, start_response)
        return wrapped

    with serve_http(make_server(), wrap=recording) as handle:
        script = """
            import sys
            from mcp_sync import Client

            client = Client.http(sys.argv[1], supported_versions=["2025-11-25"])  # a session
            print(client.call_tool("echo", {"message": "hi"}).content[0].text)
        """
        finished = run_script(script, handle.url)
        assert finished.returncode == 0, finished.stderr
        assert finished.stdout.split() == ["hi"]
        with lock:
            sessions = {sid for method, sid in seen if method == "POST" and sid}
            deletes = [sid for method, sid in seen if method == "DELETE"]
        assert len(sessions) == 1
        assert deletes == list(sessions)
