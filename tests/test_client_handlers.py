"""What the Client does for its server: sampling, roots, and notification callbacks.

Scripted servers send the client requests and notifications as raw frames, so each
test sees exactly what the client answers (SAMPLING, ROOTS, LOGGING, CAPS-4).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mcp_sync import CapabilityError, Client, RpcError, types
from mcp_sync.client import SamplingRejected
from mcp_sync.errors import ErrorCode
from tests.conftest import WireLog, schema_valid
from tests.helpers import ScriptedServer

pytestmark = pytest.mark.timeout(30)

Start = Callable[..., ScriptedServer]

SAMPLE = {
    "messages": [{"role": "user", "content": {"type": "text", "text": "Say hi"}}],
    "maxTokens": 50, "systemPrompt": "Be brief", "temperature": 0.2,
    "modelPreferences": {"hints": [{"name": "claude"}], "speedPriority": 0.9},
}
ANSWER = {"role": "assistant", "content": {"type": "text", "text": "hi"},
          "model": "test-model", "stopReason": "endTurn"}



# --- capabilities -------------------------------------------------------------------------


@pytest.mark.parametrize(("options", "declared"), [
    ({}, {}),
    ({"sampling_handler": lambda p: ANSWER}, {"sampling": {}}),
    ({"roots": []}, {"roots": {"listChanged": True}}),
    ({"roots": ["file:///w"], "sampling_handler": lambda p: ANSWER},
     {"roots": {"listChanged": True}, "sampling": {}}),
])
def test_capabilities_follow_the_options_caps_4(
        scripted: Start, options: dict[str, Any], declared: dict[str, Any]) -> None:
    """CAPS-4, ROOTS-1, SAMPLING-1: a feature is declared exactly when it is served."""
    server = scripted({})
    with Client(server.peer.transport, **options):
        pass
    assert server.initialize_kept.wait(5)
    assert server.initialize["params"]["capabilities"] == declared


# --- sampling ---------------------------------------------------------------------------


def test_sampling_handler_returning_a_result_object_sampling_2_4(scripted: Start) -> None:
    """SAMPLING-2/4: the handler gets typed params; its object becomes the result."""
    seen: list[tuple[types.CreateMessageRequestParams, str]] = []

    def sample(params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        seen.append((params, threading.current_thread().name))
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(text="hi"), model="test-model",
            stop_reason="endTurn")

    server = scripted({})
    with Client(server.peer.transport, sampling_handler=sample):
        answer = server.request("sampling/createMessage", SAMPLE)
    assert schema_valid("CreateMessageResult", answer["result"]) == ANSWER
    params, thread = seen[0]
    assert params.max_tokens == 50 and params.system_prompt == "Be brief"
    assert params.messages == [types.SamplingMessage(
        role="user", content=types.TextContent(text="Say hi"))]
    assert params.model_preferences == types.ModelPreferences(
        hints=[types.ModelHint(name="claude")], speed_priority=0.9)
    assert "reader" not in thread


def test_sampling_handler_returning_a_dict_sampling_4(scripted: Start) -> None:
    """SAMPLING-4: a dict in the wire shape is checked and sent; image content works."""
    image = {"role": "assistant", "content": {"type": "image", "data": "AA==",
                                              "mimeType": "image/png"}, "model": "m"}
    answers = iter([ANSWER, image])
    server = scripted({})
    with Client(server.peer.transport, sampling_handler=lambda p: next(answers)):
        first = server.request("sampling/createMessage", SAMPLE)
        second = server.request("sampling/createMessage", SAMPLE)
    assert schema_valid("CreateMessageResult", first["result"]) == ANSWER
    assert schema_valid("CreateMessageResult", second["result"]) == image


@pytest.mark.parametrize("rejection", [
    SamplingRejected(), RpcError("User rejected sampling request", code=-1)])
def test_user_rejection_is_error_minus_one_sampling_8_ambig_19(
        scripted: Start, rejection: RpcError) -> None:
    """SAMPLING-7/8, AMBIG-19: a refusal reaches the server as code -1."""
    def sample(params: types.CreateMessageRequestParams) -> Any:
        raise rejection

    server = scripted({})
    with Client(server.peer.transport, sampling_handler=sample):
        answer = server.request("sampling/createMessage", SAMPLE)
    assert answer["error"]["code"] == ErrorCode.USER_REJECTED == -1
    assert "rejected" in answer["error"]["message"]


def test_a_raised_rpc_error_keeps_code_message_and_data(scripted: Start) -> None:
    """SAMPLING-8: an RpcError from the handler is what the server receives."""
    def sample(params: types.CreateMessageRequestParams) -> Any:
        raise RpcError("quota exceeded", {"retryAfter": 30}, code=-32000)

    server = scripted({})
    with Client(server.peer.transport, sampling_handler=sample):
        answer = server.request("sampling/createMessage", SAMPLE)
    assert answer["error"] == {"code": -32000, "message": "quota exceeded",
                               "data": {"retryAfter": 30}}


def test_a_failing_handler_is_an_internal_error_and_the_client_goes_on(
        scripted: Start, caplog: pytest.LogCaptureFixture) -> None:
    """SAMPLING-8: a plain exception becomes -32603 without its (possibly private)
    message; it is logged here, and the client keeps serving and calling."""
    def sample(params: types.CreateMessageRequestParams) -> Any:
        raise RuntimeError("API key sk-secret is invalid")

    server = scripted({}, {"ping": lambda p: {}})
    with caplog.at_level(logging.ERROR, "mcp_sync.client"), \
            Client(server.peer.transport, sampling_handler=sample) as client:
        answer = server.request("sampling/createMessage", SAMPLE)
        client.ping()
        again = server.request("sampling/createMessage", SAMPLE)
    assert answer["error"]["code"] == again["error"]["code"] == -32603
    assert "sk-secret" not in answer["error"]["message"]
    assert "sk-secret" in caplog.text


@pytest.mark.parametrize("bad", [
    {"role": "assistant", "content": {"type": "text", "text": "no model"}},
    {"role": "robot", "content": {"type": "text", "text": "x"}, "model": "m"},
    {"role": "assistant", "model": "m", "content": {
        "type": "resource", "resource": {"uri": "file:///x", "text": "x"}}},
    "just a string",
])
def test_an_invalid_handler_result_is_an_error_to_the_server_sampling_3_4(
        scripted: Start, bad: Any) -> None:
    """SAMPLING-3/4: the server never receives a result that breaks the schema."""
    server = scripted({})
    with Client(server.peer.transport, sampling_handler=lambda p: bad):
        answer = server.request("sampling/createMessage", SAMPLE)
    assert answer["error"]["code"] == -32603
    assert "invalid result" in answer["error"]["message"]


def test_invalid_sampling_request_is_refused_before_the_handler_sampling_3(
        scripted: Start) -> None:
    """SAMPLING-3: a message holding an embedded resource is -32602; no handler call."""
    called = threading.Event()
    request = {**SAMPLE, "messages": [{"role": "user", "content": {
        "type": "resource", "resource": {"uri": "file:///x", "text": "x"}}}]}
    server = scripted({})
    with Client(server.peer.transport,
                sampling_handler=lambda p: called.set() or ANSWER):  # type: ignore[func-returns-value]
        answer = server.request("sampling/createMessage", request)
        missing = server.request("sampling/createMessage", {"messages": []})
    assert answer["error"]["code"] == missing["error"]["code"] == -32602
    assert not called.is_set()


def test_without_a_handler_sampling_is_method_not_found_caps_7(scripted: Start) -> None:
    """CAPS-7: undeclared sampling is -32601."""
    server = scripted({})
    with Client(server.peer.transport, roots=[]):
        assert server.request("sampling/createMessage", SAMPLE)["error"]["code"] == -32601


# --- roots -----------------------------------------------------------------------------


def test_roots_in_every_form_roots_2(scripted: Start, tmp_path: Path) -> None:
    """ROOTS-2: Root objects, dicts, URI strings and paths; answered as configured."""
    roots = [types.Root(uri="file:///srv/app", name="app"),
             {"uri": "file:///home/me/project", "name": "project"},
             "file:///tmp/scratch",
             tmp_path]
    server = scripted({})
    with Client(server.peer.transport, roots=roots) as client:
        answer = server.request("roots/list")
        assert client.roots[1] == types.Root(uri="file:///home/me/project", name="project")
    assert schema_valid("ListRootsResult", answer["result"]) == {"roots": [
        {"uri": "file:///srv/app", "name": "app"},
        {"uri": "file:///home/me/project", "name": "project"},
        {"uri": "file:///tmp/scratch"},
        {"uri": tmp_path.as_uri()}]}


@pytest.mark.parametrize("root", [
    "https://example.com/repo", "/srv/app", {"uri": "git://host/repo"},
    types.Root(uri="http://x"), "file:relative"])
def test_non_file_roots_are_refused_roots_3(root: Any) -> None:
    """ROOTS-3: only file:// URIs; refused before anything connects."""
    with pytest.raises(ValueError, match="file://"):
        Client(None, roots=[root])  # type: ignore[arg-type]


