"""The stdio transport against real child processes.

The well-behaved server is ``examples/demo_server.py``; ``tests/servers/`` holds one built
on mcp_sync whose tools misbehave (print, flood stderr, hang) and a hand-written one that
breaks the transport rules (ignores EOF and SIGTERM, writes garbage, closes stdout).
Nothing here sleeps: every wait is a Future, an Event, a join or ``Popen.wait`` with a
timeout.
"""

from __future__ import annotations

import io
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_sync import Client
from mcp_sync.errors import ConnectionClosed, ConnectionLost, RequestTimeout
from mcp_sync.transports.stdio import LineReader, StdioClientTransport
from tests.conftest import EXAMPLES, HERE
from tests.helpers import RawChild

DEMO = [sys.executable, str(EXAMPLES / "demo_server.py")]
TOOLS = [sys.executable, str(HERE / "servers" / "tools_server.py")]
RAW = [sys.executable, str(HERE / "servers" / "raw_server.py")]


def _text(result: Any) -> str:
    return str(result.content[0].text)


@pytest.fixture
def raw_child() -> Iterator[Any]:
    children: list[RawChild] = []

    def start(command: list[str]) -> RawChild:
        child = RawChild(command)
        children.append(child)
        return child

    yield start
    for child in children:
        child.kill()


# --- a well-behaved server -------------------------------------------------------------


@pytest.mark.timeout(30)
def test_demo_server_over_stdio_stdio_1_progress_3() -> None:
    """STDIO-1, GEN-4, PROGRESS-3: spawn, initialize, list, call, progress, close."""
    progress: list[tuple[float, float | None, str | None]] = []
    with Client.stdio(DEMO, timeout=10) as client:
        assert client.server_info.name == "demo"
        assert [tool.name for tool in client.list_tools()] == ["add", "echo", "countdown"]
        assert _text(client.call_tool("add", {"a": 2, "b": 40})) == "42"
        result = client.call_tool("countdown", {"steps": 3},
                                  on_progress=lambda *args: progress.append(args))
        assert _text(result) == "liftoff"
        assert [p[0] for p in progress] == [1, 2, 3]
        client.ping()
    assert client.closed


@pytest.mark.timeout(30)
def test_server_exits_0_when_its_stdin_closes_shutdown_1_shutdown_2(raw_child: Any) -> None:
    """SHUTDOWN-1/2: closing stdin is the whole shutdown; the server exits cleanly."""
    child = raw_child(DEMO)
    result = child.handshake()
    assert result["result"]["serverInfo"]["name"] == "demo"
    child.send({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert child.receive() == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert child.close_stdin_and_wait() == 0


@pytest.mark.timeout(30)
def test_one_message_per_line_and_crlf_blank_lines_accepted_stdio_2_stdio_8(
        raw_child: Any) -> None:
    """STDIO-2: a multi-line result is one line; STDIO-8: CRLF and blank lines are fine."""
    child = raw_child(DEMO)
    child.handshake()
    text = "first line\nsecond line\r\nthird\n"
    child.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"message": text}}})
    line = child.line()
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line)["result"]["content"][0]["text"] == text
    child.send(b'\r\n\n   \n{"jsonrpc":"2.0","id":2,"method":"ping"}\r\n\r\n')
    child.send(b'{"jsonrpc":"2.0","id":3,"method":"ping"}\r\n')
    assert child.receive() == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert child.receive() == {"jsonrpc": "2.0", "id": 3, "result": {}}
    assert child.close_stdin_and_wait() == 0


@pytest.mark.timeout(30)
def test_invalid_json_line_gets_parse_error_and_serving_goes_on_stdio_8_jsonrpc_12(
        raw_child: Any) -> None:
    """STDIO-8, JSONRPC-12: '{bad json' gets -32700 with a null id; the next ping works."""
    child = raw_child(DEMO)
    child.handshake()
    child.send(b"{bad json\n")
    error = child.receive()
    assert error["id"] is None and error["error"]["code"] == -32700
    child.send({"jsonrpc": "2.0", "id": 7, "method": "ping"})
    assert child.receive() == {"jsonrpc": "2.0", "id": 7, "result": {}}
    assert child.close_stdin_and_wait() == 0


