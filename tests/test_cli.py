"""The mcp-sync command against the everything server, run as a user runs it."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import textwrap
from pathlib import Path

import pytest

from mcp_sync import Client, types
from mcp_sync.cli import main
from mcp_sync.client import ElicitationRequest
from tests.conftest import EXAMPLES

EVERYTHING = [sys.executable, str(EXAMPLES / "everything_server.py")]
CLI = [sys.executable, "-m", "mcp_sync"]


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> object:
    assert main(["--json", *argv, "--", *EVERYTHING]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.timeout(60)
def test_listing_commands_print_json(capsys: pytest.CaptureFixture[str]) -> None:
    """Schema ListToolsResult, ListResourcesResult, ListResourceTemplatesResult,
    ListPromptsResult: each listing as a JSON list in its wire shape."""
    tools = _json(capsys, "tools")
    assert isinstance(tools, list) and "long_running" in {tool["name"] for tool in tools}
    resources = _json(capsys, "resources")
    assert isinstance(resources, list)
    assert {item["uri"] for item in resources} == {"static://hello", "static://binary"}
    assert _json(capsys, "templates") == [
        {"uriTemplate": "greeting://{name}", "name": "greeting", "mimeType": "text/plain",
         "description": "A greeting for anyone."}]
    prompts = _json(capsys, "prompts")
    assert isinstance(prompts, list) and [item["name"] for item in prompts] == ["greet"]
    info = _json(capsys, "info")
    assert isinstance(info, dict) and info["serverInfo"]["name"] == "everything"
    assert _json(capsys, "ping") == {}


@pytest.mark.timeout(60)
def test_commands_print_text(capsys: pytest.CaptureFixture[str]) -> None:
    """Readable text without --json: the tool's text, the resource's text, the prompt's
    messages, the completion values one a line (COMPLETION-2)."""
    def text(*argv: str) -> str:
        assert main([*argv, "--", *EVERYTHING]) == 0
        return capsys.readouterr().out

    assert text("call", "add", "a=1", "b=2") == "3\n"
    assert text("read", "static://hello") == "Hello, world!\n"
    assert text("prompt", "greet", "name=Ada") == "user: Please greet Ada warmly.\n"
    assert text("complete", "greet", "name", "Al") == "Alice\n"
    assert text("complete", "greeting://{name}", "name", "B") == "Bob\n"
    assert text("ping") == "ok\n"
    assert text("info").startswith("everything 1.0.0\nprotocol ")
    assert "long_running" in text("tools")


@pytest.mark.timeout(60)
def test_key_value_arguments_follow_the_input_schema(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Schema Tool.inputSchema: a string property keeps ``007`` a string, an integer
    property takes JSON, one JSON object is taken whole."""
    assert main(["call", "echo", "message=007", "--", *EVERYTHING]) == 0
    assert capsys.readouterr().out == "007\n"
    assert main(["--json", "call", "structured", '{"a": 2, "b": 5}', "--", *EVERYTHING]) == 0
    assert json.loads(capsys.readouterr().out)["structuredContent"] == {"sum": 7, "product": 10}
    assert main(["call", "echo", "message={\"a\": 1}", "--", *EVERYTHING]) == 0
    assert capsys.readouterr().out == '{"a": 1}\n'  # JSON-looking, yet a string property
    assert main(["call", "add", "a=x", "b=2", "--", *EVERYTHING]) == 2
    assert "a='x': expected integer" in capsys.readouterr().err


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *argv], capture_output=True, text=True, timeout=30)


@pytest.mark.timeout(90)
@pytest.mark.parametrize(("argv", "status", "says"), [
    (["call", "nope", "--", *EVERYTHING], 1, "Unknown tool: nope"),
    (["call", "fail", "--", *EVERYTHING], 1, "reported an error"),
    (["call", "add", "{bad", "--", *EVERYTHING], 2, "not valid JSON"),
    (["call", "add"], 2, "give the server's command"),
    (["frobnicate", "--", *EVERYTHING], 2, "invalid choice"),
    (["tools", "--", sys.executable, "-c", "import sys; sys.exit(3)"], 3, "exited with status 3"),
    (["tools", "--url", "http://127.0.0.1:9/mcp"], 3, "cannot reach"),
    (["tools", "--", "/nonexistent/mcp-server"], 3, "could not start"),
    # Each progress report starts the time again; then 0.5 s pass without one.
    (["--timeout", "0.5", "call", "long_running", "steps=2", "delay=20", "--", *EVERYTHING],
     4, "timed out"),
    (["--header", "X: y", "tools", "--", *EVERYTHING], 2, "--header and --oauth are for --url"),
])
def test_errors_are_one_line_and_an_exit_status(argv: list[str], status: int,
                                                 says: str) -> None:
    """Every failure: one line on stderr, a distinct non-zero status, no traceback."""
    completed = _run(*argv)
    assert completed.returncode == status, completed.stderr
    lines = completed.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("mcp-sync: ") and says in lines[0], lines


