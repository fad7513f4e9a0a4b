"""Interop with the official MCP Python SDK (``mcp``), over real stdio pipes.

Both directions are covered: the SDK's client drives our demo server, and our client
drives a server written with the SDK (``sdk_server.py`` beside this file). The SDK is a
test-only dependency; mcp_sync itself never imports it.

What our side sends is schema-checked in two ways. In-process messages go through the
autouse ``wire`` fixture. Our server's messages are encoded in a child process the
fixture cannot see, so the SDK client's traffic is recorded at its transport and the
server's raw lines are read directly in :func:`test_our_server_wire_seen_by_a_newer_client`.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import select
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import anyio
import pytest
from mcp import MCPError
from mcp.client import Client as SdkClient
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.message import SessionMessage

from mcp_sync import Client
from mcp_sync.errors import ConnectionClosed, InvalidParams, MethodNotFound, RpcError
from tests.helpers import LEGACY_ERA
from tests.wire_schema import check_traffic, message_errors

pytestmark = pytest.mark.interop

ROOT = Path(__file__).resolve().parents[2]
DEMO_SERVER = ROOT / "examples" / "demo_server.py"
SDK_SERVER = Path(__file__).resolve().with_name("sdk_server.py")

MODERN = "2026-07-28"

#: The SDK gives up on an unanswered ``server/discover`` after this long, then falls back.
SDK_DISCOVER_TIMEOUT = 10.0
#: Connecting must be far quicker than that, or the probe was met with silence.
CONNECT_BOUND = 5.0
#: A bound on each whole exchange, so a hang fails the test instead of eating its timeout.
EXCHANGE_BOUND = 20.0

DEMO_TOOLS = {
    "add": ("Add two integers.", {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    }),
    "echo": ("Return the message unchanged.", {
        "type": "object",
        "properties": {"message": {"type": "string"}},
        "required": ["message"],
    }),
    "countdown": ("Count down, reporting progress at each step; stops early if cancelled.", {
        "type": "object",
        "properties": {"steps": {"type": "integer"}},
        "required": ["steps"],
    }),
}

# --- the SDK's client against our server ------------------------------------------------


class _Traffic:
    """Every message that crossed the SDK client's transport, as wire dicts, in order."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.received: list[Any] = []


def _as_wire(item: object) -> Any:
    if isinstance(item, SessionMessage):
        return item.message.model_dump(by_alias=True, mode="json", exclude_unset=True)
    return item  # a parse failure the transport handed on as an exception


class _RecordingReader:
    def __init__(self, inner: Any, log: list[Any]) -> None:
        self._inner = inner
        self._log = log

    def __getattr__(self, name: str) -> Any:
        # The dispatcher reads optional attributes (``last_context``) off the stream.
        return getattr(self._inner, name)

    async def receive(self) -> Any:
        item = await self._inner.receive()
        self._log.append(_as_wire(item))
        return item

    def __aiter__(self) -> _RecordingReader:
        return self

    async def __anext__(self) -> Any:
        item = await self._inner.__anext__()
        self._log.append(_as_wire(item))
        return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _RecordingReader:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> bool | None:
        return await self._inner.__aexit__(exc_type, exc, tb)  # type: ignore[no-any-return]


class _RecordingWriter:
    def __init__(self, inner: Any, log: list[Any]) -> None:
        self._inner = inner
        self._log = log

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def send(self, item: Any) -> None:
        self._log.append(_as_wire(item))
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _RecordingWriter:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> bool | None:
        return await self._inner.__aexit__(exc_type, exc, tb)  # type: ignore[no-any-return]


@contextlib.asynccontextmanager
async def _recorded_stdio(params: StdioServerParameters,
                          traffic: _Traffic) -> AsyncIterator[tuple[Any, Any]]:
    async with stdio_client(params) as (read_stream, write_stream):
        yield (_RecordingReader(read_stream, traffic.received),
               _RecordingWriter(write_stream, traffic.sent))


def _demo_server_params() -> StdioServerParameters:
    # The SDK passes the child only a handful of variables (PATH, HOME, ...); PYTHONPATH
    # makes the checkout importable even where mcp_sync is not installed.
    return StdioServerParameters(command=sys.executable, args=[str(DEMO_SERVER)],
                                 env={"PYTHONPATH": str(ROOT)}, cwd=str(ROOT))


def _tool_table(tools: list[Any]) -> dict[str, tuple[str | None, dict[str, Any]]]:
    return {tool.name: (tool.description, tool.input_schema) for tool in tools}


