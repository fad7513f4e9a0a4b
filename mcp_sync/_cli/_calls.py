"""One request a bridge passes upstream, and the questions its server asks meanwhile.

The upstream server may ask for input (sampling, elicitation) while it serves a call;
the upstream client's handler for that runs on a thread of its own, yet the question
must be asked of the bridge's client from the thread serving that client's request: in
the 2026-07-28 era asking ends the request's round (the answer comes with the request's
next round, served on another thread), and the upstream call must live on meanwhile.
So the two threads meet here: :meth:`UpstreamCall.ask` posts a question and waits for
its answer; :meth:`UpstreamCall.next_question` hands it to whichever thread serves the
call now.
"""

from __future__ import annotations

import secrets
import threading
from concurrent.futures import Future
from typing import Any

from ..engine._engine import IncomingRequest
from ..errors import InternalError

__all__ = ["Question", "UpstreamCall"]


class Question:
    """A request of the upstream server's, to be asked of the bridge's client."""

    def __init__(self, method: str, params: dict[str, Any]) -> None:
        self.method = method
        self.params = params
        self.answer: Future[dict[str, Any]] = Future()


class UpstreamCall:
    """A request sent upstream for one of the bridge's clients (see the module docstring)."""

    def __init__(self) -> None:
        #: Kept in a modern request's sealed state, to find the call at its next round.
        self.id = secrets.token_urlsafe(12)
        #: The upstream request's Future (see :meth:`sent`).
        self.future: Future[dict[str, Any]] = Future()
        #: The request serving this call now (a modern call has one per round).
        self.serving: IncomingRequest | None = None
        #: How many questions were asked, so that each has a key of its own.
        self.asked = 0
        self._pending: Question | None = None
        self._changed = threading.Condition()

    def sent(self, future: Future[dict[str, Any]]) -> None:
        """The request went upstream; made known before it is sent, so that a question
        its server asks at once finds it."""
        self.future = future
        future.add_done_callback(lambda _: self._wake())

    def _wake(self) -> None:
        with self._changed:
            self._changed.notify_all()

    def ask(self, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Ask the bridge's client (on the upstream client's thread) and wait for it.

        Raises:
            InternalError: no answer within ``timeout``, or the client's request ended.
        """
        question = Question(method, params)
        with self._changed:
            if self._pending is not None:
                raise InternalError(f"{method}: one question at a time")
            self.asked += 1
            self._pending = question
            self._changed.notify_all()
        try:
            return question.answer.result(timeout)
        except TimeoutError:
            raise InternalError(f"{method}: the client did not answer in time") from None
        finally:
            with self._changed:
                if self._pending is question:
                    self._pending = None

    def next_question(self, incoming: IncomingRequest) -> Question | None:
        """Block until the upstream answered (None) or asked a question (returned).

        ``incoming`` being cancelled by its client cancels the upstream call (None).
        """
        with self._changed:
            while True:
                pending = self._pending
                if pending is not None and not pending.answer.done():
                    return pending
                if self.future.done():
                    return None
                if incoming.cancelled.is_set():
                    self.future.cancel()  # sends notifications/cancelled upstream
                    return None
                # A cancellation sets an event but wakes nothing here: look again soon.
                self._changed.wait(0.05)

    def abandon(self, error: BaseException) -> None:
        """The client's side failed: cancel upstream, and fail a question left waiting."""
        self.future.cancel()
        with self._changed:
            pending = self._pending
        if pending is not None and not pending.answer.done():
            pending.answer.set_exception(InternalError(f"the client's request failed: {error}"))
