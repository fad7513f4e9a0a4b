"""The threaded engine that runs one protocol :class:`Session` over one transport.

Theory of operation
-------------------

* **One reader thread** per connection blocks in ``transport.read()``. For each message
  it asks the session what the message means and acts: it completes the Future of a
  response, hands a request to the worker pool, queues a notification for the notifier,
  or writes the session's own answer (``ping``, ``initialize``, errors). It never runs
  user code.
* **The pending table** maps each request id we sent to a :class:`._deadlines.Call`
  holding its Future, registered before the request is written.
* **Workers** (a bounded :class:`~mcp_sync.engine._threads.WorkerPool`) run request handlers. A
  handler may itself send a request to the peer and block on it, because the reader
  keeps reading meanwhile. Past ``max_workers`` running and ``max_queued_requests``
  waiting, a request is answered at once with an error.
* **Pushed messages.** A transport whose messages arrive on threads of their own (the
  Streamable HTTP server's request threads) may hand each one to the engine itself,
  in order, instead of waking the reader (``Transport.attach_receiver``). A thread that
  would only wait for the answer may then serve the request in one of the workers'
  places (``WorkerPool.run_here``): two thread hand-offs fewer per call. An engine that
  serves one request per transport may go on to the next one's (:meth:`Engine.rebind`).
* **Requests answered later** (``IncomingRequest.answer_later``, then ``answer`` from
  any thread) hold no worker: a ``subscriptions/listen`` stream. If the peer cancels one
  or the connection ends first, its ``on_cancel`` runs and nothing is answered.
* **The notifier** (one thread) delivers notifications and progress callbacks in order.
* **The watchdog** (one thread, from the first timed call; :mod:`._deadlines`) fails
  calls past their deadline and cancels them at the peer; progress may push a deadline
  back, up to a hard maximum (LIFECYCLE-11).
* **Nested calls.** A request we send on behalf of one we serve names it (``related_to``).
  When that request is cancelled (CANCEL-4) or its handler finishes, its calls still
  pending are cancelled like a timed-out one: the caller gets
  :class:`~mcp_sync.errors.RequestCancelled` and the peer ``notifications/cancelled``.
  A nested call started after that point fails at once and is never sent.
* **Ending.** When the peer goes away every pending call fails at once with
  ConnectionLost; after :meth:`Engine.close` with ConnectionClosed. Running handlers see
  ``cancelled`` set.

Locks: ``_lock`` guards the session, the pending, serving and deadline tables; it is
never held while writing or running user code. ``_write_lock`` makes each message one
write. Answers and progress take ``_write_lock`` first and then ``_lock`` (never the
other way round), so the order the session decides them in is the order on the wire.

A peer that stops reading can block a write for good. Timeouts still hold: a caller waits
for the write lock only until its own deadline, and neither the watchdog nor the reader
ever waits for it: they queue their cancellations in the :class:`._deadlines.Canceller`,
and whoever holds the lock sends them on release.
"""

from __future__ import annotations

import copy
import functools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

from ..errors import (
    ConnectionClosed,
    ConnectionLost,
    InternalError,
    McpError,
    RequestCancelled,
    RequestTimeout,
)
from ..protocol._jsonrpc import Batch, Incoming, Invalid, Message, Notification, Request, RequestId
from ..protocol._session import (
    CancelRequested,
    Ignored,
    NotificationReceived,
    ProgressReceived,
    Reply,
    RequestReceived,
    ResponseReceived,
    Session,
)
from ..transports.base import Transport
from ._answering import Answering
from ._deadlines import (
    Call,
    Canceller,
    Watchdog,
    complete,
    complete_late,
    describe,
    fail,
    first_deadlines,
)
from ._incoming import BatchReply, IncomingRequest
from ._threads import ThreadGroup, WorkerPool

__all__ = ["Engine", "IncomingRequest", "ProgressCallback"]

log = logging.getLogger("mcp_sync.engine")

ProgressCallback = Callable[[float, "float | None", "str | None"], None]
RequestHandler = Callable[["IncomingRequest"], "dict[str, Any] | None"]
NotificationHandler = Callable[[Notification], None]