async def _drive_demo_server(mode: str) -> dict[str, Any]:
    """Run the SDK client against the demo server; return what the test asserts on."""
    traffic = _Traffic()
    seen: dict[str, Any] = {"traffic": traffic, "progress": []}

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen["progress"].append((progress, total, message))

    with anyio.fail_after(EXCHANGE_BOUND):
        started = time.monotonic()
        async with SdkClient(_recorded_stdio(_demo_server_params(), traffic),
                             mode=mode) as client:
            seen["connect_seconds"] = time.monotonic() - started
            seen["protocol_version"] = client.protocol_version
            seen["server_info"] = client.server_info
            seen["instructions"] = client.instructions
            seen["tools_capability"] = client.server_capabilities.tools
            seen["tools"] = (await client.list_tools()).tools
            seen["add"] = await client.call_tool("add", {"a": 2, "b": 40})
            seen["countdown"] = await client.call_tool(
                "countdown", {"steps": 5}, progress_callback=on_progress)
            seen["progress_at_return"] = list(seen["progress"])
            try:
                await client.call_tool("no_such_tool", {})
            except MCPError as exc:
                seen["unknown_tool_error"] = exc
            if client.protocol_version != MODERN:  # the modern era has no ping
                seen["ping"] = await client.session.send_ping()
    return seen


def _check_demo_exchange(seen: dict[str, Any], version: str = "2025-11-25") -> None:
    assert seen["protocol_version"] == version
    assert seen["server_info"] is not None
    assert (seen["server_info"].name, seen["server_info"].version) == ("demo", "1.0.0")
    assert seen["instructions"] == "Arithmetic and echo tools."
    assert seen["tools_capability"] is not None

    assert _tool_table(seen["tools"]) == DEMO_TOOLS
    add_tool = next(tool for tool in seen["tools"] if tool.name == "add")
    assert add_tool.annotations is not None and add_tool.annotations.read_only_hint is True

    add = seen["add"]
    assert add.is_error is False
    assert [(item.type, item.text) for item in add.content] == [("text", "42")]

    countdown = seen["countdown"]
    assert countdown.is_error is False
    assert [item.text for item in countdown.content] == ["liftoff"]
    progress = seen["progress_at_return"]
    assert [value for value, _, _ in progress] == [1, 2, 3, 4, 5]
    assert all(earlier < later for (earlier, _, _), (later, _, _)
               in itertools.pairwise(progress))
    assert {total for _, total, _ in progress} == {5}
    assert [message for _, _, message in progress] == [f"step {n} of 5" for n in range(1, 6)]

    error = seen.get("unknown_tool_error")
    assert error is not None, "calling an unknown tool did not fail"
    assert error.code == -32602
    assert "no_such_tool" in error.message

    if version != MODERN:
        assert seen["ping"].model_dump(exclude_none=True) == {}

    # What both sides sent, as the SDK saw it, fits the negotiated version's schema
    # (DES-19); the probe before initialize belongs to no version and is left out.
    traffic: _Traffic = seen["traffic"]
    check_traffic(traffic.sent, traffic.received, seen["protocol_version"])
    methods_by_id = {m["id"]: m["method"] for m in traffic.sent if "id" in m and "method" in m}
    answers = [m for m in traffic.received if "id" in m and "method" not in m]
    assert sorted(m["id"] for m in answers) == sorted(methods_by_id)
    for answer in answers:
        assert "result" in answer or "error" in answer, answer


@pytest.mark.timeout(30)
def test_sdk_client_auto_mode_against_our_server() -> None:
    """The SDK's default client probes with server/discover, our dual-era stdio server
    answers it, and the SDK stays in the modern era: no initialize, every request
    carrying its own _meta, every answer fitting the 2026-07-28 schema (DES-19).

    DES-1, DES-18, COEX (how eras find each other), TOOLS-2, TOOLS-3, TOOLS-4, TOOLS-7,
    TOOLS-9, PROGRESS-3, PROGRESS-4, STDIO-1, STDIO-2, STDIO-4.
    """
    seen = anyio.run(_drive_demo_server, "auto")
    _check_demo_exchange(seen, MODERN)

    traffic: _Traffic = seen["traffic"]
    methods = [m.get("method") for m in traffic.sent]
    assert methods[0] == "server/discover"
    assert "initialize" not in methods and "notifications/initialized" not in methods
    discover = traffic.sent[0]
    answer = next(m for m in traffic.received if m.get("id") == discover["id"])
    assert answer["result"]["supportedVersions"] == [MODERN]
    for message in traffic.sent:
        if "id" in message and "method" in message:
            assert message["params"]["_meta"][
                "io.modelcontextprotocol/protocolVersion"] == MODERN
    assert seen["connect_seconds"] < CONNECT_BOUND < SDK_DISCOVER_TIMEOUT


