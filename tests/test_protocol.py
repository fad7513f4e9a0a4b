"""Tests for mcp_sync.protocol._session: two Sessions wired back to back, no threads, no I/O.

:class:`SessionPair` carries each message from one session to the other through
``encode``/``decode``, exactly as a pipe would, so the autouse ``wire`` fixture checks
every message against the official schema. Tests that must send something the schema
forbids (a malformed cancellation, say) hand it to ``Session.receive`` directly.
"""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    invariant,
    precondition,
    rule,
)

from mcp_sync import types
from mcp_sync.errors import (
    CapabilityError,
    ErrorCode,
    InternalError,
    InvalidParams,
    LocalProtocolError,
    ProtocolVersionError,
    RpcError,
)
from mcp_sync.jsonrpc import (
    ErrorResponse,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
    decode,
    encode,
)
from mcp_sync.protocol._session import (
    _TRANSITIONS,
    CancelRequested,
    Event,
    Ignored,
    NotificationReceived,
    ProgressReceived,
    Reply,
    RequestReceived,
    ResponseReceived,
    Role,
    Session,
    State,
    _Input,
)
from mcp_sync.protocol._versions import KNOWN_VERSIONS, LATEST_VERSION
from tests.conftest import validator

CLIENT_INFO = types.Implementation(name="test-client", version="1.0")
SERVER_INFO = types.Implementation(name="test-server", version="2.0")

FULL_SERVER = types.ServerCapabilities(
    tools=types.ToolsCapability(list_changed=True),
    resources=types.ResourcesCapability(subscribe=True, list_changed=True),
    prompts=types.PromptsCapability(list_changed=True),
    logging={},
    completions={},
)
BARE_SERVER = types.ServerCapabilities()
FULL_CLIENT = types.ClientCapabilities(roots=types.RootsCapability(list_changed=True),
                                       sampling={})
BARE_CLIENT = types.ClientCapabilities()

SERVER_METHODS = ("tools/list", "tools/call", "resources/list", "resources/templates/list",
                  "resources/read", "resources/subscribe", "resources/unsubscribe",
                  "prompts/list", "prompts/get", "logging/setLevel", "completion/complete")
CLIENT_METHODS = ("roots/list", "sampling/createMessage")

INVALID_REQUEST = ErrorCode.INVALID_REQUEST
METHOD_NOT_FOUND = ErrorCode.METHOD_NOT_FOUND


def make_client(capabilities: types.ClientCapabilities = FULL_CLIENT, *,
                served: tuple[str, ...] = CLIENT_METHODS,
                versions: tuple[str, ...] = KNOWN_VERSIONS) -> Session:
    return Session(Role.CLIENT, info=CLIENT_INFO, capabilities=capabilities,
                   served_methods=served, versions=versions)


def make_server(capabilities: types.ServerCapabilities = FULL_SERVER, *,
                served: tuple[str, ...] = SERVER_METHODS,
                versions: tuple[str, ...] = KNOWN_VERSIONS,
                instructions: str | None = "Be brief.") -> Session:
    return Session(Role.SERVER, info=SERVER_INFO, capabilities=capabilities,
                   served_methods=served, versions=versions, instructions=instructions)


def carry(message: Message) -> Message:
    """What the other side reads after ``message`` crossed a pipe."""
    frame = encode(message)
    assert b"\n" not in frame
    incoming = decode(frame)
    assert isinstance(incoming, (Request, Notification, Response, ErrorResponse))
    return incoming


class SessionPair:
    """A client and a server Session back to back, each message carried by hand."""

    def __init__(self, client: Session | None = None, server: Session | None = None) -> None:
        self.client = client if client is not None else make_client()
        self.server = server if server is not None else make_server()

    def to_server(self, message: Message) -> Event:
        return self.server.receive(carry(message))

    def to_client(self, message: Message) -> Event:
        return self.client.receive(carry(message))

    def initialize(self) -> ResponseReceived:
        """Initialize request and its result, without ``notifications/initialized``."""
        reply = self.to_server(self.client.initialize_request())
        assert isinstance(reply, Reply)
        answered = self.to_client(reply.message)
        assert isinstance(answered, ResponseReceived)
        return answered

    def handshake(self) -> SessionPair:
        answered = self.initialize()
        assert answered.error is None
        event = self.to_server(self.client.initialized_notification())
        assert isinstance(event, NotificationReceived)
        assert self.client.state is State.OPERATING and self.server.state is State.OPERATING
        return self

    def client_call(self, method: str, params: dict[str, Any] | None = None, *,
                    progress: bool = False) -> tuple[Request, RequestReceived]:
        request = self.client.request(method, params, progress=progress)
        event = self.to_server(request)
        assert isinstance(event, RequestReceived)
        return request, event

    def server_call(self, method: str, params: dict[str, Any] | None = None, *,
                    progress: bool = False) -> tuple[Request, RequestReceived]:
        request = self.server.request(method, params, progress=progress)
        event = self.to_client(request)
        assert isinstance(event, RequestReceived)
        return request, event


def operating() -> SessionPair:
    return SessionPair().handshake()


def drive(role: Role, state: State) -> tuple[SessionPair, Session]:
    """A pair whose ``role`` side has reached ``state`` through the public API."""
    pair = SessionPair()
    if role is Role.CLIENT:
        if state is State.INITIALIZING:
            pair.client.initialize_request()
        elif state is State.INITIALIZED:
            pair.initialize()
    elif state is State.INITIALIZED:
        reply = pair.to_server(pair.client.initialize_request())
        assert isinstance(reply, Reply)
    if state in (State.OPERATING, State.CLOSED):
        pair.handshake()
    session = pair.client if role is Role.CLIENT else pair.server
    if state is State.CLOSED:
        session.close()
    assert session.state is state
    return pair, session


REACHABLE = [(Role.CLIENT, state) for state in State] + [
    (Role.SERVER, state) for state in State if state is not State.INITIALIZING]
OPEN_STATES = [(role, state) for role, state in REACHABLE if state is not State.CLOSED]


def assert_error_reply(event: Event, request_id: RequestId, code: int) -> RpcError:
    assert isinstance(event, Reply)
    assert isinstance(event.message, ErrorResponse)
    assert event.message.id == request_id and type(event.message.id) is type(request_id)
    assert int(event.message.error.code) == code
    return event.message.error


def initialize_request(version: str, request_id: RequestId = 0,
                       capabilities: dict[str, Any] | None = None) -> Request:
    return Request(request_id, "initialize", {
        "protocolVersion": version, "capabilities": capabilities or {},
        "clientInfo": {"name": "raw", "version": "0"}})


def initialize_result(version: str, **extra: Any) -> dict[str, Any]:
    return {"protocolVersion": version, "capabilities": {},
            "serverInfo": {"name": "fake", "version": "0"}, **extra}


# --- handshake (LIFECYCLE) ------------------------------------------------------------------


def test_handshake_lifecycle_2_3_4() -> None:
    """LIFECYCLE-2/3/4, VERSION-1: initialize → result → initialized, with both sides'
    states, identities and capabilities recorded."""
    pair = SessionPair()
    assert pair.client.state is State.NEW and pair.server.state is State.NEW
    assert not pair.client.initialized and not pair.server.initialized

    init = pair.client.initialize_request()
    sent = json.loads(encode(init))
    assert sent["method"] == "initialize" and "id" in sent
    assert list(validator("InitializeRequest").iter_errors(sent)) == []
    assert sent["params"]["protocolVersion"] == LATEST_VERSION == "2025-11-25"
    assert sent["params"]["clientInfo"] == {"name": "test-client", "version": "1.0"}
    assert sent["params"]["capabilities"] == {"roots": {"listChanged": True}, "sampling": {}}
    assert pair.client.state is State.INITIALIZING

    reply = pair.to_server(init)
    assert isinstance(reply, Reply) and isinstance(reply.message, Response)
    assert reply.message.id == init.id
    result = reply.message.result
    assert list(validator("InitializeResult").iter_errors(result)) == []
    assert result == {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {"listChanged": True},
                         "resources": {"subscribe": True, "listChanged": True},
                         "prompts": {"listChanged": True}, "logging": {}, "completions": {}},
        "serverInfo": {"name": "test-server", "version": "2.0"},
        "instructions": "Be brief.",
    }
    assert pair.server.state is State.INITIALIZED and pair.server.initialized
    assert pair.server.peer_info == CLIENT_INFO
    assert pair.server.peer_capabilities == FULL_CLIENT
    assert pair.server.negotiated_version == "2025-11-25"
    assert pair.server.serving == []  # initialize is answered by the session itself

    answered = pair.to_client(reply.message)
    assert answered == ResponseReceived(init.id, "initialize", result=result)
    assert pair.client.state is State.INITIALIZED
    assert pair.client.peer_info == SERVER_INFO
    assert pair.client.peer_capabilities == FULL_SERVER
    assert pair.client.peer_instructions == "Be brief."
    assert pair.client.negotiated_version == "2025-11-25"
    # V0618-1: batches are gone from 2025-06-18 on.
    assert pair.client.profile is not None and not pair.client.profile.batching

    initialized = pair.client.initialized_notification()
    assert json.loads(encode(initialized)) == {
        "jsonrpc": "2.0", "method": "notifications/initialized"}
    event = pair.to_server(initialized)
    assert event == NotificationReceived(Notification("notifications/initialized"))
    assert pair.client.state is State.OPERATING and pair.server.state is State.OPERATING
    assert pair.client.outstanding == [] and pair.server.outstanding == []