@pytest.mark.timeout(30)
def test_batch_line_is_served_stdio_3_batch_1(raw_child: Any) -> None:
    """STDIO-3, BATCH-1: a batch on one line gets one array line back."""
    child = raw_child(DEMO)
    child.handshake()
    child.send([{"jsonrpc": "2.0", "id": 1, "method": "ping"},
                {"jsonrpc": "2.0", "method": "notifications/whatever"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}])
    reply = child.receive()
    assert isinstance(reply, list)
    assert sorted(item["id"] for item in reply) == [1, 2]
    assert child.close_stdin_and_wait() == 0


@pytest.mark.timeout(60)
def test_ten_mebibyte_echo_round_trips_intact_stdio_2_gen_2() -> None:
    """STDIO-2, GEN-2: 10 MiB of non-ASCII text goes there and back unchanged."""
    unit = "Zürich ✓ \\ \" \n\t"
    text = unit * (10 * 1024 * 1024 // len(unit.encode()))
    with Client.stdio(DEMO, timeout=50) as client:
        assert _text(client.call_tool("echo", {"message": text})) == text
        client.ping()


# --- what goes to stdout and stderr ---------------------------------------------------


@pytest.mark.timeout(30)
def test_print_in_a_tool_goes_to_stderr_stdio_4_stdio_6() -> None:
    """STDIO-4: print() in a tool cannot corrupt the stream; the text reaches stderr."""
    stderr = io.StringIO()
    with Client.stdio(TOOLS, stderr=stderr, timeout=10) as client:
        assert _text(client.call_tool("shout", {"text": "printed-by-a-tool"})) == "shouted"
        client.ping()
        assert _text(client.call_tool("echo", {"text": "still fine"})) == "still fine"
    assert stderr.getvalue().count("printed-by-a-tool") == 2


@pytest.mark.timeout(30)
def test_stderr_reaches_logging_stdio_6(caplog: pytest.LogCaptureFixture) -> None:
    """STDIO-6: by default each stderr line is logged to mcp_sync.stdio.stderr."""
    caplog.set_level(logging.INFO, logger="mcp_sync.stdio.stderr")
    with Client.stdio(TOOLS, timeout=10) as client:
        client.call_tool("shout", {"text": "to-the-log"})
    lines = [r.getMessage() for r in caplog.records if r.name == "mcp_sync.stdio.stderr"]
    assert sum("to-the-log" in line for line in lines) == 2


@pytest.mark.timeout(30)
def test_one_megabyte_of_stderr_does_not_deadlock_stdio_6() -> None:
    """STDIO-6: stderr is drained while the server writes 1 MB of it."""
    stderr = io.StringIO()
    with Client.stdio(TOOLS, stderr=stderr, timeout=20) as client:
        assert _text(client.call_tool("spew", {"size": 1_000_000})) == "spewed"
        client.ping()
    assert len(stderr.getvalue()) >= 1_000_000
    assert stderr.getvalue().count("e" * 99 + "\n") == 1_000_000 // 100


@pytest.mark.timeout(30)
def test_stderr_to_a_file_descriptor_and_devnull_stdio_6(tmp_path: Path) -> None:
    """STDIO-6: a real file (or its descriptor number) gets stderr directly."""
    path = tmp_path / "server.log"
    with path.open("w") as log_file:
        with Client.stdio(TOOLS, stderr=log_file, timeout=10) as client:
            client.call_tool("shout", {"text": "into-a-file"})
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            with Client.stdio(TOOLS, stderr=fd, timeout=10) as client:
                client.call_tool("shout", {"text": "into-a-descriptor"})
        finally:
            os.close(fd)
    with Client.stdio(TOOLS, stderr=subprocess.DEVNULL, timeout=10) as client:
        client.call_tool("shout", {"text": "nowhere"})
    text = path.read_text()
    assert text.count("into-a-file") == 2 and text.count("into-a-descriptor") == 2
    with pytest.raises(ValueError, match="STDOUT"):
        Client.stdio(TOOLS, stderr=subprocess.STDOUT)


# --- the environment --------------------------------------------------------------------


@pytest.mark.timeout(30)
def test_env_and_cwd_reach_the_child_stdio_7(tmp_path: Path) -> None:
    """STDIO-7: credentials come through env=; cwd= sets the working directory."""
    env = {"MCP_SYNC_TEST_TOKEN": "s3cret ✓"}
    with Client.stdio(TOOLS, env=env, cwd=tmp_path, timeout=10) as client:
        assert _text(client.call_tool("getenv", {"name": "MCP_SYNC_TEST_TOKEN"})) == "s3cret ✓"
        assert Path(_text(client.call_tool("getcwd"))).resolve() == tmp_path.resolve()
        assert _text(client.call_tool("getenv", {"name": "PATH"})) == os.environ.get("PATH", "")
    with Client.stdio(TOOLS, env=env, inherit_env=False, timeout=10) as client:
        assert _text(client.call_tool("getenv", {"name": "MCP_SYNC_TEST_TOKEN"})) == "s3cret ✓"
        assert _text(client.call_tool("getenv", {"name": "PATH"})) == ""


# --- limits --------------------------------------------------------------------------------


@pytest.mark.timeout(30)
def test_oversized_line_to_the_server_gets_an_error_and_serving_goes_on_stdio_8(
        raw_child: Any) -> None:
    """STDIO-8: a line over the server's limit gets -32600; later lines are served."""
    child = raw_child([*TOOLS, "2000"])
    child.handshake()
    child.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "x" * 10_000}}})
    error = child.receive()
    assert error["id"] is None and error["error"]["code"] == -32600
    assert "exceeds the limit of 2000" in error["error"]["message"]
    child.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "small"}}})
    assert child.receive()["result"]["content"][0]["text"] == "small"
    assert child.close_stdin_and_wait() == 0


