"""``mcp-sync bridge``: serve one server on another transport.

A :class:`BridgeServer` is a :class:`~mcp_sync.Server` whose every request handler
forwards the request to an upstream :class:`~mcp_sync.Client`, with its progress and its
cancellation; the upstream's notifications (log messages, list and resource changes)
go to the bridge's clients, and its requests to the client (sampling, elicitation) are
asked of the client whose call is in flight, when that client speaks a legacy revision
(a modern request cannot be asked mid-call). Roots are not passed on. So ``bridge
--port`` serves a stdio server over Streamable HTTP and ``bridge --stdio`` an HTTP
server over stdio.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType
from typing import Any

from .. import types
from ..client import Client, ElicitationRequest
from ..engine._engine import IncomingRequest
from ..errors import CapabilityError, InternalError
from ..protocol._elicitation import ElicitationResult
from ..protocol._meta_keys import PROGRESS_TOKEN_KEY
from ..server import Server, ServerConnection
from ..server._context import Context
from ..server._handlers import HANDLERS
from ..server._registry import Registry
from ._args import EXIT_CONNECTION, EXIT_INTERRUPTED, EXIT_OK
from ._common import connect, fail, wait_lost

__all__ = ["BridgeServer", "bridge"]

class BridgeServer(Server):
    """A server that forwards everything to ``upstream`` (see the module docstring)."""

    def __init__(self, timeout: float) -> None:
        super().__init__("mcp-sync-bridge")
        self._timeout = timeout
        self._upstream: Client | None = None
        self._active: list[tuple[ServerConnection, IncomingRequest]] = []
        self._active_lock = threading.Lock()
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
        upstream = self._upstream
        assert upstream is not None
        params = dict(incoming.params)
        meta = {key: value for key, value in (params.pop("_meta", None) or {}).items()
                if key != PROGRESS_TOKEN_KEY and not key.startswith("io.modelcontextprotocol/")}
        if meta:
            params["_meta"] = meta
        if incoming.method == "logging/setLevel":
            HANDLERS["logging/setLevel"](connection, incoming)  # this client's own filter
        on_progress = None
        if incoming.progress_token is not None:
            def on_progress(progress: float, total: float | None, message: str | None) -> None:
                incoming.report_progress(progress, total, message)
        entry = (connection, incoming)
        with self._active_lock:
            self._active.append(entry)
        try:
            future = upstream.send_request_async(incoming.method, params or None,
                                                 timeout=self._timeout,
                                                 on_progress=on_progress)
            finished = threading.Event()
            future.add_done_callback(lambda _: finished.set())
            # The client's cancellation is passed on: the upstream is cancelled too.
            while not finished.wait(0.05):
                if incoming.cancelled.is_set():
                    future.cancel()
            try:
                result = dict(future.result())
            except BaseException:
                future.cancel()
                raise
            for key in ("resultType", "ttlMs", "cacheScope"):
                result.pop(key, None)  # the era's own fields: our session sets its own
            if isinstance(result.get("_meta"), dict):
                result["_meta"] = {key: value for key, value in result["_meta"].items()
                                   if not key.startswith("io.modelcontextprotocol/")}
                if not result["_meta"]:
                    del result["_meta"]
            return result
        finally:
            with self._active_lock:
                self._active.remove(entry)

    # --- upstream to client --------------------------------------------------------------

    def _latest(self) -> tuple[ServerConnection, IncomingRequest] | None:
        with self._active_lock:
            return self._active[-1] if self._active else None

    def upstream_log(self, params: types.LoggingMessageNotificationParams) -> None:
        """A log message from upstream: to the call it came with, or to every client."""
        latest = self._latest()
        if latest is not None:
            Context(*latest).log(params.level, params.data, params.logger)
        else:
            self.log(params.level, params.data, params.logger)

    def upstream_notification(self, method: str, params: dict[str, Any] | None) -> None:
        if method.endswith("/list_changed") and method != "notifications/roots/list_changed":
            self._broadcast(method)
        elif method == "notifications/resources/updated" and params is not None:
            self.notify_resource_updated(str(params.get("uri")))

    def upstream_asks(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Ask the client whose call is in flight what the upstream asks.

        Raises:
            InternalError: no call is in flight, or it is a modern request: its
                questions go back in its result, and the call would have to start again.
        """
        latest = self._latest()
        if latest is None:
            raise InternalError(f"{method}: no client call is in flight to ask")
        if latest[1].scope is not None:
            raise InternalError(f"{method}: the bridge cannot pass this on to a client "
                                "of the 2026-07-28 era")
        try:
            return Context(*latest).send_request(method, params, timeout=self._timeout)
        except CapabilityError as exc:
            raise InternalError(f"{method}: {exc}") from None


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