def test_handshake_without_instructions_omits_them() -> None:
    """LIFECYCLE-3/8: instructions are optional and left out when unset."""
    pair = SessionPair(server=make_server(instructions=None))
    answered = pair.initialize()
    assert answered.result is not None and "instructions" not in answered.result
    assert pair.client.peer_instructions is None


def test_initialized_is_required_before_client_feature_requests() -> None:
    """LIFECYCLE-4: after the result the client sends notifications/initialized before
    any other request (ping aside)."""
    pair = SessionPair()
    pair.initialize()
    with pytest.raises(LocalProtocolError, match="before initialization completes"):
        pair.client.request("tools/list")
    assert pair.client.request("ping").method == "ping"
    pair.to_server(pair.client.initialized_notification())
    assert pair.client.request("tools/list").method == "tools/list"


def test_lifecycle_misuse_raises_local_protocol_error() -> None:
    """LIFECYCLE-1/2/4: each lifecycle message is sent once, by the right side."""
    pair = SessionPair()
    with pytest.raises(LocalProtocolError):
        pair.server.initialize_request()
    with pytest.raises(LocalProtocolError):
        pair.client.request("initialize")
    with pytest.raises(LocalProtocolError):
        pair.client.initialized_notification()  # nothing answered yet
    pair.client.initialize_request()
    with pytest.raises(LocalProtocolError):
        pair.client.initialize_request()
    assert pair.client.state is State.INITIALIZING
    with pytest.raises(LocalProtocolError):
        pair.server.notification("notifications/initialized")
    assert pair.server.state is State.NEW


def test_initialized_notification_only_moves_a_waiting_server() -> None:
    """LIFECYCLE-4, JSONRPC-10: a stray notifications/initialized is ignored, not answered."""
    pair = SessionPair()
    stray = Notification("notifications/initialized")
    assert isinstance(pair.server.receive(stray), Ignored)
    assert pair.server.state is State.NEW
    assert isinstance(pair.client.receive(stray), Ignored)
    pair.handshake()
    assert isinstance(pair.server.receive(stray), Ignored)
    assert pair.server.state is State.OPERATING


# --- versions (VERSION) ---------------------------------------------------------------------


@pytest.mark.parametrize(("offered", "answered"), [
    pytest.param("2025-11-25", "2025-11-25", id="VERSION-2 latest"),
    pytest.param("2025-06-18", "2025-06-18", id="VERSION-2 V0618 older known"),
    pytest.param("2025-03-26", "2025-03-26", id="VERSION-2 older known 2025-03-26"),
    pytest.param("2024-11-05", "2024-11-05", id="VERSION-2 older known"),
    pytest.param("2030-01-01", "2025-11-25", id="VERSION-3 newer unknown"),
    pytest.param("2026-07-28", "2025-11-25", id="VERSION-3 next revision not spoken"),
    pytest.param("1999-01-01", "2025-11-25", id="VERSION-3 ancient"),
    pytest.param("2025-3-26", "2025-11-25", id="VERSION-6 compared as exact strings"),
    pytest.param("", "2025-11-25", id="VERSION-3 empty"),
])
def test_server_version_negotiation(offered: str, answered: str) -> None:
    """VERSION-2/3/6: the offered version if spoken, else our newest — never an error."""
    server = make_server()
    reply = server.receive(carry(initialize_request(offered)))
    assert isinstance(reply, Reply) and isinstance(reply.message, Response)
    assert reply.message.result["protocolVersion"] == answered
    assert server.negotiated_version == answered
    assert server.profile is not None and server.profile.version == answered


def test_server_speaking_only_2024_answers_with_it() -> None:
    """VERSION-3: a server answers with the newest version *it* speaks; the client accepts
    a version it speaks even if it offered another."""
    pair = SessionPair(server=make_server(versions=("2024-11-05",)))
    pair.handshake()
    assert pair.client.negotiated_version == pair.server.negotiated_version == "2024-11-05"
    assert pair.client.profile is not None and not pair.client.profile.batching


def test_client_offering_2024_gets_2024() -> None:
    """VERSION-1/2: a client configured for 2024-11-05 offers it and the server agrees."""
    pair = SessionPair(client=make_client(versions=("2024-11-05",)))
    init = pair.client.initialize_request()
    assert init.params is not None and init.params["protocolVersion"] == "2024-11-05"
    reply = pair.to_server(init)
    assert isinstance(reply, Reply) and isinstance(reply.message, Response)
    assert reply.message.result["protocolVersion"] == "2024-11-05"
    answered = pair.to_client(reply.message)
    assert isinstance(answered, ResponseReceived) and answered.error is None
    pair.to_server(pair.client.initialized_notification())
    assert pair.server.profile is not None and not pair.server.profile.progress_message


@pytest.mark.parametrize(("client_versions", "server_version"), [
    pytest.param(KNOWN_VERSIONS, "2030-01-01", id="VERSION-4 future version"),
    pytest.param(KNOWN_VERSIONS, "2026-07-28", id="VERSION-4 next revision"),
    pytest.param(("2025-03-26",), "2025-06-18", id="VERSION-4 newer known, not configured"),
    pytest.param(("2025-03-26",), "2024-11-05", id="VERSION-4 known but not configured"),
])
def test_client_refuses_a_version_it_does_not_speak(client_versions: tuple[str, ...],
                                                    server_version: str) -> None:
    """VERSION-4: the answer carries ProtocolVersionError, the client is not initialized
    and will send nothing more (no notifications/initialized, no requests)."""
    client = make_client(versions=client_versions)
    init = client.initialize_request()
    event = client.receive(carry(Response(init.id, initialize_result(server_version))))
    assert isinstance(event, ResponseReceived)
    assert event.request_id == init.id and event.method == "initialize"
    assert event.result is None
    assert isinstance(event.error, ProtocolVersionError)
    assert event.error.offered == server_version
    assert event.error.supported == client_versions
    assert not client.initialized and client.state is State.NEW
    assert client.negotiated_version is None and client.profile is None
    assert client.peer_info is None
    with pytest.raises(LocalProtocolError):
        client.initialized_notification()
    with pytest.raises(LocalProtocolError):
        client.request("tools/list")


def test_version_error_response_becomes_protocol_version_error() -> None:
    """VERSION-5, AMBIG-2: the -32602 "unsupported version" error is the same failure."""
    client = make_client()
    init = client.initialize_request()
    error = InvalidParams("Unsupported protocol version",
                          {"supported": ["2099-01-01"], "requested": "2025-03-26"})
    event = client.receive(carry(ErrorResponse(init.id, error)))
    assert isinstance(event, ResponseReceived)
    assert isinstance(event.error, ProtocolVersionError)
    assert isinstance(event.error.__cause__, InvalidParams)
    assert event.error.__cause__.data == {"supported": ["2099-01-01"], "requested": "2025-03-26"}
    assert client.state is State.NEW and not client.initialized


@pytest.mark.parametrize("error", [
    pytest.param(InvalidParams("bad clientInfo"), id="-32602 without data"),
    pytest.param(InvalidParams("bad", {"requested": "x"}), id="-32602 without supported"),
    pytest.param(InternalError("boom", {"supported": ["x"]}), id="other code with supported"),
])
def test_other_initialize_errors_pass_through(error: RpcError) -> None:
    """VERSION-5, LIFECYCLE-12: only the version error is turned into ProtocolVersionError."""
    client = make_client()
    init = client.initialize_request()
    event = client.receive(carry(ErrorResponse(init.id, error)))
    assert isinstance(event, ResponseReceived)
    assert type(event.error) is type(error) and not isinstance(event.error,
                                                               ProtocolVersionError)
    assert client.state is State.NEW


