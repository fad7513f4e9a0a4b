"""The sans-IO MCP session: every protocol decision, no waiting, no I/O, no threads.

Theory of operation
-------------------

A :class:`Session` is one side (client or server) of one MCP connection. The engine feeds
it every message that arrives (:meth:`Session.receive`) and asks it for every message to
send (:meth:`Session.request`, :meth:`Session.notification`, :meth:`Session.respond`, ...).
It answers with plain data: an :class:`Event` saying what arrived, or the message to
write. It never blocks, so two sessions can be wired back to back in a test.

What it decides:

* **Lifecycle.** The states and the moves between them are the table ``_TRANSITIONS``;
  a move that is not in the table raises :class:`~mcp_sync.errors.LocalProtocolError`
  and leaves the state alone. Before initialization only ``ping`` is served; any other
  request we know is refused with -32600, one we do not know with -32601 (newer clients
  probe with requests such as ``server/discover`` and fall back on -32601).
* **Versions and capabilities.** The server answers ``initialize`` itself with the
  offered version if it speaks it and its newest otherwise; the client refuses a version
  it does not speak. Nothing is sent that the peer's capabilities do not allow.
* **Ids.** Request ids count up from 0 and are never reused (JSONRPC-4). Requests we sent
  and requests we serve are kept apart, so the peer's id 1 and ours never meet.
* **Eras.** Before any ``initialize``, a request whose ``_meta`` names its version is
  served in the modern era, under a ``RequestScope`` made of that ``_meta`` alone; after
  it, every request is legacy and such keys are opaque (COEX-5).
* **Progress and cancellation.** A request that asks for progress uses its own id as the
  token. Progress we send must increase and stops with the response; a cancelled request
  we serve gets no response; a response to a request we gave up on is dropped.
"""

from __future__ import annotations

import enum
import logging
import math
from collections.abc import Collection
from typing import Any, TypeGuard

from ..errors import (
    CapabilityError,
    InvalidParams,
    InvalidRequest,
    LocalProtocolError,
    MethodNotFound,
    ProtocolVersionError,
    RpcError,
)
from ._capability_rules import (
    EARLY_NOTIFICATIONS,
    EARLY_REQUESTS,
    OWN_CAPABILITY,
    PEER_CAPABILITY,
    CapabilityCheck,
    implementation_for,
    server_capabilities_for,
)
from ._convert import from_wire, to_wire
from ._events import (
    CancelRequested,
    Event,
    Ignored,
    NotificationReceived,
    ProgressReceived,
    Reply,
    RequestReceived,
    ResponseReceived,
)
from ._jsonrpc import (
    ErrorResponse,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
    is_request_id,
)
from ._meta_keys import progress_token_of
from ._modern import RequestScope, is_modern_request, modern_scope
from ._record import Record
from ._types_common import ClientCapabilities, Implementation, ServerCapabilities
from ._types_features import InitializeResult
from ._types_messages import InitializeRequestParams
from ._versions import KNOWN_VERSIONS, VersionProfile, profile_for

__all__ = [
    "CancelRequested",
    "Event",
    "Ignored",
    "NotificationReceived",
    "ProgressReceived",
    "Reply",
    "RequestReceived",
    "ResponseReceived",
    "Role",
    "Session",
    "State",
]

log = logging.getLogger("mcp_sync.protocol")


class Role(enum.Enum):
    CLIENT = "client"
    SERVER = "server"


class State(enum.Enum):
    #: Nothing exchanged yet: only ``ping`` and ``initialize`` may pass.
    NEW = "new"
    #: The client sent ``initialize`` and waits for its result.
    INITIALIZING = "initializing"
    #: ``initialize`` was answered; the client has yet to send ``notifications/initialized``.
    INITIALIZED = "initialized"
    #: Normal operation.
    OPERATING = "operating"
    #: The connection is over.
    CLOSED = "closed"


