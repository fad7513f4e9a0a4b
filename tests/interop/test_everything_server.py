"""examples/everything_server.py over real stdio pipes, driven by the official SDK's
client and by our own, each using every tool, resource, template, prompt and completion.

What the server writes is encoded in a child process the autouse ``wire`` fixture cannot
see, so it is checked where each client decodes it: at the SDK client's transport, and
at our stdio transport's ``decode_frame``. What our client writes goes through ``wire``.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import queue
import re
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import MCPError
from mcp import types as sdk
from mcp.client import Client as SdkClient
from mcp.client.stdio import StdioServerParameters

import mcp_sync.transports.stdio as stdio_module
from mcp_sync import Client, types
from mcp_sync.jsonrpc import Incoming
from mcp_sync.transports._decode import decode_frame
from mcp_sync.transports.http_client import HttpClientTransport
from tests.conftest import WireLog, schema_errors, validator
from tests.helpers import LEGACY_ERA
from tests.interop.test_official_sdk import _recorded_stdio, _Traffic
from tests.test_everything_server import TOOL_NAMES, png_problems
from tests.wire_schema import check_traffic

pytestmark = [pytest.mark.interop, pytest.mark.timeout(45),
              # The SDK warns that logging and subscriptions are gone in its newest revision.
              pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING_SERVER = ROOT / "examples" / "everything_server.py"
EXCHANGE_BOUND = 30.0
#: How long the HTTP server may take to start listening.
START_BOUND = 20.0
WAIT = 10.0

#: The result definition each request's answer must match, beyond the JSON-RPC envelope.
RESULT_DEFINITIONS = {
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "resources/subscribe": "EmptyResult",
    "resources/unsubscribe": "EmptyResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
    "logging/setLevel": "EmptyResult",
}

#: Logged by both drivers: (level, whether the client's level at the time lets it through).
LOG_PLAN_DEFAULT = [("debug", False), ("info", True)]
LOG_PLAN_AFTER_WARNING = [("info", False), ("notice", False), ("warning", True),
                          ("error", True), ("emergency", True)]
EXPECTED_LOGS = [level for level, shown in LOG_PLAN_DEFAULT + LOG_PLAN_AFTER_WARNING if shown]


def _check_server_messages(received: list[Any], requests: dict[Any, str]) -> None:
    """Every server message fits the schema; each answer fits its method's result."""
    assert received, "nothing was received from the server"
    answered: set[Any] = set()
    for message in received:
        assert isinstance(message, dict), f"could not parse a server message: {message!r}"
        errors = schema_errors(message)
        assert not errors, (message, errors)
        if "method" in message or "id" not in message:
            continue
        answered.add(message["id"])
        definition = RESULT_DEFINITIONS.get(requests.get(message["id"], ""))
        if "result" in message and definition is not None:
            problems = [e.message for e in validator(definition).iter_errors(message["result"])]
            assert not problems, (definition, message, problems)
    checked = {request_id for request_id, method in requests.items()
               if method in RESULT_DEFINITIONS}
    assert checked <= answered, f"unanswered requests: {checked - answered}"
    assert {requests[request_id] for request_id in checked} >= set(RESULT_DEFINITIONS)


# --- the official SDK's client -------------------------------------------------------------


