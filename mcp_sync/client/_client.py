"""The MCP client: a typed, blocking API over one connection to one server.

A :class:`Client` connects and initializes as it is created, so a client you hold is
always ready. It may be shared by any number of threads; their calls pipeline over the
one connection. ``*_async`` methods return a ``concurrent.futures.Future`` instead of
blocking, for code (a GUI event loop) that must not wait; cancelling that Future, from
any thread, cancels the call at the server.

The typed request methods live in :mod:`mcp_sync.client._requests`; what the client does
for its server (sampling, roots, notification callbacks) in
:mod:`mcp_sync.client._handlers`. This module holds the connection itself.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent import futures
from concurrent.futures import Executor, Future
from typing import Any, TypeVar

from .. import types
from .._version import __version__
from ..engine._engine import Engine, IncomingRequest, ProgressCallback
from ..engine._threads import ThreadGroup, WorkerPool
from ..errors import CapabilityError, McpError, RequestTimeout, SessionExpired
from ..protocol._convert import from_wire, prepare_decoding
from ..protocol._jsonrpc import Notification
from ..protocol._make_icons import make_icons
from ..protocol._session import Role
from ..protocol._versions import KNOWN_VERSIONS
from ..transports.base import Transport
from ._call_future import CallFuture
from ._callbacks import on_executor
from ._elicitation import ElicitationHandler
from ._eras import ModernSession, client_versions
from ._factories import Factories
from ._handlers import (
    ClientHandlers,
    ListChangedCallback,
    LogCallback,
    NotificationCallback,
    ResourceUpdatedCallback,
    RootLike,
    SamplingHandler,
    SamplingRejected,
    ToolApproval,
    ToolCallDenied,
    normalize_roots,
)
from ._life import Backoff, Lifeline, track, untrack
from ._modern import LOCAL_IN_MODERN, Listening, ModernEra
from ._requests import RequestMethods
from ._session_state import SAFE_TO_REPEAT, SESSION_STATE, SessionState
from ._structured import OutputSchemas

__all__ = ["Client", "SamplingRejected", "ToolCallDenied"]

log = logging.getLogger("mcp_sync.client")

T = TypeVar("T")

DEFAULT_TIMEOUT = 60.0
#: However often progress pushes a call's deadline back, it ends after this (AMBIG-21).
DEFAULT_MAX_TIMEOUT = 600.0


class Client(Factories, RequestMethods, ModernEra, Lifeline):
    """A connection to one MCP server, initialized and ready to use.

    Most code creates one with :meth:`stdio` or :meth:`http`; any
    :class:`~mcp_sync.transports.Transport` (or a function that makes one) works with the
    constructor. Use it as a context manager, or call :meth:`close`; a client left open
    is closed at interpreter exit.

    Args:
        transport: the connection to the server, or a function that makes a new one
            (needed for ``reconnect``).
        name: our ``clientInfo.name``.
        version: our ``clientInfo.version``.
        timeout: the default timeout of every call, in seconds.
        max_timeout: the longest any call may run while progress keeps extending it.
        sampling_handler: answers the server's ``sampling/createMessage`` requests, as
            ``fn(params: types.CreateMessageRequestParams)`` returning a
            ``types.CreateMessageResult`` or a dict in its wire shape. Raise
            :class:`SamplingRejected` when the user refuses, or any
            :class:`~mcp_sync.errors.RpcError` to send that error. The ``sampling``
            capability is declared only when a handler is given (CAPS-4).
        sampling_capabilities: what the sampling handler supports beyond plain
            messages, declared under ``sampling``: ``{"tools": {}}`` when it can let the
            model call tools (2025-11-25), ``{"context": {}}`` for ``includeContext``.
        roots: the ``file://`` roots the server may work in, as ``types.Root`` objects,
            ``{"uri": ..., "name": ...}`` dicts, URI strings or paths. None (the
            default) declares no roots; ``[]`` declares roots, none yet, so that
            :meth:`set_roots` can add some later.
        on_log: called as ``fn(params: types.LoggingMessageNotificationParams)`` for
            each log message the server sends (see :meth:`set_logging_level`).
        on_resource_updated: called as ``fn(uri)`` when a subscribed resource changed.
        on_list_changed: called as ``fn(kind)`` with ``"tools"``, ``"resources"`` or
            ``"prompts"`` when the server says that list changed.
        on_notification: called as ``fn(method, params)`` for every notification from
            the server, after the typed callback for it if there is one.
        approve_tool_call: called as ``fn(name, arguments)`` before every tool call;
            returning False raises :class:`ToolCallDenied` and sends nothing (GEN-5).
        callback_executor: where every callback runs: the completion of ``*_async``
            futures, ``on_progress``, ``on_log`` and the other notification callbacks,
            and the sampling handler. Give a GUI toolkit's (:mod:`mcp_sync.gui` has
            them for Tk and Qt) and none of them runs on another thread. By default
            they run on threads of the client's.
        elicitation_handler: asks the user for what a server's ``elicitation/create``
            wants, as ``fn(request: ElicitationRequest)`` returning
            ``request.accept(values)``, ``request.decline()`` or ``request.cancel()``.
            Accepted values are checked against the requested schema before they are
            sent. The ``elicitation`` capability is declared only when a handler is
            given; without one the request is answered -32601.
        elicitation_modes: the modes the handler serves: ``("form",)`` (the default),
            ``("form", "url")`` or ``("url",)``. A request in another mode is answered
            -32602. The library never opens a URL: the handler does, with consent.
        on_elicitation_complete: called as ``fn(elicitation_id)`` when the server says a
            URL-mode elicitation the user accepted is done; unknown or repeated ids are
            ignored.
        max_workers: how many server requests (sampling, roots) are served at once.
        protocol_version: the newest version to speak (VERSION-1); by default the
            newest of ``supported_versions``. A legacy version (2025-11-25 or older)
            leaves the modern era out; the client accepts that version or an older one.
        supported_versions: the protocol versions the client speaks, by default all of
            them: 2026-07-28 (the modern era, tried first) and 2024-11-05 to 2025-11-25
            (the legacy era, ``initialize``). A server answering with another is
            disconnected with :class:`ProtocolVersionError` (VERSION-4, DES-4); a
            server of the other era only raises
            :class:`~mcp_sync.errors.ModernOnlyServer` (COEX-10) or
            :class:`~mcp_sync.errors.LegacyOnlyServer`. See docs/client.md "Eras".
        probe_timeout: how long ``server/discover`` may go unanswered before the server
            is taken to speak only the legacy era (a server that answers with an error is
            known at once). Only for a server whose era is not yet known.
        title, description, website_url, icons: more of our ``clientInfo`` (V1125-6);
            icons are :class:`~mcp_sync.types.Icon` objects or dicts in the wire shape,
            each ``src`` an ``https:`` URL or a ``data:image/`` URI.
        reconnect: when the server is lost, connect again (a new transport from
            ``transport``, a new ``initialize``) at the next call, instead of failing
            every later call. Calls in flight at the loss still fail; they are never
            repeated. See docs/reliability.md.
        reconnect_delay: after a failed attempt to reconnect, wait this long before the
            next; doubled after each further failure, with jitter.
        max_reconnect_delay: the longest wait between two attempts to reconnect.
        validate_tool_output: check each tool result against the ``outputSchema`` that
            :meth:`list_tools` last gave for that tool (V0618-20); a result that does not
            fit raises :class:`~mcp_sync.errors.ToolOutputError`. False takes results as
            they come.

    Notification callbacks run one at a time on a thread of the client's (or on
    ``callback_executor``), in the order the server sent the notifications; one that
    raises is logged and the rest go on.

    Raises:
        ValueError: a root is not a ``file://`` URI (ROOTS-3), the version is unknown,
            or ``reconnect`` is asked for with a transport rather than a function.
        ProtocolVersionError: the server speaks no version we do; it was disconnected.
        ConnectionLost: the server went away during initialization.
        RequestTimeout: the server did not answer ``initialize`` within ``timeout``.
    """

    def __init__(
        self,
        transport: Transport | Callable[[], Transport],
        *,
        name: str = "mcp-sync",
        version: str = __version__,
        timeout: float = DEFAULT_TIMEOUT,
        max_timeout: float = DEFAULT_MAX_TIMEOUT,
        sampling_handler: SamplingHandler | None = None,
        sampling_capabilities: Mapping[str, Any] | None = None,
        roots: Iterable[RootLike] | None = None,
        on_log: LogCallback | None = None,
        on_resource_updated: ResourceUpdatedCallback | None = None,
        on_list_changed: ListChangedCallback | None = None,
        on_notification: NotificationCallback | None = None,
        approve_tool_call: ToolApproval | None = None,
        callback_executor: Executor | None = None,
        elicitation_handler: ElicitationHandler | None = None,
        elicitation_modes: Iterable[str] = ("form",),
        on_elicitation_complete: Callable[[str], None] | None = None,
        max_workers: int = 4,
        protocol_version: str | None = None,
        supported_versions: Iterable[str] | None = None,
        title: str | None = None,
        description: str | None = None,
        website_url: str | None = None,
        icons: Iterable[types.Icon | Mapping[str, Any]] | None = None,
        reconnect: bool = False,
        reconnect_delay: float = 0.5,
        max_reconnect_delay: float = 30.0,
        validate_tool_output: bool = True,
        probe_timeout: float = 5.0,
    ) -> None:
        versions, modern_versions = client_versions(supported_versions, protocol_version)
        self._modern_versions = modern_versions
        self._era_key: str | None = getattr(transport, "era_key", None)
        self._probe_timeout = probe_timeout
        self._log_level: str | None = None
        self._listen_lock = threading.Lock()
        self._listened: dict[str, Any] | None = None
        self._listening: Listening | None = None
        self._resource_subscriptions: dict[str, None] = {}
        self._input_pool: WorkerPool | None = None
        self._meta_cache: dict[tuple[str, str | None], dict[str, Any]] = {}
        self._server_info_seen: Any = None  # the serverInfo of the last modern result
        self._connect: Callable[[], Transport] | None = None
        if isinstance(transport, Transport) or not callable(transport):
            if reconnect:
                raise ValueError("reconnect=True needs a way to connect again: pass a "
                                 "function that returns a new transport")
        else:
            self._connect = transport
        self._reconnect = reconnect
        self._backoff = Backoff(reconnect_delay, max_reconnect_delay)
        self.timeout = timeout
        self.max_timeout = max_timeout
        self._handlers = ClientHandlers(
            sampling_handler=sampling_handler, roots=roots, on_log=on_log,
            on_resource_updated=on_resource_updated, on_list_changed=on_list_changed,
            on_notification=on_notification, callback_executor=callback_executor,
            elicitation_handler=elicitation_handler, elicitation_modes=elicitation_modes,
            on_elicitation_complete=on_elicitation_complete,
            server_info=lambda: self._engine.session.peer_info,
            sampling_capabilities=sampling_capabilities)
        self._deliver = on_executor(callback_executor, self._handlers.deliver, "notification")
        self._approve_tool_call = approve_tool_call
        self._output_schemas = OutputSchemas() if validate_tool_output else None
        self._callback_executor = callback_executor
        self._info = types.Implementation(
            name=name, version=version, title=title, description=description,
            website_url=website_url, icons=make_icons(icons))
        self._versions = versions
        self._max_workers = max_workers
        self._threads = ThreadGroup("client-callbacks")
        self._callbacks = WorkerPool(self._threads, "callbacks", 1)
        self._init_result: types.InitializeResult | None = None
        self._generation = 0  # counts sessions, so one expiry starts one new session
        self._renew_lock = threading.Lock()
        self._life_lock = threading.Lock()
        self._closing = False
        self._closed_event = threading.Event()
        self._inherited: Engine | None = None  # the parent's, in the child of a fork
        self._pid = os.getpid()
        self._session_state = SessionState()
        first = self._connect() if self._connect is not None else transport
        assert isinstance(first, Transport) or not callable(first)
        try:
            self._engine = self._new_engine(first)
        except BaseException:
            first.close()
            raise
        self._engine.start()
        try:
            self._initialize()
        except BaseException:
            self.close()
            raise
        track(self)

    def _new_engine(self, transport: Transport) -> Engine:
        session = ModernSession(
            Role.CLIENT, info=self._info, capabilities=self._handlers.capabilities(),
            served_methods=self._handlers.served_methods(),
            versions=self._versions or KNOWN_VERSIONS)  # a modern-only client never offers them
        made: list[Engine] = []
        made.append(Engine(
            transport, session, handle_request=self._handle_request,
            handle_notification=self._notification, max_workers=self._max_workers,
            name="client", on_lost=lambda error: self._connection_lost(made, error)))
        return made[0]

    # --- life ------------------------------------------------------------------------------

    def _initialize(self, engine: Engine | None = None, timeout: float | None = None) -> None:
        # The era first (docs/client.md "Eras"): initialize only for a legacy server.
        self._open(self._engine if engine is None else engine,
                   self.timeout if timeout is None else timeout)

    def _handshake(self, engine: Engine, timeout: float) -> None:
        future = engine.start_request(
            lambda session: session.initialize_request(), timeout=timeout)
        # While the server starts (a spawned one takes a hundred milliseconds and more),
        # not once its answer is here.
        prepare_decoding(types.InitializeResult)
        result = self._wait(future, timeout)
        self._init_result = from_wire(result, types.InitializeResult)
        engine.notify("notifications/initialized")

    def close(self) -> None:
        """Disconnect (for stdio: stop the server process); idempotent, any thread.

        Calls still waiting fail with :class:`~mcp_sync.errors.ConnectionClosed`. A
        client still open when the interpreter exits is closed then.
        """
        with self._life_lock:
            self._closing = True
            engine = self._engine
        self._closed_event.set()
        untrack(self)
        if engine is not self._inherited:  # never what belongs to the parent of a fork
            engine.close()
        self._callbacks.close()
        if self._input_pool is not None:
            self._input_pool.close()
        self._threads.join(5.0)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called, or once the server left a client that does
        not reconnect (or was inherited by the child of a fork)."""
        if self._closing:
            return True
        return not self._reconnect and (
            self._engine is self._inherited or self._engine.closed)

    # --- what the server said at initialization ---------------------------------------------

    @property
    def server_info(self) -> types.Implementation:
        """The server's name and version."""
        assert self._init_result is not None
        return self._init_result.server_info

    @property
    def server_capabilities(self) -> types.ServerCapabilities:
        """What the server declared it supports."""
        assert self._init_result is not None
        return self._init_result.capabilities

    @property
    def instructions(self) -> str | None:
        """The server's instructions for using it, if it gave any (LIFECYCLE-8)."""
        assert self._init_result is not None
        return self._init_result.instructions

    @property
    def protocol_version(self) -> str:
        """The protocol version agreed at initialization, or (modern era) the one every
        request names."""
        version = self._engine.session.negotiated_version
        assert version is not None
        return version

    # --- requests --------------------------------------------------------------------------

    def send_request_async(self, method: str, params: dict[str, Any] | None = None, *,
                           timeout: float | None = None,
                           on_progress: ProgressCallback | None = None) -> Future[dict[str, Any]]:
        """Send any request and return a Future of its raw result (the low-level API).

        The Future fails with the error the server answered, or with RequestTimeout,
        ConnectionLost or ConnectionClosed. Its ``cancel()`` cancels the request: the
        server is sent ``notifications/cancelled`` and whoever waits on the Future gets
        :class:`~mcp_sync.errors.RequestCancelled`.

        Raises:
            CapabilityError: the server did not declare what ``method`` needs (CAPS-5).
            ConnectionClosed, ConnectionLost: the connection is over.
        """
        return self._typed_async(self._send(method, params, timeout, on_progress), _same)

    def _send(self, method: str, params: dict[str, Any] | None, timeout: float | None,
              on_progress: ProgressCallback | None) -> Future[dict[str, Any]]:
        # The engine's own Future: completed on the reader thread, so never handed out.
        engine = self._engine_for(timeout)
        progress = on_executor(self._callback_executor, on_progress, "on_progress")
        timeout = self.timeout if timeout is None else timeout
        if _modern(engine):
            return self._modern_call(engine, method, params, timeout, progress)
        return engine.request(method, params, timeout=timeout, on_progress=progress,
                              max_timeout=self.max_timeout)

    def send_request(self, method: str, params: dict[str, Any] | None = None, *,
                     timeout: float | None = None,
                     on_progress: ProgressCallback | None = None) -> dict[str, Any]:
        """Send any request and block for its raw result (the low-level API).

        Raises:
            RpcError: the server answered with an error (the most specific subclass).
            RequestTimeout: no answer within ``timeout``; the request was cancelled.
            ConnectionLost: the server went away. ConnectionClosed: we closed.
            CapabilityError: the server did not declare what ``method`` needs.
        """
        timeout = self.timeout if timeout is None else timeout
        if method in LOCAL_IN_MODERN:
            engine = self._engine_for(timeout)
            if _modern(engine):
                return self._modern_local(engine, method, params or {}, timeout)
        generation = self._generation
        try:
            result = self._wait(self._send(method, params, timeout, on_progress), timeout)
        except SessionExpired:
            # HTTP-35: the server forgot our session. Start a new one; repeat only calls
            # that cannot change anything at the server.
            self._renew_session(generation)
            if method not in SAFE_TO_REPEAT:
                raise
            result = self._wait(self._send(method, params, timeout, on_progress), timeout)
        if method in SESSION_STATE:
            self._session_state.remember(method, params or {})
        return result

    def _renew_session(self, generation: int) -> None:
        with self._renew_lock:
            if self._generation != generation:
                return  # another thread already started the new session
            log.info("the server ended our session; initializing a new one")
            self._engine.restart_session(SessionExpired("the server ended the session"))
            self._initialize()
            self._generation += 1
            self._restore_session_state()

    def _restore_session_state(self) -> None:
        # Never through send_request, which could renew again from inside a renewal.
        for method, params in self._session_state.requests_to_restore():
            try:
                engine = self._engine
                if _modern(engine):  # the era keeps the level and subscriptions itself
                    self._modern_local(engine, method, params, self.timeout)
                    continue
                # On this engine only: a loss now is met by the next call.
                self._wait(engine.request(method, params, timeout=self.timeout),
                           self.timeout)
            except McpError as exc:
                log.warning("could not restore %s %s in the new session: %s",
                            method, params, exc)

    def _wait(self, future: Future[dict[str, Any]], timeout: float) -> dict[str, Any]:
        # The engine's watchdog ends every call at its deadline; the margin only guards
        # against the watchdog itself being gone.
        try:
            return future.result(max(timeout, self.max_timeout) + 5.0)
        except (TimeoutError, futures.TimeoutError) as exc:  # the same class from 3.11
            if isinstance(exc, McpError):
                raise
            raise RequestTimeout("no answer from the server") from None

    def _typed_async(self, future: Future[dict[str, Any]],
                     convert: Callable[[dict[str, Any]], T]) -> Future[T]:
        # Cancelling the Future handed out cancels the call (and tells the server), on
        # the connection it was sent on.
        engine = self._engine
        outer: CallFuture[T] = CallFuture(lambda: self._cancel_call(engine, future))

        def transfer(done: Future[dict[str, Any]]) -> None:
            if not outer.set_running_or_notify_cancel():
                return
            error = done.exception()
            if error is not None:
                outer.set_exception(error)
                return
            try:
                outer.set_result(convert(done.result()))
            except Exception as exc:
                outer.set_exception(exc)

        def dispatch(done: Future[dict[str, Any]]) -> None:
            # Never run user callbacks on the reader thread that completed ``done``.
            try:
                if self._callback_executor is not None:
                    self._callback_executor.submit(transfer, done)
                    return
                if self._callbacks.submit(transfer, done):
                    return
            except RuntimeError:  # the executor was shut down: complete here rather than never
                log.warning("callback executor refused work; completing on the reader thread")
            transfer(done)

        future.add_done_callback(dispatch)
        return outer

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification to the server (the low-level API)."""
        self._engine_for(None).notify(method, params)

    # --- roots -----------------------------------------------------------------------------

    @property
    def roots(self) -> list[types.Root]:
        """The roots offered to the server now (empty if the client offers none)."""
        return list(self._handlers.roots)

    def set_roots(self, roots: Iterable[RootLike]) -> None:
        """Replace the roots offered to the server and tell it they changed (ROOTS-4).

        The server is sent ``notifications/roots/list_changed`` when the new roots differ
        from the old ones; it then asks for them with ``roots/list``.

        Args:
            roots: ``types.Root`` objects, ``{"uri": ..., "name": ...}`` dicts,
                ``file://`` URI strings or paths, as for the constructor.

        Raises:
            ValueError: a root is not a ``file://`` URI (ROOTS-3); nothing changed.
            CapabilityError: the client was created without ``roots`` and so never
                declared them; create it with ``roots=[]`` to add roots later.
            ConnectionClosed, ConnectionLost: the connection is over (the roots were
                replaced, but the server could not be told).
        """
        if not self._handlers.offers_roots:
            raise CapabilityError("this client declared no roots; create it with "
                                  "roots=[] to offer roots later")
        # The modern era has no roots/list_changed: every input request reads them afresh.
        if self._handlers.replace_roots(normalize_roots(roots)) and self.era == "legacy":
            self._engine_for(None).notify("notifications/roots/list_changed")

    # --- from the server -------------------------------------------------------------------

    def _handle_request(self, incoming: IncomingRequest) -> dict[str, Any] | None:
        return self._handlers.serve(incoming)

    def _notification(self, notification: Notification) -> None:
        self._note_acknowledged(notification.method, notification.params)
        self._deliver(notification)


def _modern(engine: Engine) -> bool:
    session = engine.session
    return isinstance(session, ModernSession) and session.modern


def _same(result: dict[str, Any]) -> dict[str, Any]:
    return result

