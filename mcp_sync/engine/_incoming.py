"""A request from the peer while it is served, and the reply to a batch being collected."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..protocol._jsonrpc import Message, Request, RequestId

if TYPE_CHECKING:
    from ..errors import RpcError
    from ._engine import Engine

log = logging.getLogger("mcp_sync.engine")

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
        "_on_cancel",
        "_open",
        "_open_lock",
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
        # A request left open by answer_later: answered by answer(), from any thread.
        self._open = False
        self._on_cancel: Callable[[], None] | None = None
        self._open_lock = threading.Lock()

    def report_progress(self, progress: float, total: float | None = None,
                        message: str | None = None) -> bool:
        """Send progress if the requester asked for it; False when nothing was sent."""
        return self.engine._send_progress(self, progress, total, message)

    @property
    def being_served(self) -> bool:
        """True until this request is answered, cancelled or its connection ended."""
        return self.engine._serving.get(self.id) is self

    # --- requests answered later ------------------------------------------------------------

    def answer_later(self, on_cancel: Callable[[], None]) -> bool:
        """Leave this request open when its handler returns, holding no worker: the
        answer is sent later by :meth:`answer`, from any thread.

        ``on_cancel`` runs once if the request ends before that: the peer cancelled it
        or the connection ended (no answer is then due). It runs on the thread that
        noticed, outside the engine's locks, and must be quick.

        Returns:
            False when the request is cancelled already; it is then answered (with
            nothing) as any cancelled request is, when its handler returns.
        """
        with self._open_lock:
            if self.cancelled.is_set():
                return False
            self._open = True
            self._on_cancel = on_cancel
            return True

    @property
    def left_open(self) -> bool:
        """True once :meth:`answer_later` kept the request open (until it is answered)."""
        return self._open

    def answer(self, result: dict[str, Any] | None = None,
               error: RpcError | None = None) -> None:
        """Answer a request :meth:`answer_later` left open; later calls do nothing.

        Nothing is written when the request was cancelled or the connection ended.
        """
        with self._open_lock:
            if not self._open:
                return
            self._open = False
            self._on_cancel = None
        self.engine._finish(self, result, error)

    def _ended_unanswered(self) -> None:
        # Called by the engine, outside its locks, once ``cancelled`` is set.
        if self._given_up():
            # No answer is due; only the books are closed (without the write lock, which
            # a write stuck on a peer that reads nothing may hold).
            self.engine._close_unanswered(self)

    def _given_up(self) -> bool:
        """Stop keeping the request open and run its ``on_cancel``; False if it was not
        open (the engine then answers it as usual)."""
        with self._open_lock:
            callback, self._on_cancel = self._on_cancel, None
            self._open = False
        if callback is None:
            return False
        try:
            callback()
        except Exception:
            log.exception("cancel callback of %s failed", self.method)
        return True