@pytest.mark.timeout(30)
def test_sdk_client_legacy_mode_against_our_server() -> None:
    """The SDK's plain initialize handshake (no probe) works with our stdio server.

    LIFECYCLE-2, LIFECYCLE-3, LIFECYCLE-4, VERSION-3, TOOLS-2, TOOLS-4, TOOLS-7,
    PROGRESS-3, PROGRESS-4, PING-2, STDIO-1, STDIO-2.
    """
    seen = anyio.run(_drive_demo_server, "legacy")
    _check_demo_exchange(seen)

    methods = [m.get("method") for m in seen["traffic"].sent]
    assert "server/discover" not in methods
    assert methods[:2] == ["initialize", "notifications/initialized"]
    assert seen["connect_seconds"] < CONNECT_BOUND


# --- our client against the SDK's server ------------------------------------------------


@pytest.fixture
def sdk_server_client() -> Iterator[Client]:
    # A legacy session: the tests here check the handshake (the modern era against the
    # SDK is in test_modern_sdk_interop.py).
    client = Client.stdio([sys.executable, str(SDK_SERVER)], cwd=str(ROOT), timeout=20.0,
                          **LEGACY_ERA)
    with client:
        yield client


SDK_TOOL_NAMES = ["add", "echo", "count", "fail", "reject"]


@pytest.mark.timeout(30)
def test_our_client_initializes_and_calls_sdk_tools(sdk_server_client: Client) -> None:
    """Our client's handshake, listing and plain calls against an SDK server.

    LIFECYCLE-2, LIFECYCLE-4, LIFECYCLE-8, VERSION-1, VERSION-2, CAPS-2, TOOLS-2, TOOLS-3,
    TOOLS-4, GEN-2, STDIO-1.
    """
    client = sdk_server_client
    # We offer 2025-11-25 and the SDK speaks it, so it must answer with the same version.
    assert client.protocol_version == "2025-11-25"
    assert (client.server_info.name, client.server_info.version) == ("sdk-interop", "2.0.0")
    assert client.instructions == "Tools for interop tests."
    assert client.server_capabilities.tools is not None

    tools = client.list_tools()
    assert [tool.name for tool in tools] == SDK_TOOL_NAMES
    add_tool = tools[0]
    assert add_tool.description == "Add two integers."
    assert add_tool.input_schema["type"] == "object"
    assert add_tool.input_schema["required"] == ["a", "b"]
    assert {name: spec["type"] for name, spec in add_tool.input_schema["properties"].items()} \
        == {"a": "integer", "b": "integer"}
    # V0618-17: the SDK's output schema (an int wrapped as {"result": ...}) is read.
    assert add_tool.output_schema is not None
    assert add_tool.output_schema["required"] == ["result"]

    result = client.call_tool("add", {"a": 2, "b": 40})
    assert result.is_error is False
    assert [(item.type, item.text) for item in result.content] == [("text", "42")]

    text = "Zürich ✓"
    result = client.call_tool("echo", {"message": text})
    assert result.is_error is False
    assert [item.text for item in result.content] == [text]


@pytest.mark.timeout(30)
def test_our_client_gets_sdk_progress_before_the_result(sdk_server_client: Client) -> None:
    """Progress from the SDK's ``ctx.report_progress`` reaches ``on_progress`` in order,
    all of it before ``call_tool`` returns.

    PROGRESS-1, PROGRESS-3, PROGRESS-4, PROGRESS-6, TOOLS-4.
    """
    reports: list[tuple[float, float | None, str | None]] = []
    result = sdk_server_client.call_tool(
        "count", {"steps": 4},
        on_progress=lambda progress, total, message: reports.append((progress, total, message)))
    arrived = list(reports)  # no waiting: they must all be here already
    assert [item.text for item in result.content] == ["counted 4"]
    assert arrived == [(n, 4, f"step {n} of 4") for n in range(1, 5)]