async def _drive_with_sdk(mode: str) -> dict[str, Any]:
    traffic = _Traffic()
    seen: dict[str, Any] = {"traffic": traffic, "logs": [], "progress": [], "sampling": []}
    last_log = anyio.Event()

    async def sampling(context: Any, params: sdk.CreateMessageRequestParams,
                       ) -> sdk.CreateMessageResult:
        seen["sampling"].append(params)
        return sdk.CreateMessageResult(role="assistant", model="sdk-model",
                                       content=sdk.TextContent(type="text", text="Hi from SDK"))

    async def roots(context: Any) -> sdk.ListRootsResult:
        return sdk.ListRootsResult(roots=[sdk.Root(uri="file:///work/project", name="project"),
                                          sdk.Root(uri="file:///tmp")])

    async def on_log(params: sdk.LoggingMessageNotificationParams) -> None:
        seen["logs"].append((params.level, params.logger, params.data))
        if params.level == "emergency":
            last_log.set()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen["progress"].append((progress, total, message))

    async def log_each(client: SdkClient, plan: list[tuple[str, bool]]) -> list[str]:
        answers = []
        for level, _ in plan:
            result = await client.call_tool("log", {"level": level, "message": f"at {level}"})
            answers.append(result.content[0].text)
        return answers

    params = StdioServerParameters(command=sys.executable, args=[str(EVERYTHING_SERVER)],
                                   env={"PYTHONPATH": str(ROOT)}, cwd=str(ROOT))
    with anyio.fail_after(EXCHANGE_BOUND):
        async with SdkClient(_recorded_stdio(params, traffic), mode=mode,
                             sampling_callback=sampling, list_roots_callback=roots,
                             logging_callback=on_log) as client:
            seen["caps"] = client.server_capabilities
            seen["tools"] = (await client.list_tools()).tools
            seen["echo"] = await client.call_tool("echo", {"message": "Zürich ✓"})
            seen["add"] = await client.call_tool("add", {"a": 2, "b": 40})
            seen["long_running"] = await client.call_tool(
                "long_running", {"steps": 3, "delay": 0.01}, progress_callback=on_progress)
            seen["progress_at_return"] = list(seen["progress"])
            seen["sample"] = await client.call_tool("sample", {"prompt": "Say hi"})
            seen["roots"] = await client.call_tool("roots")
            seen["fail"] = await client.call_tool("fail")
            seen["log_answers"] = await log_each(client, LOG_PLAN_DEFAULT)
            await client.set_logging_level("warning")
            seen["log_answers"] += await log_each(client, LOG_PLAN_AFTER_WARNING)
            await last_log.wait()
            seen["image"] = await client.call_tool("image")
            seen["resources"] = (await client.list_resources()).resources
            seen["templates"] = (await client.list_resource_templates()).resource_templates
            seen["hello"] = await client.read_resource("static://hello")
            seen["binary"] = await client.read_resource("static://binary")
            seen["greeting"] = await client.read_resource("greeting://Sam")
            seen["subscribe"] = await client.subscribe_resource("static://hello")
            seen["unsubscribe"] = await client.unsubscribe_resource("static://hello")
            seen["prompts"] = (await client.list_prompts()).prompts
            seen["greet"] = await client.get_prompt("greet", {"name": "Ada"})
            seen["complete_a"] = await client.complete(
                sdk.PromptReference(type="ref/prompt", name="greet"),
                {"name": "name", "value": "A"})
            seen["complete_template"] = await client.complete(
                sdk.ResourceTemplateReference(type="ref/resource", uri="greeting://{name}"),
                {"name": "name", "value": "e"})
            seen["ping"] = await client.send_ping()
    return seen