@pytest.mark.parametrize("result", [
    pytest.param({"protocolVersion": "2025-03-26", "capabilities": {}}, id="no serverInfo"),
    pytest.param({"capabilities": {}, "serverInfo": {"name": "x", "version": "1"}},
                 id="no protocolVersion"),
    pytest.param(initialize_result("2025-03-26", capabilities=[]), id="capabilities array"),
    pytest.param({**initialize_result("2025-03-26"), "protocolVersion": 20250326},
                 id="version as a number"),
])
def test_malformed_initialize_result_fails_the_handshake(result: dict[str, Any]) -> None:
    """LIFECYCLE-3, LIFECYCLE-12: a result that is not an InitializeResult is an error."""
    client = make_client()
    init = client.initialize_request()
    event = client.receive(Response(init.id, result))
    assert isinstance(event, ResponseReceived)
    assert isinstance(event.error, InvalidParams)
    assert client.state is State.NEW


def test_unknown_capabilities_and_fields_are_tolerated() -> None:
    """CAPS-1/2, GEN (newer peers): unknown capability keys and fields do not fail."""
    server = make_server()
    request = initialize_request("2025-11-25", capabilities={
        "roots": {"listChanged": True, "future": 1}, "elicitation": {}, "tasks": {"x": {}}})
    assert request.params is not None
    request.params["clientInfo"] = {"name": "n", "version": "1", "title": "T", "icons": []}
    reply = server.receive(carry(request))
    assert isinstance(reply, Reply) and isinstance(reply.message, Response)
    assert server.state is State.INITIALIZED
    client = make_client()
    init = client.initialize_request()
    result = initialize_result("2025-03-26", capabilities={"tools": {"listChanged": True},
                                                           "tasks": {}},
                               _meta={"k": "v"}, future=[1])
    event = client.receive(carry(Response(init.id, result)))
    assert isinstance(event, ResponseReceived) and event.error is None
    assert client.state is State.INITIALIZED


def test_session_refuses_versions_it_does_not_know() -> None:
    """VERSION-6: a session only speaks versions with a profile."""
    with pytest.raises(ValueError):
        make_client(versions=("2099-01-01",))
    with pytest.raises(ValueError):
        make_server(versions=())


# --- capabilities (CAPS) ---------------------------------------------------------------------

CLIENT_GATED = [
    ("tools/list", None),
    ("tools/call", {"name": "t"}),
    ("resources/list", None),
    ("resources/templates/list", None),
    ("resources/read", {"uri": "file:///a"}),
    ("resources/subscribe", {"uri": "file:///a"}),
    ("resources/unsubscribe", {"uri": "file:///a"}),
    ("prompts/list", None),
    ("prompts/get", {"name": "p"}),
    ("logging/setLevel", {"level": "info"}),
    ("completion/complete", {"ref": {"type": "ref/prompt", "name": "p"},
                             "argument": {"name": "a", "value": "v"}}),
]


@pytest.mark.parametrize(("method", "params"), CLIENT_GATED, ids=[m for m, _ in CLIENT_GATED])
def test_client_needs_server_capability(method: str, params: dict[str, Any] | None) -> None:
    """CAPS-5: without the server's capability the call raises and nothing is produced;
    with it the request goes out and the server hands it to the application."""
    bare = SessionPair(server=make_server(BARE_SERVER)).handshake()
    next_id = bare.client.request("ping").id
    assert isinstance(next_id, int)
    with pytest.raises(CapabilityError):
        bare.client.request(method, params)
    assert bare.client.outstanding == [next_id]
    assert bare.client.request("ping").id == next_id + 1  # no id was spent

    full = operating()
    request, received = full.client_call(method, params)
    assert received.request == request


def test_subscribe_needs_the_subscribe_flag() -> None:
    """CAPS-5: resources without subscribe: true does not allow resources/subscribe."""
    caps = types.ServerCapabilities(resources=types.ResourcesCapability(list_changed=True))
    pair = SessionPair(server=make_server(caps)).handshake()
    assert pair.client.request("resources/read", {"uri": "a:b"}).method == "resources/read"
    for method in ("resources/subscribe", "resources/unsubscribe"):
        with pytest.raises(CapabilityError, match=r"resources\.subscribe"):
            pair.client.request(method, {"uri": "a:b"})


def test_completion_is_ungated_on_2024_11_05() -> None:
    """CAPS-5, VERSION: 2024-11-05 had no completions capability to wait for."""
    old = SessionPair(server=make_server(BARE_SERVER, versions=("2024-11-05",))).handshake()
    params = {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}}
    assert old.client.request("completion/complete", params).method == "completion/complete"
    new = SessionPair(server=make_server(BARE_SERVER)).handshake()
    with pytest.raises(CapabilityError):
        new.client.request("completion/complete", params)


SERVER_GATED = [
    ("sampling/createMessage", {"messages": [], "maxTokens": 5},
     types.ClientCapabilities(sampling={})),
    ("roots/list", None, types.ClientCapabilities(roots=types.RootsCapability())),
]


@pytest.mark.parametrize(("method", "params", "caps"), SERVER_GATED,
                         ids=[m for m, _, _ in SERVER_GATED])
def test_server_needs_client_capability(method: str, params: dict[str, Any] | None,
                                        caps: types.ClientCapabilities) -> None:
    """CAPS-5: the server sends sampling/createMessage or roots/list only if declared."""
    bare = SessionPair(client=make_client(BARE_CLIENT)).handshake()
    with pytest.raises(CapabilityError):
        bare.server.request(method, params)
    assert bare.server.outstanding == []
    pair = SessionPair(client=make_client(caps)).handshake()
    request, received = pair.server_call(method, params)
    assert received.request == request


def test_methods_of_the_other_direction_are_refused() -> None:
    """CAPS-5: each side's capabilities gate only what may be asked of it, so a server
    cannot call tools/list on a client, nor a client roots/list on a server."""
    pair = operating()
    with pytest.raises(CapabilityError):
        pair.server.request("tools/list")
    with pytest.raises(CapabilityError):
        pair.client.request("roots/list")
    with pytest.raises(CapabilityError):
        pair.client.request("sampling/createMessage", {"messages": [], "maxTokens": 1})


OWN_NOTIFICATIONS = [
    (Role.SERVER, "notifications/tools/list_changed", None,
     types.ServerCapabilities(tools=types.ToolsCapability(list_changed=False))),
    (Role.SERVER, "notifications/prompts/list_changed", None,
     types.ServerCapabilities(prompts=types.PromptsCapability())),
    (Role.SERVER, "notifications/resources/list_changed", None,
     types.ServerCapabilities(resources=types.ResourcesCapability(subscribe=True))),
    (Role.SERVER, "notifications/resources/updated", {"uri": "a:b"},
     types.ServerCapabilities(resources=types.ResourcesCapability(list_changed=True))),
    (Role.SERVER, "notifications/message", {"level": "info", "data": "hi"}, BARE_SERVER),
    (Role.CLIENT, "notifications/roots/list_changed", None,
     types.ClientCapabilities(roots=types.RootsCapability(list_changed=False))),
]


@pytest.mark.parametrize(("role", "method", "params", "without"), OWN_NOTIFICATIONS,
                         ids=[m for _, m, _, _ in OWN_NOTIFICATIONS])
def test_notifications_need_our_own_capability(role: Role, method: str,
                                               params: dict[str, Any] | None,
                                               without: Any) -> None:
    """CAPS-6: list_changed needs listChanged, resources/updated needs subscribe,
    notifications/message needs logging."""
    if role is Role.SERVER:
        lacking = SessionPair(server=make_server(without)).handshake().server
    else:
        lacking = SessionPair(client=make_client(without)).handshake().client
    with pytest.raises(CapabilityError):
        lacking.notification(method, params)
    pair = operating()
    sender = pair.server if role is Role.SERVER else pair.client
    notification = sender.notification(method, params)
    deliver = pair.to_client if role is Role.SERVER else pair.to_server
    assert deliver(notification) == NotificationReceived(notification)


@pytest.mark.parametrize(("method", "params"), [
    pytest.param("prompts/list", None, id="prompts"),
    pytest.param("tools/call", {"name": "x"}, id="tools"),
    pytest.param("logging/setLevel", {"level": "debug"}, id="logging"),
])
def test_undeclared_feature_is_method_not_found(method: str,
                                                params: dict[str, Any] | None) -> None:
    """CAPS-7, AMBIG-18: a server not serving a feature answers -32601 with the id."""
    pair = SessionPair(server=make_server(BARE_SERVER, served=())).handshake()
    request = Request("q", method, params)
    assert_error_reply(pair.to_server(request), "q", METHOD_NOT_FOUND)
    assert pair.server.serving == []


