"""One client's connection to a :class:`~mcp_sync.server.Server` (public as
``mcp_sync.server.ServerConnection``)."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from concurrent import futures
from typing import TYPE_CHECKING, Any

from .. import types
from ..engine._engine import Engine, IncomingRequest
from ..errors import CapabilityError, LocalProtocolError, McpError, RequestTimeout
from ..protocol._convert import from_wire
from ..protocol._jsonrpc import Notification, RequestId
from ..protocol._session import Role, Session, State
from ..protocol._subscriptions import LISTEN_METHOD, covers
from ..transports.base import Transport
from ._content import json_safe
from ._context import Context
from ._logging import RateLimit, check_level, level_rank
from ._modern import serve_modern

if TYPE_CHECKING:
    from ..engine._threads import WorkerPool
    from ._registry import Handler, Registry
    from ._server import Server

__all__ = ["ServerConnection"]

log = logging.getLogger("mcp_sync.server")

#: Sendable between our initialize answer and the client's initialized (AMBIG-7).
_EARLY_NOTIFICATIONS = frozenset({"notifications/message"})


def _no_handler(connection: ServerConnection, incoming: IncomingRequest) -> None:
    return None  # server/discover is answered by serve_modern itself


class ServerConnection:
    """One client's connection to a :class:`~mcp_sync.server.Server`.

    Made by :meth:`Server.connect <mcp_sync.server.Server.connect>`. It holds the
    client's session, its log level and its resource subscriptions.
    """

    def __init__(self, server: Server, transport: Transport, *, registry: Registry,
                 on_close: Callable[[ServerConnection], None] | None = None,
                 workers: WorkerPool | None = None) -> None:
        self.server = server
        #: What the server registered; the handlers look features up here.
        self.registry = registry
        self._on_close = on_close
        capabilities = server.capabilities()
        self.session = Session(
            Role.SERVER,
            info=server._implementation(),
            capabilities=capabilities,
            served_methods=registry.served_methods(capabilities),
            instructions=server.instructions,
            versions=server.supported_versions,
            modern_versions=server.modern_versions if transport.modern_era else (),
        )
        self.engine = Engine(
            transport, self.session, handle_request=self._handle,
            handle_notification=self._notification, max_workers=server.max_workers,
            name="server", idle_timeout=server.idle_thread_timeout, workers=workers)
        #: The least severe level this client receives (``logging/setLevel`` sets it).
        self.log_level: types.LoggingLevel = server.log_level
        self._log_limit = (RateLimit(server.log_rate_limit)
                           if server.log_rate_limit is not None else None)
        # Notifications that wait for the client's notifications/initialized.
        self._held: list[tuple[str, dict[str, Any] | None]] = []
        self._notify_lock = threading.Lock()
        self._subscriptions: set[str] = set()
        self._subscriptions_lock = threading.Lock()
        self._operating = threading.Event()

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
    def capabilities(self) -> types.ServerCapabilities:
        """What we declared to this client."""
        capabilities = self.session.capabilities
        assert isinstance(capabilities, types.ServerCapabilities)
        return capabilities

    @property
    def closed(self) -> bool:
        """True once the connection ended."""
        return self.engine.closed

    def wait_closed(self, timeout: float | None = None) -> bool:
        """Block until the client disconnects (or :meth:`close`); False on timeout."""
        return self.engine.wait_closed(timeout)

    def close(self) -> None:
        """Disconnect this client; idempotent."""
        self._operating.set()  # wakes requests waiting for the handshake; they then fail
        self.engine.close()
        if self._on_close is not None:
            self._on_close(self)

    # --- requests to the client ---------------------------------------------------------------

    def send_request(self, method: str, params: dict[str, Any] | None = None, *,
                     timeout: float | None = None,
                     related_to: RequestId | None = None) -> dict[str, Any]:
        """Send a request to the client and wait for its result.

        A request other than ``ping`` made before the client has confirmed
        initialization waits for that first, within ``timeout`` (LIFECYCLE-6).

        Args:
            method: the request's method.
            params: its params.
            timeout: seconds to wait; the server's default if None.
            related_to: the id of the client's request this one serves, if any.

        Raises:
            CapabilityError: the client did not declare what ``method`` needs.
            RpcError: the client answered with an error.
            RequestTimeout: no answer in time; the request was cancelled.
            RequestCancelled: the request being served was cancelled (or ended)
                while waiting; the nested request was cancelled at the client.
            ConnectionClosed, ConnectionLost: the connection is over.
        """
        timeout = self.server.timeout if timeout is None else timeout
        if method != "ping" and self.session.state is State.INITIALIZED:
            self._operating.wait(timeout)
        future = self.engine.request(method, params, timeout=timeout, related_to=related_to)
        try:
            # The engine's watchdog ends the call at its deadline; the margin only guards
            # against the watchdog itself being gone.
            return future.result(timeout + 5.0)
        except (TimeoutError, futures.TimeoutError) as exc:  # the same class from 3.11
            if isinstance(exc, McpError):
                raise
            raise RequestTimeout(f"no answer to {method} from the client") from None

    def ping(self, timeout: float | None = None) -> None:
        """Ping the client (PING-1) and wait for its empty answer."""
        self.send_request("ping", timeout=timeout)

    def list_roots(self, *, timeout: float | None = None,
                   related_to: RequestId | None = None) -> list[types.Root]:
        """Ask the client for its roots (``roots/list``).

        Raises:
            CapabilityError: the client did not declare ``roots``; nothing was sent.
            RpcError: the client failed. RequestTimeout: no answer in time.
        """
        raw = self.send_request("roots/list", timeout=timeout, related_to=related_to)
        return from_wire(raw, types.ListRootsResult).roots

    # --- notifications to the client ----------------------------------------------------------

    def notify_if_ready(self, method: str, params: dict[str, Any] | None = None, *,
                        related_to: RequestId | None = None) -> bool:
        """Send a notification once the client may receive it; False if it never will.

        Between our ``initialize`` answer and the client's ``notifications/initialized``
        the notification is held and sent when that arrives, except log messages which
        may go at once (AMBIG-7); before ``initialize`` it is dropped, since the client
        lists everything afresh anyway. False too when we did not declare the capability
        it belongs to (CAPS-6).
        """
        with self._notify_lock:
            state = self.session.state
            if state is State.INITIALIZED and method not in _EARLY_NOTIFICATIONS:
                if (method, params) not in self._held:
                    self._held.append((method, params))
                return True
            if state not in (State.INITIALIZED, State.OPERATING):
                return False
            return self._send_notification(method, params, related_to)

    def _send_notification(self, method: str, params: dict[str, Any] | None,
                           related_to: RequestId | None = None) -> bool:
        try:
            self.engine.notify(method, params, related_to=related_to)
        except (LocalProtocolError, CapabilityError, McpError) as exc:
            log.debug("not sending %s: %s", method, str(exc))
            return False
        return True

    def log(self, level: types.LoggingLevel, data: Any, logger: str | None = None, *,
            related_to: RequestId | None = None) -> bool:
        """Send a log message to this client if its level lets it through.

        Args:
            level: the message's severity (an RFC 5424 name).
            data: any JSON value.
            logger: a name for the source.
            related_to: the id of the client's request the message belongs to.

        Returns:
            True if it was sent; False if the level filtered it out, the server's
            ``log_rate_limit`` dropped it, or the client cannot receive it.

        Raises:
            ValueError: ``level`` is not a logging level.
        """
        check_level(level)
        if level_rank(level) < level_rank(self.log_level):
            return False
        if self._log_limit is not None and not self._log_limit.take():
            return False
        params: dict[str, Any] = {"level": level, "data": json_safe(data)}
        if logger is not None:
            params["logger"] = logger
        return self.notify_if_ready("notifications/message", params, related_to=related_to)

    # --- subscriptions -------------------------------------------------------------------------

    def subscribe(self, uri: str) -> None:
        """Record that this client wants ``notifications/resources/updated`` for ``uri``."""
        with self._subscriptions_lock:
            self._subscriptions.add(uri)

    def unsubscribe(self, uri: str) -> None:
        """Forget a subscription; forgetting one that does not exist is not an error."""
        with self._subscriptions_lock:
            self._subscriptions.discard(uri)

    @property
    def subscriptions(self) -> frozenset[str]:
        """The URIs this client subscribed to."""
        with self._subscriptions_lock:
            return frozenset(self._subscriptions)

    def is_subscribed(self, uri: str) -> bool:
        """True if a subscription covers ``uri``: the URI itself or one above it."""
        with self._subscriptions_lock:
            return any(covers(subscribed, uri) for subscribed in self._subscriptions)

    # --- from the engine -----------------------------------------------------------------------

    def _handle(self, incoming: IncomingRequest) -> dict[str, Any] | None:
        if incoming.scope is not None:  # a modern request: stateless, shaped for its era
            return self._handle_modern(incoming)
        handler = self.registry.handler(incoming.method)
        return self._run_hooked(incoming, handler)

    def _handle_modern(self, incoming: IncomingRequest) -> dict[str, Any] | None:
        if incoming.method == LISTEN_METHOD:  # left open: answered when the stream ends
            return self._run_hooked(incoming, self.server._listens.open)
        handler = (self.registry.handler(incoming.method)
                   if incoming.method != "server/discover" else _no_handler)
        if not self.registry.call_hooks:
            return serve_modern(self, incoming, handler)
        return self._run_hooked(
            incoming, lambda connection, request: serve_modern(connection, request, handler))

    def _run_hooked(self, incoming: IncomingRequest, handler: Handler) -> dict[str, Any] | None:
        hooks = self.registry.call_hooks
        if not hooks:
            return handler(self, incoming)
        # The first hook added is the outermost; a hook that raises fails the request
        # (the engine logs it and answers -32603), never the connection.
        with contextlib.ExitStack() as stack:
            context = Context(self, incoming)
            for hook in hooks:
                stack.enter_context(hook(context))
            return handler(self, incoming)

    def _notification(self, notification: Notification) -> None:
        if notification.method == "notifications/initialized":
            with self._notify_lock:
                held, self._held = self._held, []
                for method, params in held:
                    self._send_notification(method, params)
            self._operating.set()
            return
        if notification.method == "notifications/roots/list_changed":
            self.registry.roots_changed(self)
            return
        log.debug("notification from client: %s", notification.method)