class _Input(enum.Enum):
    SEND_INITIALIZE = "send initialize"
    RECEIVE_INITIALIZE = "receive initialize"
    INITIALIZE_ANSWERED = "initialize answered"
    INITIALIZE_FAILED = "initialize failed"
    SEND_INITIALIZED = "send initialized"
    RECEIVE_INITIALIZED = "receive initialized"
    ASSUME_INITIALIZED = "assume initialized"
    RESTART = "restart"
    CLOSE = "close"


_C, _S = Role.CLIENT, Role.SERVER
_TRANSITIONS: dict[tuple[Role, State, _Input], State] = {
    (_C, State.NEW, _Input.SEND_INITIALIZE): State.INITIALIZING,
    (_C, State.INITIALIZING, _Input.INITIALIZE_ANSWERED): State.INITIALIZED,
    (_C, State.INITIALIZING, _Input.INITIALIZE_FAILED): State.NEW,
    (_C, State.INITIALIZED, _Input.SEND_INITIALIZED): State.OPERATING,
    (_S, State.NEW, _Input.RECEIVE_INITIALIZE): State.INITIALIZED,
    (_S, State.INITIALIZED, _Input.RECEIVE_INITIALIZED): State.OPERATING,
    # Stateless HTTP: every POST is served by a fresh session that skips the handshake.
    (_S, State.NEW, _Input.ASSUME_INITIALIZED): State.OPERATING,
}
for _role in Role:
    for _state in State:
        _TRANSITIONS[(_role, _state, _Input.CLOSE)] = State.CLOSED
# HTTP-35: after the server forgot our session, the client starts over with initialize.
for _state in (State.INITIALIZING, State.INITIALIZED, State.OPERATING):
    _TRANSITIONS[(_C, _state, _Input.RESTART)] = State.NEW


class _Outgoing(Record):
    __slots__ = ("method", "progress")

    def __init__(self, method: str, progress: bool) -> None:
        self.method = method
        self.progress = progress


class _Serving(Record):
    __slots__ = ("cancelled", "last_progress", "progress_token", "scope")

    def __init__(self, progress_token: str | int | None, scope: RequestScope | None) -> None:
        self.progress_token = progress_token
        self.scope = scope
        self.cancelled = False
        self.last_progress: float | None = None


