"""The MCP server: decorators register features, connections serve them.

A :class:`Server` holds what is registered (tools so far). Each client connection is a
:class:`ServerConnection` with its own session and engine; :meth:`Server.run_stdio`
serves one over stdin/stdout, :meth:`Server.connect` serves one over any transport.
"""

from __future__ import annotations

import base64
import binascii
import inspect
import logging
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

import attrs

from . import types
from ._content import to_call_tool_result
from ._convert import from_wire, to_wire
from ._engine import Engine, IncomingRequest
from ._protocol import Role, Session, State
from ._schema import FunctionSignature, inspect_function
from .context import Context
from .errors import (
    CapabilityError,
    InvalidParams,
    LocalProtocolError,
    McpError,
    RequestTimeout,
)
from .jsonrpc import Notification, RequestId
from .transports.base import Transport

__all__ = ["Server", "ServerConnection"]

log = logging.getLogger("mcp_sync.server")

F = TypeVar("F", bound=Callable[..., Any])
Handler = Callable[["ServerConnection", IncomingRequest], "dict[str, Any] | None"]

DEFAULT_TIMEOUT = 60.0


@attrs.frozen
class _RegisteredTool:
    tool: types.Tool
    fn: Callable[..., Any]
    signature: FunctionSignature


class Server:
    """An MCP server.

    Args:
        name: the ``serverInfo.name`` clients see.
        version: the ``serverInfo.version`` clients see.
        instructions: text telling clients (and their models) how to use the server.
        page_size: how many items each page of a ``*/list`` result holds.
        max_workers: how many requests one connection serves at once.
        timeout: the default timeout, in seconds, of requests the server sends.

    Example::

        server = Server("demo", version="1.0.0")

        @server.tool()
        def add(a: int, b: int) -> int:
            \"\"\"Add two numbers.\"\"\"
            return a + b

        server.run_stdio()
    """

    def __init__(self, name: str, version: str = "0.0.0", *, instructions: str | None = None,
                 page_size: int = 100, max_workers: int = 16,
                 timeout: float = DEFAULT_TIMEOUT) -> None:
        if page_size < 1:
            raise ValueError("page_size must be at least 1")
        self.name = name
        self.version = version
        self.instructions = instructions
        self.page_size = page_size
        self.max_workers = max_workers
        self.timeout = timeout
        self._tools: dict[str, _RegisteredTool] = {}
        self._lock = threading.Lock()
        self._connections: set[ServerConnection] = set()
        self._handlers: dict[str, Handler] = {
            "tools/list": _list_tools,
            "tools/call": _call_tool,
        }

    # --- tools -----------------------------------------------------------------------------

    def tool(self, name: str | None = None, *, description: str | None = None,
             annotations: types.ToolAnnotations | Mapping[str, Any] | None = None,
             ) -> Callable[[F], F]:
        """Register the decorated function as a tool and return it unchanged.

        The input schema comes from the type hints, the description from the docstring;
        see :meth:`add_tool`.
        """
        def register(fn: F) -> F:
            self.add_tool(fn, name=name, description=description, annotations=annotations)
            return fn
        return register

    def add_tool(self, fn: Callable[..., Any], *, name: str | None = None,
                 description: str | None = None,
                 annotations: types.ToolAnnotations | Mapping[str, Any] | None = None) -> None:
        """Register ``fn`` as a tool (replacing any tool of the same name).

        Args:
            fn: a plain function. Its parameters, with their type hints, become the input
                schema; a parameter annotated :class:`~mcp_sync.Context` receives the
                request's context instead. Arguments are validated and converted before
                the call.
            name: the tool's name; the function's name by default.
            description: the tool's description; the docstring by default.
            annotations: :class:`~mcp_sync.types.ToolAnnotations`, or a dict in the wire
                shape (``{"readOnlyHint": True}``).

        Raises:
            TypeError: the function is a coroutine function or has a type hint that
                cannot be turned into a schema.
        """
        if inspect.iscoroutinefunction(fn):
            raise TypeError(f"tool {fn.__name__!r} is a coroutine function; mcp_sync calls "
                            "tools on worker threads, so define it with a plain 'def'")
        signature = inspect_function(fn, skip_types=(Context,))
        if isinstance(annotations, Mapping):
            annotations = from_wire(dict(annotations), types.ToolAnnotations)
        tool = types.Tool(
            name=name or fn.__name__,
            description=description if description is not None else signature.description,
            input_schema=signature.input_schema,
            annotations=annotations,
        )
        with self._lock:
            self._tools[tool.name] = _RegisteredTool(tool, fn, signature)
        self._broadcast("notifications/tools/list_changed")

    def remove_tool(self, name: str) -> None:
        """Unregister a tool; connected clients are told the list changed.

        Raises:
            KeyError: no tool has that name.
        """
        with self._lock:
            del self._tools[name]
        self._broadcast("notifications/tools/list_changed")

    @property
    def tools(self) -> list[types.Tool]:
        """The tools registered now, in registration order."""
        with self._lock:
            return [registered.tool for registered in self._tools.values()]

    def _get_tool(self, name: str) -> _RegisteredTool | None:
        with self._lock:
            return self._tools.get(name)

    # --- connections -----------------------------------------------------------------------

    def capabilities(self) -> types.ServerCapabilities:
        """What this server declares in ``initialize``."""
        return types.ServerCapabilities(tools=types.ToolsCapability(list_changed=True))

    def connect(self, transport: Transport, *,
                assume_version: str | None = None) -> ServerConnection:
        """Serve one client over ``transport`` on background threads, starting now.

        Args:
            transport: the connection to the client.
            assume_version: serve at once, as if the client had initialized with this
                protocol version; for stateless HTTP, where no handshake precedes a POST.
        """
        connection = ServerConnection(self, transport)
        if assume_version is not None:
            connection.session.assume_initialized(assume_version)
        with self._lock:
            self._connections.add(connection)
        connection._start()
        return connection

    def _forget(self, connection: ServerConnection) -> None:
        with self._lock:
            self._connections.discard(connection)

    def _broadcast(self, method: str, params: dict[str, Any] | None = None) -> None:
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            connection.notify_if_ready(method, params)

    def run_stdio(self) -> None:
        """Serve one client on stdin/stdout until stdin closes, then return.

        While serving, anything printed to stdout goes to stderr instead, so it cannot
        corrupt the message stream. Returns normally when the client closes the pipe, so
        a script that ends with this call exits with status 0.
        """
        from .transports.stdio import StdioServerTransport

        connection = self.connect(StdioServerTransport())
        try:
            connection.wait_closed()
        finally:
            connection.close()


