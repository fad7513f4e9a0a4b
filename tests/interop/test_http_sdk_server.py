"""Interop over HTTP: our client against the official MCP SDK's servers.

The server is ``sdk_server.py`` beside this file, run by the SDK over uvicorn in a child
process on a free loopback port: Streamable HTTP in its default mode (answers as event
streams, sessions), its JSON-response mode and its stateless mode, and the legacy
2024-11-05 HTTP+SSE server, which our client reaches through its fallback (HTTP-37).
Everything our client posts is schema-checked in-process by the autouse ``wire`` fixture.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest
import requests

from mcp_sync import Client
from mcp_sync.errors import ConnectionClosed, InvalidParams, MethodNotFound, SessionExpired
from mcp_sync.transports.http_client import HttpClientTransport
from tests.helpers import LEGACY_ERA, wait_until_listening

pytestmark = pytest.mark.interop

ROOT = Path(__file__).resolve().parents[2]
#: How long the server may take to start listening.
START_BOUND = 20.0
CALL_TIMEOUT = 20.0

_SERVE = """
import sys
from tests.interop.sdk_server import server
port, mode = int(sys.argv[1]), sys.argv[2]
if mode == "sse":
    server.run("sse", host="127.0.0.1", port=port)
else:
    server.run("streamable-http", host="127.0.0.1", port=port,
               json_response=mode == "json", stateless_http=mode == "stateless")
"""

SDK_TOOL_NAMES = ["add", "echo", "count", "fail", "reject"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class SdkHttpServer:
    """The SDK's server in a child process; the URL to give our client."""

    def __init__(self, mode: str, log: IO[bytes]) -> None:
        self.mode = mode
        self.port = _free_port()
        self.process = subprocess.Popen(
            [sys.executable, "-c", _SERVE, str(self.port), mode], cwd=str(ROOT),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
        self._log = log
        path = "/sse" if mode == "sse" else "/mcp"
        self.url = f"http://127.0.0.1:{self.port}{path}"

    def wait_ready(self) -> None:
        """Poll the port until it accepts connections; each pause is a wait on the child."""
        try:
            wait_until_listening(self.port, self.process, START_BOUND, "the SDK server")
        except AssertionError as exc:
            raise AssertionError(f"{exc}: {self._output()}") from None

    def _output(self) -> str:
        self._log.flush()
        return Path(self._log.name).read_text("utf-8", "replace")[-3000:]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10.0)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10.0)


@contextlib.contextmanager
def running(mode: str, tmp_path: Path) -> Iterator[SdkHttpServer]:
    with open(tmp_path / f"sdk-{mode}.log", "wb") as log:
        server = SdkHttpServer(mode, log)
        try:
            server.wait_ready()
            yield server
        finally:
            server.stop()


def connect(url: str) -> Client:
    """A client in a legacy session (these tests are about its HTTP session); the modern
    era against the SDK is in test_modern_sdk_interop.py."""
    transport = HttpClientTransport(url)
    try:
        return Client(transport, timeout=CALL_TIMEOUT, **LEGACY_ERA)
    except BaseException:
        transport.close()
        raise


