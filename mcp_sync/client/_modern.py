"""The modern era (2026-07-28) as :class:`~mcp_sync.Client` speaks it.

Mixed into the client, this part opens a connection in the right era (see
:mod:`mcp_sync.client._eras` for the rules) and then sends modern requests:

* **Every request carries its ``_meta``**: the version, the capabilities built from the
  client's handlers, the client's identity, and the log level once the application asked
  for log messages (:meth:`~mcp_sync.Client.set_logging_level`, which sends nothing in this
  era). ``serverInfo`` in a result's ``_meta`` updates :attr:`~mcp_sync.Client.server_info`.
* **Input-required results** (``resultType: "input_required"``) are answered through the
  handlers that serve the legacy era's server requests (sampling, elicitation, roots), and
  the request is sent again, with a new id, ``inputResponses`` and the opaque
  ``requestState`` exactly as received, round after round, within the caller's one
  timeout. A request the client has no handler for fails the call with the error the
  legacy era would have answered (-32601); nothing is sent again.
* **``subscriptions/listen``** stands behind the notification callbacks: while the
  application has ``on_list_changed`` or ``on_notification`` (and the server declared list
  changes), or has subscribed to a resource, one listen request stays open and its
  notifications reach the same callbacks.
* ``ping`` becomes ``server/discover`` (the era has no ping); ``resources/subscribe`` and
  ``unsubscribe`` change what the listen request asks for.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import attrs

from .. import types
from ..engine._engine import Engine, IncomingRequest, ProgressCallback
from ..engine._threads import ThreadGroup, WorkerPool
from ..errors import (
    AuthorizationError,
    CapabilityError,
    ConnectionClosed,
    InvalidParams,
    LegacyOnlyServer,
    McpError,
    MethodNotFound,
    ProtocolVersionError,
    RequestCancelled,
    RequestTimeout,
    ResourceNotFound,
    RpcError,
)
from ..protocol._convert import from_wire
from ..protocol._jsonrpc import Request, RequestId
from ..protocol._modern import SERVER_INFO_KEY
from ..protocol._session import Session
from ..protocol._versions import KNOWN_VERSIONS, profile_for
from ._eras import (
    ERA_CACHE,
    UNSUPPORTED_VERSION,
    ModernSession,
    discovered,
    is_input_required,
    modern_error,
    modern_only,
    named_versions,
    request_meta,
    with_meta,
)
from .http._headers import header_problem

if TYPE_CHECKING:
    from ._handlers import ClientHandlers

__all__ = ["ModernEra", "RoundsFuture"]

log = logging.getLogger("mcp_sync.client")

#: However often a server asks for more input, a call gives up after this many rounds.
MAX_ROUNDS = 10
#: Requests of the legacy era that the client answers itself in the modern era.
LOCAL_IN_MODERN = frozenset({"ping", "logging/setLevel", "resources/subscribe",
                             "resources/unsubscribe"})


#: The ``_meta`` key naming the listen request a notification belongs to.
SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"


class Listening:
    """The ``subscriptions/listen`` request kept open, and whether the server said so."""

    def __init__(self) -> None:
        self.future: Future[dict[str, Any]] | None = None
        self.request_id: RequestId | None = None
        self.acknowledged = threading.Event()


class RoundsFuture(Future[dict[str, Any]]):
    """The Future of a modern call, across its input-required rounds.

    Every round's request is sent with this Future as its own, so a call that needs no
    input costs one Future, as in the legacy era: each answer is screened first (on the
    reader thread), and completes the Future unless it asks for input, in which case the
    next round starts off the reader thread once the client's handlers have answered.
    """

    def __init__(self, era: ModernEra, engine: Engine, method: str,
                 params: dict[str, Any] | None, timeout: float,
                 on_progress: ProgressCallback | None) -> None:
        super().__init__()
        self.engine = engine
        self.method = method
        self.stopped = False  # cancelled by the client: no further round starts
        self._era = era
        self._params = params
        self._timeout = timeout
        self._deadline = time.monotonic() + timeout
        self._on_progress = on_progress
        self._rounds = 0

    def send(self, params: dict[str, Any] | None) -> None:
        """Send this round's request (the first one, or one carrying answers)."""
        # The first round has the whole timeout; later ones what is left of it.
        remaining = (self._timeout if self._rounds == 0
                     else self._deadline - time.monotonic())
        if remaining <= 0:
            _settle(self, error=RequestTimeout(
                f"{self.method} needed more input than its timeout allowed"))
            return
        engine = self.engine
        version = engine.session.negotiated_version
        assert version is not None
        era = self._era
        try:
            engine.request(self.method, with_meta(params, era._meta(version)),
                           timeout=remaining, on_progress=self._on_progress,
                           max_timeout=era.max_timeout, future=self)
        except McpError as exc:
            _settle(self, error=exc)
            return
        if self.stopped:
            engine.cancel(self, "cancelled by the client")

    def set_result(self, result: dict[str, Any]) -> None:
        if self.done():
            super().set_result(result)  # refused (InvalidStateError), as ever
            return
        try:
            final = self._screen(result)
        except Exception as exc:
            self.set_exception(exc)
            return
        if final is not None:
            super().set_result(final)

    def set_exception(self, exception: BaseException | None) -> None:
        if isinstance(exception, InvalidParams) and self.method == "resources/read":
            # The era answers an unknown resource -32602 (no longer -32002): it is
            # still a ResourceNotFound to the caller, with the code the server sent.
            exception = ResourceNotFound(exception.message, exception.data,
                                         code=int(exception.code))
        super().set_exception(exception)

    def _screen(self, result: dict[str, Any]) -> dict[str, Any] | None:
        """The result to complete with, or None when another round has started."""
        meta = result.get("_meta")
        if meta is not None:
            self._era._note_server_info(meta)
        if not is_input_required(result):
            return _consumed(result, meta)
        self._rounds += 1
        if self._rounds > MAX_ROUNDS:
            raise McpError(
                f"the server asked for more input {MAX_ROUNDS} times in a row for one "
                f"{self.method}; the call was given up")
        # Handlers may block for as long as a user takes: never on the reader thread.
        if not self._era._inputs().submit(self._next_round, result):
            raise ConnectionClosed("the client was closed")
        return None

    def _next_round(self, result: dict[str, Any]) -> None:
        era = self._era
        try:
            responses = era._answer_inputs(self.engine, result, lambda: self.stopped)
        except Exception as exc:
            _settle(self, error=exc)
            return
        again = {key: value for key, value in (self._params or {}).items()
                 if key not in ("inputResponses", "requestState")}
        if responses is not None:
            again["inputResponses"] = responses
        elif era._closed_event.wait(0.05 * min(self._rounds, 5)):
            _settle(self, error=ConnectionClosed("the client was closed"))
            return  # state only: the server asks us to come back a little later
        if isinstance(result.get("requestState"), str):
            again["requestState"] = result["requestState"]
        self.send(again)