def test_client_without_sampling_answers_method_not_found() -> None:
    """CAPS-7: the same rule on the client side."""
    pair = SessionPair(client=make_client(BARE_CLIENT, served=())).handshake()
    event = pair.client.receive(Request(0, "sampling/createMessage",
                                        {"messages": [], "maxTokens": 1}))
    assert_error_reply(event, 0, METHOD_NOT_FOUND)


# --- before initialization (LIFECYCLE-1/5/6, PING-2, AMBIG-5/6/7) -----------------------------


@pytest.mark.parametrize(("role", "state"), REACHABLE)
def test_ping_is_answered_in_every_state(role: Role, state: State) -> None:
    """PING-2: ping gets {} with its own id in every state; after close nothing is sent."""
    _, session = drive(role, state)
    for ping_id in ("p", 0, 10**12):
        event = session.receive(carry(Request(ping_id, "ping")))
        if state is State.CLOSED:
            assert isinstance(event, Ignored)
        else:
            assert event == Reply(Response(ping_id, {}))
    assert session.state is state
    assert session.serving == []


def test_ping_with_params_and_meta_is_answered() -> None:
    """PING-2, JSONRPC-14: params and _meta on a ping do not matter."""
    server = make_server()
    event = server.receive(carry(Request(1, "ping", {"_meta": {"progressToken": 1}})))
    assert event == Reply(Response(1, {}))


@pytest.mark.parametrize("method", ["tools/list", "tools/call", "resources/read",
                                    "logging/setLevel"])
def test_known_request_before_initialize_is_invalid(method: str) -> None:
    """LIFECYCLE-1, AMBIG-6: a request we serve, arriving before initialize, gets -32600
    and never reaches the application."""
    server = make_server()
    event = server.receive(Request(5, method, {"name": "t", "uri": "a:b", "level": "info"}))
    error = assert_error_reply(event, 5, INVALID_REQUEST)
    assert "before initialization" in error.message
    assert server.serving == [] and server.state is State.NEW


@pytest.mark.parametrize(("role", "state"), OPEN_STATES)
@pytest.mark.parametrize("method", ["server/discover", "tools/frobnicate", "initialize/2"])
def test_unknown_method_is_method_not_found_in_every_state(role: Role, state: State,
                                                           method: str) -> None:
    """DESIGN newer peers, JSONRPC-12: an unknown request gets -32601 at once, before and
    after initialization, on both sides."""
    _, session = drive(role, state)
    assert_error_reply(session.receive(carry(Request("d", method))), "d", METHOD_NOT_FOUND)
    assert session.state is state


def test_client_does_not_serve_initialize() -> None:
    """LIFECYCLE-2: initialize goes client → server only; a client answers -32601."""
    pair = operating()
    assert_error_reply(pair.client.receive(initialize_request("2025-03-26", 9)), 9,
                       METHOD_NOT_FOUND)


@pytest.mark.parametrize("state", [State.INITIALIZED, State.OPERATING])
def test_second_initialize_is_invalid(state: State) -> None:
    """AMBIG-6: a repeated initialize gets -32600 and changes nothing."""
    _, server = drive(Role.SERVER, state)
    event = server.receive(carry(initialize_request("2024-11-05", "again")))
    assert_error_reply(event, "again", INVALID_REQUEST)
    assert server.state is state and server.negotiated_version == "2025-11-25"


def test_initialize_inside_a_batch_is_invalid() -> None:
    """BATCH-4, AMBIG-5: initialize in a batch is refused with -32600 and does not
    initialize; a lone initialize afterwards still works."""
    server = make_server()
    event = server.receive(initialize_request("2025-03-26", 1), in_batch=True)
    assert_error_reply(event, 1, INVALID_REQUEST)
    assert server.state is State.NEW and server.negotiated_version is None
    reply = server.receive(initialize_request("2025-03-26", 2))
    assert isinstance(reply, Reply) and isinstance(reply.message, Response)
    assert server.state is State.INITIALIZED


def test_other_batched_requests_are_served() -> None:
    """BATCH-1: in_batch only matters for initialize."""
    pair = operating()
    assert isinstance(pair.server.receive(Request(1, "tools/list"), in_batch=True),
                      RequestReceived)
    assert pair.server.receive(Request(2, "ping"), in_batch=True) == Reply(Response(2, {}))


@pytest.mark.parametrize("params", [
    pytest.param(None, id="no params"),
    pytest.param({"protocolVersion": "2025-03-26"}, id="no clientInfo"),
    pytest.param({"protocolVersion": 1, "capabilities": {}, "clientInfo": {"name": "a",
                                                                           "version": "1"}},
                 id="version not a string"),
    pytest.param({"protocolVersion": "2025-03-26", "capabilities": [],
                  "clientInfo": {"name": "a", "version": "1"}}, id="capabilities array"),
])
def test_malformed_initialize_is_invalid_params(params: dict[str, Any] | None) -> None:
    """LIFECYCLE-2, JSONRPC-12: bad initialize params get -32602; the client may retry."""
    server = make_server()
    assert_error_reply(server.receive(Request(1, "initialize", params)), 1,
                       ErrorCode.INVALID_PARAMS)
    assert server.state is State.NEW
    assert isinstance(server.receive(initialize_request("2025-03-26", 2)), Reply)
    assert server.state is State.INITIALIZED


def test_requests_between_result_and_initialized_are_served() -> None:
    """AMBIG-6: clients pipeline; a request after the result but before initialized is
    handed to the application."""
    pair = SessionPair()
    reply = pair.to_server(pair.client.initialize_request())
    assert isinstance(reply, Reply)
    assert pair.server.state is State.INITIALIZED
    event = pair.server.receive(carry(Request(50, "tools/list")))
    assert isinstance(event, RequestReceived) and event.request.id == 50
    assert pair.server.serving == [50]


@pytest.mark.parametrize("state", [State.NEW, State.INITIALIZED])
def test_server_sends_only_ping_and_logging_before_initialized(state: State) -> None:
    """LIFECYCLE-6, AMBIG-7: before notifications/initialized the server may send ping and
    notifications/message, nothing else."""
    pair, server = drive(Role.SERVER, state)
    for method, params in (("roots/list", None),
                           ("sampling/createMessage", {"messages": [], "maxTokens": 1}),
                           ("x/custom", None)):
        with pytest.raises(LocalProtocolError, match="before initialization"):
            server.request(method, params)
    with pytest.raises(LocalProtocolError):
        server.notification("notifications/tools/list_changed")
    assert server.outstanding == []
    ping = server.request("ping")
    assert pair.client.receive(carry(ping)) == Reply(Response(ping.id, {}))
    log_line = server.notification("notifications/message", {"level": "info", "data": "up"})
    assert log_line.method == "notifications/message"
    carry(log_line)


@pytest.mark.parametrize("state", [State.NEW, State.INITIALIZING, State.INITIALIZED])
def test_client_sends_only_ping_before_initialization(state: State) -> None:
    """LIFECYCLE-5 (and LIFECYCLE-4 for INITIALIZED): feature requests and notifications
    wait; ping goes."""
    _, client = drive(Role.CLIENT, state)
    before = client.outstanding
    for method in ("tools/list", "x/custom", "resources/list"):
        with pytest.raises(LocalProtocolError):
            client.request(method)
    with pytest.raises(LocalProtocolError):
        client.notification("notifications/roots/list_changed")
    assert client.outstanding == before
    assert client.request("ping").method == "ping"


def test_unknown_methods_we_send_are_not_gated() -> None:
    """CAPS-5: only catalogue methods are checked against capabilities."""
    pair = SessionPair(server=make_server(BARE_SERVER, served=())).handshake()
    request = pair.client.request("x/vendor", {"a": 1})
    assert_error_reply(pair.to_server(request), request.id, METHOD_NOT_FOUND)
    assert pair.server.notification("x/vendor_note").method == "x/vendor_note"


# --- ids (JSONRPC-4/5/6/13) -----------------------------------------------------------------


def test_ten_thousand_ids_are_distinct() -> None:
    """JSONRPC-4, AMBIG-20: ids are never reused, whether requests were answered,
    cancelled, forgotten (timed out) or are still outstanding."""
    pair = operating()
    client = pair.client
    seen: list[RequestId] = [0]  # initialize
    for n in range(10_000):
        request = client.request("tools/call" if n % 2 else "ping", {"name": "t"},
                                 progress=n % 4 == 1)
        seen.append(request.id)
        if n % 3 == 0:
            assert client.cancel(request.id, "test") is not None
        elif n % 5 == 0:
            client.forget(request.id)
        elif n % 7 == 0:
            event = client.receive(Response(request.id, {}))
            assert isinstance(event, ResponseReceived)
    assert len(set(seen)) == len(seen) == 10_001
    assert all(isinstance(i, int) and not isinstance(i, bool) for i in seen)
    server_ids = [pair.server.request("ping").id for _ in range(100)]
    assert len(set(server_ids)) == 100