def _exchange(client: Client, *, progress_expected: bool) -> None:
    assert (client.server_info.name, client.server_info.version) == ("sdk-interop", "2.0.0")
    assert client.instructions == "Tools for interop tests."
    assert client.server_capabilities.tools is not None

    assert [tool.name for tool in client.list_tools()] == SDK_TOOL_NAMES
    assert [item.text for item in client.call_tool("add", {"a": 2, "b": 40}).content] == ["42"]
    text = "Zürich ✓ — 東京"
    assert [item.text for item in client.call_tool("echo", {"message": text}).content] \
        == [text]

    reports: list[tuple[float, float | None, str | None]] = []
    result = client.call_tool("count", {"steps": 3},
                              on_progress=lambda p, t, m: reports.append((p, t, m)))
    assert [item.text for item in result.content] == ["counted 3"]
    if progress_expected:
        assert reports == [(n, 3, f"step {n} of 3") for n in (1, 2, 3)]
    else:
        # A JSON answer is one document: there is nowhere to put progress before it.
        assert reports == []

    failed = client.call_tool("fail", {"reason": "boom"})
    assert failed.is_error is True

    with pytest.raises(InvalidParams) as refused:
        client.call_tool("reject", {"value": "x"})
    assert refused.value.message == "value refused: x"
    assert refused.value.data == {"value": "x"}

    with pytest.raises(MethodNotFound):
        client.send_request("no/such/method")

    client.ping()


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("mode", "progress_expected", "sessions"), [
    ("stream", True, True),
    ("json", False, True),
    ("stateless", True, False),
])
def test_our_client_against_the_sdk_streamable_http_server(
        tmp_path: Path, mode: str, progress_expected: bool, sessions: bool) -> None:
    """Handshake, tools, non-ASCII text, progress, errors and ping against the SDK's
    Streamable HTTP server in each of its modes; closing deletes the session.

    HTTP-5, HTTP-6, HTTP-10, HTTP-11, HTTP-13, HTTP-17, HTTP-18, HTTP-29, HTTP-31, HTTP-32,
    LIFECYCLE-2, VERSION-1, TOOLS-2, TOOLS-4, TOOLS-6, PROGRESS-4, PING-1, ERR-1, GEN-2.
    """
    with running(mode, tmp_path) as server:
        client = connect(server.url)
        try:
            assert client.protocol_version == "2025-11-25"
            transport = client._engine.transport
            assert isinstance(transport, HttpClientTransport)
            assert not transport.legacy
            session_id = transport.session_id
            assert (session_id is not None) == sessions
            _exchange(client, progress_expected=progress_expected)
        finally:
            client.close()
        assert client.closed
        with pytest.raises(ConnectionClosed):
            client.ping()
        if session_id is not None:
            # The DELETE ended the session at the server: its id now meets 404 (HTTP-34).
            answer = requests.post(server.url, json={"jsonrpc": "2.0", "id": 1,
                                                     "method": "ping"},
                                   headers={"Accept": "application/json, text/event-stream",
                                            "Mcp-Session-Id": session_id}, timeout=10)
            assert answer.status_code == 404


@pytest.mark.timeout(60)
def test_our_client_falls_back_to_the_sdk_legacy_sse_server(tmp_path: Path) -> None:
    """The SDK's 2024-11-05 HTTP+SSE server refuses the POST with 405; the client finds
    its event stream at the same URL and works through the endpoint it names.

    HTTP-37, HTTP-38, AMBIG-24, LIFECYCLE-2, TOOLS-2, TOOLS-4, PROGRESS-4, PING-1.
    """
    with running("sse", tmp_path) as server:
        client = connect(server.url)
        try:
            transport = client._engine.transport
            assert isinstance(transport, HttpClientTransport)
            assert transport.legacy
            assert transport.session_id is None
            _exchange(client, progress_expected=True)
        finally:
            client.close()


@pytest.mark.timeout(60)
def test_sdk_session_ended_behind_our_back_is_renewed(tmp_path: Path) -> None:
    """The session is deleted by someone else; the next call meets 404 and the client
    starts a new session: a listing is repeated, a tool call reports SessionExpired.

    HTTP-34, HTTP-35.
    """
    with running("stream", tmp_path) as server:
        client = connect(server.url)
        try:
            transport = client._engine.transport
            assert isinstance(transport, HttpClientTransport)
            old = transport.session_id
            assert old is not None
            ended = requests.delete(server.url, headers={"Mcp-Session-Id": old}, timeout=10)
            assert ended.status_code == 200
            assert [tool.name for tool in client.list_tools()] == SDK_TOOL_NAMES
            assert transport.session_id not in (None, old)

            renewed = transport.session_id
            assert renewed is not None
            requests.delete(server.url, headers={"Mcp-Session-Id": renewed}, timeout=10)
            with pytest.raises(SessionExpired):
                client.call_tool("add", {"a": 1, "b": 1})
            assert [item.text for item in client.call_tool("add", {"a": 1, "b": 1}).content] \
                == ["2"]
        finally:
            client.close()


@pytest.mark.timeout(60)
def test_many_threads_share_one_client_against_the_sdk_server(tmp_path: Path) -> None:
    """Sixteen threads call through one client at once; each gets its own answer.

    JSONRPC-13, HTTP-5, HTTP-22.
    """
    with running("stream", tmp_path) as server:
        client = connect(server.url)
        errors: list[BaseException] = []

        def worker(n: int) -> None:
            try:
                for k in range(5):
                    content = client.call_tool("add", {"a": n, "b": k}).content
                    assert [item.text for item in content] == [str(n + k)]
            except BaseException as exc:
                errors.append(exc)

        try:
            threads = [threading.Thread(target=worker, args=(n,), name=f"test:sdk-caller-{n}")
                       for n in range(16)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(40)
            assert not errors, errors[:3]
        finally:
            client.close()