def _on_pty(argv: list[str], *, until: bytes | None = None,
            then: signal.Signals | None = None,
            env: dict[str, str] | None = None) -> tuple[int, bytes]:
    """Run the command with stdout and stderr on a terminal; what it wrote there."""
    primary, secondary = pty.openpty()
    # A terminal of 80 columns, as a terminal window is (a new pty has none).
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=secondary,
                               stderr=secondary, env=env)
    os.close(secondary)
    seen = b""
    try:
        while True:
            ready, _, _ = select.select([primary], [], [], 30)
            assert ready, seen
            try:
                chunk = os.read(primary, 4096)
            except OSError:  # the terminal closed: the command ended
                break
            if not chunk:
                break
            seen += chunk
            if until is not None and then is not None and until in seen:
                process.send_signal(then)
                then = None
        return process.wait(timeout=30), seen
    finally:
        os.close(primary)
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("drawer", ["tqdm", "plain"])
def test_progress_bar_on_a_terminal(drawer: str, tmp_path: Path) -> None:
    """Schema ProgressNotification: each report redraws one line on the terminal, by
    tqdm when installed, else by the plain fallback."""
    env = dict(os.environ)
    if drawer == "tqdm":
        pytest.importorskip("tqdm")
    else:
        hidden = tmp_path / "tqdm"
        hidden.mkdir()
        (hidden / "__init__.py").write_text("raise ImportError('hidden by the test')\n")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path),
                                                          env.get("PYTHONPATH")]))
    status, seen = _on_pty([*CLI, "call", "long_running", "steps=30", "delay=0.02",
                            "--", *EVERYTHING], env=env)
    assert status == 0, seen
    assert b"step 15 of 30" in seen and b"\r" in seen
    assert (b"15/30" in seen) and ((b"[###############" in seen) == (drawer == "plain"))
    assert seen.rstrip().endswith(b"done")


@pytest.mark.timeout(60)
def test_no_progress_bar_in_a_pipe() -> None:
    """The bar is drawn only on a terminal: a pipe gets the result alone."""
    completed = _run("call", "long_running", "steps=5", "delay=0.01", "--", *EVERYTHING)
    assert completed.returncode == 0
    assert (completed.stdout, completed.stderr) == ("done\n", "")


@pytest.mark.timeout(60)
def test_ctrl_c_cancels_the_call_and_exits_130() -> None:
    """CANCEL-1: Ctrl-C cancels the call at the server; the command exits 130."""
    status, seen = _on_pty([*CLI, "call", "long_running", "steps=1000", "delay=0.05",
                            "--", *EVERYTHING], until=b"step 3 of", then=signal.SIGINT)
    assert status == 130, seen
    assert b"mcp-sync: interrupted" in seen and b"Traceback" not in seen


