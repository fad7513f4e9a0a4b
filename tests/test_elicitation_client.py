"""The client's elicitation_handler: what it declares, the request it is handed, what it
answers, URL mode, completion notices and -32042."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from mcp_sync import (
    Client,
    ElicitationRequest,
    ElicitationResult,
    UrlElicitationRequired,
)
from mcp_sync.errors import ErrorCode, RpcError
from tests.elicitation_support import check_version
from tests.helpers import ScriptedServer

pytestmark = pytest.mark.timeout(30)

Start = Callable[..., ScriptedServer]
NEW = "2025-11-25"

FORM = {"message": "What is your name?", "requestedSchema": {
    "type": "object", "properties": {"name": {"type": "string", "default": "Ada"},
                                     "age": {"type": "integer", "minimum": 0}},
    "required": ["name"]}}
URL = {"mode": "url", "message": "Connect your account", "elicitationId": "e-1",
       "url": "https://auth.example.com/connect?state=1"}


def test_capability_declared_only_with_a_handler_v0618_35(scripted: Start) -> None:
    """V0618-35, V1125-34, NAMBIG-9: with a handler the client declares
    ``elicitation: {form: {}}`` (and ``url`` when asked); without one it declares nothing
    and answers -32601."""
    server = scripted({}, version=NEW)
    with Client(server.peer.transport):
        answer = server.request("elicitation/create", FORM)
    assert "elicitation" not in server.initialize["params"]["capabilities"]
    assert answer["error"]["code"] == ErrorCode.METHOD_NOT_FOUND
    server = scripted({}, version=NEW)
    with Client(server.peer.transport, elicitation_handler=lambda r: r.decline(),
                elicitation_modes=("form", "url")):
        pass
    capabilities = check_version(server.initialize["params"]["capabilities"],
                                 "ClientCapabilities", NEW)
    assert capabilities["elicitation"] == {"form": {}, "url": {}}


def test_handler_gets_one_normalised_request_v0618_33_v1125_36(scripted: Start) -> None:
    """V0618-33, V1125-36/38/45: a request without ``mode`` is form; the handler sees the
    message, the schema, its defaults and the server's identity; accepted content goes
    back checked and valid for the schema."""
    seen: list[ElicitationRequest] = []

    def handler(request: ElicitationRequest) -> ElicitationResult[Any]:
        seen.append(request)
        return request.accept({**request.defaults, "age": 36})

    server = scripted({}, version=NEW)
    with Client(server.peer.transport, elicitation_handler=handler):
        answer = server.request("elicitation/create", FORM)
    assert check_version(answer["result"], "ElicitResult", NEW) == {
        "action": "accept", "content": {"name": "Ada", "age": 36}}
    request = seen[0]
    assert request.mode == "form" and request.message == "What is your name?"
    assert request.requested_schema == FORM["requestedSchema"]
    assert request.defaults == {"name": "Ada"}
    assert request.server_info is not None and request.server_info.name == "fake"


@pytest.mark.parametrize("reply", [
    {"action": "decline"}, {"action": "cancel"}, ElicitationResult(action="cancel")])
def test_decline_and_cancel_v0618_31(scripted: Start, reply: Any) -> None:
    """V0618-31: decline and cancel carry no content; a dict answer works too."""
    server = scripted({}, version=NEW)
    with Client(server.peer.transport, elicitation_handler=lambda r: reply):
        answer = server.request("elicitation/create", FORM)
    expected = reply if isinstance(reply, dict) else {"action": reply.action}
    assert answer["result"] == expected


def test_content_checked_before_sending_v0618_34(scripted: Start) -> None:
    """V0618-34: content that breaks the requested schema is not sent: the server gets
    -32603 and the handler's mistake is logged."""
    server = scripted({}, version=NEW)
    with Client(server.peer.transport,
                elicitation_handler=lambda r: r.accept({"age": -1})):
        answer = server.request("elicitation/create", FORM)
    assert answer["error"]["code"] == ErrorCode.INTERNAL_ERROR
    assert "name" not in str(answer)


