"""The Streamable HTTP client transport (HTTP-5 to HTTP-37), on ``requests``.

Every POST, GET and DELETE goes through a ``requests.Session``, ours or one from the
user's ``session_factory``: https, proxies, netrc credentials, auth objects and custom
adapters all work as they do with requests. What the environment says about the
endpoint is read once, when the transport is made.

Theory of operation
-------------------

* **Writing never waits for the network.** :meth:`HttpClientTransport.write` encodes the
  message, queues its POST (HTTP-5) and returns: the engine calls it under its write lock.
  POSTs that carry requests run on a bounded pool of *post* threads, which also read the
  answers. POSTs of notifications and responses run one at a time, in order, on a thread
  of their own, so that a cancellation, or our answer to a server's request, never waits
  behind long calls; a request written after a notification is posted only once the
  notification was, so ``initialized`` reaches the server before what follows it.
* **Cancellations wait for their request** (:mod:`._http_cancel`): a request given up
  on before its POST started is never posted, and a ``notifications/cancelled`` is
  posted only once the server has the request it names.
* **One ``requests.Session`` per thread.** A Session is not safe to share between threads
  (psf/requests#2766), so each sender thread keeps its own; the senders' sessions share
  one HTTP adapter, whose urllib3 pool keeps a connection alive for each sender. The
  GET listener has a session and connection of its own (STYLE habit 7). All of them
  share one cookie jar, which is thread-safe, so a load balancer's sticky-session cookie
  reaches every request.
* **Answers** are handed to the engine by the thread that read them (see
  ``Transport.attach_receiver``; without an engine attached, through a queue that
  :meth:`~HttpClientTransport.read` takes from): 202 carries nothing; a JSON body is
  decoded as it is (one message or an array); an event stream is read event by event
  (AMBIG-13). A stream that ends before every request of its POST was answered is
  resumed with GET and ``Last-Event-ID`` (HTTP-26); a request that can never be
  answered gets an :class:`HttpError` response, so no caller waits for its whole
  timeout.
* **The session.** The ``Mcp-Session-Id`` of the initialize response is sent on every
  later request (HTTP-29/31), and so is ``MCP-Protocol-Version`` once the initialize
  result went past. A 404 to a request carrying the id answers each of its requests with
  :class:`~mcp_sync.errors.SessionExpired` (HTTP-35); the next ``initialize`` written goes
  out without the old id.
* **The GET listener** (HTTP-17): once ``notifications/initialized`` was accepted, one
  thread holds a GET stream open for server-initiated messages, reopening it with backoff
  and ``Last-Event-ID`` when it ends (HTTP-21). 405 means the server offers none (HTTP-18).
* **The old transport** (HTTP-37): if the first POST, ``initialize``, gets 400, 404 or 405,
  the URL is tried as a 2024-11-05 HTTP+SSE endpoint (:mod:`._legacy_client`); 401 and 403
  are answers about credentials, not signs of an old server (AMBIG-24).
* **Closing** shuts down every socket we opened, which ends any blocked read at once (see
  :class:`~._http_client_io.SocketRegistry`), sends DELETE for the session (HTTP-32) and joins
  every thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence

import requests

from ...engine._threads import WorkerPool
from ...errors import AuthorizationError, ConnectionClosed, ConnectionLost, SessionExpired
from ...protocol._jsonrpc import (
    ErrorResponse,
    Incoming,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
    encode,
    is_request_id,
)
from ...protocol._sse import SseParser
from ...transports._decode import decode_frame
from ...transports.base import DEFAULT_MAX_MESSAGE_SIZE, Transport
from ._cancel import CancelLedger, Decision
from ._core import ACCEPT_BOTH, EVENT_STREAM, End, HttpError, Outcome, Post, resume_parser
from ._io import SocketRegistry, content_type, drain, is_connect_failure, read_limited
from ._legacy import LegacyMixin
from ._listener import ListenerMixin
from ._modern_post import LEGACY_HINTS, ModernPosts, add_headers, names_version, shut

__all__ = ["HttpClientTransport", "HttpError"]

log = logging.getLogger("mcp_sync.http.client")

#: Statuses worth trying again later; any other refusal of a resumption is final.
_TRANSIENT = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
_SINGLE = (Request, Notification, Response, ErrorResponse)


class HttpClientTransport(ModernPosts, LegacyMixin, ListenerMixin, Transport):
    """A connection to an MCP server at one URL, over Streamable HTTP (or the old HTTP+SSE).

    Hand it to :class:`~mcp_sync.Client`; nothing goes on the network until the client
    writes ``initialize``.

    Args:
        url: the MCP endpoint, e.g. ``http://127.0.0.1:8000/mcp``.
        headers: sent with every request (POST, GET and DELETE), e.g.
            ``{"Authorization": "Bearer <token>"}``; the protocol's own headers (Accept,
            Content-Type, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID) win over
            these.
        http_timeout: seconds to wait for a connection to the server.
        read_timeout: the longest silence accepted while waiting for an answer or on an
            open event stream, in seconds; None waits for ever. It also bounds a call
            answered as JSON, whose headers come only with its result. A silent GET
            stream is simply reopened, a silent POST stream resumed; a silent
            2024-11-05 stream ends the connection, as that transport cannot resume.
        session_factory: builds each ``requests.Session`` (for proxies, certificates,
            custom adapters); it is called once per thread that sends, once per
            listener and once for the DELETE. Unless it was made with
            ``trust_env=False``, the environment's proxies, CA bundle and netrc
            credentials are set on it, as requests would apply them to each request.
            Its HTTP adapters are instrumented so that closing can interrupt a blocked
            read.
        max_message_size: the largest answer body or event accepted, in bytes; a bigger
            one fails the requests it should have answered.
        legacy_fallback: try the 2024-11-05 HTTP+SSE transport when ``initialize`` is
            refused with 400, 404 or 405 (HTTP-37).
        listen: open the GET stream for server-initiated messages (HTTP-17).
        max_senders: how many POSTs carrying requests may be under way at once; more wait
            their turn.
        max_reconnects: how many failed attempts in a row to resume a stream, or to reopen
            the GET stream, before giving up.
        reconnect_delay: the first wait before reconnecting, in seconds, doubled after
            each failure; the server's ``retry:`` field replaces it.
        max_reconnect_delay: the longest wait between reconnection attempts.
        close_timeout: on close, how long to wait for queued notifications to be posted,
            for the DELETE, and for our threads to finish, in seconds each.
        auth: a ``requests`` auth object set on every session (POST, GET, DELETE), e.g.
            :class:`~mcp_sync.auth.OAuth`; it overrides a ``session_factory`` session's own.

    Raises:
        ValueError: the URL is not ``http://`` or ``https://``, a number is out of range,
            or a header holds a line break.
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        http_timeout: float = 30.0,
        read_timeout: float | None = 300.0,
        session_factory: Callable[[], requests.Session] | None = None,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        legacy_fallback: bool = True,
        listen: bool = True,
        max_senders: int = 16,
        max_reconnects: int = 5,
        reconnect_delay: float = 1.0,
        max_reconnect_delay: float = 30.0,
        close_timeout: float = 5.0,
        auth: requests.auth.AuthBase | None = None,
    ) -> None:
        if not url.lower().startswith(("http://", "https://")):
            raise ValueError(f"not an http:// or https:// URL: {url!r}")
        if max_message_size < 1 or max_senders < 1 or max_reconnects < 0:
            raise ValueError("max_message_size and max_senders must be positive, "
                             "max_reconnects not negative")
        for name, value in (headers or {}).items():
            if any(char in f"{name}{value}" for char in "\r\n\0"):
                raise ValueError(f"header {name!r} holds a line break or NUL")
        super().__init__(
            url, headers=headers, http_timeout=http_timeout, read_timeout=read_timeout,
            session_factory=session_factory, max_message_size=max_message_size,
            max_senders=max_senders, listen=listen, max_reconnects=max_reconnects,
            reconnect_delay=reconnect_delay, max_reconnect_delay=max_reconnect_delay,
            auth=auth)
        self._legacy_fallback = legacy_fallback
        self._close_timeout = close_timeout
        self._read_done = False
        self._closed = threading.Event()
        self._posted = False
        # Notifications and responses are posted one at a time, in order, and a request
        # written after one is not posted before it: `initialized` must reach the server
        # before the requests that follow it.
        self._notes_written = 0
        self._notes_sent = 0
        self._notes_done = threading.Condition(self._lock)
        self._posts = WorkerPool(self._threads, "post", max_senders)
        self._notes = WorkerPool(self._threads, "notify", 1)
        self._ledger = CancelLedger()
        self._answers_json = False  # how the server answered the last request
        self._initialize_tried = False
        #: Tool name -> the argument paths its schema mirrors in Mcp-Param-* headers.
        self._tool_headers: dict[str, dict[tuple[str, ...], str]] = {}

    # --- what the transport knows ------------------------------------------------------------

    @property
    def session_id(self) -> str | None:
        """The ``Mcp-Session-Id`` the server gave us, if any."""
        return self._session_id

    @property
    def protocol_version(self) -> str | None:
        """The version sent in ``MCP-Protocol-Version``: the one the server answered."""
        return self._protocol_version

    @property
    def legacy(self) -> bool:
        """True when the server turned out to speak the 2024-11-05 HTTP+SSE transport."""
        return self._endpoint is not None

    # --- Transport -----------------------------------------------------------------------

    def read(self) -> Incoming | None:
        """The next message from the server; None after :meth:`close`.

        Raises:
            ConnectionLost: the server could not be reached, or the old transport's event
                stream ended; raised once, then None.
        """
        if self._read_done:
            return None
        item = self._inbox.get()
        if isinstance(item, End):
            self._read_done = True
            if item.error is not None:
                raise item.error
            return None
        return item

    def write(self, message: Message | Sequence[Message], *,
              related_to: RequestId | None = None) -> None:
        """Queue one message, or a batch, as its own POST (HTTP-5); returns at once.

        Raises:
            ConnectionClosed: the transport was closed.
            ConnectionLost: the server could not be reached.
            TypeError, ValueError: the message cannot be encoded as JSON.
        """
        items: Sequence[Message] = [message] if isinstance(message, _SINGLE) else message
        body = encode(message)
        if isinstance(message, Notification) and message.method == "notifications/cancelled":
            cancelled = (message.params or {}).get("requestId")
            if names_version(message) and is_request_id(cancelled):
                # Modern: closing the request's answer is the cancel; nothing is posted.
                post_under_way = self._ledger.give_up(cancelled)
                if post_under_way is not None:
                    self._close_answer(post_under_way)
                return
            if is_request_id(cancelled) and self._ledger.cancel(cancelled, body) in (
                    Decision.WITHDRAWN, Decision.HELD):
                return  # its request was never posted, or the server does not have it yet
        requests_in = [item for item in items if isinstance(item, Request)]
        initialize_id = next((r.id for r in requests_in if r.method == "initialize"), None)
        carries_initialized = any(isinstance(item, Notification)
                                  and item.method == "notifications/initialized"
                                  for item in items)
        stale: SocketRegistry | None = None
        with self._lock:
            if self._closing:
                raise ConnectionClosed("the transport is closed")
            if self._lost is not None:
                raise ConnectionLost(str(self._lost)) from self._lost
            # The first initialize, even after a modern probe, may find an old server.
            probe = (not self._initialize_tried and initialize_id is not None
                     and self._legacy_fallback)
            if initialize_id is not None:
                self._initialize_tried = True
            if not self._posted and not probe:
                self._mode_known.set()
            self._posted = True
            if initialize_id is not None and self._endpoint is None:
                stale = self._forget_session_locked()  # HTTP-35: start afresh, without the id
            if not requests_in:
                self._notes_written += 1
            post = Post(body, tuple(r.id for r in requests_in), initialize_id,
                        carries_initialized, probe, self._notes_written)
            add_headers(post, message, self._tool_headers)
        if stale is not None:
            stale.shutdown()
        pool = self._posts if post.request_ids else self._notes
        if post.request_ids:
            self._ledger.queued(post)
        if not pool.submit(self._send, post):
            if not post.request_ids:
                self._note_finished()
            self._ledger.end(post)
            raise ConnectionClosed("the transport is closed")

    def close(self) -> None:
        """End the session: DELETE it (HTTP-32), stop every stream and join every thread.

        Notifications already written are still posted first (for at most
        ``close_timeout``). Idempotent and safe from any thread; a blocked :meth:`read`
        returns None.
        """
        with self._lock:
            first = not self._closing
            self._closing = True
            if first:
                self._notes_done.wait_for(
                    lambda: self._notes_sent >= self._notes_written, self._close_timeout)
            delete_id = (self._session_id
                         if self._lost is None and self._endpoint is None else None)
            listener = self._listener_sockets
        if not first:
            self._closed.wait(3 * self._close_timeout + 5.0)
            return
        try:
            self._stop.set()
            self._mode_known.set()
            self._listener_settled.set()
            with self._lock:
                self._notes_done.notify_all()
            for sockets in (self._sender_sockets, self._stream_sockets, listener):
                if sockets is not None:
                    sockets.shutdown()
            self._posts.close()
            self._notes.close()
            if delete_id is not None:
                self._delete_session(delete_id)
            self._threads.join(self._close_timeout)
            with self._lock:
                sessions, self._sessions = self._sessions, []
            for session in sessions:
                session.close()
        finally:
            self._inbox.put(End())
            self._closed.set()

    # --- sending -------------------------------------------------------------------------

    def _send(self, post: Post) -> None:
        try:
            if self._stop.is_set() or (post.request_ids and self._closing):
                return  # the engine has failed these calls already
            if not post.probe:
                self._mode_known.wait()
            if post.request_ids:
                with self._lock:
                    self._notes_done.wait_for(
                        lambda: self._notes_sent >= post.after_notes or self._stop.is_set())
                self._wait_for_listener()
            if self._stop.is_set():
                return
            if post.request_ids and not self._ledger.start(post):
                return  # its caller gave up before it was sent: the server never hears of it
            session = self._sender_session()
            endpoint = self._endpoint
            if endpoint is not None:
                self._send_legacy(session, endpoint, post)
                return
            with self._lock:
                session_id, version = self._session_id, self._protocol_version
            if post.modern:  # no session in the modern era; the version is the request's
                session_id = version = None
            headers = self._headers(ACCEPT_BOTH, session_id, version, json_body=True)
            headers.update(post.extra_headers or {})
            if post.request_ids and self._answers_json:
                # Its head comes with the answer: held cancellations go once it is sent.
                self._sender_sockets.when_sent(
                    lambda: self._post_notes(self._ledger.reached(post)))
            try:
                response = self._post(session, post.body, headers)
            except AuthorizationError as exc:
                failure = exc
                self._fail(post, lambda: failure)
                return
            except requests.RequestException as exc:
                self._post_failed(post, exc)
                return
            finally:
                self._sender_sockets.when_sent(None)
            if post.modern:
                with self._lock:
                    post.response = response
                    closing = post.close_requested
                if closing:
                    shut(response)
            self._post_notes(self._ledger.reached(post))
            with response:
                self._answer(session, post, response, session_id)
        except Exception as exc:  # whatever broke, no caller may be left waiting
            log.exception("posting to %s failed", self.url)
            reason = f"posting to {self.url} failed: {exc!r}"
            self._fail(post, lambda: HttpError(reason))
        finally:
            if post.probe:
                self._mode_known.set()
            if not post.request_ids:
                self._note_finished()
            else:
                self._post_notes(self._ledger.end(post))

    def _post_notes(self, bodies: list[bytes]) -> None:
        # Cancellations that were held until their request's POST reached the server.
        for body in bodies:
            with self._lock:
                if self._closing:
                    return
                self._notes_written += 1
                post = Post(body, (), None, False, False, self._notes_written)
            if not self._notes.submit(self._send, post):
                self._note_finished()

    def _note_finished(self) -> None:
        with self._lock:
            self._notes_sent += 1
            self._notes_done.notify_all()

    def _answer(self, session: requests.Session, post: Post, response: requests.Response,
                session_id: str | None) -> None:
        status = response.status_code
        if ((post.modern or post.probe) and status in (400, 404)
                and content_type(response) == "application/json" and self._refused(post, response)):
            return
        if post.probe and status in LEGACY_HINTS and self._try_legacy(post):
            return
        if status == 404 and session_id is not None:
            self._session_expired(session_id)
            self._fail(post, lambda: SessionExpired(
                "the server ended the session (HTTP 404); a new one must be initialized",
                {"status": 404}))
            return
        if not 200 <= status < 300:
            self._fail_status(post, response)
            return
        if post.initialize_id is not None:
            self._take_session_id(response)
        if post.carries_initialized:
            self._start_listener()
        if not post.request_ids or status == 202:
            drain(response)
            return
        kind = content_type(response)
        self._answers_json = kind == "application/json"
        if kind == "application/json":
            self._read_json(post, response)
        elif kind == EVENT_STREAM:
            self._read_stream(session, post, response)
        else:
            self._fail(post, lambda: HttpError(
                f"the server answered with Content-Type {kind or '(none)'!r}, expected "
                "application/json or text/event-stream", {"status": status}, status=status))

    def _read_json(self, post: Post, response: requests.Response) -> None:
        try:
            data = read_limited(response, self._max_message_size)
        except requests.RequestException as exc:
            reason = f"reading the answer failed: {exc}"
            self._fail(post, lambda: HttpError(reason))
            return
        if data is None:
            self._fail(post, lambda: HttpError(
                f"the answer exceeds max_message_size ({self._max_message_size} bytes)"))
            return
        self._deliver(decode_frame(data), post)
        self._fail(post, lambda: HttpError("the server's answer holds no response to this"))

    def _read_stream(self, session: requests.Session, post: Post,
                     response: requests.Response) -> None:
        parser = SseParser(self._max_message_size)
        outcome = self._pump(response, parser, post)
        retry = parser.retry
        failures = 0
        while post.outstanding and outcome is not Outcome.TOO_LARGE:
            # V1125-13..17: the server may end the stream before answering; it goes on,
            # and GET with the last event id of this stream takes the rest.
            last_id = parser.last_event_id
            if last_id is None or failures >= self._max_reconnects:
                break
            if self._stop.wait(self._delay(retry, failures)):
                return
            if not post.outstanding:
                break  # its calls were cancelled meanwhile (their caller's timeout)
            with self._lock:
                session_id, version = self._session_id, self._protocol_version
            headers = self._headers(EVENT_STREAM, session_id, version, last_event_id=last_id)
            try:
                resumed = session.get(self.url, headers=headers, stream=True,
                                      timeout=self._timeout)
            except AuthorizationError as exc:
                failure = exc
                self._fail(post, lambda: failure)  # noqa: B023 (called before the loop goes on)
                return
            except requests.RequestException as exc:
                log.debug("resuming the stream after %r failed: %s", last_id, str(exc))
                if is_connect_failure(exc):  # nobody listens: the server is gone
                    self._post_failed(post, exc)
                    return
                failures += 1
                continue
            with resumed:
                status = resumed.status_code
                if status == 404 and session_id is not None:
                    self._session_expired(session_id)
                    self._fail(post, lambda: SessionExpired(
                        "the server ended the session (HTTP 404) before answering",
                        {"status": 404}))
                    return
                if status in _TRANSIENT:
                    failures += 1
                    continue
                if not 200 <= status < 300 or content_type(resumed) != EVENT_STREAM:
                    log.debug("the server refused to resume %r: HTTP %d", last_id, status)
                    break
                parser = resume_parser(parser, self._max_message_size)
                parser.retry = None
                outcome = self._pump(resumed, parser, post)
                # A stream the server ended with `retry:` asks us to poll: no failure.
                polled = parser.retry is not None
                retry = parser.retry if polled else retry
                failures = 0 if outcome is Outcome.EVENTS or polled else failures + 1
        if self._stop.is_set():
            return
        if outcome is Outcome.TOO_LARGE:
            self._fail(post, lambda: HttpError(
                f"an event exceeds max_message_size ({self._max_message_size} bytes)"))
        else:
            self._fail(post, lambda: HttpError(
                "the server ended the event stream without answering, and it could not "
                f"be resumed (POST to {self.url})"))

    # --- the session ---------------------------------------------------------------------

    def _session_expired(self, session_id: str) -> None:
        # The id is kept until the next initialize is written, so that requests sent
        # meanwhile meet the same 404 and report SessionExpired, not a 400 for a missing id.
        with self._lock:
            if self._session_id != session_id:
                return  # a new session has started since
            self._listener_generation += 1
            self._listener_settled.set()
            sockets, self._listener_sockets = self._listener_sockets, None
        if sockets is not None:
            sockets.shutdown()

    def _forget_session_locked(self) -> SocketRegistry | None:
        self._session_id = None
        self._protocol_version = None
        self._listener_generation += 1
        self._listener_settled.set()
        sockets, self._listener_sockets = self._listener_sockets, None
        return sockets

    def _delete_session(self, session_id: str) -> None:
        sockets = SocketRegistry()
        session = self._new_session(sockets)
        headers = self._headers(None, session_id, self._protocol_version)
        try:
            response = session.delete(self.url, headers=headers,
                                      timeout=(self._close_timeout, self._close_timeout))
            with response:
                drain(response)
            if not (200 <= response.status_code < 300 or response.status_code in (404, 405)):
                log.info("DELETE of the session at %s answered HTTP %d",
                         self.url, response.status_code)
        except (requests.RequestException, AuthorizationError) as exc:
            log.debug("DELETE of the session at %s failed: %s", self.url, str(exc))
        finally:
            session.close()