class ServerConnection:
    """One client's connection to a :class:`Server`."""

    def __init__(self, server: Server, transport: Transport) -> None:
        self.server = server
        self.session = Session(
            Role.SERVER,
            info=types.Implementation(name=server.name, version=server.version),
            capabilities=server.capabilities(),
            served_methods=tuple(server._handlers),
            instructions=server.instructions,
        )
        self.engine = Engine(
            transport, self.session, handle_request=self._handle,
            handle_notification=self._notification, max_workers=server.max_workers,
            name="server")
        # Notifications that wait for the client's notifications/initialized.
        self._held: list[tuple[str, dict[str, Any] | None]] = []
        self._notify_lock = threading.Lock()

    def _start(self) -> None:
        self.engine.start()

    @property
    def client_info(self) -> types.Implementation | None:
        """The client's name and version, once it initialized."""
        return self.session.peer_info

    @property
    def client_capabilities(self) -> types.ClientCapabilities | None:
        """What the client declared, once it initialized."""
        caps = self.session.peer_capabilities
        return caps if isinstance(caps, types.ClientCapabilities) else None

    @property
    def protocol_version(self) -> str | None:
        """The negotiated protocol version, once the client initialized."""
        return self.session.negotiated_version

    @property
    def closed(self) -> bool:
        return self.engine.closed

    def wait_closed(self, timeout: float | None = None) -> bool:
        """Block until the client disconnects (or :meth:`close`); False on timeout."""
        return self.engine.wait_closed(timeout)

    def close(self) -> None:
        """Disconnect this client; idempotent."""
        self.engine.close()
        self.server._forget(self)

    def send_request(self, method: str, params: dict[str, Any] | None = None, *,
                     timeout: float | None = None,
                     related_to: RequestId | None = None) -> dict[str, Any]:
        """Send a request to the client and wait for its result.

        ``related_to`` is the id of the client's request this one serves, if any.
        """
        timeout = self.server.timeout if timeout is None else timeout
        future = self.engine.request(method, params, timeout=timeout, related_to=related_to)
        try:
            # The engine's watchdog ends the call at its deadline; the margin only guards
            # against the watchdog itself being gone.
            return future.result(timeout + 5.0)
        except FutureTimeout as exc:
            if isinstance(exc, McpError):
                raise
            raise RequestTimeout(f"no answer to {method} from the client") from None

    def ping(self, timeout: float | None = None) -> None:
        """Ping the client (PING-1) and wait for its empty answer."""
        self.send_request("ping", timeout=timeout)

    def notify_if_ready(self, method: str, params: dict[str, Any] | None = None) -> bool:
        """Send a notification once the client may receive it; False if it never will.

        Between our ``initialize`` answer and the client's ``notifications/initialized``
        the notification is held and sent when that arrives (AMBIG-7); before
        ``initialize`` it is dropped, since the client lists everything afresh anyway.
        """
        with self._notify_lock:
            if self.session.state is State.INITIALIZED:
                self._held.append((method, params))
                return True
            if self.session.state is not State.OPERATING:
                return False
            return self._send_notification(method, params)

    def _send_notification(self, method: str, params: dict[str, Any] | None) -> bool:
        try:
            self.engine.notify(method, params)
        except (LocalProtocolError, CapabilityError, McpError) as exc:
            log.debug("not sending %s: %s", method, exc)
            return False
        return True

    def _handle(self, incoming: IncomingRequest) -> dict[str, Any] | None:
        return self.server._handlers[incoming.method](self, incoming)

    def _notification(self, notification: Notification) -> None:
        if notification.method == "notifications/initialized":
            with self._notify_lock:
                held, self._held = self._held, []
                for method, params in held:
                    self._send_notification(method, params)
            return
        log.debug("notification from client: %s", notification.method)


