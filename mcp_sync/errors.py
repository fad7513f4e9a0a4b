"""The exceptions mcp_sync raises, all rooted at :class:`McpError`.

Three families:

* :class:`RpcError` and its subclasses carry a JSON-RPC error (``code``, ``message``,
  ``data``). They are what a peer answered, or what a handler raises to answer one.
* :class:`ConnectionClosed` (we closed the connection) and :class:`ConnectionLost` (the
  peer went away, with the cause chained) end every pending call.
* :class:`RequestTimeout`, :class:`RequestCancelled`, :class:`ProtocolVersionError`,
  :class:`CapabilityError` and :class:`LocalProtocolError` are raised on our side without a
  peer's error in hand.
"""

from __future__ import annotations

import enum
from typing import Any

__all__ = [
    "AuthorizationError",
    "CapabilityError",
    "ConnectionClosed",
    "ConnectionLost",
    "ErrorCode",
    "HttpError",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "LegacyOnlyServer",
    "LocalProtocolError",
    "McpError",
    "MethodNotFound",
    "MissingClientCapability",
    "ModernOnlyServer",
    "ParseError",
    "ProtocolVersionError",
    "RequestCancelled",
    "RequestTimeout",
    "ResourceNotFound",
    "RpcError",
    "SamplingRejected",
    "SessionExpired",
    "ToolCallDenied",
    "ToolOutputError",
    "UrlElicitationRequired",
    "error_code_from_int",
]


class ErrorCode(enum.IntEnum):
    """JSON-RPC and MCP error codes this library knows by name."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    RESOURCE_NOT_FOUND = -32002
    #: The request needs the user to finish URL-mode elicitations first (V1125-43).
    URL_ELICITATION_REQUIRED = -32042
    #: The sampling page's example code for "the user rejected the request".
    USER_REJECTED = -1


def error_code_from_int(code: int) -> ErrorCode | int:
    """Return the :class:`ErrorCode` for ``code``, or ``code`` itself if it has no name."""
    try:
        return ErrorCode(code)
    except ValueError:
        return code


class McpError(Exception):
    """Root of every exception raised by mcp_sync."""


class RpcError(McpError):
    """A JSON-RPC error: received from the peer, or raised by a handler to answer one.

    Raise a subclass (or ``RpcError(code, message)``) inside a request handler and the
    peer receives exactly that error. Errors received from a peer are raised as the
    most specific subclass for their code.
    """

    code: int = ErrorCode.INTERNAL_ERROR

    def __init__(self, message: str, data: Any = None, *, code: int | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message
        self.data = data

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={int(self.code)}, message={self.message!r})"

    def __str__(self) -> str:
        return f"{self.message} (code {int(self.code)})"

    def to_wire(self) -> dict[str, Any]:
        """The ``error`` member of a JSON-RPC error response."""
        error: dict[str, Any] = {"code": int(self.code), "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @classmethod
    def from_wire(cls, error: dict[str, Any]) -> RpcError:
        """Build the most specific error class for a received ``error`` member."""
        code = error.get("code")
        message = error.get("message")
        if not isinstance(code, int) or isinstance(code, bool):
            code = ErrorCode.INTERNAL_ERROR
        if not isinstance(message, str):
            message = "(no message)"
        subclass = _BY_CODE.get(code)
        if subclass is not None:
            return subclass(message, error.get("data"))
        return RpcError(message, error.get("data"), code=code)


class ParseError(RpcError):
    """The text received was not valid JSON."""

    code = ErrorCode.PARSE_ERROR


class InvalidRequest(RpcError):
    """The message was not a valid request, or is not allowed in this state."""

    code = ErrorCode.INVALID_REQUEST


class MethodNotFound(RpcError):
    """The method does not exist or the feature was not declared."""

    code = ErrorCode.METHOD_NOT_FOUND


class InvalidParams(RpcError, ValueError):
    """The parameters of a request were missing, of the wrong type, or refer to nothing."""

    code = ErrorCode.INVALID_PARAMS


class InternalError(RpcError):
    """The peer failed while handling the request."""

    code = ErrorCode.INTERNAL_ERROR


class ResourceNotFound(RpcError, LookupError):
    """MCP's resource-not-found error (-32002)."""

    code = ErrorCode.RESOURCE_NOT_FOUND


