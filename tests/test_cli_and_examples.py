"""The mcp-sync command and the examples, run as a user would run them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mcp_sync.cli import main
from tests.conftest import EXAMPLES

DEMO_SERVER = [sys.executable, str(EXAMPLES / "demo_server.py")]


@pytest.mark.timeout(30)
def test_quickstart_prints_the_result() -> None:
    completed = subprocess.run(
        [sys.executable, str(EXAMPLES / "quickstart.py")], capture_output=True, text=True,
        timeout=25)
    assert completed.returncode == 0, completed.stderr
    assert "connected to demo 1.0.0 (protocol 2026-07-28)" in completed.stdout
    assert "add(2, 40) = 42" in completed.stdout
    assert "countdown: liftoff" in completed.stdout


@pytest.mark.timeout(30)
def test_cli_call(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--json", "call", "add", '{"a": 1, "b": 2}', "--", *DEMO_SERVER]) == 0
    # DES-10: add's int return is structured output wrapped as {"result": ...}.
    assert json.loads(capsys.readouterr().out) == {
        "content": [{"type": "text", "text": "3"}], "structuredContent": {"result": 3},
        "isError": False}


@pytest.mark.timeout(30)
def test_cli_tools_info_ping(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--json", "tools", "--", *DEMO_SERVER]) == 0
    tools = json.loads(capsys.readouterr().out)
    assert [tool["name"] for tool in tools] == ["add", "echo", "countdown"]
    assert main(["--json", "info", "--", *DEMO_SERVER]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["serverInfo"] == {"name": "demo", "version": "1.0.0"}
    assert main(["ping", "--", *DEMO_SERVER]) == 0
    assert capsys.readouterr().out == "ok\n"


@pytest.mark.timeout(30)
def test_cli_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["call", "nope", "--", *DEMO_SERVER]) == 1
    assert "Unknown tool: nope" in capsys.readouterr().err
    assert main(["call", "add", "{not json", "--", *DEMO_SERVER]) == 2
    assert main(["tools"]) == 2
    assert main(["tools", "--", sys.executable, "-c", "import sys; sys.exit(3)"]) == 3


@pytest.mark.timeout(30)
def test_module_entry_point() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "mcp_sync", "--version"], capture_output=True, text=True,
        timeout=25)
    assert completed.returncode == 0
    assert completed.stdout.startswith("mcp-sync ")


@pytest.mark.timeout(30)
def test_cli_lists_the_everything_server(capsys: pytest.CaptureFixture[str]) -> None:
    everything = [sys.executable, str(EXAMPLES / "everything_server.py")]
    assert main(["--json", "tools", "--", *everything]) == 0
    names = {tool["name"] for tool in json.loads(capsys.readouterr().out)}
    assert names == {"echo", "add", "long_running", "sample", "roots", "fail", "log", "image",
                     "structured", "link", "ask"}


@pytest.mark.timeout(30)
def test_cli_over_http(capsys: pytest.CaptureFixture[str]) -> None:
    from mcp_sync import Server
    from mcp_sync.transports.http_server import serve_http

    server = Server("web")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    with serve_http(server) as handle:
        assert main(["--json", "call", "add", '{"a": 2, "b": 3}', "--", handle.url]) == 0
    assert json.loads(capsys.readouterr().out)["content"][0]["text"] == "5"


@pytest.mark.timeout(30)
@pytest.mark.parametrize(("typed", "expected"), [
    ("Ada\n4\nterrace\ny\n", "Booked 4 seats terrace for Ada with the vegetarian menu."),
    ("\n", "No booking (cancel)."),
])
def test_elicitation_example_books_from_the_console(typed: str, expected: str) -> None:
    """V0618-29, V1125-38: the example's console handler answers the tool's form, with
    the defaults pre-filled; an empty required answer cancels."""
    completed = subprocess.run(
        [sys.executable, str(EXAMPLES / "elicitation.py")], input=typed,
        capture_output=True, text=True, timeout=25)
    assert completed.returncode == 0, completed.stderr
    assert "bookings asks: Who is the booking for?" in completed.stdout
    assert completed.stdout.strip().endswith(expected)