@pytest.mark.timeout(30)
def test_oversized_answer_is_refused_and_the_client_goes_on_stdio_8() -> None:
    """STDIO-8: an answer over the client's limit is not buffered; the call ends in a
    timeout (the frame's id cannot be read), the connection keeps working."""
    with Client.stdio(TOOLS, max_message_size=4096, timeout=10) as client:
        with pytest.raises(RequestTimeout):
            client.call_tool("lines", {"count": 1000}, timeout=1.0)
        assert _text(client.call_tool("lines", {"count": 2})) == "line 0\nline 1"
        client.ping()


# --- servers that go away ----------------------------------------------------------------


@pytest.mark.timeout(30)
def test_server_killed_mid_call_shutdown_5() -> None:
    """SHUTDOWN-5: SIGKILL while a tool runs: the caller has ConnectionLost within 1 s,
    and the child is reaped."""
    started = threading.Event()
    pids: list[int] = []

    def on_progress(progress: float, total: float | None, message: str | None) -> None:
        assert message is not None
        pids.append(int(message))
        started.set()

    client = Client.stdio(TOOLS, timeout=30)
    try:
        future = client.call_tool_async("hang", on_progress=on_progress)
        assert started.wait(10)
        os.kill(pids[0], signal.SIGKILL)
        began = time.monotonic()
        with pytest.raises(ConnectionLost):
            future.result(timeout=1.0)
        assert time.monotonic() - began < 1.0
        with pytest.raises(ConnectionLost):
            client.ping()
    finally:
        client.close()
    with pytest.raises(ChildProcessError):
        os.waitpid(pids[0], os.WNOHANG)  # reaped already


@pytest.mark.timeout(30)
def test_server_writing_garbage_then_exiting_stdio_8_shutdown_5() -> None:
    """STDIO-8, SHUTDOWN-5: lines that are not JSON, then exit: the call fails with
    ConnectionLost, nothing hangs, the exit status is collected."""
    transport = StdioClientTransport([*RAW, "garbage"], stderr=subprocess.DEVNULL)
    client = Client(transport, timeout=10)
    try:
        client.ping()
        with pytest.raises(ConnectionLost):
            client.call_tool("anything")
    finally:
        client.close()
    assert transport.process.returncode == 3


@pytest.mark.timeout(30)
def test_server_closing_its_stdout_ends_the_session_shutdown_3() -> None:
    """SHUTDOWN-3: the server closes stdout: pending calls fail, the child is reaped."""
    transport = StdioClientTransport([*RAW, "close-stdout"], stderr=subprocess.DEVNULL)
    client = Client(transport, timeout=10)
    try:
        future = client.call_tool_async("anything")
        with pytest.raises(ConnectionLost):
            future.result(timeout=5)
        assert client.closed
    finally:
        client.close()
    assert transport.process.returncode == 0  # it exited by itself once its stdin closed


@pytest.mark.timeout(30)
def test_server_ignoring_eof_gets_sigterm_shutdown_2(caplog: pytest.LogCaptureFixture) -> None:
    """SHUTDOWN-2: stdin closed, a wait of close_timeout, then SIGTERM."""
    transport = StdioClientTransport([*RAW, "ignore-eof"], close_timeout=0.3)
    client = Client(transport, timeout=10)
    client.ping()
    began = time.monotonic()
    client.close()
    elapsed = time.monotonic() - began
    assert transport.process.returncode == -signal.SIGTERM
    assert 0.3 <= elapsed < 3.0
    assert any("SIGTERM" in r.getMessage() for r in caplog.records)


