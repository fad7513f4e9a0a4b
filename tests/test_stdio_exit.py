"""A stdio server that fails to start, or dies, explains itself in ConnectionLost."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_sync import Client, ConnectionLost
from mcp_sync.cli import main
from mcp_sync.transports.stdio import StdioClientTransport
from tests.conftest import python_command

pytestmark = pytest.mark.timeout(30)

SERVERS = Path(__file__).parent / "servers"


def test_a_server_with_a_syntax_error_shows_its_traceback_tail(tmp_path: Path) -> None:
    """SHUTDOWN-5: the server exits before answering initialize; the error has its exit
    status and the end of the traceback it printed, in the message and as attributes."""
    script = tmp_path / "broken_server.py"
    script.write_text("from mcp_sync import Server\n\ndef broken(:\n    pass\n")
    with pytest.raises(ConnectionLost) as caught:
        Client.stdio(python_command(str(script)), timeout=10)
    error = caught.value
    assert error.exit_code == 1
    assert error.stderr_tail is not None
    assert error.stderr_tail.splitlines()[-1].startswith("SyntaxError")
    assert "broken_server.py" in error.stderr_tail
    assert "exited with status 1" in str(error)
    assert error.stderr_tail in str(error)


def test_a_missing_script_says_so(tmp_path: Path) -> None:
    missing = tmp_path / "no_such_server.py"
    with pytest.raises(ConnectionLost) as caught:
        Client.stdio(python_command(str(missing)), timeout=10)
    assert caught.value.exit_code == 2
    assert "no_such_server.py" in (caught.value.stderr_tail or "")
    assert "No such file" in str(caught.value)


def test_a_missing_program_says_it_could_not_start() -> None:
    with pytest.raises(ConnectionLost, match="could not start 'no-such-mcp-server-program'"):
        Client.stdio(["no-such-mcp-server-program"])


def test_an_early_exit_gives_its_status_and_last_lines() -> None:
    """Only the last 20 lines (4 KiB at most) of stderr are kept."""
    code = ("import sys\n"
            "for i in range(100): print(f'line {i}', file=sys.stderr)\n"
            "sys.exit(3)\n")
    with pytest.raises(ConnectionLost, match="exited with status 3") as caught:
        Client.stdio(python_command("-c", code), timeout=10)
    tail = caught.value.stderr_tail
    assert tail is not None
    assert tail.splitlines() == [f"line {i}" for i in range(80, 100)]


def test_long_stderr_lines_are_bounded() -> None:
    code = "import sys\nprint('x' * 100_000, file=sys.stderr)\nsys.exit(4)\n"
    with pytest.raises(ConnectionLost) as caught:
        Client.stdio(python_command("-c", code), timeout=10)
    assert caught.value.exit_code == 4
    assert caught.value.stderr_tail == "x" * 4096


def test_a_server_killed_while_serving_names_the_signal() -> None:
    """Later calls get the same account of the death, attributes included."""
    transport = StdioClientTransport(python_command(str(SERVERS / "tools_server.py")))
    with Client(transport, timeout=10) as client:
        transport.process.kill()
        with pytest.raises(ConnectionLost) as first:
            client.ping()
        with pytest.raises(ConnectionLost) as later:
            client.ping()
    assert first.value.exit_code == later.value.exit_code == -9
    assert "killed by SIGKILL" in str(later.value)


def test_stderr_sent_elsewhere_leaves_no_tail() -> None:
    """With stderr going to a file of the caller's, only the exit status is known."""
    with pytest.raises(ConnectionLost) as caught:
        Client.stdio(python_command("-c", "import sys; sys.exit(5)"),
                     stderr=subprocess.DEVNULL, timeout=10)
    assert caught.value.exit_code == 5
    assert caught.value.stderr_tail is None


def test_a_stream_without_a_descriptor_still_gets_the_lines() -> None:
    captured = io.StringIO()
    code = "import sys; print('to the stream', file=sys.stderr); sys.exit(6)"
    with pytest.raises(ConnectionLost) as caught:
        Client.stdio(python_command("-c", code), stderr=captured, timeout=10)
    assert captured.getvalue() == "to the stream\n"
    assert caught.value.stderr_tail == "to the stream"


def test_the_cli_prints_the_exit_status_and_stderr(capsys: pytest.CaptureFixture[str],
                                                   tmp_path: Path) -> None:
    script = tmp_path / "fails.py"
    script.write_text("raise ImportError('no module named mcp_sync_extra')\n")
    assert main(["tools", "--", sys.executable, str(script)]) == 3  # the server went away
    printed = capsys.readouterr().err
    assert "exited with status 1" in printed
    assert "ImportError: no module named mcp_sync_extra" in printed


def test_the_cli_says_a_lost_server_once(tmp_path: Path) -> None:
    """Run as a user runs it (no logging set up): the failure is printed once, not again
    by the library's own warning of the lost connection."""
    script = tmp_path / "fails.py"
    script.write_text("import sys\nprint('boom happened', file=sys.stderr)\nsys.exit(3)\n")
    done = subprocess.run([sys.executable, "-m", "mcp_sync", "ping", "--", sys.executable,
                           str(script)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 3  # the server went away
    assert done.stderr.count("exited with status 3") == 1, done.stderr
    assert "boom happened" in done.stderr
