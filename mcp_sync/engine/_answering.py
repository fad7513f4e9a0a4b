"""The serving side of the engine: a request from the peer is handled and answered.

:class:`Answering` is a part of :class:`~mcp_sync.engine._engine.Engine`: a worker thread
runs the request handler, the session turns its result or error into the answer, and the
answer (or the progress before it) is written under the engine's write lock, so that
progress can never reach the wire after the answer it belongs to (PROGRESS-6). An answer
to a request that came in a batch waits for the rest of the batch (BATCH-5).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import InternalError, McpError, RpcError
from ..protocol._jsonrpc import ErrorResponse, Message, Notification, RequestId, Response
from ..protocol._session import Session
from ..transports.base import Transport
from ._deadlines import Call, Canceller
from ._incoming import IncomingRequest

__all__ = ["Answering"]

log = logging.getLogger("mcp_sync.engine")


class Answering:
    """Handles and answers the requests the peer sends; mixed into the engine."""

    transport: Transport
    session: Session
    _handle_request: Callable[[IncomingRequest], dict[str, Any] | None]
    _lock: threading.Lock
    _write_lock: threading.Lock
    _serving: dict[RequestId, IncomingRequest]
    _canceller: Canceller
    _ended: McpError | None

    def _try_write(self, message: Message | Sequence[Message]) -> None:
        raise NotImplementedError

    def _serve(self, incoming: IncomingRequest) -> None:
        result: dict[str, Any] | None = None
        error: RpcError | None = None
        if incoming.cancelled.is_set():
            error = InternalError("cancelled")
        else:
            try:
                result = self._handle_request(incoming)
            except RpcError as exc:
                error = exc
            except BaseException:
                # SystemExit from a handler included: the request must still be answered,
                # or its caller waits for its whole timeout.
                log.exception("handler for %s failed", incoming.method)
                error = InternalError("Internal error")
        if incoming.left_open:
            if error is None:
                return  # answered later by incoming.answer(), on whatever thread has it
            incoming._given_up()  # it failed after all: the error is its answer
        self._finish(incoming, result, error)

    def _finish(self, incoming: IncomingRequest, result: dict[str, Any] | None,
                error: RpcError | None) -> None:
        # The write lock is taken before the session decides, so that progress decided
        # on another thread can never reach the wire after this answer (PROGRESS-6).
        flush: list[Message] | None = None
        nested: list[tuple[Call, Notification | None]] = []
        with self._write_lock:
            with self._lock:
                self._serving.pop(incoming.id, None)
                if self._ended is not None:
                    return
                # Calls the handler left running (on threads of its own) serve nothing now.
                nested = self._canceller.take_nested(
                    incoming.id, "the request it was part of ended")
                answer: Response | ErrorResponse | None
                if error is not None:
                    answer = self.session.respond_error(incoming.id, error)
                else:
                    answer = self.session.respond(incoming.id, result)
                batch = incoming._batch
                if batch is not None:
                    batch.waiting.discard(incoming.id)
                    if answer is not None:
                        batch.answers.append(answer)
                    answer = None
                    if batch.ready() and batch.answers:
                        flush = batch.answers
            if answer is not None:
                self._write_answer(incoming, answer)
        self._canceller.cancel_taken(
            nested, f"request {incoming.id!r}, which this one served, has ended")
        self._canceller.flush()  # an early return means the connection ended: none are due
        if flush is not None:
            self._try_write(flush)

    def _close_unanswered(self, incoming: IncomingRequest) -> None:
        """Forget a request left open (``answer_later``) that ended without an answer:
        it was cancelled, or the connection ended."""
        with self._lock:
            self._serving.pop(incoming.id, None)
            if self._ended is None:
                # Cancelled, so the session has no answer to give; this forgets the id.
                self.session.respond(incoming.id, None)

    def _write_answer(self, incoming: IncomingRequest, answer: Response | ErrorResponse) -> None:
        # Called with _write_lock held.
        try:
            self.transport.write(answer)
        except (TypeError, ValueError) as exc:
            # The result could not be encoded as JSON (a NaN, an object): still answer.
            log.error("result of %s is not valid JSON: %s", incoming.method, str(exc))
            with contextlib.suppress(McpError):
                self.transport.write(ErrorResponse(incoming.id, InternalError(
                    "Internal error: the result could not be encoded")))
        except McpError as exc:
            log.debug("could not answer %r: %s", incoming.id, str(exc))

    def _send_progress(self, incoming: IncomingRequest, progress: float,
                       total: float | None, message: str | None) -> bool:
        try:
            with self._write_lock:  # ordered against the answer; see _finish
                with self._lock:
                    if self._ended is not None:
                        return False
                    notification = self.session.progress(incoming.id, progress, total, message)
                if notification is None:
                    return False
                try:
                    self.transport.write(notification, related_to=incoming.id)
                except McpError as exc:
                    log.debug("could not send progress for %r: %s", incoming.id, str(exc))
            return True
        finally:
            self._canceller.flush()