@pytest.mark.timeout(30)
def test_server_ignoring_sigterm_gets_sigkill_shutdown_2(
        caplog: pytest.LogCaptureFixture) -> None:
    """SHUTDOWN-2: after SIGTERM and a second wait, SIGKILL."""
    transport = StdioClientTransport([*RAW, "ignore-term"], close_timeout=0.3)
    client = Client(transport, timeout=10)
    client.ping()
    began = time.monotonic()
    client.close()
    elapsed = time.monotonic() - began
    assert transport.process.returncode == -signal.SIGKILL
    assert 0.6 <= elapsed < 4.0
    assert any("SIGKILL" in r.getMessage() for r in caplog.records)


@pytest.mark.timeout(30)
def test_close_while_a_write_is_blocked_shutdown_2_shutdown_5() -> None:
    """SHUTDOWN-2/5: the server stopped reading, so a large request blocks in write;
    close() still stops the server within its bounds and the caller is released."""
    transport = StdioClientTransport([*RAW, "no-read"], close_timeout=0.3)
    client = Client(transport, timeout=10)
    errors: list[BaseException] = []

    def call() -> None:
        try:
            client.call_tool("echo", {"text": "x" * (4 * 1024 * 1024)})
        except BaseException as exc:
            errors.append(exc)

    caller = threading.Thread(target=call, name="test:blocked-writer")
    caller.start()
    began = time.monotonic()
    client.close()
    assert time.monotonic() - began < 5.0
    caller.join(5)
    assert not caller.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], ConnectionClosed)
    assert transport.process.returncode is not None


@pytest.mark.timeout(30)
def test_client_reads_crlf_and_blank_lines_from_a_server_stdio_8() -> None:
    """STDIO-8: a server that ends lines with CRLF and sends blank lines works."""
    with Client.stdio([*RAW, "crlf"], timeout=10) as client:
        assert client.server_info.name == "raw-crlf"
        client.ping()
        assert _text(client.call_tool("anything")) == "ok"


@pytest.mark.timeout(30)
def test_a_server_that_cannot_start_is_connection_lost_shutdown_5() -> None:
    """SHUTDOWN-5: a command that does not exist, or exits at once, fails the constructor."""
    with pytest.raises(ConnectionLost):
        Client.stdio(["/nonexistent/mcp-server"])
    with pytest.raises(ConnectionLost):
        Client.stdio([sys.executable, "-c", "import sys; sys.exit(2)"], timeout=10)


# --- LineReader ---------------------------------------------------------------------------


@pytest.mark.timeout(10)
def test_line_reader_close_interrupts_a_blocked_read_stdio_8() -> None:
    """A read blocked on a silent pipe returns None promptly when closed from elsewhere."""
    read_fd, write_fd = os.pipe()
    reader = LineReader(read_fd)
    got: list[object] = []
    blocked = threading.Thread(target=lambda: got.append(reader.read_line()),
                               name="test:line-reader")
    try:
        os.write(write_fd, b'{"partial": ')  # an unfinished line must not come out
        blocked.start()
        began = time.monotonic()
        reader.close()
        blocked.join(2)
        assert not blocked.is_alive()
        assert time.monotonic() - began < 1.0
        assert got == [None]
        assert reader.read_line() is None
        reader.close()  # idempotent
    finally:
        os.close(read_fd)
        os.close(write_fd)


@pytest.mark.timeout(10)
def test_line_reader_lines_limits_and_eof_stdio_8() -> None:
    """CRLF and blank lines, lines over the limit (whole or streamed), a last line
    without a newline."""
    read_fd, write_fd = os.pipe()
    reader = LineReader(read_fd, max_size=100)
    writer: threading.Thread | None = None
    try:
        os.write(write_fd, b"one\r\n\n \r\ntwo\n" + b"x" * 500 + b"\nthree\n")
        assert reader.read_line() == b"one"
        assert reader.read_line() == b"two"
        oversized = reader.read_line()
        assert not isinstance(oversized, bytes) and oversized is not None
        assert oversized.size == 500
        assert reader.read_line() == b"three"

        def feed() -> None:
            for _ in range(40):
                os.write(write_fd, b"y" * 1000)
            os.write(write_fd, b"\nlast")
            os.close(write_fd)

        writer = threading.Thread(target=feed, name="test:feeder")
        writer.start()
        streamed = reader.read_line()
        assert streamed.size == 40_000  # type: ignore[union-attr]
        assert reader.read_line() == b"last"
        assert reader.read_line() is None
    finally:
        if writer is not None:
            writer.join(5)
        else:
            os.close(write_fd)
        reader.close()
        os.close(read_fd)