_BY_CODE: dict[int, type[RpcError]] = {
    cls.code: cls
    for cls in (ParseError, InvalidRequest, MethodNotFound, InvalidParams, InternalError,
                ResourceNotFound)
}


class HttpError(RpcError):
    """An HTTP exchange failed, so a request could not be answered.

    The server answered an error status, sent an answer too large or of an unknown kind,
    or ended the event stream before the answer and could not be reached to resume it.
    It is delivered as the error of each request the failed POST carried and raised by
    the call that sent it; it never goes on the wire.

    Attributes:
        status: the HTTP status code, or None when the failure was not a status.
    """

    code = ErrorCode.INTERNAL_ERROR

    def __init__(self, message: str, data: Any = None, *, status: int | None = None) -> None:
        super().__init__(message, data)
        self.status = status

    def __str__(self) -> str:
        # The message names the HTTP status; the JSON-RPC code, never on the wire, is noise.
        return self.message


class AuthorizationError(HttpError):
    """No access token for the server could be obtained, or the server refused the one sent.

    Raised by the call whose request needed authorization: the authorization server could
    not be found or reached, its metadata broke a rule (issuer, PKCE support, endpoint
    scheme), registration or the token request was refused, the redirect came back with an
    error, a wrong ``state`` or ``iss``, the user did not finish in time, or the server kept
    refusing new tokens. ``status`` is the MCP server's HTTP status when it was the one
    that refused (401, 403), else None.
    """


class SessionExpired(RpcError):
    """The HTTP server no longer knows our session (it answered 404, HTTP-34/35).

    The client has started a new session; the call that met the expiry was not
    repeated, because repeating a tool call behind the caller's back could do its work
    twice. Never sent on the wire.
    """

    code = -32000

    def __str__(self) -> str:
        return self.message


class SamplingRejected(RpcError):
    """Raise it in a sampling handler when the user refuses the request (SAMPLING-7/8).

    The server receives a JSON-RPC error with code -1, the code the sampling page uses
    for a user's rejection (AMBIG-19).
    """

    code = ErrorCode.USER_REJECTED

    def __init__(self, message: str = "The user rejected the sampling request",
                 data: Any = None) -> None:
        super().__init__(message, data)


class UrlElicitationRequired(RpcError):
    """The request cannot go on until the user finishes URL-mode elicitations (-32042).

    A tool raises it to make its ``tools/call`` fail with this error (in sessions of
    2025-11-25 and newer); a client raises it to its caller. ``elicitations`` lists the
    URL-mode requests (``mode``, ``message``, ``url``, ``elicitationId``) the user should
    be shown (V1125-43).
    """

    code = ErrorCode.URL_ELICITATION_REQUIRED

    def __init__(self, message: str = "This request needs the user to visit a URL first",
                 data: Any = None, *, elicitations: list[dict[str, Any]] | None = None
                 ) -> None:
        if elicitations is not None:
            elicitations = [{"mode": "url", **item} for item in elicitations]
            data = {**(data or {}), "elicitations": elicitations}
        super().__init__(message, data)
        found = data.get("elicitations") if isinstance(data, dict) else None
        self.elicitations: list[dict[str, Any]] = (
            [item for item in found if isinstance(item, dict)]
            if isinstance(found, list) else [])


_BY_CODE[UrlElicitationRequired.code] = UrlElicitationRequired


class ToolCallDenied(McpError, PermissionError):
    """The client's ``approve_tool_call`` hook refused a tool call; nothing was sent."""

    def __init__(self, name: str) -> None:
        super().__init__(f"the call of tool {name!r} was not approved")
        self.name = name