class Engine(Answering):
    """Runs a session over a transport with a reader thread; see the module docstring.

    Args:
        transport: moves whole JSON-RPC messages.
        session: decides what every message means.
        handle_request: called on a worker thread for each request to serve; returns the
            result object or raises :class:`~mcp_sync.errors.RpcError`.
        handle_notification: called on the notifier thread, in arrival order.
        max_workers: how many requests may be served at once.
        max_queued_requests: how many more may wait for a worker; beyond that a request
            is answered at once with an error.
        max_queued_notifications: how many notifications and progress callbacks may wait
            for the notifier; beyond that they are dropped (and logged).
        name: used in thread names.
        idle_timeout: seconds a worker or the notifier waits for work before its thread
            ends (a new one starts with the next task); None keeps them until close.
        on_lost: called once, on the reader thread, with the error when the peer left.
        workers: a pool shared with other connections, used instead of one of this
            connection's own (``max_workers`` and ``max_queued_requests`` are then the
            pool's); it stays open when this connection closes.
    """

    def __init__(
        self,
        transport: Transport,
        session: Session,
        *,
        handle_request: RequestHandler,
        handle_notification: NotificationHandler | None = None,
        max_workers: int = 16,
        max_queued_requests: int = 1000,
        max_queued_notifications: int = 10_000,
        name: str = "connection",
        join_timeout: float = 5.0,
        idle_timeout: float | None = None,
        on_lost: Callable[[ConnectionLost], None] | None = None,
        workers: WorkerPool | None = None,
    ) -> None:
        self.transport = transport
        self.session = session
        self._handle_request = handle_request
        self._handle_notification = handle_notification
        self._join_timeout = join_timeout
        self._on_lost = on_lost
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._pending: dict[RequestId, Call] = {}
        self._serving: dict[RequestId, IncomingRequest] = {}
        self._threads = ThreadGroup(name)
        self._own_workers = workers is None
        self._workers = workers if workers is not None else WorkerPool(
            self._threads, "worker", max_workers, max_queued=max_queued_requests,
            idle_timeout=idle_timeout)
        self._notifier = WorkerPool(self._threads, "notifier", 1,
                                    max_queued=max_queued_notifications,
                                    idle_timeout=idle_timeout)
        # A cancellation waits for a peer that reads nothing only briefly: it is dropped.
        self._canceller = Canceller(session, self._pending, self._write_lock,
                                    lambda notification: self.transport.write_before(
                                        notification, time.monotonic() + 1.0))
        self._watchdog = Watchdog(self._lock, self._threads, self._pending, self._canceller)
        self._ended: McpError | None = None
        self._done = threading.Event()
        self._started = False

    # --- life -----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the reader thread; none for a transport that pushes and ends only on close."""
        if self._started:
            return
        self._started = True
        if self.transport.attach_receiver(self._receive_pushed) and self.transport.ends_on_close:
            return
        self._threads.start("reader", self._read_loop)

    @property
    def closed(self) -> bool:
        """True once the connection ended, by :meth:`close` or by the peer."""
        return self._ended is not None

    def wait_closed(self, timeout: float | None = None) -> bool:
        """Block until the connection has ended; False if ``timeout`` passed first."""
        return self._done.wait(timeout)

    def close(self) -> None:
        """End the connection: fail pending calls, close the transport, join our threads.

        Idempotent and safe from any thread, including a handler or a callback.
        """
        self._end(ConnectionClosed("the connection was closed"))
        self._shutdown()

    def _end(self, error: McpError) -> bool:
        with self._lock:
            if self._ended is not None:
                return False
            self._ended = error
            calls = list(self._pending.values())
            self._pending.clear()
            serving = list(self._serving.values())
            self._serving.clear()
            self._watchdog.stop()
            if self.session.state.value != "closed":
                self.session.close()
        for incoming in serving:
            incoming.cancelled.set()
            incoming._ended_unanswered()
        for call in calls:
            fail(call.future, error)
        return True

    def _shutdown(self) -> None:
        try:
            self.transport.close()
        except Exception:
            log.exception("error while closing the transport")
        if self._own_workers:
            self._workers.close()
        self._notifier.close()
        self._threads.join(self._join_timeout)
        self._done.set()

    # --- sending ----------------------------------------------------------------------------

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        progress_resets_timeout: bool = True,
        max_timeout: float | None = None,
        related_to: RequestId | None = None,
        future: Future[dict[str, Any]] | None = None,
    ) -> Future[dict[str, Any]]:
        """Send a request; the Future (``future`` if given) holds its result or error.

        ``related_to`` names the peer's request that this one is part of (a tool asking
        the client for sampling); transports that keep a channel per request use it.
        The call is cancelled (RequestCancelled, and the peer is told) when that request
        is cancelled or its handler finishes first; if that has already happened, the
        Future fails at once and nothing is sent.

        With ``timeout`` the call fails with RequestTimeout when it passes, and the peer is
        sent ``notifications/cancelled``. Progress pushes the deadline back by ``timeout``
        when ``progress_resets_timeout`` is set, but never past ``max_timeout`` from the
        start; without ``max_timeout`` progress does not extend it (LIFECYCLE-11).

        Raises (at once, nothing sent): ConnectionClosed/ConnectionLost once the
        connection ended, CapabilityError or LocalProtocolError from the session,
        TypeError or ValueError when ``params`` cannot be encoded as JSON.
        """
        return self.start_request(
            lambda session: session.request(method, params, progress=on_progress is not None),
            timeout=timeout, on_progress=on_progress,
            progress_resets_timeout=progress_resets_timeout, max_timeout=max_timeout,
            related_to=related_to, future=future)

    def start_request(
        self,
        make_request: Callable[[Session], Request],
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        progress_resets_timeout: bool = True,
        max_timeout: float | None = None,
        related_to: RequestId | None = None,
        future: Future[dict[str, Any]] | None = None,
    ) -> Future[dict[str, Any]]:
        """Like :meth:`request`, with the request built by the session under our lock."""
        future = Future() if future is None else future
        with self._lock:
            if self._ended is not None:
                raise self._ended_error()
            if related_to is not None:
                # Checked under the same lock that cancels nested calls, so a call can
                # never slip in after the sweep for its request has run.
                serving = self._serving.get(related_to)
                if serving is None or serving.cancelled.is_set():
                    fail(future, RequestCancelled(
                        f"request {related_to!r}, which this one would serve, is cancelled "
                        "or has ended"))
                    return future
            request = make_request(self.session)
            deadline, hard = first_deadlines(
                time.monotonic(), timeout, progress_resets_timeout, max_timeout)
            call = Call(request.id, future, on_progress, timeout, deadline, hard, related_to,
                        request)
            self._pending[request.id] = call
            self._watchdog.schedule(call)
        try:
            self._send_call(call, request, timeout, related_to)
        except BaseException as exc:
            # Never sent: forget the id, or its deadline would later cancel a request the
            # peer never saw (CANCEL-2).
            with self._lock:
                self._pending.pop(request.id, None)
                self.session.forget(request.id)
            if not isinstance(exc, McpError):
                raise  # params that cannot be encoded are the caller's error, raised at once
            fail(future, exc)
        return future

    def request_batch(self, requests: Sequence[tuple[str, dict[str, Any] | None]], *,
                      timeout: float | None = None) -> list[Future[dict[str, Any]]]:
        """Send several requests as one JSON-RPC batch (BATCH-1); a Future for each.

        The caller checks that the session has batches (``profile.batching``). Raises at
        once, with nothing sent, as :meth:`request` does.
        """
        entries: list[tuple[Call, Request]] = []
        with self._lock:
            if self._ended is not None:
                raise self._ended_error()
            try:
                for method, params in requests:
                    request = self.session.request(method, params, progress=False)
                    deadline, hard = first_deadlines(time.monotonic(), timeout, True, None)
                    call = Call(request.id, Future(), None, timeout, deadline, hard, None,
                                request)
                    entries.append((call, request))
                    self._pending[request.id] = call
                    self._watchdog.schedule(call)
            except BaseException:
                self._forget(entries)
                raise
        try:
            with self._write_lock:
                with self._lock:
                    for call, _ in entries:
                        call.sent = True
                self.transport.write([request for _, request in entries])
        except McpError as exc:
            with self._lock:
                self._forget(entries)
            for call, _ in entries:
                fail(call.future, exc)
        except BaseException:
            with self._lock:
                self._forget(entries)
            raise
        finally:
            self._canceller.flush()
        return [call.future for call, _ in entries]

    def _forget(self, entries: list[tuple[Call, Request]]) -> None:
        # Called with _lock held, for calls that were never sent.
        for _, request in entries:
            self._pending.pop(request.id, None)
            self.session.forget(request.id)

    def restart_session(self, error: McpError) -> None:
        """Put the session back to NEW for a fresh handshake (HTTP-35).

        Calls still pending on the old session fail with ``error``.
        """
        with self._lock:
            if self._ended is not None:
                raise self._ended_error()
            forgotten = self.session.restart()
            calls = [self._pending.pop(request_id) for request_id in forgotten
                     if request_id in self._pending]
        for call in calls:
            fail(call.future, error)

    def notify(self, method: str, params: dict[str, Any] | None = None, *,
               related_to: RequestId | None = None) -> None:
        """Send a notification (checked by the session first); see :meth:`request`."""
        with self._lock:
            if self._ended is not None:
                raise self._ended_error()
            notification = self.session.notification(method, params, related_to=related_to)
        self._write(notification, related_to)

    def cancel(self, future: Future[dict[str, Any]], reason: str | None = None) -> bool:
        """Cancel the call whose Future (from :meth:`request`) is ``future``: it fails with
        RequestCancelled, and the peer is told unless the request was never written.

        Never waits for the write lock (a GUI thread may call it); False if the call
        had already ended.
        """
        with self._lock:
            taken = self._canceller.take_call(future, reason)
        self._canceller.cancel_taken(taken, reason or "the request was cancelled")
        return bool(taken)

    def _closed_here(self) -> McpError | None:
        return self._ended_error() if isinstance(self._ended, ConnectionClosed) else None

    def _ended_error(self) -> McpError:
        ended = self._ended
        assert ended is not None
        error = copy.copy(ended)  # a fresh traceback; attributes (exit_code...) kept
        error.__cause__ = ended.__cause__
        return error

    def _send_call(self, call: Call, request: Request, timeout: float | None,
                   related_to: RequestId | None) -> None:
        # The wait for the write lock is bounded by the call's own timeout, so a write
        # stuck on a peer that stopped reading cannot hold every other caller forever.
        if not self._write_lock.acquire(timeout=-1 if timeout is None else timeout):
            raise RequestTimeout(f"could not send {describe(request)} within {timeout}s: "
                                 "an earlier write is stuck")
        try:
            with self._lock:
                if self._pending.get(request.id) is not call:
                    return  # it timed out, or the connection ended, while it waited
                call.sent = True
            self.transport.write_before(request, call.deadline, related_to=related_to)
        finally:
            self._write_lock.release()
            self._canceller.flush()

    def _write(self, message: Message | Sequence[Message],
               related_to: RequestId | None = None) -> None:
        try:
            with self._write_lock:
                self.transport.write(message, related_to=related_to)
        finally:
            self._canceller.flush()

    def _try_write(self, message: Message | Sequence[Message]) -> None:
        try:
            self._write(message)
        except McpError as exc:
            log.debug("could not write %r: %s", message, str(exc))

    # --- reading ----------------------------------------------------------------------------

    def _read_loop(self) -> None:
        cause: BaseException | None = None
        try:
            while True:
                incoming = self.transport.read()
                if incoming is None:
                    break
                if isinstance(incoming, Batch):
                    self._receive_batch(incoming)
                elif isinstance(incoming, Invalid):
                    self._receive_invalid(incoming, None)
                else:
                    self._receive(incoming, None)
        except McpError as exc:
            cause = exc
        except Exception as exc:  # the connection must end cleanly whatever broke
            log.exception("reader failed")
            cause = exc
        # A transport's own ConnectionLost says best what happened (a server's exit status).
        lost = cause if isinstance(cause, ConnectionLost) else ConnectionLost(
            "the peer closed the connection" if cause is None else f"the connection broke: {cause}")
        if lost is not cause:
            lost.__cause__ = cause
        if self._end(lost):
            if self._on_lost is not None:
                self._on_lost(lost)
            if self._own_workers:
                self._workers.close()
            self._notifier.close()
            try:
                self.transport.close()
            except Exception:
                log.exception("error while closing the transport")
        self._done.set()

    def rebind(self, transport: Transport) -> bool:
        """Go on over ``transport`` if nothing is under way (no call, no request served);
        False, with nothing changed, otherwise or once the connection ended."""
        with self._lock:
            if self._ended is not None or self._serving or self._pending:
                return False
            self.transport = transport
        return transport.attach_receiver(self._receive_pushed)

    def _receive_pushed(self, incoming: Incoming, serve_here: bool) -> list[Callable[[], None]]:
        """What the reader does with a message, done by the transport's thread that got it.

        With ``serve_here`` a request is not handed to a worker: the caller, a thread that
        would only wait for the answer anyway, serves it by running what is returned.
        That saves two thread hand-offs per call. User code still never runs here.
        """
        here: list[IncomingRequest] | None = [] if serve_here else None
        if isinstance(incoming, Batch):
            self._receive_batch(incoming)
        elif isinstance(incoming, Invalid):
            self._receive_invalid(incoming, None)
        else:
            self._receive(incoming, None, here)
        return [functools.partial(self._serve_here, request) for request in here or ()]

    def _serve_here(self, incoming: IncomingRequest) -> None:
        # Still one of max_workers; with none free it waits its turn like any other.
        if not self._workers.run_here(self._serve, incoming):
            self._dispatch(incoming)

    def _dispatch(self, incoming: IncomingRequest) -> None:
        if not self._workers.submit(self._serve, incoming):
            # Too many wait already (or we are closing): answer now rather than hold
            # it. Writing the answer is backpressure on a peer that sends unread.
            self._finish(incoming, None, InternalError(
                "Internal error: too many requests are waiting; try again later"))

    def _receive_invalid(self, invalid: Invalid, batch: BatchReply | None) -> None:
        log.debug("invalid message from peer: %s", invalid.error)
        if not invalid.reply:
            return
        if batch is not None:
            batch.answers.append(invalid.error_response())
        else:
            self._try_write(invalid.error_response())

    def _receive_batch(self, batch: Batch) -> None:
        reply = BatchReply()
        for item in batch.items:
            if isinstance(item, Invalid):
                self._receive_invalid(item, reply)
            else:
                self._receive(item, reply)
        with self._lock:
            reply.sealed = True
            ready = reply.ready() and bool(reply.answers)
        if ready:
            self._try_write(reply.answers)

    def _receive(self, message: Message, batch: BatchReply | None,
                 serve_here: list[IncomingRequest] | None = None) -> None:
        call: Call | None = None
        incoming: IncomingRequest | None = None
        cancelled: IncomingRequest | None = None
        nested: list[tuple[Call, Notification | None]] = []
        with self._lock:
            if self._ended is not None:
                return
            event = self.session.receive(message, in_batch=batch is not None)
            if isinstance(event, RequestReceived):
                incoming = IncomingRequest(self, event.request, event.progress_token, batch,
                                           event.scope)
                self._serving[event.request.id] = incoming
                if batch is not None:
                    batch.waiting.add(event.request.id)
            elif isinstance(event, ResponseReceived):
                call = self._pending.pop(event.request_id, None)
            elif isinstance(event, ProgressReceived):
                call = self._pending.get(event.request_id)
                if call is not None:
                    self._watchdog.progressed(call)
            elif isinstance(event, CancelRequested):
                cancelled = self._serving.get(event.request_id)
                if cancelled is not None:
                    # Set under the lock so that start_request sees it (see there).
                    cancelled.cancel_reason = event.reason
                    cancelled.cancelled.set()
                    nested = self._canceller.take_nested(
                        event.request_id, "the request it was part of was cancelled")
        if isinstance(event, Reply):
            if batch is not None:
                batch.answers.append(event.message)
            else:
                self._try_write(event.message)
        elif isinstance(event, RequestReceived):
            assert incoming is not None
            if serve_here is not None:
                serve_here.append(incoming)
            else:
                self._dispatch(incoming)
        elif isinstance(event, ResponseReceived):
            # A call with progress is completed behind its queued progress callbacks, so
            # that they have all run by the time the caller has its result.
            if call is not None and (call.on_progress is None or not self._notifier.submit(
                    complete_late, call.future, event.result, event.error, self._closed_here)):
                complete(call.future, event.result, event.error)
        elif isinstance(event, NotificationReceived):
            if (self._handle_notification is not None
                    and not self._notifier.submit(self._deliver, event.notification)):
                log.warning("dropped %s: too many notifications wait for a callback",
                            event.notification.method)
        elif isinstance(event, ProgressReceived):
            if call is not None and call.on_progress is not None and not self._notifier.submit(
                    call.on_progress, event.progress, event.total, event.message):
                log.debug("dropped progress for %r: its callback is behind", call.request_id)
        elif isinstance(event, CancelRequested):
            log.debug("peer cancelled request %r: %s", event.request_id, event.reason)
            if cancelled is not None:
                cancelled._ended_unanswered()
            self._canceller.cancel_taken(
                nested, f"the peer cancelled request {event.request_id!r}, which this one served")
        elif isinstance(event, Ignored):
            log.debug("ignored: %s", event.reason)

    def _deliver(self, notification: Notification) -> None:
        assert self._handle_notification is not None
        try:
            self._handle_notification(notification)
        except Exception:
            log.exception("notification handler failed for %s", notification.method)