@pytest.mark.parametrize(("roots", "error"), [
    ("file:///one", TypeError), ([{"name": "no uri"}], ValueError), ([42], TypeError)])
def test_malformed_roots_are_refused(roots: Any, error: type[Exception]) -> None:
    """ROOTS-2: a single root, a dict without ``uri`` or another type is refused."""
    with pytest.raises(error):
        Client(None, roots=roots)  # type: ignore[arg-type]


def test_set_roots_notifies_and_roots_list_follows_roots_4(
        scripted: Start, wire: WireLog) -> None:
    """ROOTS-4: set_roots sends list_changed (only for a real change); the next
    roots/list returns the new roots and nothing else."""
    server = scripted({})
    with Client(server.peer.transport, roots=[]) as client:
        listed = server.request("roots/list")["result"]
        assert schema_valid("ListRootsResult", listed) == {"roots": []}
        client.set_roots(["file:///a", {"uri": "file:///b", "name": "b"}])
        changed = server.notifications.get(timeout=5)
        listed = server.request("roots/list")["result"]
        assert schema_valid("ListRootsResult", listed) == {"roots": [
            {"uri": "file:///a"}, {"uri": "file:///b", "name": "b"}]}
        client.set_roots([types.Root(uri="file:///a"), types.Root(uri="file:///b", name="b")])
        with pytest.raises(ValueError):
            client.set_roots(["https://nope"])
        assert client.roots == [types.Root(uri="file:///a"),
                                types.Root(uri="file:///b", name="b")]
        client.set_roots([])
        assert server.notifications.get(timeout=5)["method"] == changed["method"]
        assert server.request("roots/list")["result"] == {"roots": []}
    assert changed == {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
    sent = [m.get("method") for m in wire.sent if isinstance(m, dict)]
    assert sent.count("notifications/roots/list_changed") == 2


def test_set_roots_without_declared_roots_is_refused_roots_5(
        scripted: Start, wire: WireLog) -> None:
    """ROOTS-5, CAPS-6: a client created without roots never offers them; roots/list
    stays -32601 and set_roots says how to offer roots."""
    server = scripted({})
    with Client(server.peer.transport) as client:
        with pytest.raises(CapabilityError, match="roots=\\[\\]"):
            client.set_roots(["file:///a"])
        assert server.request("roots/list")["error"]["code"] == -32601
        assert client.roots == []
    assert "notifications/roots/list_changed" not in [
        m.get("method") for m in wire.sent if isinstance(m, dict)]


# --- notifications ---------------------------------------------------------------------


def test_callbacks_in_order_on_the_notifier_logging_4_resources_8(scripted: Start) -> None:
    """LOGGING-4, RESOURCES-8, TOOLS-8: typed callbacks, then on_notification, in the
    order sent, all on one client thread; a raising callback stops nothing."""
    events: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
    threads: set[str] = set()

    def record(*event: Any) -> None:
        threads.add(threading.current_thread().name)
        events.put(event)
        if event[:2] == ("list", "prompts"):
            raise RuntimeError("callback bug")

    server = scripted({})
    with Client(server.peer.transport,
                on_log=lambda p: record("log", p),
                on_resource_updated=lambda uri: record("updated", uri),
                on_list_changed=lambda kind: record("list", kind),
                on_notification=lambda m, p: record("any", m)):
        server.notify("notifications/message",
                      {"level": "error", "logger": "db", "data": {"rows": 3}})
        server.notify("notifications/prompts/list_changed")
        server.notify("notifications/resources/updated", {"uri": "file:///a/b"})
        server.notify("notifications/tools/list_changed")
        server.notify("notifications/resources/list_changed", {"_meta": {"x": 1}})
        server.notify("notifications/message", {"level": "debug", "data": "plain"})
        server.notify("notifications/custom/thing", {"k": 1})
        got = [events.get(timeout=5) for _ in range(13)]
    assert got == [
        ("log", types.LoggingMessageNotificationParams(
            level="error", logger="db", data={"rows": 3})),
        ("any", "notifications/message"),
        ("list", "prompts"), ("any", "notifications/prompts/list_changed"),
        ("updated", "file:///a/b"), ("any", "notifications/resources/updated"),
        ("list", "tools"), ("any", "notifications/tools/list_changed"),
        ("list", "resources"), ("any", "notifications/resources/list_changed"),
        ("log", types.LoggingMessageNotificationParams(level="debug", data="plain")),
        ("any", "notifications/message"),
        ("any", "notifications/custom/thing"),
    ]
    assert len(threads) == 1 and "notifier" in threads.pop()


def test_malformed_notifications_skip_the_typed_callback_only(
        scripted: Start, caplog: pytest.LogCaptureFixture) -> None:
    """LOGGING-4: a log message without a level is logged as malformed; on_log never
    sees it, on_notification still does, and the next good one gets through."""
    logs: queue.SimpleQueue[Any] = queue.SimpleQueue()
    raw: queue.SimpleQueue[str] = queue.SimpleQueue()
    server = scripted({})
    with caplog.at_level(logging.WARNING, "mcp_sync.client"), \
            Client(server.peer.transport, on_log=logs.put,
                   on_resource_updated=logs.put,
                   on_notification=lambda m, p: raw.put(m)):
        server.notify("notifications/message", {"data": "no level"})
        server.notify("notifications/resources/updated", {})
        server.notify("notifications/message", {"level": "info", "data": "ok"})
        assert [raw.get(timeout=5) for _ in range(3)] == [
            "notifications/message", "notifications/resources/updated",
            "notifications/message"]
        assert logs.get(timeout=5).data == "ok"
    assert logs.empty()
    assert "malformed notifications/message" in caplog.text