@pytest.mark.parametrize("mode", ["legacy"])
def test_sdk_client_uses_everything(mode: str) -> None:
    """The SDK's client uses every tool (answering sampling and roots from a tool, taking
    progress and logs), every resource and the template, subscriptions, the prompt,
    completion and ping; all the server wrote fits the schema.

    CAPS-3, TOOLS-2, TOOLS-4, TOOLS-5, TOOLS-6, PROGRESS-3, PROGRESS-4, SAMPLING-2,
    SAMPLING-4, ROOTS-2, LOGGING-3, LOGGING-4, LOGGING-5, CONTENT-1, CONTENT-2,
    RESOURCES-2, RESOURCES-3, RESOURCES-4, RESOURCES-5, RESOURCES-7, PROMPTS-2, PROMPTS-3,
    COMPLETION-2, COMPLETION-3, PING-2, STDIO-1, STDIO-2.
    """
    seen = anyio.run(_drive_with_sdk, mode)

    caps = seen["caps"]
    assert caps.tools.list_changed is True and caps.prompts.list_changed is True
    assert (caps.resources.subscribe, caps.resources.list_changed) == (True, True)
    assert caps.logging is not None and caps.completions is not None

    assert [tool.name for tool in seen["tools"]] == TOOL_NAMES
    assert all(tool.description for tool in seen["tools"])
    assert [item.text for item in seen["echo"].content] == ["Zürich ✓"]
    assert [item.text for item in seen["add"].content] == ["42"]

    assert [item.text for item in seen["long_running"].content] == ["done"]
    assert seen["progress_at_return"] == [(n, 3, f"step {n} of 3") for n in (1, 2, 3)]

    assert [item.text for item in seen["sample"].content] == ["Hi from SDK"]
    (asked,) = seen["sampling"]
    assert asked.max_tokens == 100 and asked.messages[0].content.text == "Say hi"
    assert json.loads(seen["roots"].content[0].text) == [
        {"uri": "file:///work/project", "name": "project"}, {"uri": "file:///tmp"}]
    assert seen["fail"].is_error is True
    assert seen["fail"].content[0].text == "this tool always fails"

    shown = [answer == "sent" for answer in seen["log_answers"]]
    assert shown == [shown for _, shown in LOG_PLAN_DEFAULT + LOG_PLAN_AFTER_WARNING]
    assert seen["logs"] == [(level, "everything", f"at {level}") for level in EXPECTED_LOGS]

    (image,) = seen["image"].content
    assert image.type == "image" and image.mime_type == "image/png"
    assert png_problems(base64.b64decode(image.data)) == []

    assert [str(resource.uri) for resource in seen["resources"]] == [
        "static://hello", "static://binary"]
    assert [template.uri_template for template in seen["templates"]] == ["greeting://{name}"]
    (hello,) = seen["hello"].contents
    assert (hello.text, hello.mime_type) == ("Hello, world!", "text/plain")
    (binary,) = seen["binary"].contents
    assert binary.mime_type == "application/octet-stream"
    assert base64.b64decode(binary.blob) == bytes(range(256))
    assert seen["greeting"].contents[0].text == "Hello, Sam!"

    assert [prompt.name for prompt in seen["prompts"]] == ["greet"]
    assert seen["prompts"][0].description
    (message,) = seen["greet"].messages
    assert message.role == "user" and "Ada" in message.content.text
    assert seen["complete_a"].completion.values == ["Alice"]
    assert seen["complete_template"].completion.values == ["Eve"]

    traffic: _Traffic = seen["traffic"]
    requests = {m["id"]: m["method"] for m in traffic.sent if "id" in m and "method" in m}
    _check_server_messages(traffic.received, requests)
    # The server's own requests (sampling, roots) were answered by the SDK.
    server_requests = [m["method"] for m in traffic.received if "method" in m and "id" in m]
    assert sorted(server_requests) == ["roots/list", "sampling/createMessage"]


async def _drive_modern_with_sdk() -> dict[str, Any]:
    """The SDK's default client (``mode="auto"``), which probes with server/discover and
    stays in the modern era, opting in to logs at ``info`` on every request."""
    traffic = _Traffic()
    seen: dict[str, Any] = {"traffic": traffic, "logs": [], "progress": []}

    async def on_log(params: sdk.LoggingMessageNotificationParams) -> None:
        seen["logs"].append((params.level, params.logger, params.data))

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen["progress"].append((progress, total, message))

    params = StdioServerParameters(command=sys.executable, args=[str(EVERYTHING_SERVER)],
                                   env={"PYTHONPATH": str(ROOT)}, cwd=str(ROOT))
    with anyio.fail_after(EXCHANGE_BOUND):
        async with SdkClient(_recorded_stdio(params, traffic), log_level="info",
                             logging_callback=on_log) as client:
            seen["protocol_version"] = client.protocol_version
            seen["caps"] = client.server_capabilities
            seen["tools"] = (await client.list_tools()).tools
            seen["echo"] = await client.call_tool("echo", {"message": "Zürich ✓"})
            seen["structured"] = await client.call_tool("structured", {"a": 2, "b": 3})
            seen["long_running"] = await client.call_tool(
                "long_running", {"steps": 3, "delay": 0.01}, progress_callback=on_progress)
            seen["progress_at_return"] = list(seen["progress"])
            seen["log_debug"] = await client.call_tool(
                "log", {"level": "debug", "message": "at debug"})
            seen["log_warning"] = await client.call_tool(
                "log", {"level": "warning", "message": "at warning"})
            try:
                await client.call_tool("ask")
            except MCPError as exc:
                seen["ask"] = exc
            seen["greeting"] = await client.read_resource("greeting://Sam")
            seen["templates"] = (await client.list_resource_templates()).resource_templates
            seen["greet"] = await client.get_prompt("greet", {"name": "Ada"})
            seen["complete_a"] = await client.complete(
                sdk.PromptReference(type="ref/prompt", name="greet"),
                {"name": "name", "value": "A"})
            try:
                await client.read_resource("static://nothing")
            except MCPError as exc:
                seen["missing"] = exc
    return seen