@pytest.mark.timeout(30)
def test_our_client_sees_sdk_failures(sdk_server_client: Client) -> None:
    """Tool failures come back as results; protocol errors raise RpcError subclasses.

    TOOLS-6, TOOLS-7, ERR-1, CAPS-7, PING-1, PING-2.
    """
    client = sdk_server_client
    result = client.call_tool("fail", {"reason": "boom"})
    assert result.is_error is True
    assert "fail" in result.content[0].text

    # The SDK reports an unknown tool as an error result rather than a JSON-RPC error;
    # TOOLS-7 is a SHOULD, so the client must take either without raising.
    result = client.call_tool("no_such_tool", {})
    assert result.is_error is True
    assert "no_such_tool" in result.content[0].text

    with pytest.raises(InvalidParams) as refused:
        client.call_tool("reject", {"value": "x"})
    assert isinstance(refused.value, RpcError)
    assert refused.value.code == -32602
    assert refused.value.message == "value refused: x"
    assert refused.value.data == {"value": "x"}

    with pytest.raises(MethodNotFound):
        client.send_request("no/such/method")

    client.ping()  # the session survived every error above


@pytest.mark.timeout(30)
def test_our_client_offering_2024_11_05_to_the_sdk_server() -> None:
    """Offered the older version it also speaks, the SDK keeps it, and tools still work.

    VERSION-1, VERSION-2, TOOLS-2, TOOLS-4, PROGRESS-3, PROGRESS-4.
    """
    with Client.stdio([sys.executable, str(SDK_SERVER)], cwd=str(ROOT), timeout=20.0,
                      protocol_version="2024-11-05") as client:
        assert client.protocol_version == "2024-11-05"
        assert [tool.name for tool in client.list_tools()] == SDK_TOOL_NAMES
        result = client.call_tool("add", {"a": 2, "b": 40})
        assert [item.text for item in result.content] == ["42"]
        reports: list[float] = []
        client.call_tool("count", {"steps": 3},
                         on_progress=lambda progress, total, message: reports.append(progress))
        assert reports == [1, 2, 3]


@pytest.mark.timeout(30)
def test_our_client_close_stops_the_sdk_server() -> None:
    """Closing ends the session and the server process; closing again is harmless.

    SHUTDOWN-1, SHUTDOWN-2, SHUTDOWN-5, PING-1, PING-2.
    """
    # A legacy session: the tests here check the handshake (the modern era against the
    # SDK is in test_modern_sdk_interop.py).
    client = Client.stdio([sys.executable, str(SDK_SERVER)], cwd=str(ROOT), timeout=20.0,
                          **LEGACY_ERA)
    try:
        client.ping()
    finally:
        client.close()
    assert client.closed
    client.close()
    with pytest.raises(ConnectionClosed):
        client.ping()
    # The autouse leak check then asserts no child process, thread or pipe is left.


# --- our server's own bytes, as a newer client would see them -----------------------------


class _ServerPipe:
    """Our demo server as a child, spoken to line by line with a deadline on every read."""

    def __init__(self, stderr: IO[bytes]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(DEMO_SERVER)], cwd=str(ROOT), stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=stderr, bufsize=0)
        assert self.process.stdin is not None and self.process.stdout is not None
        self._stdin = self.process.stdin
        self._stdout = self.process.stdout
        self._buffer = b""
        self.lines: list[bytes] = []
        #: The notifications that came before the last answer :meth:`request` returned.
        self.notifications: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        self._stdin.write(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")

    def read_line(self, timeout: float = 10.0) -> bytes | None:
        """The next line the server writes; None at end of output."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"the server wrote nothing for {timeout}s")
            ready, _, _ = select.select([self._stdout], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(self._stdout.fileno(), 65536)
            if not chunk:
                if self._buffer:
                    raise AssertionError(f"unterminated last line: {self._buffer!r}")
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        self.lines.append(line)
        return line

    def read_message(self) -> dict[str, Any]:
        line = self.read_line()
        assert line is not None, "the server closed its output"
        message = json.loads(line.decode("utf-8"))  # GEN-2: strictly UTF-8
        assert isinstance(message, dict), f"expected one message per line, got {message!r}"
        # This pipe speaks 2025-11-25 (DES-19).
        errors = message_errors(message, "2025-11-25")
        assert not errors, (message, errors)
        return message

    def request(self, request_id: int | str, method: str,
                params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request; return its answer, checking it and any notifications before it."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        self.notifications = []
        while True:
            answer = self.read_message()
            if "method" in answer and "id" not in answer:
                self.notifications.append(answer)
                continue
            assert answer.get("id") == request_id, f"answer to another request: {answer!r}"
            if "result" in answer and method != "server/discover":
                errors = message_errors(answer, "2025-11-25", answers=method)
                assert not errors, (answer, errors)
            return answer

    def finish(self, timeout: float = 10.0) -> tuple[int, list[bytes]]:
        """Close the server's stdin; return its exit status and whatever else it wrote."""
        self._stdin.close()
        rest: list[bytes] = []
        while (line := self.read_line(timeout)) is not None:
            rest.append(line)
        return self.process.wait(timeout), rest

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self._stdin.close()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10.0)
        self._stdout.close()