class ToolOutputError(McpError, ValueError):
    """A tool's result does not match the output schema the server listed for it.

    Raised by :meth:`~mcp_sync.Client.call_tool` (V0618-20) when ``structuredContent``
    breaks the tool's ``outputSchema``, or is missing from a result that is not an
    error. ``result`` is the result as received; ``problems`` says what is wrong.
    """

    def __init__(self, name: str, problems: list[str], result: Any) -> None:
        super().__init__(f"the result of tool {name!r} does not match its output schema: "
                         + "; ".join(problems))
        self.name = name
        self.problems = problems
        self.result = result


class ConnectionClosed(McpError):
    """The connection was closed on our side; nothing more can be sent or received."""


class ConnectionLost(McpError, ConnectionError):
    """The peer went away (process exited, pipe or socket broke); ``__cause__`` says how.

    When the peer is a server process we started (``Client.stdio``), the message and
    the attributes say how it ended.

    Attributes:
        exit_code: the server process's exit status (negative: the signal that ended it),
            or None when it is not known (not a process of ours, or still running).
        stderr_tail: the last lines the server process wrote to its stderr (at most 20
            lines, 4 KiB), or None when its stderr went elsewhere than to us.
    """

    def __init__(self, message: str, *, exit_code: int | None = None,
                 stderr_tail: str | None = None) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail


class RequestTimeout(McpError, TimeoutError):
    """No answer came within the call's timeout; the request was cancelled at the peer."""


class RequestCancelled(McpError):
    """The request was cancelled before its answer arrived.

    Cancelling the Future of a ``*_async`` call raises it in whoever waits on that
    Future (there it is also a ``concurrent.futures.CancelledError``, as from any
    cancelled Future); the server was sent ``notifications/cancelled``, or never saw
    the request.
    """


class ProtocolVersionError(McpError):
    """The peer speaks no protocol version we support; the connection was closed."""

    def __init__(self, message: str, *, offered: str | None = None,
                 supported: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.offered = offered
        self.supported = supported


class ModernOnlyServer(ProtocolVersionError):
    """The server speaks only the modern era (2026-07-28 and later), and the client was
    configured for none of its versions (COEX-10); the connection was closed.

    ``server_versions`` holds the versions the server named, when it named them.
    """

    def __init__(self, message: str, *, server_versions: tuple[str, ...] = (),
                 supported: tuple[str, ...] = ()) -> None:
        super().__init__(message, supported=supported)
        self.server_versions = server_versions


class LegacyOnlyServer(ProtocolVersionError):
    """The server speaks only the legacy era (``initialize``, 2025-11-25 and older), and
    the client was configured for modern versions only; the connection was closed."""


class CapabilityError(McpError):
    """The peer did not declare the capability a call needs; nothing was sent."""


class MissingClientCapability(CapabilityError, RpcError):
    """A modern (2026-07-28) request needs a capability its client did not declare:
    ``MissingRequiredClientCapabilityError``, code -32021, with ``data`` holding
    ``requiredCapabilities`` (a ClientCapabilities object such as ``{"sampling": {}}``).

    :class:`~mcp_sync.Context` raises it when a function serving a modern request asks
    the client for what it did not declare. Being a :class:`CapabilityError`, a function
    may catch it and do without; if it escapes, the request is answered with this error.
    A legacy session gets a plain :class:`CapabilityError` instead (COEX-3).
    """

    code = -32021


_BY_CODE[MissingClientCapability.code] = MissingClientCapability


class LocalProtocolError(McpError):
    """Our side tried something the protocol does not allow in the current state.

    ``error_hint`` is the JSON-RPC error to answer the peer with when the violation was
    triggered by a message it sent.
    """

    def __init__(self, message: str, error_hint: RpcError | None = None) -> None:
        super().__init__(message)
        self.error_hint = error_hint