def test_both_sides_use_id_0_without_interfering() -> None:
    """JSONRPC-5: the client's initialize and the server's ping are both id 0 and in
    flight together; each answer reaches the right request."""
    pair = SessionPair()
    init = pair.client.initialize_request()
    ping = pair.server.request("ping")
    assert init.id == ping.id == 0
    init_reply = pair.to_server(init)
    ping_reply = pair.to_client(ping)
    assert ping_reply == Reply(Response(0, {}))
    assert isinstance(init_reply, Reply) and isinstance(init_reply.message, Response)
    client_event = pair.to_client(init_reply.message)
    assert isinstance(client_event, ResponseReceived)
    assert client_event.method == "initialize" and client_event.error is None
    server_event = pair.to_server(ping_reply.message)
    assert server_event == ResponseReceived(0, "ping", result={})
    assert pair.client.outstanding == [] and pair.server.outstanding == []


def test_same_id_served_and_sent_at_once() -> None:
    """JSONRPC-5: the server serving the client's id N while its own request N is
    outstanding keeps the two apart, answers and cancellations included."""
    pair = operating()
    client_request, _ = pair.client_call("tools/call", {"name": "t"})
    pair.server._next_id = client_request.id  # make the server's next id collide
    server_request, _ = pair.server_call("roots/list")
    assert server_request.id == client_request.id
    # The server's answer to the client's request must not complete its own request.
    answer = pair.server.respond(client_request.id, {"content": []})
    assert answer is not None
    assert pair.server.outstanding == [server_request.id]
    assert pair.to_client(answer) == ResponseReceived(client_request.id, "tools/call",
                                                      result={"content": []})
    assert pair.client.serving == [server_request.id]
    # A cancellation from the client names its own request, which is finished.
    assert pair.client.cancel(client_request.id) is None
    roots = pair.client.respond(server_request.id, {"roots": []})
    assert roots is not None
    assert pair.to_server(roots) == ResponseReceived(server_request.id, "roots/list",
                                                     result={"roots": []})


def test_answers_are_matched_by_id_in_any_order() -> None:
    """JSONRPC-13, BATCH-6: three calls answered in reverse order each find their caller."""
    pair = operating()
    calls = [pair.client_call("tools/call", {"name": f"t{n}"})[0] for n in range(3)]
    for request in reversed(calls):
        answer = pair.server.respond(request.id, {"content": [], "n": request.id})
        assert answer is not None
        event = pair.to_client(answer)
        assert event == ResponseReceived(request.id, "tools/call",
                                         result={"content": [], "n": request.id})
    assert pair.client.outstanding == [] and pair.server.serving == []


def test_errors_reach_the_caller() -> None:
    """JSONRPC-8/13: an error answer completes the request with the error."""
    pair = operating()
    request, _ = pair.client_call("tools/call", {"name": "nope"})
    answer = pair.server.respond_error(request.id, InvalidParams("Unknown tool: nope"))
    assert answer is not None
    event = pair.to_client(answer)
    assert isinstance(event, ResponseReceived) and event.result is None
    assert isinstance(event.error, InvalidParams) and event.error.message == "Unknown tool: nope"
    assert pair.server.respond(request.id, {}) is None  # exactly one answer (JSONRPC-13)


@pytest.mark.parametrize("answer", [
    pytest.param(Response(999, {}), id="unknown id"),
    pytest.param(Response("1", {}), id="JSONRPC-6 right value, wrong type"),
    pytest.param(ErrorResponse(None, InternalError("x")), id="AMBIG-3 null id"),
    pytest.param(ErrorResponse(999, InternalError("x")), id="error for unknown id"),
])
def test_stray_answers_are_ignored(answer: Response | ErrorResponse) -> None:
    """JSONRPC-6/13, AMBIG-3: answers that match nothing change nothing."""
    pair = operating()
    request = pair.client.request("tools/list")
    assert request.id == 1
    assert isinstance(pair.client.receive(answer), Ignored)
    assert pair.client.outstanding == [1]


def test_duplicate_id_from_peer_is_invalid_while_served() -> None:
    """JSONRPC-4 (peer's side): a second request with an id still being served is
    refused; once answered the id is accepted again."""
    pair = operating()
    assert isinstance(pair.server.receive(Request(3, "tools/list")), RequestReceived)
    assert_error_reply(pair.server.receive(Request(3, "tools/list")), 3, INVALID_REQUEST)
    assert pair.server.serving == [3]
    assert pair.server.respond(3, None) == Response(3, {})  # JSONRPC-8: None → {}
    assert isinstance(pair.server.receive(Request(3, "tools/list")), RequestReceived)
    assert isinstance(pair.server.receive(Request("3", "tools/list")), RequestReceived)


# --- cancellation (CANCEL) ------------------------------------------------------------------


def test_cancel_round_trip() -> None:
    """CANCEL-1/4: the cancellation names the request; the server stops answering it."""
    pair = operating()
    request, _ = pair.client_call("tools/call", {"name": "slow"}, progress=True)
    notification = pair.client.cancel(request.id, "user pressed stop")
    assert notification == Notification("notifications/cancelled",
                                        {"requestId": request.id, "reason": "user pressed stop"})
    assert list(validator("CancelledNotification").iter_errors(
        json.loads(encode(notification)))) == []
    assert pair.client.outstanding == []
    event = pair.to_server(notification)
    assert event == CancelRequested(request.id, "user pressed stop")
    assert pair.server.progress(request.id, 1.0) is None
    assert pair.server.respond(request.id, {"content": []}) is None
    assert pair.server.serving == []


def test_cancelled_request_error_is_suppressed_too() -> None:
    """CANCEL-4: an error answer to a cancelled request is not sent either."""
    pair = operating()
    request, _ = pair.client_call("tools/call", {"name": "x"})
    cancel = pair.client.cancel(request.id)
    assert cancel == Notification("notifications/cancelled", {"requestId": request.id})
    assert pair.to_server(cancel) == CancelRequested(request.id, None)
    assert pair.server.respond_error(request.id, InternalError("interrupted")) is None


def test_cancel_only_what_is_ours_and_running() -> None:
    """CANCEL-2: no cancellation for finished, foreign, unknown or already cancelled ids."""
    pair = operating()
    finished, _ = pair.client_call("tools/list")
    answer = pair.server.respond(finished.id, {"tools": []})
    assert answer is not None
    pair.to_client(answer)
    assert pair.client.cancel(finished.id) is None

    foreign, _ = pair.server_call("roots/list")  # the client serves this one
    assert pair.client.cancel(foreign.id) is None
    assert pair.client.serving == [foreign.id]
    assert pair.client.respond(foreign.id, {"roots": []}) is not None

    assert pair.client.cancel(12345) is None
    assert pair.client.cancel("1") is None

    running = pair.client.request("tools/list")
    assert pair.client.cancel(running.id) is not None
    assert pair.client.cancel(running.id) is None

    forgotten = pair.client.request("tools/list")
    pair.client.forget(forgotten.id)
    assert pair.client.cancel(forgotten.id) is None


def test_initialize_is_never_cancelled() -> None:
    """CANCEL-3: giving up on initialize sends nothing."""
    client = make_client()
    init = client.initialize_request()
    assert client.cancel(init.id, "timed out") is None


def test_late_answer_after_cancel_is_dropped() -> None:
    """CANCEL-6/7: the answer crossing the cancellation on the wire is dropped; the
    cancellation reaching the finished request is ignored; nobody errors."""
    pair = operating()
    request, _ = pair.client_call("tools/call", {"name": "x"}, progress=True)
    progress = pair.server.progress(request.id, 0.5)
    answer = pair.server.respond(request.id, {"content": []})
    cancel = pair.client.cancel(request.id, "too slow")
    assert progress is not None and answer is not None and cancel is not None
    assert isinstance(pair.to_client(progress), Ignored)
    assert isinstance(pair.to_client(answer), Ignored)
    assert isinstance(pair.to_server(cancel), Ignored)
    assert pair.server.respond_error(request.id, InternalError("x")) is None


def test_late_error_after_cancel_is_dropped() -> None:
    """CANCEL-6: error answers are dropped the same way."""
    pair = operating()
    request = pair.client.request("tools/list")
    pair.client.cancel(request.id)
    assert isinstance(pair.client.receive(ErrorResponse(request.id, InternalError("x"))),
                      Ignored)