@pytest.mark.timeout(10)
def test_line_reader_one_line_per_read_stdio_8() -> None:
    """Each read bringing exactly one line (a sequential exchange) takes the short way;
    it keeps every rule of the long one: CRLF, blank lines, the size limit, and a line
    that began in an earlier read."""
    read_fd, write_fd = os.pipe()
    reader = LineReader(read_fd, max_size=100)

    def one_read(data: bytes) -> None:
        os.write(write_fd, data)

    try:
        one_read(b'{"a": 1}\n')
        assert reader.read_line() == b'{"a": 1}'
        one_read(b"crlf\r\n")
        assert reader.read_line() == b"crlf"
        # A blank line read on its own is skipped, and the next read's line returned: the
        # next line is written only once the blank one has been read.
        read_chunk = reader._read_chunk

        def read_then_write_the_next_line() -> int | None:
            count = read_chunk()
            reader._read_chunk = read_chunk  # type: ignore[method-assign]
            one_read(b"after blank\n")
            return count

        reader._read_chunk = read_then_write_the_next_line  # type: ignore[method-assign]
        one_read(b" \r\n")
        assert reader.read_line() == b"after blank"
        one_read(b"z" * 101 + b"\n")
        oversized = reader.read_line()
        assert not isinstance(oversized, bytes) and oversized is not None
        assert oversized.size == 101
        one_read(b"z" * 100 + b"\n")  # at the limit is allowed
        assert reader.read_line() == b"z" * 100
        one_read(b"first\npar")  # more than one line's worth: the long way
        assert reader.read_line() == b"first"
        one_read(b"tial\n")  # completes the line begun in the read before
        assert reader.read_line() == b"partial"
        # Longer than a pipe holds: read in pieces, each discarded, the last one the
        # line's end alone; its size counts every piece.
        writer = threading.Thread(target=one_read, args=(b"w" * 300_000 + b"\n",),
                                  name="test:feeder")
        writer.start()
        streamed = reader.read_line()
        writer.join(5)
        assert not isinstance(streamed, bytes) and streamed is not None
        assert streamed.size == 300_000
        one_read(b"next\n")
        assert reader.read_line() == b"next"
    finally:
        reader.close()
        os.close(read_fd)
        os.close(write_fd)


_LATE_READER = r"""
import json, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
print(json.dumps({"jsonrpc": "2.0", "method": "ready"}), flush=True)
signal.sigwait({signal.SIGUSR1})  # reads nothing until told
for line in sys.stdin.buffer:
    message = json.loads(line)
    print(json.dumps({"jsonrpc": "2.0", "method": "got",
                      "params": {"id": message["id"], "size": len(line)}}), flush=True)
"""


@pytest.mark.timeout(30)
def test_a_write_stuck_past_its_deadline_times_out_and_finishes_before_the_next() -> None:
    """LIFECYCLE-9, STDIO-1: a server that stops reading makes a large write give up at
    its deadline; what it had written is completed ahead of the next message, so the
    stream stays whole and in order once the server reads again."""
    from mcp_sync.jsonrpc import Request

    transport = StdioClientTransport([sys.executable, "-c", _LATE_READER],
                                     close_timeout=1.0)
    try:
        assert transport.read().method == "ready"  # type: ignore[union-attr]
        big = Request(1, "tools/call", {"name": "echo",
                                        "arguments": {"text": "b" * (4 * 1024 * 1024)}})
        with pytest.raises(RequestTimeout):
            transport.write_before(big, time.monotonic() + 0.3)
        with pytest.raises(RequestTimeout):  # nothing of it went out: never sent
            transport.write_before(Request(2, "ping"), time.monotonic() + 0.1)
        transport.process.send_signal(signal.SIGUSR1)
        transport.write(Request(3, "ping"))
        got = [transport.read(), transport.read()]
        assert [message.params["id"] for message in got] == [1, 3]  # type: ignore[union-attr]
        assert got[0].params["size"] > 4 * 1024 * 1024  # type: ignore[union-attr]
    finally:
        transport.close()
