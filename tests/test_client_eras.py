"""The dual-era client: how it finds its server's era, and what a modern request carries.

Against our own server (in memory and as a real stdio child process) and against
scripted peers that play a legacy server, a silent one, a modern-only one, or a modern
server that names another version first (DIGEST-NEWER "How eras find each other",
COEX-10, schema-2026-07-28 ``RequestMetaObject``).
"""

from __future__ import annotations

import queue
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from mcp_sync import Client, Context, Server
from mcp_sync.errors import LegacyOnlyServer, ModernOnlyServer, ProtocolVersionError
from mcp_sync.protocol._versions import KNOWN_VERSIONS
from mcp_sync.testing import open_client
from tests.conftest import EXAMPLES
from tests.helpers import FakeServer, RawPeer, answer_initialize, initialize_result

pytestmark = pytest.mark.timeout(60)

MODERN = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"
INFO_KEY = "io.modelcontextprotocol/clientInfo"
LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"


def discover_result(versions: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    return {"resultType": "complete", "ttlMs": 0, "cacheScope": "public",
            "supportedVersions": versions or [MODERN], "capabilities": {"tools": {}},
            "instructions": "modern hints",
            "_meta": {SERVER_INFO_KEY: {"name": "modern-fake", "version": "9"}}, **extra}


def answer(peer: RawPeer, request: dict[str, Any], result: dict[str, Any]) -> None:
    peer.send({"jsonrpc": "2.0", "id": request["id"], "result": result})


def start(script: Any) -> FakeServer:
    """A scripted peer that sees the discover probe itself (no legacy auto-answer)."""
    server = FakeServer(script)
    server.peer.legacy_discover = False
    return server


def make_server(**options: Any) -> Server:
    server = Server("ours", version="2.0", instructions="use add", **options)

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return server


# --- our own server ---------------------------------------------------------------------------


def test_default_client_speaks_modern_with_a_dual_era_server_in_memory() -> None:
    """DES-1, "How eras find each other": both sides default to every version, so the
    client speaks 2026-07-28; identity, capabilities and instructions come from
    server/discover."""
    with open_client(make_server()) as client:
        assert client.era == "modern"
        assert client.protocol_version == MODERN
        assert client.server_info.name == "ours"
        assert client.instructions == "use add"
        assert client.server_capabilities.tools is not None
        assert client.call_tool("add", {"a": 2, "b": 3}).structured == {"result": 5}
        client.ping()  # no ping in the era: a discover stands in for it


def test_legacy_only_server_gets_initialize_after_the_probe_coex_1() -> None:
    """COEX-1/2: our server configured for legacy versions answers the probe -32601 and
    the client falls back to initialize on the same connection."""
    with open_client(make_server(supported_versions=KNOWN_VERSIONS)) as client:
        assert client.era == "legacy"
        assert client.protocol_version == "2025-11-25"
        assert client.call_tool("add", {"a": 1, "b": 1}).structured == {"result": 2}


def test_log_level_goes_with_every_request_once_asked_for() -> None:
    """RequestMetaObject logLevel, against our server: no log messages before
    set_logging_level, then only those at the level or above, through on_log."""
    server = make_server()

    @server.tool()
    def chatty(ctx: Context) -> str:
        ctx.log("info", "an info")
        ctx.log("warning", "a warning")
        return "done"

    received: queue.SimpleQueue[Any] = queue.SimpleQueue()
    with open_client(server, on_log=received.put) as client:
        assert client.era == "modern"
        client.call_tool("chatty")  # asked for no log messages: none come
        client.set_logging_level("warning")
        client.call_tool("chatty")
        first = received.get(timeout=5)
    assert (first.level, first.data) == ("warning", "a warning")


def test_one_tool_body_asks_the_client_in_the_modern_era_too() -> None:
    """SEP-2322 end to end with our server: ctx.elicit, ctx.sample and ctx.list_roots in
    a modern tools/call come back as input-required results, answered by the client's
    handlers, and the tool completes on the call sent again."""
    server = make_server()

    @server.tool()
    def ask(ctx: Context) -> str:
        name = ctx.elicit("Name?", schema={"type": "object",
                                           "properties": {"name": {"type": "string"}}})
        sampled = ctx.sample("Say hi")
        roots = ctx.list_roots()
        return f"{name.content['name']} {sampled.content.text} {roots[0].uri}"

    with open_client(server, elicitation_handler=lambda request: request.accept(
                         {"name": "Ada"}),
                     sampling_handler=lambda params: {
                         "role": "assistant", "model": "m",
                         "content": {"type": "text", "text": "hi"}},
                     roots=["file:///srv"]) as client:
        assert client.era == "modern"
        assert client.call_tool("ask").content[0].text == "Ada hi file:///srv"


def test_listen_with_our_server_routes_updates_to_the_callbacks() -> None:
    """subscriptions/listen with our server: a subscribed resource's update and a tool
    list change reach on_resource_updated and on_list_changed."""
    server = make_server()

    @server.resource("memo://one")
    def memo() -> str:
        return "one"

    heard: queue.SimpleQueue[str] = queue.SimpleQueue()
    acknowledged = threading.Event()

    def on_notification(method: str, params: dict[str, Any]) -> None:
        if (method == "notifications/subscriptions/acknowledged"
                and params.get("notifications", {}).get("resourceSubscriptions")):
            acknowledged.set()

    with open_client(server, on_resource_updated=heard.put, on_list_changed=heard.put,
                     on_notification=on_notification) as client:
        assert client.era == "modern"
        client.subscribe_resource("memo://one")
        assert acknowledged.wait(10)
        server.notify_resource_updated("memo://one")
        assert heard.get(timeout=10) == "memo://one"

        @server.tool()
        def later() -> str:
            return "new"

        assert heard.get(timeout=10) == "tools"


def test_modern_over_stdio_with_the_everything_server() -> None:
    """DES-19 over a real stdio child: discover, then tools in the modern era."""
    command = [sys.executable, str(EXAMPLES / "everything_server.py")]
    with Client.stdio(command, timeout=30) as client:
        assert client.era == "modern"
        assert client.call_tool("echo", {"message": "Zürich"}).content[0].text == "Zürich"


def test_modern_client_meets_legacy_only_server_typed_error() -> None:
    """A client configured for 2026-07-28 only, against a legacy-only server:
    LegacyOnlyServer, a ProtocolVersionError."""
    with pytest.raises(LegacyOnlyServer) as caught, open_client(
            make_server(supported_versions=KNOWN_VERSIONS), supported_versions=[MODERN]):
        pass
    assert isinstance(caught.value, ProtocolVersionError)


def test_legacy_client_never_probes_and_stays_legacy_with_a_dual_era_server() -> None:
    """supported_versions with legacy versions only: plain initialize, legacy era."""
    with open_client(make_server(), supported_versions=["2025-06-18"]) as client:
        assert client.era == "legacy"
        assert client.protocol_version == "2025-06-18"


def test_supported_versions_accepts_the_modern_version_and_rejects_unknown_ones() -> None:
    with pytest.raises(ValueError, match="unknown protocol version"), open_client(
            make_server(), supported_versions=["2099-01-01"]):
        pass
    with pytest.raises(ValueError, match="not one of"), open_client(
            make_server(), supported_versions=KNOWN_VERSIONS, protocol_version=MODERN):
        pass


# --- scripted peers ---------------------------------------------------------------------------


def test_every_modern_request_carries_meta_and_results_are_read() -> None:
    """RequestMetaObject: protocolVersion, clientCapabilities (from the handlers, as
    initialize would declare them), clientInfo, and logLevel once asked for; a result's
    serverInfo updates server_info, and its resultType is read and not handed on."""
    seen: list[dict[str, Any]] = []

    def script(peer: RawPeer) -> None:
        discover = peer.receive()
        seen.append(discover)
        answer(peer, discover, discover_result(capabilities={"tools": {}, "logging": {}}))
        for _ in range(2):
            call = peer.receive()
            seen.append(call)
            answer(peer, call, {"resultType": "complete", "content": [],
                                "_meta": {SERVER_INFO_KEY: {"name": "renamed", "version": "10"}}})

    server = start(script)
    with Client(server.peer.transport, name="app", version="1.2", roots=[],
                elicitation_handler=lambda request: request.decline()) as client:
        first = client.call_tool("t", {})
        client.set_logging_level("warning")  # nothing sent: every request names it now
        client.call_tool("t", {})
        assert client.server_info.name == "renamed"
        assert "resultType" not in first.extra and first.meta is None
    server.finish()
    discover, call, logged = seen
    assert discover["method"] == "server/discover"
    assert discover["params"]["_meta"][VERSION_KEY] == MODERN
    meta = call["params"]["_meta"]
    assert meta[VERSION_KEY] == MODERN
    assert meta[INFO_KEY] == {"name": "app", "version": "1.2"}
    assert meta[CAPS_KEY] == {"roots": {}, "elicitation": {"form": {}}}
    assert LEVEL_KEY not in meta
    assert logged["params"]["_meta"][LEVEL_KEY] == "warning"


def test_unsupported_version_error_retries_with_a_listed_version() -> None:
    """-32022 UnsupportedProtocolVersion naming a version we speak: discover again with
    it; the era is modern, never a fallback."""
    seen: list[dict[str, Any]] = []

    def script(peer: RawPeer) -> None:
        first = peer.receive()
        seen.append(first)
        peer.send({"jsonrpc": "2.0", "id": first["id"], "error": {
            "code": -32022, "message": "Unsupported protocol version",
            "data": {"supported": [MODERN], "requested": "x"}}})
        second = peer.receive()
        seen.append(second)
        answer(peer, second, discover_result())

    server = start(script)
    with Client(server.peer.transport) as client:
        assert client.era == "modern"
        assert client.server_info.name == "modern-fake"
    server.finish()
    assert [m["method"] for m in seen] == ["server/discover", "server/discover"]
    assert seen[0]["id"] != seen[1]["id"]


def test_silence_until_the_probe_timeout_means_legacy() -> None:
    """"How eras find each other": a server that never answers discover is legacy once
    the probe timeout passed; initialize follows on the same connection."""
    def script(peer: RawPeer) -> None:
        probe = peer.receive()
        assert probe["method"] == "server/discover"
        cancelled = peer.receive()  # the probe's deadline passed: it is cancelled
        assert cancelled["method"] == "notifications/cancelled"
        assert cancelled["params"]["requestId"] == probe["id"]
        answer_initialize(peer, initialize_result("2025-11-25"))

    server = start(script)
    with Client(server.peer.transport, probe_timeout=0.3) as client:
        assert client.era == "legacy"
    server.finish()


@pytest.mark.parametrize("error", [
    {"code": -32600, "message": "Invalid Request: server/discover before initialization"},
    {"code": -32603, "message": "boom"},
    {"code": -32000, "message": "whatever"},
])
def test_fallback_does_not_hinge_on_one_error_code(error: dict[str, Any]) -> None:
    """Any error that is not a recognised modern one sends the client to initialize."""
    def script(peer: RawPeer) -> None:
        probe = peer.receive()
        peer.send({"jsonrpc": "2.0", "id": probe["id"], "error": error})
        answer_initialize(peer, initialize_result("2025-11-25"))

    server = start(script)
    with Client(server.peer.transport) as client:
        assert client.era == "legacy"
    server.finish()


def test_discover_naming_no_modern_version_is_a_legacy_advertisement() -> None:
    def script(peer: RawPeer) -> None:
        probe = peer.receive()
        answer(peer, probe, discover_result(versions=["2025-11-25"]))
        answer_initialize(peer, initialize_result("2025-11-25"))

    server = start(script)
    with Client(server.peer.transport) as client:
        assert client.era == "legacy"
    server.finish()


def test_a_malformed_discover_result_is_no_evidence_of_the_modern_era() -> None:
    """A discover "result" whose capabilities break the schema: fall back, as for any
    answer that is not a DiscoverResult."""
    def script(peer: RawPeer) -> None:
        probe = peer.receive()
        answer(peer, probe, discover_result(capabilities="none"))
        answer_initialize(peer, initialize_result("2025-11-25"))

    server = start(script)
    with Client(server.peer.transport) as client:
        assert client.era == "legacy"
    server.finish()


def test_modern_only_server_meets_legacy_only_client_coex_10() -> None:
    """COEX-10: initialize answered with -32022 naming modern versions only: the typed
    ModernOnlyServer error, carrying the server's versions."""
    def script(peer: RawPeer) -> None:
        request = peer.receive()
        assert request["method"] == "initialize"
        peer.send({"jsonrpc": "2.0", "id": request["id"], "error": {
            "code": -32022, "message": "Unsupported protocol version",
            "data": {"supported": [MODERN], "requested": "2025-11-25"}}})

    server = start(script)
    with pytest.raises(ModernOnlyServer) as caught:
        Client(server.peer.transport, supported_versions=KNOWN_VERSIONS)
    server.finish()
    assert caught.value.server_versions == (MODERN,)
    assert caught.value.__cause__ is not None  # the server's own error


def test_modern_only_server_with_no_shared_modern_version() -> None:
    """-32022 to discover naming only modern versions we do not speak: ModernOnlyServer,
    no fallback to initialize."""
    def script(peer: RawPeer) -> None:
        probe = peer.receive()
        peer.send({"jsonrpc": "2.0", "id": probe["id"], "error": {
            "code": -32022, "message": "no", "data": {"supported": ["2099-01-01"],
                                                       "requested": MODERN}}})
        with pytest.raises(EOFError):  # nothing more: the client closes
            peer.receive()

    server = start(script)
    with pytest.raises(ModernOnlyServer):
        Client(server.peer.transport)
    server.finish()


# --- the cache --------------------------------------------------------------------------------

LEGACY_SERVER = '''
import json, sys
log = open(sys.argv[1], "a")
for line in sys.stdin:
    message = json.loads(line)
    log.write(message.get("method", "answer") + "\\n"); log.flush()
    if "id" not in message:
        continue
    if message["method"] == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "old", "version": "1"}}
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
    elif message["method"] == "tools/list":
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": {"tools": []}}
    else:
        reply = {"jsonrpc": "2.0", "id": message["id"],
                 "error": {"code": -32601, "message": "Method not found"}}
    print(json.dumps(reply), flush=True)
'''


def test_verdict_is_cached_per_server_so_a_reconnect_does_not_probe(tmp_path: Path) -> None:
    """"Clients cache the verdict per server process": the second client of the same
    stdio server, and the one after a reconnect, go straight to initialize."""
    log = tmp_path / "methods.txt"
    script = tmp_path / "legacy_server.py"
    script.write_text(LEGACY_SERVER, encoding="utf-8")
    command = [sys.executable, str(script), str(log)]
    with Client.stdio(command, timeout=20) as client:
        assert client.era == "legacy"
    with Client.stdio(command, timeout=20) as client:
        assert client.list_tools() == []
    methods = log.read_text(encoding="utf-8").split()
    assert methods.count("server/discover") == 1
    assert methods.count("initialize") == 2


def test_tools_with_invalid_header_annotations_are_left_out_in_the_modern_era() -> None:
    """SEP-2243: a tool whose x-mcp-header is invalid (here on a number) is not listed."""
    tools = [
        {"name": "good", "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}}}},
        {"name": "bad", "inputSchema": {"type": "object", "properties": {
            "score": {"type": "number", "x-mcp-header": "Score"}}}},
    ]

    def script(peer: RawPeer) -> None:
        answer(peer, peer.receive(), discover_result())
        answer(peer, peer.receive(), {"resultType": "complete", "tools": tools})

    server = start(script)
    with Client(server.peer.transport) as client:
        assert [tool.name for tool in client.list_tools()] == ["good"]
    server.finish()


def test_input_required_without_a_handler_fails_the_call_and_sends_nothing_more() -> None:
    """SEP-2322: an input request the client has no handler for (here sampling) fails
    the call with -32601, as the legacy era answers it, and the request is not sent
    again."""
    from mcp_sync.errors import MethodNotFound

    def script(peer: RawPeer) -> None:
        answer(peer, peer.receive(), discover_result())
        call = peer.receive()
        answer(peer, call, {"resultType": "input_required", "requestState": "s",
                            "inputRequests": {"m": {"method": "sampling/createMessage",
                                                    "params": {"messages": [],
                                                               "maxTokens": 1}}}})
        with pytest.raises(EOFError):  # nothing more: the client closes
            peer.receive()

    server = start(script)
    with Client(server.peer.transport) as client, pytest.raises(MethodNotFound):
        client.call_tool("t", {})
    server.finish()


def test_roots_changes_send_no_notification_in_the_modern_era() -> None:
    """The era has no roots/list_changed: set_roots only changes what the next input
    request is answered with."""
    def script(peer: RawPeer) -> None:
        answer(peer, peer.receive(), discover_result())
        with pytest.raises(EOFError):  # nothing more: the client closes
            peer.receive()

    server = start(script)
    with Client(server.peer.transport, roots=[]) as client:
        client.set_roots(["file:///tmp"])
        assert [root.uri for root in client.roots] == ["file:///tmp"]
    server.finish()


def test_cancelling_a_modern_async_call_cancels_its_request_at_the_server() -> None:
    """CANCEL-1 in the modern era (stdio): future.cancel() sends notifications/cancelled
    for the request in flight, and whoever waits gets RequestCancelled."""
    from concurrent.futures import CancelledError

    seen: dict[str, Any] = {}

    def script(peer: RawPeer) -> None:
        answer(peer, peer.receive(), discover_result())
        seen["call"] = peer.receive()
        seen["cancel"] = peer.receive()

    server = start(script)
    with Client(server.peer.transport) as client:
        future = client.call_tool_async("slow", {})
        assert future.cancel()
        with pytest.raises(CancelledError):
            future.result(5)
        server.thread.join(10)
    server.finish()
    assert seen["cancel"]["method"] == "notifications/cancelled"
    assert seen["cancel"]["params"]["requestId"] == seen["call"]["id"]


def test_a_legacy_client_leaves_no_verdict_for_a_modern_one(tmp_path: Path) -> None:
    """A client configured for legacy versions only never asks server/discover, so what
    it found says nothing of the server's era: a later default client of the same server
    still probes and speaks the modern era, and a modern-only one is not refused."""
    command = [sys.executable, str(EXAMPLES / "everything_server.py")]
    with Client.stdio(command, supported_versions=("2025-11-25",), timeout=20) as client:
        assert client.era == "legacy"
    with Client.stdio(command, timeout=20) as client:
        assert client.era == "modern"
    with Client.stdio(command, supported_versions=("2026-07-28",), timeout=20) as client:
        assert client.era == "modern"