@pytest.mark.parametrize("params", [
    pytest.param(None, id="no params"),
    pytest.param({}, id="empty params"),
    pytest.param({"requestId": None}, id="null id"),
    pytest.param({"requestId": 1.5}, id="fractional id"),
    pytest.param({"requestId": True}, id="boolean id"),
    pytest.param({"requestId": [1]}, id="array id"),
    pytest.param({"requestId": "1"}, id="string for an integer id"),
    pytest.param({"requestId": 999}, id="unknown id"),
    pytest.param({"reason": "x"}, id="reason only"),
])
def test_malformed_or_unknown_cancel_is_ignored(params: dict[str, Any] | None) -> None:
    """CANCEL-5/8, JSONRPC-10: invalid cancellations are ignored, never answered, and do
    not touch the request being served."""
    pair = operating()
    assert isinstance(pair.server.receive(Request(1, "tools/list")), RequestReceived)
    event = pair.server.receive(Notification("notifications/cancelled", params))
    assert isinstance(event, Ignored)
    assert pair.server.serving == [1]
    assert pair.server.respond(1, {"tools": []}) == Response(1, {"tools": []})


def test_cancel_reason_must_be_a_string() -> None:
    """CANCEL-1/9: a non-string reason is dropped, the cancellation still counts."""
    pair = operating()
    pair.server.receive(Request(1, "tools/list"))
    event = pair.server.receive(Notification("notifications/cancelled",
                                             {"requestId": 1, "reason": 42}))
    assert event == CancelRequested(1, None)


def test_repeated_cancel_is_ignored() -> None:
    """CANCEL-5: the second cancellation of the same request is not news."""
    pair = operating()
    pair.server.receive(Request(1, "tools/list"))
    cancel = Notification("notifications/cancelled", {"requestId": 1})
    assert pair.server.receive(cancel) == CancelRequested(1, None)
    assert isinstance(pair.server.receive(cancel), Ignored)


def test_cancel_of_a_ping_answered_by_the_session() -> None:
    """CANCEL-5: pings are answered at once, so a cancellation for one is unknown."""
    pair = operating()
    ping = pair.client.request("ping")
    reply = pair.to_server(ping)
    assert isinstance(reply, Reply)
    cancel = pair.client.cancel(ping.id)
    assert cancel is not None
    assert isinstance(pair.to_server(cancel), Ignored)
    assert isinstance(pair.to_client(reply.message), Ignored)


# --- progress (PROGRESS) ---------------------------------------------------------------------


def test_progress_token_is_the_request_id() -> None:
    """PROGRESS-1/2, AMBIG-10: the token is the id, in params._meta, next to other _meta
    keys; the caller's params are not modified."""
    pair = operating()
    params = {"name": "t", "arguments": {"a": 1}, "_meta": {"trace": "abc"}}
    first = pair.client.request("tools/call", params, progress=True)
    second = pair.client.request("tools/call", params, progress=True)
    assert params == {"name": "t", "arguments": {"a": 1}, "_meta": {"trace": "abc"}}
    for request in (first, second):
        assert request.params is not None
        assert request.params["_meta"] == {"trace": "abc", "progressToken": request.id}
        assert request.params["arguments"] == {"a": 1}
    assert first.id != second.id
    plain = pair.client.request("tools/call", {"name": "t"})
    assert plain.params == {"name": "t"}
    no_params = pair.client.request("tools/list", progress=True)
    assert no_params.params == {"_meta": {"progressToken": no_params.id}}
    received = pair.to_server(first)
    assert isinstance(received, RequestReceived) and received.progress_token == first.id


def test_progress_flows_to_the_requester() -> None:
    """PROGRESS-3/5: progress, total and message arrive for the request that asked."""
    pair = operating()
    request, received = pair.client_call("tools/call", {"name": "t"}, progress=True)
    sent = []
    for value, total, message in ((0.25, 1.0, "a quarter"), (0.5, None, None), (1, 1, "done")):
        notification = pair.server.progress(request.id, value, total, message)
        assert notification is not None
        wire_form = json.loads(encode(notification))
        assert list(validator("ProgressNotification").iter_errors(wire_form)) == []
        sent.append(wire_form["params"])
        event = pair.to_client(notification)
        assert event == ProgressReceived(request.id, value, total, message)
    assert sent[0] == {"progressToken": request.id, "progress": 0.25, "total": 1.0,
                       "message": "a quarter"}
    assert sent[1] == {"progressToken": request.id, "progress": 0.5}
    assert received.progress_token == request.id


def test_progress_must_increase() -> None:
    """PROGRESS-4, AMBIG-9: equal, smaller and non-finite values are not sent."""
    pair = operating()
    request, _ = pair.client_call("tools/call", {"name": "t"}, progress=True)
    assert pair.server.progress(request.id, 1) is not None
    assert pair.server.progress(request.id, 1) is None
    assert pair.server.progress(request.id, 0.5) is None
    assert pair.server.progress(request.id, math.nan) is None
    assert pair.server.progress(request.id, math.inf) is None
    assert pair.server.progress(request.id, 2, total=math.nan) is None
    notification = pair.server.progress(request.id, 1.5)
    assert notification is not None and notification.params is not None
    assert notification.params["progress"] == 1.5
    assert pair.server.progress(request.id, 1.75) is not None


def test_first_progress_may_not_be_nan() -> None:
    """PROGRESS-4: a NaN first value would defeat every later comparison."""
    pair = operating()
    request, _ = pair.client_call("tools/call", {"name": "t"}, progress=True)
    assert pair.server.progress(request.id, math.nan) is None
    assert pair.server.progress(request.id, 0) is not None
    assert pair.server.progress(request.id, -1) is None


def test_no_progress_after_the_response() -> None:
    """PROGRESS-6: once answered (result or error), no progress for that token."""
    pair = operating()
    done, _ = pair.client_call("tools/call", {"name": "t"}, progress=True)
    failed, _ = pair.client_call("tools/call", {"name": "t"}, progress=True)
    assert pair.server.respond(done.id, {"content": []}) is not None
    assert pair.server.respond_error(failed.id, InternalError("x")) is not None
    assert pair.server.progress(done.id, 1) is None
    assert pair.server.progress(failed.id, 1) is None


def test_no_progress_without_a_token() -> None:
    """PROGRESS-1/6: a request that did not ask gets no progress; neither do unknown ids."""
    pair = operating()
    request, received = pair.client_call("tools/call", {"name": "t"})
    assert received.progress_token is None
    assert pair.server.progress(request.id, 1) is None
    assert pair.server.progress(777, 1) is None


def test_progress_uses_the_peers_own_token() -> None:
    """PROGRESS-2/3: a peer may choose any token; it is echoed with its type."""
    pair = operating()
    for token in ("tok-1", 0, 2**40):
        event = pair.server.receive(
            Request(f"r{token}", "tools/call", {"name": "t", "_meta": {"progressToken": token}}))
        assert isinstance(event, RequestReceived) and event.progress_token == token
        notification = pair.server.progress(f"r{token}", 3)
        assert notification is not None and notification.params is not None
        assert notification.params["progressToken"] == token
        assert type(notification.params["progressToken"]) is type(token)


@pytest.mark.parametrize("meta", [{"progressToken": None}, {"progressToken": 1.5},
                                  {"progressToken": True}, [], "x"])
def test_unusable_progress_token_means_no_progress(meta: Any) -> None:
    """PROGRESS-2: a token that is not a string or integer is treated as absent."""
    pair = operating()
    event = pair.server.receive(Request(1, "tools/call", {"name": "t", "_meta": meta}))
    assert isinstance(event, RequestReceived) and event.progress_token is None
    assert pair.server.progress(1, 1) is None


@pytest.mark.parametrize("params", [
    pytest.param({"progressToken": 999, "progress": 1}, id="unknown token"),
    pytest.param({"progressToken": "1", "progress": 1}, id="string for integer token"),
    pytest.param({"progressToken": 1}, id="no progress value"),
    pytest.param({"progressToken": 1, "progress": "half"}, id="progress not a number"),
    pytest.param({"progressToken": 1, "progress": True}, id="progress a boolean"),
    pytest.param({"progress": 1}, id="no token"),
    pytest.param(None, id="no params"),
])
def test_bad_or_unknown_progress_is_ignored(params: dict[str, Any] | None) -> None:
    """PROGRESS-7, JSONRPC-10: progress that names nothing we wait on is dropped."""
    pair = operating()
    request = pair.client.request("tools/call", {"name": "t"}, progress=True)
    assert request.id == 1
    assert isinstance(pair.client.receive(Notification("notifications/progress", params)),
                      Ignored)
    assert pair.client.outstanding == [1]