@pytest.mark.parametrize(("params", "why"), [
    (URL, "does not support url-mode"),
    ({**FORM, "mode": "telepathy"}, "unknown elicitation mode"),
    ({"message": "x", "requestedSchema": {"type": "object", "properties": {
        "a": {"type": "object"}}}}, "form mode asks only"),
])
def test_undeclared_mode_or_bad_schema_is_invalid_params_v1125_35(
        scripted: Start, params: dict[str, Any], why: str) -> None:
    """V1125-35: a mode the client did not declare (or a malformed request) is -32602
    and the handler is not called."""
    called = threading.Event()
    server = scripted({}, version=NEW)
    with Client(server.peer.transport,
                elicitation_handler=lambda r: called.set() or r.decline()):
        answer = server.request("elicitation/create", params)
    assert answer["error"]["code"] == ErrorCode.INVALID_PARAMS
    assert why in answer["error"]["message"]
    assert not called.is_set()


def test_url_mode_and_completion_notices_v1125_42_44(scripted: Start) -> None:
    """V1125-40/42/44/45: the handler gets the URL and its host (the library opens
    nothing); after an accept, the completion notice reaches the callback once; unknown
    and repeated ids are ignored."""
    seen: list[ElicitationRequest] = []
    completed: queue.SimpleQueue[str] = queue.SimpleQueue()
    notified = threading.Event()

    def on_notification(method: str, params: dict[str, Any]) -> None:
        if params.get("elicitationId") == "last":
            notified.set()

    def handler(request: ElicitationRequest) -> ElicitationResult[Any]:
        seen.append(request)
        return request.accept()

    server = scripted({}, version=NEW)
    with Client(server.peer.transport, elicitation_handler=handler,
                elicitation_modes=("url",), on_elicitation_complete=completed.put,
                on_notification=on_notification):
        answer = server.request("elicitation/create", URL)
        for elicitation_id in ("unknown", "e-1", "e-1", "last"):
            server.notify("notifications/elicitation/complete",
                          {"elicitationId": elicitation_id})
        assert notified.wait(5)
    assert check_version(answer["result"], "ElicitResult", NEW) == {"action": "accept"}
    assert (seen[0].mode, seen[0].url, seen[0].url_host, seen[0].elicitation_id) == (
        "url", URL["url"], "auth.example.com", "e-1")
    assert completed.get(timeout=5) == "e-1"
    assert completed.empty()


def test_url_elicitation_required_raised_to_the_caller_v1125_43(scripted: Start) -> None:
    """V1125-43: -32042 from the server is raised as UrlElicitationRequired with its
    list of URL elicitations."""
    data = {"elicitations": [URL]}

    def refuse(params: dict[str, Any]) -> dict[str, Any]:
        raise RpcError("This request requires more information.", data, code=-32042)

    server = scripted({"tools": {}}, {"tools/call": refuse}, version=NEW)
    with Client(server.peer.transport) as client, \
            pytest.raises(UrlElicitationRequired) as caught:
        client.call_tool("connect", {})
    assert caught.value.code == -32042
    assert caught.value.elicitations == [URL]


def test_handler_runs_on_the_callback_executor(scripted: Start) -> None:
    """The handler runs on ``callback_executor``, as the other callbacks do."""
    threads: list[str] = []

    def handler(request: ElicitationRequest) -> ElicitationResult[Any]:
        threads.append(threading.current_thread().name)
        return request.cancel()

    server = scripted({}, version=NEW)
    with ThreadPoolExecutor(1, thread_name_prefix="gui") as executor, \
            Client(server.peer.transport, elicitation_handler=handler,
                   callback_executor=executor):
        assert server.request("elicitation/create", FORM)["result"] == {"action": "cancel"}
    assert threads[0].startswith("gui")


def test_failing_handler_is_internal_error(scripted: Start) -> None:
    """A handler that raises answers -32603 and leaves the client working."""
    def handler(request: ElicitationRequest) -> ElicitationResult[Any]:
        raise RuntimeError("/secret/path")

    server = scripted({}, version=NEW)
    with Client(server.peer.transport, elicitation_handler=handler):
        answer = server.request("elicitation/create", FORM)
        again = server.request("elicitation/create", FORM)
    assert answer["error"]["code"] == again["error"]["code"] == ErrorCode.INTERNAL_ERROR
    assert "secret" not in str(answer)
