"""A request from the peer while it is served, and the reply to a batch being collected."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from ..protocol._jsonrpc import Message, Request, RequestId

if TYPE_CHECKING:
    from ._engine import Engine

__all__ = ["BatchReply", "IncomingRequest"]


class BatchReply:
    """Collects the answers to one received batch so they leave as one array (BATCH-5)."""

    def __init__(self) -> None:
        self.waiting: set[RequestId] = set()
        self.answers: list[Message] = []
        self.sealed = False

    def ready(self) -> bool:
        return self.sealed and not self.waiting


class IncomingRequest:
    """A request from the peer, as handed to the request handler on a worker thread."""

    __slots__ = (
        "_batch",
        "cancel_reason",
        "cancelled",
        "engine",
        "id",
        "method",
        "params",
        "progress_token",
        "request",
        "scope",
    )

    def __init__(self, engine: Engine, request: Request, progress_token: str | int | None,
                 batch: BatchReply | None, scope: Any = None) -> None:
        self.engine = engine
        self.request = request
        # Copied out of the request once: they are read several times for every request.
        self.id: RequestId = request.id
        self.method: str = request.method
        self.params: dict[str, Any] = request.params or {}
        self.progress_token = progress_token
        self.cancelled = threading.Event()
        self.cancel_reason: str | None = None
        self._batch = batch
        #: The modern request's ``RequestScope`` (version, client capabilities and info
        #: from its ``_meta``); None in a legacy session.
        self.scope = scope

    def report_progress(self, progress: float, total: float | None = None,
                        message: str | None = None) -> bool:
        """Send progress if the requester asked for it; False when nothing was sent."""
        return self.engine._send_progress(self, progress, total, message)