def test_progress_for_requests_that_did_not_ask_or_are_done_is_ignored() -> None:
    """PROGRESS-6/7: only active requests that asked for progress receive it."""
    pair = operating()
    quiet = pair.client.request("tools/list")
    note = Notification("notifications/progress", {"progressToken": quiet.id, "progress": 1})
    assert isinstance(pair.client.receive(note), Ignored)
    loud = pair.client.request("tools/list", progress=True)
    pair.client.receive(Response(loud.id, {"tools": []}))
    note = Notification("notifications/progress", {"progressToken": loud.id, "progress": 1})
    assert isinstance(pair.client.receive(note), Ignored)


def test_out_of_order_progress_from_peer_is_still_delivered() -> None:
    """AMBIG-9: the receiver never errors on a non-increasing value; extra fields with
    wrong types are dropped."""
    pair = operating()
    request = pair.client.request("tools/list", progress=True)
    for value in (5, 2, 2.5):
        event = pair.client.receive(Notification("notifications/progress", {
            "progressToken": request.id, "progress": value, "total": "ten", "message": 3}))
        assert event == ProgressReceived(request.id, value, None, None)


def test_progress_message_dropped_for_2024_11_05() -> None:
    """PROGRESS-3, VERSION: the message field is new in 2025-03-26; an older session
    leaves it out."""
    pair = SessionPair(client=make_client(versions=("2024-11-05",))).handshake()
    request, _ = pair.client_call("tools/call", {"name": "t"}, progress=True)
    notification = pair.server.progress(request.id, 1, 2, "halfway")
    assert notification is not None
    assert notification.params == {"progressToken": request.id, "progress": 1, "total": 2}
    current = operating()
    request, _ = current.client_call("tools/call", {"name": "t"}, progress=True)
    notification = current.server.progress(request.id, 1, 2, "halfway")
    assert notification is not None and notification.params is not None
    assert notification.params["message"] == "halfway"


# --- notifications and close ------------------------------------------------------------------


def test_notifications_are_passed_on_in_order_and_never_answered() -> None:
    """JSONRPC-10: unknown notifications and ones with odd params reach the application
    and produce no reply."""
    pair = operating()
    for notification in (Notification("notifications/bogus"),
                         Notification("notifications/message", {"level": "info", "data": 1}),
                         Notification("x/y", {"a": [1]})):
        event = pair.client.receive(notification)
        assert event == NotificationReceived(notification)


@pytest.mark.parametrize(("role", "state"), REACHABLE)
def test_everything_after_close_is_ignored_or_refused(role: Role, state: State) -> None:
    """SHUTDOWN-5: after close nothing is produced: incoming messages are ignored,
    sending raises, answers and progress are None, and close is idempotent."""
    pair, session = drive(role, state)
    if state is State.OPERATING:
        if role is Role.CLIENT:
            pair.client_call("tools/call", {"name": "t"}, progress=True)
            pair.server_call("roots/list")
        else:
            pair.server_call("roots/list", progress=True)
            pair.client_call("tools/list")
    session.close()
    session.close()
    assert session.state is State.CLOSED
    assert session.outstanding == [] and session.serving == []
    for message in (Request(1, "ping"), Request(2, "tools/list"),
                    initialize_request("2025-03-26", 3),
                    Notification("notifications/initialized"),
                    Notification("notifications/cancelled", {"requestId": 1}),
                    Notification("notifications/progress", {"progressToken": 1, "progress": 1}),
                    Notification("notifications/message", {"level": "info", "data": 1}),
                    Response(1, {}), Response(0, initialize_result("2025-03-26")),
                    ErrorResponse(1, InternalError("x")), ErrorResponse(None, InternalError("x"))):
        assert isinstance(session.receive(message), Ignored), message
    for send in (lambda: session.request("ping"), lambda: session.request("tools/list"),
                 lambda: session.notification("notifications/message",
                                              {"level": "info", "data": 1}),
                 lambda: session.notification("notifications/cancelled", {"requestId": 1}),
                 session.initialize_request, session.initialized_notification):
        with pytest.raises(LocalProtocolError):
            send()
    assert session.cancel(0) is None and session.cancel(1) is None
    assert session.respond(0, {}) is None and session.respond(1, {}) is None
    assert session.respond_error(1, InternalError("x")) is None
    assert session.progress(0, 1) is None and session.progress(1, 1) is None
    assert session.state is State.CLOSED


# --- the transition table (STYLE habit 2) ------------------------------------------------------

ALL_TRIPLES = list(itertools.product(Role, State, _Input))


def _check_transition(role: Role, state: State, step: _Input) -> None:
    session = make_client() if role is Role.CLIENT else make_server()
    session.state = state
    expected = _TRANSITIONS.get((role, state, step))
    if expected is None:
        with pytest.raises(LocalProtocolError, match=state.value):
            session._move(step)
        assert session.state is state
    else:
        session._move(step)
        assert session.state is expected


@settings(max_examples=400)
@given(st.sampled_from(Role), st.sampled_from(State), st.sampled_from(_Input))
def test_transition_table_property(role: Role, state: State, step: _Input) -> None:
    """LIFECYCLE, STYLE habit 2: every listed (role, state, input) moves as listed; every
    unlisted one raises LocalProtocolError and leaves the state alone."""
    _check_transition(role, state, step)


@pytest.mark.parametrize(("role", "state", "step"), ALL_TRIPLES,
                         ids=[f"{r.value}-{s.value}-{i.name}" for r, s, i in ALL_TRIPLES])
def test_transition_table_exhaustive(role: Role, state: State, step: _Input) -> None:
    """LIFECYCLE, STYLE habit 2: the same check on each of the 70 triples, so none is
    left to chance."""
    _check_transition(role, state, step)


def test_transition_table_shape() -> None:
    """LIFECYCLE-2/3/4: the lifecycle as the spec draws it, close from anywhere, the
    stateless server's skipped handshake and the client's restart after HTTP-35."""
    moves = {key: target for key, target in _TRANSITIONS.items() if key[2] is not _Input.CLOSE}
    assert moves == {
        (Role.CLIENT, State.NEW, _Input.SEND_INITIALIZE): State.INITIALIZING,
        (Role.CLIENT, State.INITIALIZING, _Input.INITIALIZE_ANSWERED): State.INITIALIZED,
        (Role.CLIENT, State.INITIALIZING, _Input.INITIALIZE_FAILED): State.NEW,
        (Role.CLIENT, State.INITIALIZED, _Input.SEND_INITIALIZED): State.OPERATING,
        (Role.SERVER, State.NEW, _Input.RECEIVE_INITIALIZE): State.INITIALIZED,
        (Role.SERVER, State.INITIALIZED, _Input.RECEIVE_INITIALIZED): State.OPERATING,
        (Role.SERVER, State.NEW, _Input.ASSUME_INITIALIZED): State.OPERATING,
        (Role.CLIENT, State.INITIALIZING, _Input.RESTART): State.NEW,
        (Role.CLIENT, State.INITIALIZED, _Input.RESTART): State.NEW,
        (Role.CLIENT, State.OPERATING, _Input.RESTART): State.NEW,
    }
    assert all(_TRANSITIONS[(role, state, _Input.CLOSE)] is State.CLOSED
               for role in Role for state in State)


# --- robustness properties ---------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                 max_size=3),
    max_leaves=12,
)
METHOD_NAMES = st.sampled_from([
    "initialize", "ping", "notifications/initialized", "notifications/cancelled",
    "notifications/progress", "tools/list", "tools/call", "roots/list",
    "sampling/createMessage", "server/discover", "notifications/message",
]) | st.text(max_size=10)
PARAM_KEYS = st.sampled_from(["protocolVersion", "capabilities", "clientInfo", "serverInfo",
                              "requestId", "progressToken", "progress", "total", "message",
                              "reason", "_meta", "name", "x"])
PARAM_DICTS = st.dictionaries(PARAM_KEYS, JSON | st.integers(0, 3) | st.just("2025-03-26"),
                              max_size=5)
IDS = st.integers(-1, 4) | st.sampled_from(["0", "1", "a"])
INCOMING = st.one_of(
    st.builds(Request, IDS, METHOD_NAMES, st.none() | PARAM_DICTS),
    st.builds(Notification, METHOD_NAMES, st.none() | PARAM_DICTS),
    st.builds(Response, IDS, PARAM_DICTS),
    st.builds(ErrorResponse, st.none() | IDS,
              st.builds(RpcError, st.text(max_size=5), JSON, code=st.integers(-33000, 0))),
)