def test_sdk_client_reaches_everything_in_the_modern_era() -> None:
    """The SDK's default client reaches our stdio server in the modern era (2026-07-28):
    discover, no initialize, tools with progress and structured output, per-request
    logs, resources, the prompt and completion; a tool that elicits, for a client that
    declared no elicitation, is -32021 naming the capability (SEP-2575;
    tests/interop/test_input_required_sdk.py has it answered); an unknown resource is
    -32602; every
    message both sides wrote fits schema-2026-07-28.json.

    DES-1, DES-18, DES-19, COEX (how eras find each other), STDIO-1, STDIO-2.
    """
    seen = anyio.run(_drive_modern_with_sdk)
    assert seen["protocol_version"] == "2026-07-28"
    assert seen["caps"].tools is not None and seen["caps"].logging is not None
    assert [tool.name for tool in seen["tools"]] == TOOL_NAMES
    assert [item.text for item in seen["echo"].content] == ["Zürich ✓"]
    assert seen["structured"].structured_content == {"sum": 5, "product": 6}
    assert seen["progress_at_return"] == [(n, 3, f"step {n} of 3") for n in (1, 2, 3)]
    assert seen["log_debug"].content[0].text == "filtered out by the client's log level"
    assert seen["log_warning"].content[0].text == "sent"
    assert seen["logs"] == [("warning", "everything", "at warning")]
    assert seen["ask"].code == -32021
    assert seen["ask"].data == {"requiredCapabilities": {"elicitation": {}}}
    assert seen["greeting"].contents[0].text == "Hello, Sam!"
    assert [template.uri_template for template in seen["templates"]] == ["greeting://{name}"]
    assert "Ada" in seen["greet"].messages[0].content.text
    assert seen["complete_a"].completion.values == ["Alice"]
    assert seen["missing"].code == -32602

    traffic: _Traffic = seen["traffic"]
    methods = [m.get("method") for m in traffic.sent if "id" in m]
    assert methods[0] == "server/discover" and "initialize" not in methods
    check_traffic(traffic.sent, traffic.received, "2026-07-28")
    assert not [m for m in traffic.received if "method" in m and "id" in m]


# --- our own client ------------------------------------------------------------------------