class ModernEra:
    """The era finding, modern requests, input rounds and listening of the client."""

    timeout: float
    max_timeout: float
    _engine: Engine
    _handlers: ClientHandlers
    _info: types.Implementation
    _versions: tuple[str, ...]
    _modern_versions: tuple[str, ...]
    _era_key: str | None
    _probe_timeout: float
    _init_result: types.InitializeResult | None
    _threads: ThreadGroup
    _closed_event: threading.Event
    _callback_executor: Any
    _log_level: str | None
    _listen_lock: threading.Lock
    _listened: dict[str, Any] | None
    _listening: Listening | None
    _resource_subscriptions: dict[str, None]
    _input_pool: WorkerPool | None
    _meta_cache: dict[tuple[str, str | None], dict[str, Any]]
    _server_info_seen: Any

    def _handshake(self, engine: Engine, timeout: float) -> None:
        raise NotImplementedError

    def _wait(self, future: Future[dict[str, Any]], timeout: float) -> dict[str, Any]:
        raise NotImplementedError

    # --- finding the era ----------------------------------------------------------------------

    def _open(self, engine: Engine, timeout: float) -> None:
        """Settle the era on a new connection and make it ready (see ``_eras``)."""
        legacy, modern = self._versions, self._modern_versions
        verdict = ERA_CACHE.get(self._era_key)
        if modern and (verdict != "legacy" or not legacy):
            wait = timeout if verdict == "modern" else min(timeout, self._probe_timeout)
            found = self._discover(engine, wait)
            if found is not None:
                self._adopt(engine, found)
                return
            if not legacy:
                raise LegacyOnlyServer(
                    "the server speaks only legacy MCP (it does not answer server/discover "
                    f"as a modern server does); this client is configured for "
                    f"{', '.join(modern)} only", supported=modern)
        try:
            self._handshake(engine, timeout)
        except (RpcError, ProtocolVersionError) as exc:
            refusal = _modern_refusal(exc)
            if refusal is None:
                raise
            if not modern:
                raise modern_only(refusal, legacy, modern) from refusal
            # Modern after all (a stale verdict, a probe cut short): ask it properly.
            found = self._discover(engine, timeout)
            if found is None:
                raise
            self._adopt(engine, found)
            return
        if modern:  # a verdict only where the server was asked (a legacy client never asks)
            ERA_CACHE.remember(self._era_key, "legacy")

    def _discover(self, engine: Engine, timeout: float) -> types.InitializeResult | None:
        """``server/discover``: what it found, or None when the server is legacy."""
        modern = self._modern_versions
        version = modern[-1]
        for attempt in range(2):
            params = {"_meta": self._meta(version)}
            try:
                result = self._wait(engine.request("server/discover", params,
                                                   timeout=timeout), timeout)
            except RequestTimeout:
                log.info("no answer to server/discover within %.1fs: speaking legacy MCP",
                         timeout)
                return None
            except RpcError as exc:
                if int(exc.code) == UNSUPPORTED_VERSION:
                    named = named_versions(exc)
                    mutual = [v for v in modern if v in named]
                    if mutual and attempt == 0:
                        version = mutual[-1]
                        continue  # the server named a version we share: once more with it
                    if named and not any(v in KNOWN_VERSIONS for v in named):
                        raise modern_only(exc, self._versions, modern) from exc
                    if not self._versions:
                        raise
                    return None
                if modern_error(exc) or isinstance(exc, AuthorizationError):
                    # Refused as modern, or for credentials (no era differs, AMBIG-24).
                    raise
                log.debug("server/discover refused (%s): speaking legacy MCP", str(exc))
                return None
            try:
                found = discovered(result, modern, version)
            except InvalidParams as exc:  # not a discover result: no evidence of the era
                log.warning("ignoring a malformed server/discover result: %s", exc.message)
                return None
            if found is None:
                log.debug("server/discover names no modern version we speak: legacy MCP")
            return found
        return None  # pragma: no cover - the loop returns or continues once

    def _adopt(self, engine: Engine, found: types.InitializeResult) -> None:
        session = engine.session
        assert isinstance(session, ModernSession)
        session.modern = True
        session.negotiated_version = found.protocol_version
        session.profile = profile_for(found.protocol_version)
        session.peer_info = found.server_info
        session.peer_capabilities = found.capabilities
        session.peer_instructions = found.instructions
        self._init_result = found
        ERA_CACHE.remember(self._era_key, "modern")
        log.debug("speaking modern MCP %s with %r", found.protocol_version,
                  found.server_info.name)
        self._listen_update(engine, force=True)

    def _meta(self, version: str) -> dict[str, Any]:
        # The capabilities and identity are fixed once the client is made: built once per
        # version and log level, not for every request.
        key = (version, self._log_level)
        meta = self._meta_cache.get(key)
        if meta is None:
            meta = request_meta(version, self._handlers.capabilities(), self._info,
                                self._log_level)
            self._meta_cache[key] = meta
        return meta

    @property
    def era(self) -> str:
        """``"modern"`` (2026-07-28 and later, no handshake) or ``"legacy"`` (``initialize``)."""
        session = self._engine.session
        return "modern" if isinstance(session, ModernSession) and session.modern else "legacy"

    # --- modern requests ----------------------------------------------------------------------

    def _modern_call(self, engine: Engine, method: str, params: dict[str, Any] | None,
                     timeout: float, on_progress: ProgressCallback | None) -> RoundsFuture:
        call = RoundsFuture(self, engine, method, params, timeout, on_progress)
        call.send(params)
        return call

    def _inputs(self) -> WorkerPool:
        pool = self._input_pool
        if pool is None:
            pool = self._input_pool = WorkerPool(self._threads, "input", 4)
        return pool

    def _answer_inputs(self, engine: Engine, result: dict[str, Any],
                       stopped: Callable[[], bool]) -> dict[str, Any] | None:
        """The answers to the requests of an input-required result (None: it asked none).

        Raises:
            RpcError: a request the client has no handler for (-32601), one that breaks
                the schema (-32602), or the error a handler chose (a refused sampling).
        """
        requests = result.get("inputRequests")
        if not isinstance(requests, dict) or not requests:
            if not isinstance(result.get("requestState"), str):
                raise RpcError("the server asked for input but named neither input "
                               "requests nor request state", result)
            return None
        served = self._handlers.served_methods()
        answers: dict[str, Any] = {}
        for key, request in requests.items():
            if stopped():
                raise RequestCancelled("the call was cancelled while answering its "
                                       "input requests")
            method = request.get("method") if isinstance(request, dict) else None
            params = request.get("params") if isinstance(request, dict) else None
            if not isinstance(method, str) or method not in served:
                raise MethodNotFound(
                    f"the server asked for {method!r} input, which this client does not "
                    "serve (give it a handler: sampling_handler, elicitation_handler or "
                    "roots)")
            incoming = IncomingRequest(engine, Request(f"input:{key}", method,
                                                       params if isinstance(params, dict)
                                                       else None), None, None)
            if stopped():
                incoming.cancelled.set()
            answer = self._handlers.serve(incoming)
            answers[key] = answer
        return answers

    def _note_server_info(self, meta: Any) -> None:
        raw = meta.get(SERVER_INFO_KEY) if isinstance(meta, dict) else None
        current = self._init_result
        if not isinstance(raw, dict) or current is None or raw == self._server_info_seen:
            return  # every modern result carries it, nearly always as before
        self._server_info_seen = raw
        try:
            info = from_wire(raw, types.Implementation)
        except RpcError:
            return
        if info != current.server_info:
            self._init_result = types.InitializeResult(
                protocol_version=current.protocol_version, capabilities=current.capabilities,
                server_info=info, instructions=current.instructions)

    def _cancel_call(self, engine: Engine, future: Future[dict[str, Any]]) -> bool:
        if isinstance(future, RoundsFuture):
            future.stopped = True
            future.engine.cancel(future, "cancelled by the client")  # a round under way
            return _settle(future, error=RequestCancelled("the call was cancelled"))
        return engine.cancel(future, "cancelled by the client")

    def _screen_tools(self, page: types.ListToolsResult) -> types.ListToolsResult:
        """Note each tool's ``x-mcp-header`` arguments for the HTTP transport, and (modern
        era) leave out tools whose annotations are invalid (SEP-2243)."""
        engine = self._engine
        if not (isinstance(engine.session, ModernSession) and engine.session.modern):
            return page
        remember = getattr(engine.transport, "remember_tools", None)
        if remember is not None:
            invalid = set(remember([(tool.name, tool.input_schema) for tool in page.tools]))
        else:
            invalid = set()
            for tool in page.tools:
                problem = header_problem(tool.input_schema)
                if problem is not None:
                    log.warning("tool %r cannot be called: %s", tool.name, problem)
                    invalid.add(tool.name)
        if not invalid:
            return page
        return attrs.evolve(page, tools=[t for t in page.tools if t.name not in invalid])

    # --- what the era answers itself ------------------------------------------------------------

    def _modern_local(self, engine: Engine, method: str, params: dict[str, Any],
                      timeout: float) -> dict[str, Any]:
        session = engine.session
        caps = session.peer_capabilities
        if method == "ping":
            # The era has no ping: discover is the cheapest request every server answers.
            version = session.negotiated_version
            assert version is not None
            self._wait(engine.request("server/discover", {"_meta": self._meta(version)},
                                      timeout=timeout), timeout)
            return {}
        if method == "logging/setLevel":
            if getattr(caps, "logging", None) is None:
                raise CapabilityError("the server did not declare the 'logging' capability "
                                      "that logging/setLevel needs")
            level = params.get("level")
            self._log_level = level if isinstance(level, str) else None
            return {}
        resources = getattr(caps, "resources", None)
        if resources is None or not getattr(resources, "subscribe", None):
            raise CapabilityError(f"the server did not declare the 'resources.subscribe' "
                                  f"capability that {method} needs")
        uri = params.get("uri")
        with self._listen_lock:
            if method == "resources/subscribe":
                self._resource_subscriptions[str(uri)] = None
            else:
                self._resource_subscriptions.pop(str(uri), None)
        self._listen_update(engine)
        self._await_listening(timeout)
        return {}

    # --- subscriptions/listen -------------------------------------------------------------------

    def _listen_filter(self, engine: Engine) -> dict[str, Any]:
        handlers = self._handlers
        caps = engine.session.peer_capabilities
        wanted: dict[str, Any] = {}
        if handlers.on_list_changed is not None or handlers.on_notification is not None:
            for kind, key in (("tools", "toolsListChanged"), ("prompts", "promptsListChanged"),
                              ("resources", "resourcesListChanged")):
                if getattr(getattr(caps, kind, None), "list_changed", None):
                    wanted[key] = True
        if self._resource_subscriptions:
            wanted["resourceSubscriptions"] = list(self._resource_subscriptions)
        return wanted

    def _listen_update(self, engine: Engine, *, force: bool = False) -> None:
        """Keep one ``subscriptions/listen`` open for what the application wants to hear."""
        with self._listen_lock:
            wanted = self._listen_filter(engine)
            if wanted == self._listened and not force:
                return
            old, self._listening = self._listening, None
            self._listened = wanted
            if wanted:
                version = engine.session.negotiated_version
                assert version is not None
                params = with_meta({"notifications": wanted}, self._meta(version))
                listening = Listening()

                def make(session: Session) -> Request:
                    request = session.request("subscriptions/listen", params)
                    listening.request_id = request.id  # the subscription's id
                    return request

                try:
                    listening.future = engine.start_request(make, timeout=None)
                except McpError as exc:
                    log.warning("could not listen for the server's notifications: %s", str(exc))
                else:
                    self._listening = listening
                    listening.future.add_done_callback(
                        lambda done: self._listen_ended(engine, done))
        if old is not None and old.future is not None:
            old.acknowledged.set()
            engine.cancel(old.future, "the subscriptions changed")

    def _await_listening(self, timeout: float) -> None:
        """Wait until the server acknowledged the listen request now open (so that a
        change right after ``subscribe_resource`` is heard); raise what ended it."""
        listening = self._listening
        if listening is None or listening.future is None:
            return
        if not listening.acknowledged.wait(timeout):
            raise RequestTimeout("the server did not acknowledge subscriptions/listen "
                                 f"within {timeout}s")
        future = listening.future
        if future.done() and not future.cancelled() and future.exception() is not None:
            raise future.exception()  # type: ignore[misc]

    def _note_acknowledged(self, method: str, params: dict[str, Any] | None) -> None:
        """Called with every notification, before the callbacks."""
        if method != "notifications/subscriptions/acknowledged":
            return
        meta = (params or {}).get("_meta")
        listening = self._listening
        if (isinstance(meta, dict) and listening is not None
                and meta.get(SUBSCRIPTION_ID_KEY) == listening.request_id):
            listening.acknowledged.set()

    def _listen_ended(self, engine: Engine, done: Future[dict[str, Any]]) -> None:
        with self._listen_lock:
            listening = self._listening
            if listening is None or listening.future is not done:
                return  # replaced, or cancelled on purpose
            self._listening = None
            self._listened = None
        listening.acknowledged.set()  # whoever waits for it learns how it ended
        error = None if done.cancelled() else done.exception()
        if isinstance(error, (ConnectionClosed, RequestCancelled)) or engine.closed:
            return
        if isinstance(error, RpcError) and not isinstance(error, RequestTimeout):
            log.info("the server does not keep subscriptions/listen open: %s", str(error))
            if int(error.code) == MethodNotFound.code:
                return
        # The server ended the subscription (its answer) or the stream broke: listen again
        # a moment later, off the reader thread.
        self._inputs().submit(self._listen_again, engine)

    def _listen_again(self, engine: Engine) -> None:
        if not self._closed_event.wait(1.0) and not engine.closed:
            self._listen_update(engine, force=True)


