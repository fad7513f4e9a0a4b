"""``mcp-sync bridge``: serve one server on another transport.

A :class:`BridgeServer` is a :class:`~mcp_sync.Server` whose every request handler
forwards the request to an upstream :class:`~mcp_sync.Client`, with its progress and its
cancellation; the upstream's notifications (log messages, list and resource changes)
go to the bridge's clients, and its requests for input (sampling, elicitation) are
asked of the client whose call is in flight (:mod:`._calls`), in either era. Roots are
not passed on. So ``bridge --port`` serves a stdio server over Streamable HTTP and
``bridge --stdio`` an HTTP server over stdio.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from types import FrameType
from typing import Any

from .. import types
from ..client import Client, ElicitationRequest
from ..client._modern import LOCAL_IN_MODERN
from ..engine._engine import IncomingRequest
from ..errors import InternalError
from ..protocol._elicitation import ElicitationResult
from ..protocol._meta_keys import PROGRESS_TOKEN_KEY
from ..server import Server, ServerConnection
from ..server._context import Context
from ..server._handlers import HANDLERS
from ..server._registry import Registry
from ..server._rounds import INPUT_METHODS
from ._args import EXIT_CONNECTION, EXIT_INTERRUPTED, EXIT_OK
from ._calls import UpstreamCall
from ._common import connect, fail, wait_lost

__all__ = ["BridgeServer", "bridge"]

#: Where a modern request's sealed state keeps the id of its call upstream.
_CALL_KEY = "mcp-sync-bridge-call"


class BridgeServer(Server):
    """A server that forwards everything to ``upstream`` (see the module docstring)."""

    def __init__(self, timeout: float) -> None:
        super().__init__("mcp-sync-bridge")
        self._timeout = timeout
        self._upstream: Client | None = None
        self._calls_lock = threading.Lock()
        # Calls being served now, latest last; and modern ones between two rounds.
        self._active: list[UpstreamCall] = []
        self._waiting: dict[str, UpstreamCall] = {}
        self._mirrored: types.ServerCapabilities | None = None
        self._registry = Registry({method: self._forward for method in HANDLERS})

    def attach(self, upstream: Client) -> None:
        """Mirror ``upstream``'s identity and capabilities; call before serving."""
        self._upstream = upstream
        info = upstream.server_info
        self.name, self.version, self.title = info.name, info.version, info.title
        self.instructions = upstream.instructions
        caps = upstream.server_capabilities
        self._mirrored = types.ServerCapabilities(
            tools=caps.tools, resources=caps.resources, prompts=caps.prompts,
            logging=caps.logging, completions=caps.completions)

    def capabilities(self) -> types.ServerCapabilities:
        return self._mirrored if self._mirrored is not None else super().capabilities()

    # --- client to upstream --------------------------------------------------------------

    def _forward(self, connection: ServerConnection, incoming: IncomingRequest
                 ) -> dict[str, Any] | None:
        if incoming.method in LOCAL_IN_MODERN:
            return self._settle(connection, incoming)
        context = Context(connection, incoming)
        modern = incoming.scope is not None and incoming.method in INPUT_METHODS
        call = self._resume(context) if modern else None
        fresh = call is None
        if call is None:
            call = UpstreamCall()
            if modern:
                context.state[_CALL_KEY] = call.id
        call.serving = incoming
        with self._calls_lock:
            self._active.append(call)
        if fresh:
            try:
                call.sent(self._send_upstream(incoming, call))
            except BaseException:
                with self._calls_lock:
                    self._active.remove(call)
                raise
        asking = False
        try:
            while (question := call.next_question(incoming)) is not None:
                # In a modern request asking ends this round (InputRequired): the call
                # upstream waits for the request's next round, which brings the answer.
                asking = modern
                answer = context.send_request(
                    question.method, question.params, timeout=self._timeout,
                    key=f"bridge-{call.asked}" if modern else None)
                asking = False
                question.answer.set_result(answer)
            result = dict(call.future.result())
        except BaseException as exc:
            if asking:
                with self._calls_lock:
                    self._waiting[call.id] = call
                call.future.add_done_callback(lambda _: self._drop_waiting(call))
            else:
                call.abandon(exc)
            raise
        finally:
            with self._calls_lock:
                self._active.remove(call)
        return _plain(result)

    def _settle(self, connection: ServerConnection, incoming: IncomingRequest
                ) -> dict[str, Any]:
        """A setting of the session (a log level, a subscription): kept for this client,
        and made upstream too, where a client of the modern era keeps it itself."""
        upstream = self._upstream
        assert upstream is not None
        method, params = incoming.method, incoming.params
        if method == "logging/setLevel":
            HANDLERS[method](connection, incoming)  # this client's own filter
        elif method == "resources/subscribe":
            connection.subscribe(str(params.get("uri")))
        elif method == "resources/unsubscribe":
            connection.unsubscribe(str(params.get("uri")))
        upstream.send_request(method, {key: value for key, value in params.items()
                                       if key != "_meta"} or None, timeout=self._timeout)
        return {}

    def _resume(self, context: Context) -> UpstreamCall | None:
        with self._calls_lock:
            return self._waiting.pop(str(context.state.get(_CALL_KEY, "")), None)

    def _drop_waiting(self, call: UpstreamCall) -> None:
        with self._calls_lock:
            self._waiting.pop(call.id, None)  # its client never came back for it

    def _send_upstream(self, incoming: IncomingRequest, call: UpstreamCall
                       ) -> Future[dict[str, Any]]:
        upstream = self._upstream
        assert upstream is not None
        params = dict(incoming.params)
        for key in ("inputResponses", "requestState"):
            params.pop(key, None)  # our client's rounds, not the upstream's
        meta = {key: value for key, value in (params.pop("_meta", None) or {}).items()
                if key != PROGRESS_TOKEN_KEY and not key.startswith("io.modelcontextprotocol/")}
        if meta:
            params["_meta"] = meta

        def on_progress(value: float, total: float | None, message: str | None) -> None:
            # To the request serving the call now (a modern call has one per round).
            serving = call.serving
            if serving is not None and serving.progress_token is not None:
                serving.report_progress(value, total, message)

        return upstream.send_request_async(incoming.method, params or None,
                                           timeout=self._timeout, on_progress=on_progress)

    # --- upstream to client --------------------------------------------------------------

    def _latest(self) -> UpstreamCall | None:
        with self._calls_lock:
            if self._active:
                return self._active[-1]
            return next(reversed(self._waiting.values()), None)

    def upstream_log(self, params: types.LoggingMessageNotificationParams) -> None:
        """A log message from upstream: to every client whose level lets it through."""
        self.log(params.level, params.data, params.logger)

    def upstream_notification(self, method: str, params: dict[str, Any] | None) -> None:
        if method.endswith("/list_changed") and method != "notifications/roots/list_changed":
            self._broadcast(method)
        elif method == "notifications/resources/updated" and params is not None:
            self.notify_resource_updated(str(params.get("uri")))

    def upstream_asks(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Ask the client whose call is in flight what the upstream asks.

        Raises:
            InternalError: no call is in flight, or the client did not answer.
        """
        call = self._latest()
        if call is None:
            raise InternalError(f"{method}: no client call is in flight to ask")
        return call.ask(method, params, self._timeout)


def _plain(result: dict[str, Any]) -> dict[str, Any]:
    """An upstream result without the fields our own session sets for its era."""
    for key in ("resultType", "ttlMs", "cacheScope"):
        result.pop(key, None)
    meta = result.get("_meta")
    if isinstance(meta, dict):
        meta = {key: value for key, value in meta.items()
                if not key.startswith("io.modelcontextprotocol/")}
        if meta:
            result["_meta"] = meta
        else:
            del result["_meta"]
    return result


def _make_upstream(options: argparse.Namespace, server: Sequence[str],
                   bridge_server: BridgeServer) -> Client:
    def sampling(params: types.CreateMessageRequestParams) -> dict[str, Any]:
        from ..protocol._convert import to_wire

        return bridge_server.upstream_asks("sampling/createMessage", to_wire(params))

    def elicitation(request: ElicitationRequest) -> ElicitationResult[Any]:
        params: dict[str, Any] = {"message": request.message}
        if request.mode == "url":
            params.update(mode="url", url=request.url, elicitationId=request.elicitation_id)
        else:
            params["requestedSchema"] = request.requested_schema or {}
        answer = bridge_server.upstream_asks("elicitation/create", params)
        action = answer.get("action")
        if action == "accept":
            return request.accept(answer.get("content"))
        return request.decline() if action == "decline" else request.cancel()

    return connect(options, server, on_log=bridge_server.upstream_log,
                   on_notification=bridge_server.upstream_notification,
                   sampling_handler=sampling, elicitation_handler=elicitation,
                   elicitation_modes=("form", "url"))


def bridge(options: argparse.Namespace, server: Sequence[str]) -> int:
    """Run ``mcp-sync bridge``; returns the exit status."""
    bridge_server = BridgeServer(options.timeout)
    with _make_upstream(options, server, bridge_server) as upstream:
        bridge_server.attach(upstream)
        if options.stdio:
            bridge_server.run_stdio()
            return EXIT_OK
        return _serve_http(bridge_server, upstream, options)


def _serve_http(bridge_server: BridgeServer, upstream: Client,
                options: argparse.Namespace) -> int:
    from ..transports.http_server import serve_http

    stopped = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        stopped.set()

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        with serve_http(bridge_server, options.host, options.port) as handle:
            print(f"mcp-sync: serving {handle.url}", file=sys.stderr, flush=True)
            try:
                wait_lost(upstream, stopped.is_set)
            except KeyboardInterrupt:
                return EXIT_INTERRUPTED
        if stopped.is_set():
            return EXIT_OK
        fail("the server ended")
        return EXIT_CONNECTION
    finally:
        signal.signal(signal.SIGTERM, previous)