@pytest.mark.timeout(45)
def test_our_client_uses_everything(monkeypatch: pytest.MonkeyPatch, wire: WireLog) -> None:
    """Our stdio client, with a sampling handler, roots and a log callback, uses every tool,
    resource, the template, subscriptions, the prompt, completion and ping.

    CAPS-3, CAPS-4, TOOLS-2, TOOLS-4, TOOLS-6, PROGRESS-3, PROGRESS-4, SAMPLING-1,
    SAMPLING-2, SAMPLING-4, ROOTS-1, ROOTS-2, LOGGING-3, LOGGING-4, LOGGING-5, CONTENT-2,
    RESOURCES-3, RESOURCES-4, RESOURCES-7, PROMPTS-3, COMPLETION-2, COMPLETION-3, PING-2,
    STDIO-1, STDIO-2.
    """
    received: list[Any] = []
    real_decode = decode_frame

    def tapped_decode(frame: bytes | str) -> Incoming:
        received.append(json.loads(frame))
        return real_decode(frame)

    monkeypatch.setattr(stdio_module, "decode_frame", tapped_decode)

    asked: list[types.CreateMessageRequestParams] = []

    def model(params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        asked.append(params)
        return types.CreateMessageResult(role="assistant", model="our-model",
                                         content=types.TextContent(text="Hi from mcp_sync"))

    logs: queue.Queue[types.LoggingMessageNotificationParams] = queue.Queue()
    progress: list[tuple[float, float | None, str | None]] = []

    def text(result: types.CallToolResult) -> str:
        (item,) = result.content
        assert isinstance(item, types.TextContent), item
        return item.text

    with Client.stdio([sys.executable, str(EVERYTHING_SERVER)], cwd=str(ROOT), timeout=20.0,
                      sampling_handler=model, on_log=logs.put,
                      roots=[{"uri": "file:///work/project", "name": "project"}],
                      **LEGACY_ERA) as client:
        assert [tool.name for tool in client.list_tools()] == TOOL_NAMES
        assert text(client.call_tool("echo", {"message": "Zürich ✓"})) == "Zürich ✓"
        assert text(client.call_tool("add", {"a": 2, "b": 40})) == "42"
        assert text(client.call_tool("long_running", {"steps": 3, "delay": 0.01},
                                     on_progress=lambda *report: progress.append(report))
                    ) == "done"
        assert progress == [(n, 3, f"step {n} of 3") for n in (1, 2, 3)]
        assert text(client.call_tool("sample", {"prompt": "Say hi"})) == "Hi from mcp_sync"
        assert json.loads(text(client.call_tool("roots"))) == [
            {"uri": "file:///work/project", "name": "project"}]
        failed = client.call_tool("fail")
        assert failed.is_error is True and text(failed) == "this tool always fails"

        answers = [text(client.call_tool("log", {"level": level, "message": f"at {level}"}))
                   for level, _ in LOG_PLAN_DEFAULT]
        client.set_logging_level("warning")
        answers += [text(client.call_tool("log", {"level": level, "message": f"at {level}"}))
                    for level, _ in LOG_PLAN_AFTER_WARNING]
        arrived = [logs.get(timeout=WAIT) for _ in EXPECTED_LOGS]

        (image,) = client.call_tool("image").content
        assert isinstance(image, types.ImageContent) and image.mime_type == "image/png"
        assert png_problems(base64.b64decode(image.data)) == []

        assert [r.uri for r in client.list_resources()] == ["static://hello", "static://binary"]
        assert [t.uri_template for t in client.list_resource_templates()] == [
            "greeting://{name}"]
        (hello,) = client.read_resource("static://hello").contents
        assert isinstance(hello, types.TextResourceContents) and hello.text == "Hello, world!"
        (binary,) = client.read_resource("static://binary").contents
        assert isinstance(binary, types.BlobResourceContents)
        assert base64.b64decode(binary.blob) == bytes(range(256))
        (greeting,) = client.read_resource("greeting://Sam").contents
        assert isinstance(greeting, types.TextResourceContents)
        assert greeting.text == "Hello, Sam!"
        client.subscribe_resource("static://hello")
        client.unsubscribe_resource("static://hello")

        assert [prompt.name for prompt in client.list_prompts()] == ["greet"]
        (message,) = client.get_prompt("greet", {"name": "Ada"}).messages
        assert isinstance(message.content, types.TextContent) and "Ada" in message.content.text
        assert client.complete("greet", "name", "A").completion.values == ["Alice"]
        assert client.complete("greeting://{name}", "name", "e").completion.values == ["Eve"]
        client.ping()

    assert len(asked) == 1 and asked[0].max_tokens == 100
    shown = [answer == "sent" for answer in answers]
    assert shown == [shown for _, shown in LOG_PLAN_DEFAULT + LOG_PLAN_AFTER_WARNING]
    assert [(m.level, m.logger, m.data) for m in arrived] == [
        (level, "everything", f"at {level}") for level in EXPECTED_LOGS]
    assert logs.empty()

    requests = {m["id"]: m["method"] for m in wire.sent
                if isinstance(m, dict) and "id" in m and "method" in m}
    _check_server_messages(received, requests)
    assert sorted(m["method"] for m in received if "method" in m and "id" in m) == [
        "roots/list", "sampling/createMessage"]


# --- over Streamable HTTP, as ``--http`` serves it -----------------------------------------


class HttpChild:
    """The example run with ``--http`` on a port of its own choosing (``--port 0``)."""

    def __init__(self, flags: list[str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(EVERYTHING_SERVER), "--http", "--port", "0", *flags],
            cwd=str(ROOT), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, bufsize=0)
        assert self.process.stderr is not None
        self._stderr = self.process.stderr
        try:
            self.url = self._announced_url()
        except BaseException:
            self.stop()
            raise

    def _announced_url(self) -> str:
        # The server names its URL on stderr once it listens, so no port is guessed and
        # no connection is polled for.
        output = b""
        deadline = time.monotonic() + START_BOUND
        while b"\n" not in output:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no URL announced within {START_BOUND}s: {output!r}")
            ready, _, _ = select.select([self._stderr], [], [], remaining)
            if ready:
                chunk = os.read(self._stderr.fileno(), 4096)
                if not chunk:
                    raise AssertionError(f"the server exited: {output!r}")
                output += chunk
        found = re.search(rb"http://127\.0\.0\.1:\d+/mcp", output)
        assert found is not None, output
        return found.group().decode()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10.0)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10.0)
        self._stderr.close()