def _error_code(answer: dict[str, Any]) -> int:
    assert "error" in answer, f"expected an error, got {answer!r}"
    code = answer["error"]["code"]
    # Codes in this band read as 2026-protocol signals to newer clients (DESIGN.md).
    assert not -32099 <= code <= -32020, code
    return int(code)


@pytest.mark.timeout(30)
def test_our_server_wire_seen_by_a_newer_client(tmp_path: Path) -> None:
    """Our server's raw output to a 2025-11-25 client's opening moves fits the schema.

    LIFECYCLE-1, AMBIG-6, LIFECYCLE-2, LIFECYCLE-3, VERSION-3, CAPS-1, CAPS-7, PING-2, TOOLS-2,
    TOOLS-4, PROGRESS-3, PROGRESS-4, PROGRESS-6, STDIO-2, STDIO-4, GEN-2, ERR-1.
    """
    with open(tmp_path / "server-stderr.log", "wb") as stderr:
        pipe = _ServerPipe(stderr)
        try:
            _newer_client_exchange(pipe)
            status, rest = pipe.finish()
        finally:
            pipe.kill()
    assert rest == [], f"the server wrote after the last answer: {rest!r}"
    assert status == 0, (tmp_path / "server-stderr.log").read_text("utf-8", "replace")


def _newer_client_exchange(pipe: _ServerPipe) -> None:
    newer_meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "newer-client", "version": "9.0"},
    }
    # Newer clients probe first and need a prompt answer. This probe lacks the required
    # clientCapabilities, so our dual-era server refuses it as a modern request would be
    # (-32602), which is no modern-only signal: the client falls back to initialize.
    answer = pipe.request(0, "server/discover", {"_meta": newer_meta})
    assert _error_code(answer) == -32602

    # A feature request before initialize is refused, not served under guessed rules.
    answer = pipe.request(1, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})
    assert _error_code(answer) == -32600

    answer = pipe.request("early-ping", "ping")
    assert answer["result"] == {}

    answer = pipe.request(2, "initialize", {
        "protocolVersion": "2025-11-25",
        "capabilities": {
            "elicitation": {"form": {}, "url": {}},
            "roots": {"listChanged": True},
            "sampling": {"tools": {}, "context": {}},
            "tasks": {"requests": {"sampling": {"createMessage": {}}}},
            "extensions": {"io.example/thing": {"level": 2}},
        },
        "clientInfo": {
            "name": "newer-client", "title": "Newer Client", "version": "9.0",
            "websiteUrl": "https://client.example",
            "icons": [{"src": "https://client.example/icon.png", "mimeType": "image/png"}],
        },
        "_meta": {"io.example/trace": "abc"},
    })
    result = answer["result"]
    assert result["protocolVersion"] == "2025-11-25"
    assert result["serverInfo"] == {"name": "demo", "version": "1.0.0"}
    assert "tools" in result["capabilities"]

    pipe.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    answer = pipe.request(3, "tools/list")
    assert [tool["name"] for tool in answer["result"]["tools"]] == list(DEMO_TOOLS)

    answer = pipe.request(4, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 40}})
    assert answer["result"]["content"] == [{"type": "text", "text": "42"}]

    text = "Zürich ✓"
    answer = pipe.request(5, "tools/call", {"name": "echo", "arguments": {"message": text}})
    assert answer["result"]["content"] == [{"type": "text", "text": text}]

    answer = pipe.request(6, "tools/call", {
        "name": "countdown", "arguments": {"steps": 3}, "_meta": {"progressToken": "count-1"}})
    assert answer["result"]["content"] == [{"type": "text", "text": "liftoff"}]
    progress = [n["params"] for n in pipe.notifications
                if n["method"] == "notifications/progress"]
    assert [(p["progressToken"], p["progress"], p["total"]) for p in progress] \
        == [("count-1", 1, 3), ("count-1", 2, 3), ("count-1", 3, 3)]

    answer = pipe.request(7, "ping")
    assert answer["result"] == {}

    answer = pipe.request(8, "server/discover", {"_meta": newer_meta})
    assert _error_code(answer) == -32601
    answer = pipe.request(9, "tasks/list")
    assert _error_code(answer) == -32601
    # A 2025-03-26 method this server does not offer is "not found" too (CAPS-7).
    answer = pipe.request(10, "resources/list")
    assert _error_code(answer) == -32601

    answer = pipe.request(11, "ping")  # still serving after every refusal
    assert answer["result"] == {}
