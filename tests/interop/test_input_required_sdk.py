"""Input-required results (2026-07-28, SEP-2322) with the official Python SDK's client.

The SDK's client in its default mode probes with ``server/discover``, stays modern
against examples/everything_server.py over stdio, and answers an input-required result
through its callbacks (elicitation, sampling, roots), sending the request again with
``inputResponses`` and the ``requestState``. Its traffic is recorded at its transport and
checked against schema-2026-07-28.json. Also over stdio: two processes of the everything
server sharing ``MCP_SYNC_REQUEST_STATE_KEY`` continue each other's requests. Over
Streamable HTTP: the SDK's client answers two rounds, and two servers behind a
round-robin proxy serve the rounds of one call in turn.
"""

from __future__ import annotations

import sys
from contextlib import ExitStack
from typing import Any

import anyio
import pytest
from mcp import MCPError
from mcp import types as sdk
from mcp.client import Client as SdkClient
from mcp.client.stdio import StdioServerParameters

from mcp_sync import Context, Server, types
from mcp_sync.transports.http_server import serve_http
from tests.helpers import RawChild
from tests.interop.test_everything_server import EVERYTHING_SERVER, ROOT
from tests.interop.test_http_sdk_client import _recorded_http
from tests.interop.test_official_sdk import _recorded_stdio, _Traffic
from tests.scaleout_helpers import RoundRobinProxy, serve_proxy
from tests.server_support import MODERN, modern_request
from tests.wire_schema import check_traffic, message_errors

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60),
              pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")]

CAPS = {"elicitation": {}, "sampling": {}, "roots": {}}
KEY = "shared-request-state-key-0123456789"


async def _drive(action: str) -> dict[str, Any]:
    seen: dict[str, Any] = {"asked": [], "traffic": _Traffic()}

    async def elicit(context: Any, params: Any) -> sdk.ElicitResult:
        seen["asked"].append(("elicit", params.message))
        if action == "accept":
            return sdk.ElicitResult(action="accept", content={"name": "SDK"})
        return sdk.ElicitResult(action=action)  # type: ignore[arg-type]

    async def sample(context: Any, params: Any) -> sdk.CreateMessageResult:
        seen["asked"].append(("sample", params.messages[0].content.text))
        return sdk.CreateMessageResult(role="assistant", model="sdk-model",
                                       content=sdk.TextContent(type="text", text="Paris"))

    async def roots(context: Any) -> sdk.ListRootsResult:
        seen["asked"].append(("roots", None))
        return sdk.ListRootsResult(roots=[sdk.Root(uri="file:///sdk", name="sdk")])

    params = StdioServerParameters(command=sys.executable, args=[str(EVERYTHING_SERVER)],
                                   env={"PYTHONPATH": str(ROOT)}, cwd=str(ROOT))
    with anyio.fail_after(40):
        async with SdkClient(_recorded_stdio(params, seen["traffic"]),
                             elicitation_callback=elicit, sampling_callback=sample,
                             list_roots_callback=roots) as client:
            seen["version"] = client.protocol_version
            seen["ask"] = await client.call_tool("ask", {})
            if action == "accept":
                seen["sample"] = await client.call_tool("sample", {"prompt": "Capital?"})
                seen["roots"] = await client.call_tool("roots", {})
    return seen


@pytest.mark.parametrize(("action", "expected"), [
    ("accept", "Hello, SDK!"), ("decline", "declined"), ("cancel", "cancelled")])
def test_sdk_client_answers_ask_in_the_modern_era_sep_2322(action: str,
                                                           expected: str) -> None:
    """SEP-2322: the official client, modern over stdio (no initialize), gets the ``ask``
    tool's input-required result, answers it through its elicitation callback and sends
    the call again; every action reaches the tool, every message fits the 2026 schema."""
    seen = anyio.run(_drive, action)
    assert seen["version"] == MODERN
    assert seen["ask"].content[0].text == expected
    assert seen["asked"][0] == ("elicit", "What is your name?")
    traffic: _Traffic = seen["traffic"]
    methods = [m.get("method") for m in traffic.sent]
    assert "initialize" not in methods
    calls = [m for m in traffic.sent if m.get("method") == "tools/call"]
    assert "inputResponses" not in calls[0]["params"]
    assert calls[1]["params"]["inputResponses"] == {
        "elicit-1": {"action": action, **({"content": {"name": "SDK"}}
                                          if action == "accept" else {})}}
    assert calls[0]["id"] != calls[1]["id"]
    answers = {m["id"]: m for m in traffic.received if "id" in m}
    first = answers[calls[0]["id"]]["result"]
    assert first["resultType"] == "input_required"
    assert calls[1]["params"]["requestState"] == first["requestState"]
    check_traffic(traffic.sent, traffic.received, MODERN)


def test_sdk_client_answers_sampling_and_roots_in_the_modern_era_sep_2322() -> None:
    """SEP-2322: the everything server's ``sample`` and ``roots`` tools ask through an
    input-required result too; the SDK answers with its sampling and roots callbacks."""
    seen = anyio.run(_drive, "accept")
    assert seen["sample"].content[0].text == "Paris"
    assert seen["roots"].content[0].text == '[{"uri": "file:///sdk", "name": "sdk"}]'
    assert [kind for kind, _ in seen["asked"]] == ["elicit", "sample", "roots"]


