"""Modern (2026-07-28) requests on the Streamable HTTP endpoint, next to legacy sessions.

One endpoint serves both eras. A POST without ``Mcp-Session-Id`` is modern when its
request carries the era's ``_meta`` keys or its ``MCP-Protocol-Version`` header names a
modern version the server speaks (an ``initialize`` offering a ``protocolVersion`` is
legacy whatever else it carries); everything else takes the legacy path exactly as
before. A modern request is served statelessly: a connection of its own, closed with its
answer, nothing stored, so any process behind any load balancer can answer it.

Before it runs, the request's mirrored headers are checked against its body
(SEP-2243): ``MCP-Protocol-Version`` must equal ``_meta``'s version, ``Mcp-Method`` the
method, ``Mcp-Name`` the tool or prompt name or the resource URI, and each
``Mcp-Param-*`` header the tool argument marked ``x-mcp-header`` in the tool's input
schema. A missing or differing one is refused with HTTP 400 and -32020 before the tool
is looked at again. The status of an error answer follows its code
(:data:`MODERN_STATUS`); see :mod:`mcp_sync.server.http._modern_stream` for how the
answer becomes a JSON body or an event stream.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from werkzeug.wrappers import Request, Response

from ...errors import ErrorCode, MethodNotFound, RpcError
from ...protocol._http_headers import (
    HEADER_MISMATCH,
    METHOD_HEADER,
    NAME_HEADER,
    NAME_PARAMS,
    PARAM_HEADER_PREFIX,
    check_param_headers,
    decode_header_value,
    header_parameters,
    is_header_token,
)
from ...protocol._jsonrpc import Batch, Incoming, Notification
from ...protocol._jsonrpc import Request as RpcRequest
from ...protocol._modern import (
    CLIENT_CAPABILITIES_KEY,
    PROTOCOL_VERSION_KEY,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from ._answer import PostAnswer
from ._auth_gate import note_credentials
from ._checks import VERSION_HEADER, VERSION_KEY, accepts, environ_key, error_response
from ._modern_stream import RequestEvents, RequestTransport
from ._stateless import close_request_connection, open_request_connection

if TYPE_CHECKING:
    from ._app import StreamableHttpApp

__all__ = ["MISSING_CLIENT_CAPABILITY", "MODERN_STATUS", "STREAMING_METHODS", "check_request",
           "is_modern_post", "param_headers_asked", "post_modern", "refuse_modern_get"]

log = logging.getLogger("mcp_sync.http.server")

#: ``MissingRequiredClientCapabilityError``: the request needs a capability its
#: ``_meta`` did not declare.
MISSING_CLIENT_CAPABILITY = -32021

#: The HTTP status of a modern request's error answer, by JSON-RPC code; any other code
#: (a handler's own, -32603) is 200.
MODERN_STATUS: dict[int, int] = {
    ErrorCode.PARSE_ERROR: 400, ErrorCode.INVALID_REQUEST: 400,
    ErrorCode.INVALID_PARAMS: 400, HEADER_MISMATCH: 400, MISSING_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400, ErrorCode.METHOD_NOT_FOUND: 404,
}

#: Modern requests whose answer is a stream of notifications (a subscription): served
#: with an event stream even by an application that answers others with JSON.
STREAMING_METHODS = frozenset({"subscriptions/listen"})

_METHOD_KEY = environ_key(METHOD_HEADER)
_NAME_KEY = environ_key(NAME_HEADER)
_PARAM_KEY_PREFIX = environ_key(PARAM_HEADER_PREFIX)


def _has_modern_meta(params: dict[str, Any] | None) -> bool:
    meta = params.get("_meta") if params else None
    return isinstance(meta, dict) and (PROTOCOL_VERSION_KEY in meta
                                       or CLIENT_CAPABILITIES_KEY in meta)


def is_modern_post(environ: dict[str, Any], incoming: Incoming,
                   modern_versions: tuple[str, ...]) -> bool:
    """Whether a POST without a session belongs to the modern era (see the module
    docstring); never for a server that speaks no modern version."""
    if not modern_versions:
        return False
    header = environ.get(VERSION_KEY)
    modern_header = header is not None and header.strip(" \t") in modern_versions
    if isinstance(incoming, (RpcRequest, Notification)):
        params = incoming.params
        if incoming.method == "initialize" and params and "protocolVersion" in params:
            return False  # a legacy handshake, whatever it offers (COEX-9)
        return modern_header or _has_modern_meta(params)
    return modern_header


def _mismatch(message: str) -> RpcError:
    return RpcError(f"Header mismatch: {message}", code=HEADER_MISMATCH)


def _header(environ: dict[str, Any], key: str) -> str | None:
    raw = environ.get(key)
    if raw is None:
        return None
    try:
        # PEP 3333 hands header values over as Latin-1; clients send UTF-8.
        text = str(raw).encode("latin-1").decode("utf-8")
    except UnicodeError:
        text = str(raw)
    return text.strip(" \t")


def check_request(environ: dict[str, Any], request: RpcRequest) -> RpcError | None:
    """The first thing wrong with a modern request's ``_meta`` or standard headers.

    ``_meta`` without the version or the client's capabilities is -32602; a missing or
    differing ``MCP-Protocol-Version``, ``Mcp-Method`` or ``Mcp-Name`` is -32020. The
    version itself, the method and the rest of ``_meta`` are the session's to check.
    """
    params = request.params or {}
    meta = params.get("_meta")
    missing = [key for key in (PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY)
               if not isinstance(meta, dict) or key not in meta]
    if missing:
        return RpcError(f"Invalid params: _meta must carry {' and '.join(missing)}",
                        {"missing": missing}, code=ErrorCode.INVALID_PARAMS)
    assert isinstance(meta, dict)
    version = _header(environ, VERSION_KEY)
    if version is None or version != meta[PROTOCOL_VERSION_KEY]:
        return _mismatch(f"the {VERSION_HEADER} header must equal _meta's "
                         f"{PROTOCOL_VERSION_KEY}")
    if _header(environ, _METHOD_KEY) != request.method:
        return _mismatch(f"the {METHOD_HEADER} header must equal the method "
                         f"{request.method!r}")
    name_param = NAME_PARAMS.get(request.method)
    target = params.get(name_param) if name_param is not None else None
    if isinstance(target, str):
        raw = _header(environ, _NAME_KEY)
        if raw is None:
            return _mismatch(f"the {NAME_HEADER} header is required with {request.method}")
        if decode_header_value(raw) != target:
            return _mismatch(f"the {NAME_HEADER} header must equal the request's "
                             f"{name_param} {target!r}")
    return None


def _param_headers(environ: dict[str, Any]) -> dict[str, str]:
    # The environment spells "-" and "_" alike; check_param_headers reads them so.
    return {key[5:].lower().replace("_", "-"): str(value)
            for key, value in environ.items() if key.startswith(_PARAM_KEY_PREFIX)}


def param_headers_asked(environ: dict[str, Any]) -> list[str]:
    """The ``Mcp-Param-*`` headers a browser's CORS preflight asks to send: their names
    depend on each tool, so the preflight allows those it is asked about."""
    asked = str(environ.get("HTTP_ACCESS_CONTROL_REQUEST_HEADERS", "")).split(",")
    prefix = PARAM_HEADER_PREFIX.lower()
    return [name.strip() for name in asked if name.strip().lower().startswith(prefix)
            and is_header_token(name.strip())]


def _refuse(request_id: Any, error: RpcError) -> Response:
    return error_response(MODERN_STATUS.get(int(error.code), 400), int(error.code),
                          error.message, data=error.data, request_id=request_id)


def post_modern(app: StreamableHttpApp, request: Request, incoming: Incoming,
                use_sse: bool) -> Response | PostAnswer:
    """Serve one modern POST (see the module docstring)."""
    if isinstance(incoming, Batch):
        return error_response(400, ErrorCode.INVALID_REQUEST,
                              "Invalid Request: the modern era has no batches")
    if isinstance(incoming, Notification):
        # Nothing for one to act on: a client cancels by closing the response stream.
        log.debug("modern notification %s accepted and dropped", incoming.method)
        return PostAnswer.accepted()
    if not isinstance(incoming, RpcRequest):
        return error_response(400, ErrorCode.INVALID_REQUEST,
                              "Invalid Request: a modern POST carries one request")
    environ = request.environ
    if incoming.method in STREAMING_METHODS:
        # Its answer is the stream; one JSON body could only come when it ends.
        if not accepts(request, "text/event-stream"):
            return error_response(406, ErrorCode.INVALID_REQUEST,
                                  f"Not Acceptable: {incoming.method} answers with an event "
                                  "stream; the client must accept text/event-stream",
                                  request_id=incoming.id)
        use_sse = True
        if app._shared is not None:
            app._shared.serving_listen_streams()
    if incoming.method == "initialize":
        # Without a protocolVersion to negotiate it is no legacy handshake, and the
        # modern era has none.
        return _refuse(incoming.id, MethodNotFound(
            "Method not found: initialize (the modern era has no handshake)"))
    refused = check_request(environ, incoming)
    if refused is not None:
        return _refuse(incoming.id, refused)
    transport = RequestTransport(incoming, keep_events=use_sse)
    note_credentials(transport, request, incoming)
    connection = open_request_connection(app, transport)
    if connection is None:
        return error_response(503, ErrorCode.INTERNAL_ERROR, "The server is shutting down",
                              request_id=incoming.id)

    def finish() -> None:
        close_request_connection(app, connection)

    try:
        if incoming.method == "tools/call":
            params = incoming.params or {}
            name = params.get("name")
            registered = connection.registry.tool(name) if isinstance(name, str) else None
            schema = None if registered is None else registered.tool.input_schema
            # Only a tool with arguments mirrored in headers has headers to check.
            problem = None if not header_parameters(schema) else check_param_headers(
                schema, params.get("arguments"), _param_headers(environ))
            if problem is not None:
                finish()
                return _refuse(incoming.id, _mismatch(problem))
        # A client that takes no stream gets one JSON body whatever happens: the thread
        # that would only wait for it serves the request, two hand-offs and a worker fewer.
        transport.feed(incoming, serve_here=not use_sse)
        # A client that reads events gets JSON only if the answer comes first and soon;
        # one silent for longer gets a stream, whose keep-alives notice a client leaving.
        transport.wait_first(app.keepalive_interval if use_sse else None)
        answer = transport.lone_answer()
    except BaseException:
        finish()
        raise
    if answer is not None or not use_sse:
        finish()
        if answer is None:
            return error_response(503, ErrorCode.INTERNAL_ERROR,
                                  "The server is shutting down", request_id=incoming.id)
        code = transport.error_code
        if code is None:
            return PostAnswer.json(answer)
        return Response(answer, status=MODERN_STATUS.get(code, 200),
                        content_type="application/json")

    def release(answered: bool) -> None:
        if answered:
            finish()
        else:
            app._closer.submit(finish)  # its handler may take a moment to notice

    return PostAnswer.events(RequestEvents(transport, keepalive=app.keepalive_interval,
                                           on_close=release))


def refuse_modern_get(environ: dict[str, Any], modern_versions: tuple[str, ...]
                      ) -> Response | None:
    """405 for a GET or DELETE that names a modern version and no session (the era has
    no stream of the server's own and no session to end); None otherwise."""
    header = environ.get(VERSION_KEY)
    if header is None or header.strip(" \t") not in modern_versions:
        return None
    return error_response(405, ErrorCode.INVALID_REQUEST,
                          "Method Not Allowed: the modern era is served by POST only",
                          headers={"Allow": "POST"})