@settings(max_examples=300)
@given(st.sampled_from(REACHABLE), st.lists(st.tuples(INCOMING, st.booleans()), max_size=8))
def test_receive_never_raises(where: tuple[Role, State], messages: list[Any]) -> None:
    """JSONRPC-10/13, STDIO-8: whatever arrives, in whatever state, receive() returns an
    event; notifications and answers are never replied to; replies carry the request id."""
    role, state = where
    pair, session = drive(role, state)
    for _ in range(3):
        if session.state is State.OPERATING:
            (pair.client if role is Role.CLIENT else pair.server).request("ping", progress=True)
    for message, in_batch in messages:
        before = session.state
        event = session.receive(message, in_batch=in_batch)
        assert isinstance(event, (Reply, RequestReceived, NotificationReceived,
                                  ResponseReceived, CancelRequested, ProgressReceived, Ignored))
        if isinstance(event, Reply):
            assert isinstance(message, Request)
            assert event.message.id == message.id
            carry(event.message)
        if not isinstance(message, Request):
            assert not isinstance(event, (Reply, RequestReceived))
        if session.state is not before:
            assert (role, before) in {(r, s) for (r, s, _) in _TRANSITIONS}


class CancelRaces(RuleBasedStateMachine):
    """CANCEL-2/4/5/6/7, JSONRPC-13, PROGRESS-4/6: a client calling, cancelling and
    forgetting, a server answering and reporting progress, with messages crossing in
    flight (each direction in order, as on a pipe). The model says what each side may
    produce; at the end every request neither cancelled nor forgotten has exactly one
    answer."""

    requests = Bundle("requests")

    def __init__(self) -> None:
        super().__init__()
        self.pair = operating()
        self.to_server: list[Message] = []
        self.to_client: list[Message] = []
        self.asked_progress: dict[RequestId, bool] = {}
        self.given_up: set[RequestId] = set()  # cancelled or forgotten by the client
        self.answered: dict[RequestId, int] = {}  # ResponseReceived count per id
        self.served: dict[RequestId, bool] = {}  # received by the server -> cancel seen
        self.server_done: set[RequestId] = set()
        self.last_progress: dict[RequestId, int] = {}

    def _client_done(self, request_id: RequestId) -> bool:
        return request_id in self.given_up or request_id in self.answered

    @rule(target=requests, progress=st.booleans())
    def call(self, progress: bool) -> RequestId:
        request = self.pair.client.request("tools/call", {"name": "t"}, progress=progress)
        assert request.id not in self.asked_progress  # JSONRPC-4
        self.asked_progress[request.id] = progress
        self.to_server.append(request)
        return request.id

    @rule(request_id=requests)
    def cancel(self, request_id: RequestId) -> None:
        running = not self._client_done(request_id)
        notification = self.pair.client.cancel(request_id, "changed my mind")
        assert (notification is not None) == running  # CANCEL-2
        self.given_up.add(request_id)
        if notification is not None:
            self.to_server.append(notification)

    @rule(request_id=consumes(requests))
    def forget(self, request_id: RequestId) -> None:
        self.pair.client.forget(request_id)
        self.given_up.add(request_id)

    @precondition(lambda self: self.to_server)
    @rule()
    def deliver_to_server(self) -> None:
        message = self.to_server.pop(0)
        event = self.pair.server.receive(message)
        if isinstance(message, Request):
            assert isinstance(event, RequestReceived)
            expected_token = message.id if self.asked_progress[message.id] else None
            assert event.progress_token == expected_token
            self.served[message.id] = False
            return
        assert isinstance(message, Notification) and message.params is not None
        target = message.params["requestId"]
        if target in self.served and target not in self.server_done:
            assert event == CancelRequested(target, "changed my mind")
            self.served[target] = True
        else:
            assert isinstance(event, Ignored)  # CANCEL-5/7: it crossed the answer

    @precondition(lambda self: any(i not in self.server_done for i in self.served))
    @rule(data=st.data(), fail=st.booleans())
    def answer(self, data: st.DataObject, fail: bool) -> None:
        open_ids = sorted(i for i in self.served if i not in self.server_done)
        self._answer(data.draw(st.sampled_from(open_ids)), fail)

    def _answer(self, request_id: RequestId, fail: bool) -> None:
        answer: Message | None
        if fail:
            answer = self.pair.server.respond_error(request_id, InternalError("no"))
        else:
            answer = self.pair.server.respond(request_id, {"content": []})
        self.server_done.add(request_id)
        if self.served[request_id]:
            assert answer is None  # CANCEL-4
        else:
            assert answer is not None
            self.to_client.append(answer)

    @precondition(lambda self: self.served)
    @rule(data=st.data(), value=st.integers(-2, 40))
    def report_progress(self, data: st.DataObject, value: int) -> None:
        request_id = data.draw(st.sampled_from(sorted(self.served)))
        notification = self.pair.server.progress(request_id, value)
        last = self.last_progress.get(request_id)
        allowed = (self.asked_progress[request_id] and request_id not in self.server_done
                   and not self.served[request_id] and (last is None or value > last))
        if allowed:  # PROGRESS-4 strictly increasing; PROGRESS-6 none after the answer
            assert notification is not None
            self.last_progress[request_id] = value
            self.to_client.append(notification)
        else:
            assert notification is None

    @precondition(lambda self: self.to_client)
    @rule()
    def deliver_to_client(self) -> None:
        message = self.to_client.pop(0)
        event = self.pair.client.receive(message)
        if isinstance(message, Notification):
            assert message.params is not None
            token = message.params["progressToken"]
            if self._client_done(token):
                assert isinstance(event, Ignored)  # PROGRESS-7, CANCEL-6
            else:
                assert event == ProgressReceived(token, message.params["progress"], None,
                                                 None)
            return
        assert isinstance(message, (Response, ErrorResponse)) and message.id is not None
        if self._client_done(message.id):
            assert isinstance(event, Ignored)  # CANCEL-6
        else:
            assert isinstance(event, ResponseReceived) and event.request_id == message.id
            self.answered[message.id] = self.answered.get(message.id, 0) + 1

    @invariant()
    def books_balance(self) -> None:
        assert all(count == 1 for count in self.answered.values())  # JSONRPC-13
        sent = set(self.asked_progress)
        assert set(self.pair.client.outstanding) == {
            i for i in sent if not self._client_done(i)}
        assert set(self.pair.server.serving) == set(self.served) - self.server_done

    def teardown(self) -> None:
        while True:
            while self.to_server:
                self.deliver_to_server()
            for request_id in sorted(i for i in self.served if i not in self.server_done):
                self._answer(request_id, fail=False)
            while self.to_client:
                self.deliver_to_client()
            if not self.to_server:
                break
        # JSONRPC-13: exactly one answer for each request the client still waited on.
        for request_id in self.asked_progress:
            if request_id not in self.given_up:
                assert self.answered.get(request_id) == 1, request_id
        assert self.pair.client.outstanding == [] and self.pair.server.serving == []


CancelRaces.TestCase.settings = settings(max_examples=150, stateful_step_count=40)
TestCancelRaces = CancelRaces.TestCase


def test_restart_keeps_ids_unique_and_allows_a_new_handshake_http_35() -> None:
    """HTTP-35, AMBIG-20: a restarted client initializes again; ids keep counting up."""
    client = Session(Role.CLIENT, info=types.Implementation(name="c", version="1"),
                     capabilities=types.ClientCapabilities())
    server = Session(Role.SERVER, info=types.Implementation(name="s", version="1"),
                     capabilities=types.ServerCapabilities(tools=types.ToolsCapability()),
                     served_methods=("tools/list",))
    first = client.initialize_request()
    reply = server.receive(first)
    assert isinstance(reply, Reply) and isinstance(reply.message, Response)
    client.receive(reply.message)
    client.initialized_notification()
    pending = client.request("tools/list")
    assert client.restart() == [pending.id]
    assert client.state is State.NEW and client.negotiated_version is None
    again = client.initialize_request()
    assert again.id not in (first.id, pending.id)


def test_assume_initialized_serves_without_a_handshake() -> None:
    """Stateless HTTP: a fresh server session serves a request at once."""
    server = Session(Role.SERVER, info=types.Implementation(name="s", version="1"),
                     capabilities=types.ServerCapabilities(tools=types.ToolsCapability()),
                     served_methods=("tools/list",))
    server.assume_initialized("2025-03-26")
    event = server.receive(Request(1, "tools/list"))
    assert isinstance(event, RequestReceived)
    assert server.profile is not None and server.profile.batching
    with pytest.raises(LocalProtocolError):
        Session(Role.SERVER, info=types.Implementation(name="s", version="1"),
                capabilities=types.ServerCapabilities()).assume_initialized("2099-01-01")