@pytest.mark.timeout(60)
def test_logs_prints_the_servers_log_messages(tmp_path: Path) -> None:
    """LOGGING-3: logs sets the level and prints each notifications/message."""
    script = tmp_path / "talker.py"
    script.write_text(textwrap.dedent("""
        import threading
        from mcp_sync import Server

        server = Server("talker", logging=True)
        ready = threading.Event()

        @server.tool()
        def noop() -> str:
            return "ok"

        def talk() -> None:
            while not ready.wait(0.05):
                server.log("warning", "disk almost full", "talker")

        threading.Thread(target=talk, daemon=True).start()
        server.run_stdio()
    """))
    with subprocess.Popen([*CLI, "--json", "logs", "--level", "info", "--",
                           sys.executable, str(script)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            assert json.loads(line) == {"level": "warning", "data": "disk almost full",
                                        "logger": "talker"}
        finally:
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=20) == 130


@pytest.mark.timeout(90)
def test_bridge_serves_a_stdio_server_over_http() -> None:
    """Schema CallToolRequest and ProgressNotification through ``bridge --port``: a
    client over HTTP calls a stdio server's tool and gets its progress; the bridge ends
    cleanly on SIGTERM, with its server."""
    with subprocess.Popen([*CLI, "bridge", "--port", "0", "--", *EVERYTHING],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True) as bridge:
        try:
            assert bridge.stderr is not None
            line = bridge.stderr.readline()
            assert line.startswith("mcp-sync: serving http://127.0.0.1:"), line
            url = line.split()[-1]
            reports: list[float] = []
            with Client.http(url, timeout=20) as client:
                result = client.call_tool(
                    "long_running", {"steps": 4, "delay": 0.01},
                    on_progress=lambda progress, total, message: reports.append(progress))
                assert result.content[0].text == "done"  # type: ignore[union-attr]
                assert reports == [1, 2, 3, 4]
                assert client.call_tool("add", {"a": 2, "b": 3}).structured_content == {
                    "result": 5}

            def sampling(params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
                return types.CreateMessageResult(
                    role="assistant", content=types.TextContent(text="forty-two"), model="m")

            def elicitation(request: ElicitationRequest) -> object:
                return request.accept({"name": "Ada"})

            # SAMPLING-1, V0618-29, SEP-2322: what the server asks mid-call reaches the
            # caller, as a request (legacy) or in an input-required result (modern).
            for version in ("2026-07-28", "2025-11-25"):
                with Client.http(url, timeout=20, supported_versions=[version],
                                 sampling_handler=sampling,
                                 elicitation_handler=elicitation) as client:
                    assert client.protocol_version == version
                    # LOGGING-3: a session setting passes through too.
                    client.set_logging_level("debug")
                    answer = client.call_tool("sample", {"prompt": "the answer?"})
                    assert answer.content[0].text == "forty-two"  # type: ignore[union-attr]
                    greeting = client.call_tool("ask", {})
                    assert greeting.content[0].text == "Hello, Ada!"  # type: ignore[union-attr]
            server_pids = _children(bridge.pid)
            assert len(server_pids) == 1  # the everything server
        finally:
            bridge.send_signal(signal.SIGTERM)
            assert bridge.wait(timeout=20) == 0
    for pid in server_pids:  # stopped with the bridge, not left behind
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


@pytest.mark.timeout(90)
def test_bridge_serves_an_http_server_over_stdio() -> None:
    """``bridge --stdio --url``: a stdio client reaches an HTTP server's tools and
    progress; the bridge ends when its stdin closes."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        from everything_server import make_server
    finally:
        sys.path.remove(str(EXAMPLES))
    from mcp_sync.transports.http_server import serve_http

    with serve_http(make_server()) as handle:
        reports: list[float] = []
        with Client.stdio([*CLI, "bridge", "--stdio", "--url", handle.url],
                          timeout=20) as client:
            assert client.server_info.name == "everything"
            result = client.call_tool(
                "long_running", {"steps": 3, "delay": 0.01},
                on_progress=lambda progress, total, message: reports.append(progress))
            assert result.content[0].text == "done"  # type: ignore[union-attr]
            assert [tool.name for tool in client.list_tools()][:2] == ["echo", "add"]
        assert reports == [1, 2, 3]
        # Its stdin closed, the bridge ends by itself, with status 0.
        with subprocess.Popen([*CLI, "bridge", "--stdio", "--url", handle.url],
                              stdin=subprocess.PIPE, stdout=subprocess.DEVNULL) as bridge:
            assert bridge.stdin is not None
            bridge.stdin.close()
            assert bridge.wait(timeout=20) == 0


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


@pytest.mark.timeout(120)
def test_oauth_authorizes_in_the_browser_then_reuses_its_tokens(tmp_path: Path) -> None:
    """V1125-26 and the authorization flow of docs/auth.md, from the command line:
    ``--oauth`` discovers, registers, sends the browser to authorize, calls the tool, and
    keeps the tokens (0600) for the next run, which needs no browser."""
    from tests.auth_example_helpers import running_auth_example

    browser = tmp_path / "browser.py"
    # A "browser" that follows the authorization URL to the loopback redirect.
    browser.write_text("import sys, requests\nrequests.get(sys.argv[1], timeout=20)\n")
    tokens = tmp_path / "tokens.json"
    env = {**os.environ, "BROWSER": f"{sys.executable} {browser} %s"}
    with running_auth_example(tmp_path / "auth.log", auto_approve=True) as example:
        command = [*CLI, "call", "add", "a=2", "b=40", "--url", example.mcp_url, "--oauth",
                   "--token-file", str(tokens)]
        first = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
        assert first.returncode == 0, first.stderr
        assert first.stdout == "42\n"
        assert "authorize in your browser: " in first.stderr
        assert tokens.stat().st_mode & 0o777 == 0o600
        second = subprocess.run(command, capture_output=True, text=True, timeout=60,
                                env={**env, "BROWSER": "false"})
        assert second.returncode == 0, second.stderr
        assert second.stdout == "42\n" and second.stderr == ""
