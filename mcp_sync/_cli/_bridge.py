"""``mcp-sync bridge``: serve one server on another transport.

A :class:`BridgeServer` is a :class:`~mcp_sync.Server` whose every request handler
forwards the request to an upstream :class:`~mcp_sync.Client`, with its progress and its
cancellation; the upstream's notifications (log messages, list and resource changes)
go to the bridge's clients, and its requests to the client (sampling) is
asked of the client whose call is in flight. So ``bridge --port`` serves a
stdio server over Streamable HTTP and ``bridge --stdio`` an HTTP server over stdio.
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
from ..client import Client
from ..engine._engine import IncomingRequest
from ..errors import CapabilityError
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
            result = dict(future.result())
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
        """Ask the client whose call is in flight what the upstream asks."""
        latest = self._latest()
        if latest is None:
            raise CapabilityError(f"{method}: no client call is in flight to ask")
        return Context(*latest).send_request(method, params, timeout=self._timeout)


def _make_upstream(options: argparse.Namespace, server: Sequence[str],
                   bridge_server: BridgeServer) -> Client:
    def sampling(params: types.CreateMessageRequestParams) -> dict[str, Any]:
        from ..protocol._convert import to_wire

        return bridge_server.upstream_asks("sampling/createMessage", to_wire(params))

    return connect(options, server, on_log=bridge_server.upstream_log,
                   on_notification=bridge_server.upstream_notification,
                   sampling_handler=sampling)


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