class Session:
    """One side of one MCP connection, as a state machine (see the module docstring).

    Args:
        role: which side we are.
        info: our name and version (``clientInfo`` / ``serverInfo``).
        capabilities: what we declare (:class:`~mcp_sync.ClientCapabilities` or
            :class:`~mcp_sync.ServerCapabilities`).
        served_methods: the request methods our application answers besides the ones the
            session handles itself (``initialize``, ``ping``). Anything else gets -32601.
        instructions: the server's ``instructions`` (server only).
        versions: the versions we speak, oldest first; the last one is offered.
        modern_versions: the modern versions a server also serves (none by default).
    """

    def __init__(
        self,
        role: Role,
        *,
        info: Implementation,
        capabilities: ClientCapabilities | ServerCapabilities,
        served_methods: Collection[str] = (),
        instructions: str | None = None,
        versions: tuple[str, ...] = KNOWN_VERSIONS,
        modern_versions: tuple[str, ...] = (),
    ) -> None:
        unknown = [v for v in versions if v not in KNOWN_VERSIONS]
        if not versions or unknown:
            raise ValueError(f"unsupported protocol versions: {unknown or versions!r}")
        self.role = role
        self.info = info
        self.capabilities = capabilities
        self.instructions = instructions
        self.versions = versions
        self.modern_versions = modern_versions
        self.served_methods = frozenset(served_methods)
        self.state = State.NEW
        self.negotiated_version: str | None = None
        self.profile: VersionProfile | None = None
        self.peer_info: Implementation | None = None
        self.peer_capabilities: Any = None
        self.peer_instructions: str | None = None
        self._next_id = 0
        self._outgoing: dict[RequestId, _Outgoing] = {}
        self._serving: dict[RequestId, _Serving] = {}

    # --- lifecycle ---------------------------------------------------------------------

    def _move(self, event: _Input) -> None:
        try:
            self.state = _TRANSITIONS[(self.role, self.state, event)]
        except KeyError:
            raise LocalProtocolError(
                f"{self.role.value} cannot {event.value} in state {self.state.value}") from None

    @property
    def initialized(self) -> bool:
        """True once ``initialize`` has been answered (and accepted, for a client)."""
        return self.state in (State.INITIALIZED, State.OPERATING)

    def close(self) -> None:
        """Mark the session over; outstanding requests are forgotten."""
        self._move(_Input.CLOSE)
        self._outgoing.clear()
        self._serving.clear()

    def assume_initialized(self, version: str,
                           capabilities: ClientCapabilities | None = None) -> None:
        """Serve without a handshake, as if ``initialize`` had offered ``version``.

        For stateless HTTP, where each POST stands alone and carries at most an
        ``MCP-Protocol-Version`` header.
        """
        if version not in self.versions:
            raise LocalProtocolError(f"unsupported protocol version {version!r}")
        self._move(_Input.ASSUME_INITIALIZED)
        self.negotiated_version = version
        self.profile = profile_for(version)
        self.peer_capabilities = capabilities or ClientCapabilities()

    def number_requests_from(self, first: int) -> None:
        """Give our next requests ids from ``first`` on: a session served by several
        processes gives each its own range, so that no id is used twice (JSONRPC-4)."""
        self._next_id = max(self._next_id, first)

    def restart(self) -> list[RequestId]:
        """Go back to NEW to initialize again (HTTP-35); returns the forgotten request ids.

        The id counter is kept, so no id is ever reused (AMBIG-20).
        """
        self._move(_Input.RESTART)
        forgotten = list(self._outgoing)
        self._outgoing.clear()
        self._serving.clear()
        self.negotiated_version = None
        self.profile = None
        self.peer_info = None
        self.peer_capabilities = None
        self.peer_instructions = None
        return forgotten

    def initialize_request(self) -> Request:
        """The client's ``initialize`` request (LIFECYCLE-2), offering our newest version."""
        if self.role is not Role.CLIENT:
            raise LocalProtocolError("only a client sends initialize")
        params = InitializeRequestParams(
            protocol_version=self.versions[-1],
            capabilities=self.capabilities,  # type: ignore[arg-type]
            client_info=self.info,
        )
        self._move(_Input.SEND_INITIALIZE)
        return self._new_request("initialize", to_wire(params), progress=False)

    def initialized_notification(self) -> Notification:
        """The client's ``notifications/initialized``, once the result was accepted."""
        self._move(_Input.SEND_INITIALIZED)
        return Notification("notifications/initialized")

    # --- sending -------------------------------------------------------------------------

    def request(self, method: str, params: dict[str, Any] | None = None, *,
                progress: bool = False) -> Request:
        """A new request with a fresh id; with ``progress`` its id is the progress token.

        Raises:
            LocalProtocolError: the lifecycle does not allow it yet (or any more).
            CapabilityError: the peer did not declare what the method needs (CAPS-5).
        """
        if method == "initialize":
            raise LocalProtocolError("use initialize_request() to start the session")
        self._check_can_send(method, EARLY_REQUESTS)
        needed = PEER_CAPABILITY.get(method)
        if needed is not None and not self._peer_allows(method, needed):
            side = "server" if self.role is Role.CLIENT else "client"
            raise CapabilityError(
                f"the {side} did not declare the {needed[0]!r} capability that {method} needs")
        return self._new_request(method, params, progress=progress)

    def _peer_allows(self, method: str, needed: tuple[str, CapabilityCheck]) -> bool:
        if (method == "completion/complete" and self.profile is not None
                and not self.profile.completions_capability):
            return True  # 2024-11-05 had completion without a capability to gate it
        return needed[1](self.peer_capabilities)

    def _new_request(self, method: str, params: dict[str, Any] | None, *,
                     progress: bool) -> Request:
        request_id = self._next_id
        self._next_id += 1
        if progress:
            params = dict(params or {})
            meta = dict(params.get("_meta") or {})
            meta["progressToken"] = request_id
            params["_meta"] = meta
        self._outgoing[request_id] = _Outgoing(method, progress)
        return Request(request_id, method, params)

    def notification(self, method: str, params: dict[str, Any] | None = None, *,
                     related_to: RequestId | None = None) -> Notification:
        """A notification to send (``related_to``: the request it belongs to, if any);
        one about a modern request being served ignores the lifecycle (it has none).

        Raises:
            LocalProtocolError: too early in the lifecycle (AMBIG-7).
            CapabilityError: we did not declare the capability it belongs to (CAPS-6).
        """
        if method == "notifications/initialized":
            return self.initialized_notification()
        serving = self._serving.get(related_to) if related_to is not None else None
        if serving is None or serving.scope is None:
            self._check_can_send(method, EARLY_NOTIFICATIONS)
        needed = OWN_CAPABILITY.get(method)
        if needed is not None and not needed[1](self.capabilities):
            raise CapabilityError(f"{method} needs our {needed[0]!r} capability")
        return Notification(method, params)

    def _check_can_send(self, method: str, early: frozenset[str]) -> None:
        if self.state is State.CLOSED:
            raise LocalProtocolError(f"cannot send {method}: the session is closed")
        if method in early:
            return
        # A client is OPERATING only once it has sent notifications/initialized, which
        # must come before its first feature request (LIFECYCLE-4); a server only once it
        # has received it (LIFECYCLE-6).
        if self.state is not State.OPERATING:
            raise LocalProtocolError(
                f"cannot send {method} before initialization completes "
                f"(state {self.state.value})")

    def cancel(self, request_id: RequestId, reason: str | None = None) -> Notification | None:
        """Give up on a request we sent; returns the cancellation to send, if one is due.

        None when the request is no longer outstanding (CANCEL-2) or is ``initialize``,
        which is never cancelled (CANCEL-3). Either way a late answer will be dropped.
        """
        outgoing = self._outgoing.pop(request_id, None)
        if outgoing is None or outgoing.method == "initialize" or self.state is State.CLOSED:
            return None
        params: dict[str, Any] = {"requestId": request_id}
        if reason:
            params["reason"] = reason
        return Notification("notifications/cancelled", params)

    def forget(self, request_id: RequestId) -> None:
        """Stop tracking a request we sent, without telling the peer."""
        self._outgoing.pop(request_id, None)

    def respond(self, request_id: RequestId, result: dict[str, Any] | None) -> Response | None:
        """The response to a request we serve; None if it was cancelled (CANCEL-4)."""
        serving = self._serving.pop(request_id, None)
        if serving is None or serving.cancelled:
            return None
        return Response(request_id, result if result is not None else {})

    def respond_error(self, request_id: RequestId, error: RpcError) -> ErrorResponse | None:
        """The error answer to a request we serve; None if it was cancelled."""
        serving = self._serving.pop(request_id, None)
        if serving is None or serving.cancelled:
            return None
        return ErrorResponse(request_id, error)

    def progress(self, request_id: RequestId, progress: float, total: float | None = None,
                 message: str | None = None) -> Notification | None:
        """Progress on a request we serve, or None when none may be sent.

        None when the request did not ask for progress, has been answered or cancelled
        (PROGRESS-6), when ``progress`` does not exceed the last value sent
        (PROGRESS-4), or when ``progress`` or ``total`` is not a finite number.
        """
        serving = self._serving.get(request_id)
        if serving is None or serving.cancelled or serving.progress_token is None:
            return None
        # NaN would pass every comparison below and could never be encoded anyway.
        if not math.isfinite(progress) or (total is not None and not math.isfinite(total)):
            return None
        if serving.last_progress is not None and progress <= serving.last_progress:
            return None
        serving.last_progress = progress
        params: dict[str, Any] = {"progressToken": serving.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None and (self.profile is None or self.profile.progress_message):
            params["message"] = message
        return Notification("notifications/progress", params)

    @property
    def outstanding(self) -> list[RequestId]:
        """Ids of requests we sent that have not been answered, cancelled or forgotten."""
        return list(self._outgoing)

    @property
    def serving(self) -> list[RequestId]:
        """Ids of peer requests handed to the application and not yet answered."""
        return list(self._serving)

    # --- receiving -----------------------------------------------------------------------

    def receive(self, message: Message, *, in_batch: bool = False) -> Event:
        """Classify one incoming message and update the state; never raises for bad input."""
        if isinstance(message, Request):
            return self._receive_request(message, in_batch)
        if isinstance(message, Notification):
            return self._receive_notification(message)
        return self._receive_answer(message)

    def _refuse(self, request: Request, error: RpcError) -> Reply:
        return Reply(ErrorResponse(request.id, error))

    def _receive_request(self, request: Request, in_batch: bool) -> Event:
        method = request.method
        if self.state is State.CLOSED:
            return Ignored(f"request {method} after close")
        if (self.modern_versions and self.state is State.NEW
                and is_modern_request(method, request.params)):
            return self._receive_modern(request, in_batch)
        if method == "ping":
            return Reply(Response(request.id, {}))
        if method == "initialize" and self.role is Role.SERVER:
            if in_batch:
                return self._refuse(request, InvalidRequest(
                    "Invalid Request: initialize may not be sent in a batch"))
            return self._answer_initialize(request)
        if method not in self.served_methods:
            return self._refuse(request, MethodNotFound(f"Method not found: {method}"))
        if not self.initialized:
            return self._refuse(request, InvalidRequest(
                f"Invalid Request: {method} before initialization"))
        return self._accept(request, None)

    def _accept(self, request: Request, scope: RequestScope | None) -> Event:
        if request.id in self._serving:
            return self._refuse(request, InvalidRequest(
                f"Invalid Request: id {request.id!r} is already in use"))
        token = progress_token_of(request.params)
        self._serving[request.id] = _Serving(token, scope)
        return RequestReceived(request, token, scope)

    def _receive_modern(self, request: Request, in_batch: bool) -> Event:
        try:
            if in_batch:
                raise InvalidRequest("Invalid Request: the modern era has no batches")
            scope = modern_scope(request.method, request.params or {}, self.modern_versions,
                                 self.served_methods)
        except RpcError as exc:
            return self._refuse(request, exc)
        return self._accept(request, scope)

    def _answer_initialize(self, request: Request) -> Event:
        if self.state is not State.NEW:
            return self._refuse(request, InvalidRequest(
                "Invalid Request: the session is already initialized"))
        try:
            params = from_wire(request.params or {}, InitializeRequestParams)
        except InvalidParams as exc:
            return self._refuse(request, exc)
        offered = params.protocol_version
        version = offered if offered in self.versions else self.versions[-1]
        result = InitializeResult(
            protocol_version=version,
            capabilities=self.capabilities,  # type: ignore[arg-type]
            server_info=self.info,
            instructions=self.instructions,
        )
        self._move(_Input.RECEIVE_INITIALIZE)
        self.negotiated_version = version
        self.profile = profile_for(version)
        self.peer_info = params.client_info
        self.peer_capabilities = params.capabilities
        log.debug("initialize: client offered %s, answering %s", offered, version)
        answer = to_wire(result)
        answer["capabilities"] = server_capabilities_for(answer["capabilities"], self.profile)
        answer["serverInfo"] = implementation_for(answer["serverInfo"], self.profile)
        return Reply(Response(request.id, answer))

    def _receive_notification(self, notification: Notification) -> Event:
        method = notification.method
        if self.state is State.CLOSED:
            return Ignored(f"notification {method} after close")
        if method == "notifications/initialized":
            if self.role is Role.SERVER and self.state is State.INITIALIZED:
                self._move(_Input.RECEIVE_INITIALIZED)
                return NotificationReceived(notification)
            return Ignored(f"notifications/initialized in state {self.state.value}")
        if method == "notifications/cancelled":
            return self._receive_cancel(notification.params or {})
        if method == "notifications/progress":
            return self._receive_progress(notification.params or {})
        return NotificationReceived(notification)

    def _receive_cancel(self, params: dict[str, Any]) -> Event:
        request_id = params.get("requestId")
        reason = params.get("reason")
        if not is_request_id(request_id):
            return Ignored("cancellation without a valid requestId")
        serving = self._serving.get(request_id)
        if serving is None:
            return Ignored(f"cancellation of unknown or finished request {request_id!r}")
        if serving.cancelled:
            return Ignored(f"repeated cancellation of request {request_id!r}")
        serving.cancelled = True
        return CancelRequested(request_id, reason if isinstance(reason, str) else None)

    def _receive_progress(self, params: dict[str, Any]) -> Event:
        token = params.get("progressToken")
        progress = params.get("progress")
        if not is_request_id(token) or not _is_number(progress):
            return Ignored("malformed progress notification")
        outgoing = self._outgoing.get(token)
        if outgoing is None or not outgoing.progress:
            return Ignored(f"progress for unknown token {token!r}")
        total = params.get("total")
        message = params.get("message")
        return ProgressReceived(
            token, progress, total if _is_number(total) else None,
            message if isinstance(message, str) else None)

    def _receive_answer(self, answer: Response | ErrorResponse) -> Event:
        answer_id = answer.id
        if answer_id is None:
            assert isinstance(answer, ErrorResponse)
            log.warning("peer reported an error without an id: %s", answer.error)
            return Ignored("error response without id")
        outgoing = self._outgoing.pop(answer_id, None)
        if outgoing is None:
            return Ignored(f"response to unknown, cancelled or timed-out request {answer_id!r}")
        if outgoing.method == "initialize":
            return self._initialize_answered(answer_id, answer)
        if isinstance(answer, ErrorResponse):
            return ResponseReceived(answer_id, outgoing.method, error=answer.error)
        return ResponseReceived(answer_id, outgoing.method, result=answer.result)

    def _initialize_answered(self, answer_id: RequestId,
                             answer: Response | ErrorResponse) -> Event:
        if isinstance(answer, ErrorResponse):
            self._move(_Input.INITIALIZE_FAILED)
            error: Exception = answer.error
            if _is_version_error(answer.error):
                error = ProtocolVersionError(
                    f"the server refused our protocol version: {answer.error.message}",
                    supported=self.versions)
                error.__cause__ = answer.error
            return ResponseReceived(answer_id, "initialize", error=error)
        try:
            result = from_wire(answer.result, InitializeResult)
        except InvalidParams as exc:
            self._move(_Input.INITIALIZE_FAILED)
            return ResponseReceived(answer_id, "initialize", error=exc)
        version = result.protocol_version
        if version not in self.versions:
            self._move(_Input.INITIALIZE_FAILED)
            return ResponseReceived(answer_id, "initialize", error=ProtocolVersionError(
                f"the server answered with protocol version {version!r}; "
                f"we speak {', '.join(self.versions)}",
                offered=version, supported=self.versions))
        self._move(_Input.INITIALIZE_ANSWERED)
        self.negotiated_version = version
        self.profile = profile_for(version)
        self.peer_info = result.server_info
        self.peer_capabilities = result.capabilities
        self.peer_instructions = result.instructions
        return ResponseReceived(answer_id, "initialize", result=answer.result)


def _is_number(value: object) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_version_error(error: RpcError) -> bool:
    data = error.data
    return (int(error.code) == InvalidParams.code and isinstance(data, dict)
            and "supported" in data)