def _consumed(result: dict[str, Any], meta: Any) -> dict[str, Any]:
    """A complete result without what the client has read from it (``resultType``, the
    server's identity in ``_meta``), so that both eras hand the caller the same result;
    ``ttlMs`` and ``cacheScope`` stay (in the typed result's ``extra``)."""
    result.pop("resultType", None)
    if isinstance(meta, dict) and SERVER_INFO_KEY in meta:
        if len(meta) == 1:
            del result["_meta"]  # nearly always: the identity was all it held
        else:
            result["_meta"] = {key: value for key, value in meta.items()
                               if key != SERVER_INFO_KEY}
    return result


def _settle(future: RoundsFuture, *, result: dict[str, Any] | None = None,
            error: BaseException | None = None) -> bool:
    if future.done():
        return False
    try:
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result if result is not None else {})
    except Exception:  # settled by another thread meanwhile (InvalidStateError)
        return False
    return True


def _modern_refusal(error: BaseException) -> RpcError | None:
    """The modern error behind a refused ``initialize``, if it was one (COEX-10)."""
    if isinstance(error, RpcError) and modern_error(error):
        return error
    cause = error.__cause__
    if isinstance(error, ProtocolVersionError) and isinstance(cause, RpcError):
        named = named_versions(cause)
        if named and not any(v in KNOWN_VERSIONS for v in named):
            return cause
    return None