@contextlib.contextmanager
def http_child(flags: list[str]) -> Iterator[HttpChild]:
    child = HttpChild(flags)
    try:
        yield child
    finally:
        child.stop()


HTTP_MODES = {
    "stateful-sse": [],
    "stateful-json": ["--json-response"],
    "stateless-sse": ["--stateless"],
    "stateless-json": ["--stateless", "--json-response"],
}


@pytest.mark.timeout(45)
@pytest.mark.parametrize("mode", list(HTTP_MODES))
def test_our_client_over_http(mode: str) -> None:
    """``--http`` (with ``--stateless`` and ``--json-response``) serves Streamable HTTP at
    /mcp: tools, resources, prompts and completion answer; logs travel on the request's
    event stream (or, answered with JSON, the session's GET stream), at ``warning`` and
    above in stateless mode (no session remembers a level) and at the client's own level
    otherwise; sampling works with a session.

    HTTP-1, HTTP-10, HTTP-13, HTTP-29, LOGGING-3, LOGGING-5, TOOLS-4, RESOURCES-3,
    PROMPTS-3, COMPLETION-3, SAMPLING-2, PING-2.
    """
    flags = HTTP_MODES[mode]
    stateless = "--stateless" in flags
    # Stateless JSON answers leave a log nowhere to travel: no event stream, no session.
    delivered = not (stateless and "--json-response" in flags)
    logs: queue.Queue[types.LoggingMessageNotificationParams] = queue.Queue()

    def model(params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        return types.CreateMessageResult(role="assistant", model="our-model",
                                         content=types.TextContent(text="Hi over HTTP"))

    def text(result: types.CallToolResult) -> str:
        (item,) = result.content
        assert isinstance(item, types.TextContent), item
        return item.text

    with http_child(flags) as child:
        transport = HttpClientTransport(child.url)
        try:
            client = Client(transport, timeout=20.0, on_log=logs.put, sampling_handler=model,
                            **LEGACY_ERA)
        except BaseException:
            transport.close()
            raise
        with client:
            assert [tool.name for tool in client.list_tools()] == TOOL_NAMES
            assert text(client.call_tool("add", {"a": 2, "b": 40})) == "42"
            (hello,) = client.read_resource("static://hello").contents
            assert isinstance(hello, types.TextResourceContents)
            assert hello.text == "Hello, world!"
            assert len(client.get_prompt("greet", {"name": "Ada"}).messages) == 1
            assert client.complete("greet", "name", "A").completion.values == ["Alice"]
            if not stateless:
                assert text(client.call_tool("sample", {"prompt": "hi"})) == "Hi over HTTP"
                client.set_logging_level("warning")
            answers = [text(client.call_tool("log", {"level": level, "message": level}))
                       for level in ("info", "notice", "warning", "error")]
            arrived = [logs.get(timeout=WAIT).level for _ in range(2)] if delivered else []
            client.ping()
    assert [answer == "sent" for answer in answers] == [False, False, True, True]
    assert arrived == (["warning", "error"] if delivered else [])
    assert logs.empty()