# --- request handlers ---------------------------------------------------------------------


def _page(items: list[Any], cursor: Any, page_size: int) -> tuple[list[Any], str | None]:
    start = _decode_cursor(cursor) if cursor is not None else 0
    if start > len(items):
        raise InvalidParams("Invalid params: the cursor is out of range", {"cursor": cursor})
    end = start + page_size
    next_cursor = _encode_cursor(end) if end < len(items) else None
    return items[start:end], next_cursor


def _encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"offset:{offset}".encode()).decode("ascii")


def _decode_cursor(cursor: Any) -> int:
    # Cursors are opaque to clients (PAGINATION-3); anything we did not mint is -32602.
    try:
        text = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii")
        kind, _, number = text.partition(":")
        if kind != "offset" or not number.isdigit():
            raise ValueError(text)
        return int(number)
    except (AttributeError, ValueError, binascii.Error, UnicodeError):
        raise InvalidParams("Invalid params: unknown cursor", {"cursor": cursor}) from None


def _wire(result: Any) -> dict[str, Any]:
    wire: dict[str, Any] = to_wire(result)
    return wire


def _list_tools(connection: ServerConnection, incoming: IncomingRequest) -> dict[str, Any]:
    tools = connection.server.tools
    page, next_cursor = _page(tools, incoming.params.get("cursor"), connection.server.page_size)
    if connection.session.profile is not None and not connection.session.profile.tool_annotations:
        page = [attrs.evolve(tool, annotations=None) for tool in page]
    return _wire(types.ListToolsResult(tools=page, next_cursor=next_cursor))


def _call_tool(connection: ServerConnection, incoming: IncomingRequest) -> dict[str, Any]:
    name = incoming.params.get("name")
    if not isinstance(name, str):
        raise InvalidParams('Invalid params: "name" must be a string')
    registered = connection.server._get_tool(name)
    if registered is None:
        raise InvalidParams(f"Unknown tool: {name}", {"tool": name})
    arguments = incoming.params.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        raise InvalidParams('Invalid params: "arguments" must be an object')
    kwargs = registered.signature.bind(arguments)
    context_parameter = registered.signature.context_parameter
    if context_parameter is not None:
        kwargs[context_parameter] = Context(connection, incoming)
    try:
        value = registered.fn(**kwargs)
    except Exception as exc:
        # TOOLS-6: a failure while the tool runs is a result the model can see; the
        # traceback stays in our log.
        log.info("tool %r raised", name, exc_info=True)
        message = str(exc) or type(exc).__name__
        return _wire(types.CallToolResult(
            content=[types.TextContent(text=f"Error: {message}")], is_error=True))
    return _wire(to_call_tool_result(value))