@pytest.mark.timeout(60)
def test_two_processes_sharing_the_key_continue_each_others_requests(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """DESIGN "Scale-out": with MCP_SYNC_REQUEST_STATE_KEY alike, a request begun on one
    everything-server process is finished on another; a third process with its own
    random key refuses the state (-32602, tampered)."""
    monkeypatch.setenv("MCP_SYNC_REQUEST_STATE_KEY", "0123456789abcdef" * 4)
    one, two = RawChild([sys.executable, str(EVERYTHING_SERVER)]), None
    three = None
    try:
        two = RawChild([sys.executable, str(EVERYTHING_SERVER)])
        monkeypatch.delenv("MCP_SYNC_REQUEST_STATE_KEY")
        three = RawChild([sys.executable, str(EVERYTHING_SERVER)])
        params = {"name": "ask", "arguments": {}}
        first = _answer(one, modern_request("tools/call", params, 1, clientCapabilities=CAPS))
        state = first["result"]["requestState"]
        again = {**params, "requestState": state,
                 "inputResponses": {"elicit-1": {"action": "accept",
                                                 "content": {"name": "Two"}}}}
        done = _answer(two, modern_request("tools/call", again, 2, clientCapabilities=CAPS))
        assert done["result"]["content"] == [{"type": "text", "text": "Hello, Two!"}]
        refused = _answer(three, modern_request("tools/call", again, 3,
                                                clientCapabilities=CAPS))
        assert refused["error"]["code"] == -32602
        assert refused["error"]["data"] == {"reason": "tampered"}
    finally:
        for child in (one, two, three):
            if child is not None:
                child.kill()


def _answer(child: RawChild, message: dict[str, Any]) -> dict[str, Any]:
    child.send(message)
    while True:
        answer: dict[str, Any] = child.receive()
        if answer.get("id") == message["id"]:
            errors = message_errors(answer, MODERN, answers="tools/call")
            assert not errors, (answer, errors)
            return answer


# --- over Streamable HTTP --------------------------------------------------------------------


def _asking_server(key: str | None) -> Server:
    server = Server("asking-http", version="1.0.0", request_state_key=key)

    @server.tool()
    def plan(ctx: Context) -> str:
        """Ask a name, then the model and the roots together."""
        name = ctx.elicit("What is your name?", {"name": str}, key="name")
        if name.value is None:
            return name.action
        said, roots = ctx.gather(lambda: ctx.sample("Greet", max_tokens=5),
                                 lambda: ctx.list_roots())
        text = said.content.text if isinstance(said.content, types.TextContent) else "?"
        return f"{name.value['name']}: {text} in {roots[0].uri}"

    return server


async def _plan_over_http(url: str) -> dict[str, Any]:
    seen: dict[str, Any] = {"traffic": _Traffic()}

    async def elicit(context: Any, params: Any) -> sdk.ElicitResult:
        return sdk.ElicitResult(action="accept", content={"name": "Ada"})

    async def sample(context: Any, params: Any) -> sdk.CreateMessageResult:
        return sdk.CreateMessageResult(role="assistant", model="m",
                                       content=sdk.TextContent(type="text", text="Hi"))

    async def roots(context: Any) -> sdk.ListRootsResult:
        return sdk.ListRootsResult(roots=[sdk.Root(uri="file:///http")])

    with anyio.fail_after(40):
        async with SdkClient(_recorded_http(url, seen["traffic"]), elicitation_callback=elicit,
                             sampling_callback=sample, list_roots_callback=roots) as client:
            seen["version"] = client.protocol_version
            try:
                seen["plan"] = await client.call_tool("plan", {})
            except MCPError as exc:
                seen["error"] = exc
    return seen


def test_sdk_client_answers_input_required_results_over_http_sep_2322() -> None:
    """SEP-2322 over Streamable HTTP: the official client, modern by default, answers a
    tool's two rounds (one question, then two at once) through its callbacks; every
    message fits schema-2026-07-28.json."""
    with serve_http(_asking_server(None)) as handle:
        seen = anyio.run(_plan_over_http, handle.url)
    assert seen["version"] == MODERN
    assert seen["plan"].content[0].text == "Ada: Hi in file:///http"
    traffic: _Traffic = seen["traffic"]
    calls = [m for m in traffic.sent if m.get("method") == "tools/call"]
    assert [sorted(c["params"].get("inputResponses", {})) for c in calls] == [
        [], ["name"], ["roots-3", "sample-2"]]
    check_traffic(traffic.sent, traffic.received, MODERN)


@pytest.mark.parametrize(("keys", "works"), [((KEY, KEY), True), ((KEY, None), False)])
def test_rounds_alternate_between_two_servers_behind_a_proxy(
        keys: tuple[str | None, str | None], works: bool) -> None:
    """DESIGN "Scale-out": behind a round-robin proxy without affinity, the rounds of one
    call land on both servers and succeed when they share request_state_key; with
    different keys the other server refuses the state (-32602, tampered)."""
    with ExitStack() as stack:
        handles = [stack.enter_context(serve_http(_asking_server(key))) for key in keys]
        proxy = RoundRobinProxy([handle.url.removesuffix("/mcp") for handle in handles])
        url = stack.enter_context(serve_proxy(proxy)).url
        seen = anyio.run(_plan_over_http, url)
        served = {index for index, method, _ in proxy.served if method == "POST"}
    assert served == {0, 1}
    if works:
        assert seen["plan"].content[0].text == "Ada: Hi in file:///http"
    else:
        assert seen["error"].error.code == -32602
        assert seen["error"].error.data == {"reason": "tampered"}
