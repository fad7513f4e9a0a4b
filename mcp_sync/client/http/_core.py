"""What every part of the HTTP client transport shares: settings, state and plumbing.

:class:`HttpCore` holds the session state (id, negotiated version, whether the old
transport is in use), the queue that :meth:`~.http_client.HttpClientTransport.read` takes
from, the ``requests`` sessions and the sockets to shut down on close; and the plumbing
that the senders, the GET listener and the legacy stream all use: headers, reading an
event stream, delivering messages and failing requests that cannot be answered.
"""

from __future__ import annotations

import enum
import logging
import queue
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs
import requests
from requests.adapters import HTTPAdapter

from ...engine._threads import ThreadGroup
from ...errors import AuthorizationError, ConnectionLost, HttpError, McpError, RpcError
from ...protocol._jsonrpc import Batch, ErrorResponse, Incoming, RequestId, Response
from ...protocol._sse import SseParser
from ...transports._decode import decode_frame
from ...transports.base import Pusher, Receiver
from ._io import (
    STREAM_ERRORS,
    Environment,
    EventTooLarge,
    SocketRegistry,
    body_excerpt,
    feed,
    is_connect_failure,
    iter_raw,
)
from ._post import PostAdapter

__all__ = [
    "ACCEPT_BOTH",
    "EVENT_STREAM",
    "End",
    "HttpCore",
    "HttpError",
    "Outcome",
    "Post",
    "resume_parser",
]

log = logging.getLogger("mcp_sync.http.client")

ACCEPT_BOTH = "application/json, text/event-stream"
EVENT_STREAM = "text/event-stream"


@attrs.frozen
class End:
    """Put in the inbox to make ``read`` end: with an error once the server is lost."""

    error: McpError | None = None


@attrs.define(eq=False)
class Post:
    """One POST to make, and which of its requests are still unanswered."""

    body: bytes
    request_ids: tuple[RequestId, ...]
    initialize_id: RequestId | None
    carries_initialized: bool
    probe: bool
    #: How many notification POSTs must have been sent before this one may start.
    after_notes: int
    outstanding: set[RequestId] = attrs.field(init=False)
    #: Headers of this POST beyond the usual ones (Mcp-Method, Mcp-Name, Mcp-Param-*).
    extra_headers: dict[str, str] | None = None
    #: A modern (2026-07-28) request: no session id, its version from its ``_meta``.
    modern: bool = False
    #: The answer being read (modern posts), and whether the caller gave up on it: in
    #: the modern era closing the answer's stream is the cancellation.
    response: Any = None
    close_requested: bool = False

    def __attrs_post_init__(self) -> None:
        self.outstanding = set(self.request_ids)


class Outcome(enum.Enum):
    """How reading an event stream ended."""

    QUIET = "ended without an event"
    EVENTS = "ended after events"
    TOO_LARGE = "an event was too large"


class HttpCore:
    """Settings and state shared by the senders, the listener and the legacy stream."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None,
        http_timeout: float,
        read_timeout: float | None,
        session_factory: Callable[[], requests.Session] | None,
        max_message_size: int,
        max_senders: int,
        listen: bool,
        max_reconnects: int,
        reconnect_delay: float,
        max_reconnect_delay: float,
        auth: requests.auth.AuthBase | None = None,
    ) -> None:
        self.url = url
        self._auth = auth
        self._user_headers = dict(headers or {})
        self._timeout = (http_timeout, read_timeout)
        self._session_factory = session_factory
        self._environment = Environment.read(url)
        # The senders' threads post at most this many requests at once, beside one
        # notification: the pool of kept-alive connections they share holds as many.
        self._sender_pool_size = max_senders + 1
        self._sender_adapter: PostAdapter | None = None
        self._max_message_size = max_message_size
        self._listen = listen
        self._max_reconnects = max_reconnects
        self._reconnect_delay = reconnect_delay
        self._max_reconnect_delay = max_reconnect_delay

        self._lock = threading.Lock()
        self._inbox: queue.SimpleQueue[Incoming | End] = queue.SimpleQueue()
        self._pusher = Pusher()
        self._closing = False
        self._stop = threading.Event()  # set once close() stops waiting for queued posts
        self._lost: McpError | None = None
        self._session_id: str | None = None
        self._protocol_version: str | None = None
        self._mode_known = threading.Event()  # cleared while initialize probes (HTTP-37)
        self._endpoint: str | None = None  # set when the old transport is in use
        self._threads = ThreadGroup("http-client")
        self._local = threading.local()
        self._sessions: list[requests.Session] = []
        self._cookies = requests.cookies.RequestsCookieJar()
        self._sender_sockets = SocketRegistry()
        self._stream_sockets = SocketRegistry()
        self._listener_sockets: SocketRegistry | None = None
        self._listener_generation = 0
        # Cleared while a new GET stream is being opened: requests wait for it, briefly, so
        # that what the server sends there about them (elicitation, sampling) is heard.
        self._listener_settled = threading.Event()
        self._listener_settled.set()

    # --- requests plumbing --------------------------------------------------------------------

    def _headers(self, accept: str | None, session_id: str | None, version: str | None, *,
                 json_body: bool = False, last_event_id: str | None = None) -> dict[str, str]:
        ours: dict[str, str] = {}
        if accept is not None:
            ours["Accept"] = accept  # HTTP-6, HTTP-17
        if json_body:
            ours["Content-Type"] = "application/json"  # AMBIG-12
        if session_id is not None:
            ours["Mcp-Session-Id"] = session_id  # HTTP-31
        if version is not None:
            ours["MCP-Protocol-Version"] = version
        if last_event_id is not None:
            ours["Last-Event-ID"] = last_event_id  # HTTP-26
        taken = {name.lower() for name in ours}
        headers = {name: value for name, value in self._user_headers.items()
                   if name.lower() not in taken}
        headers.update(ours)
        return headers

    def _new_session(self, sockets: SocketRegistry,
                     adapter: HTTPAdapter | None = None) -> requests.Session:
        """A session with the environment applied, whose sockets ``sockets`` can shut down.

        ``adapter``, already instrumented, carries the requests of a session of ours; a
        session from ``session_factory`` keeps its own adapters.
        """
        session = self._session_factory() if self._session_factory else requests.Session()
        if self._auth is not None:
            # Set before the environment, so that netrc credentials do not replace it.
            session.auth = self._auth
        self._environment.apply(session)
        if adapter is not None and self._session_factory is None:
            for prefix in ("https://", "http://"):
                session.mount(prefix, adapter)
        else:
            sockets.instrument(session, self.url)
        with self._lock:
            self._cookies.update(session.cookies)
        session.cookies = self._cookies
        return session

    def _sender_session(self) -> requests.Session:
        """The calling thread's own session (psf/requests#2766).

        Sessions of ours share one :class:`~._http_post.PostAdapter`, and with it one
        pool of connections sized to the senders; sessions from ``session_factory``
        each keep their own adapters.
        """
        session: requests.Session | None = getattr(self._local, "session", None)
        if session is None:
            adapter = None
            if self._session_factory is None:
                with self._lock:
                    if self._sender_adapter is None:
                        self._sender_adapter = PostAdapter(
                            self.url, pool_maxsize=self._sender_pool_size,
                            timeout=self._timeout,
                            verify=self._environment.ca_bundle or True,
                            proxies=self._environment.proxies,
                            sockets=self._sender_sockets)
                    adapter = self._sender_adapter
            session = self._new_session(self._sender_sockets, adapter)
            self._local.session = session
            with self._lock:
                self._sessions.append(session)
        return session

    def _post(self, session: requests.Session, body: bytes,
              headers: dict[str, str]) -> requests.Response:
        """POST to the endpoint, through ``session`` or, for a session of ours whose
        requests would carry nothing but ``headers``, straight through its adapter.

        Raises:
            requests.RequestException: the POST failed.
        """
        adapter = self._sender_adapter
        if adapter is not None and session.auth is None:
            response = adapter.post(body, headers, self._cookies)
            if not response.is_redirect:
                return response
            response.close()  # requests follows it
        return session.post(self.url, data=body, headers=headers, stream=True,
                            timeout=self._timeout)

    # --- reading and delivering -------------------------------------------------------------

    def _pump(self, response: requests.Response, parser: SseParser,
              post: Post | None) -> Outcome:
        """Deliver a stream's messages until it ends, breaks or is shut down."""
        outcome = Outcome.QUIET
        chunks = iter_raw(response)
        while True:
            try:
                chunk = next(chunks, b"")
            except STREAM_ERRORS as exc:
                # Logged as text: a record holding the exception would hold its traceback,
                # and with it the response and its socket, as long as a handler keeps it.
                log.debug("event stream from %s broke: %s", self.url, str(exc))
                return outcome
            if not chunk:
                return outcome
            try:
                events = feed(parser, chunk)
            except EventTooLarge as exc:
                log.warning("dropping an event stream from %s: %s", self.url, str(exc))
                return Outcome.TOO_LARGE
            for event in events:
                outcome = Outcome.EVENTS
                if event.event == "message" and event.data:  # AMBIG-13
                    self._deliver(decode_frame(event.data), post)

    def _delay(self, retry_ms: int | None, failures: int) -> float:
        base = retry_ms / 1000.0 if retry_ms is not None else self._reconnect_delay
        return float(min(base * 2 ** failures, max(self._max_reconnect_delay, base)))

    def _deliver(self, incoming: Incoming, post: Post | None) -> None:
        if post is not None:
            for item in _items(incoming):
                if isinstance(item, (Response, ErrorResponse)) and item.id in post.outstanding:
                    assert item.id is not None
                    post.outstanding.discard(item.id)
                    if item.id == post.initialize_id and isinstance(item, Response):
                        self._take_version(item.result)
        with self._lock:
            if self._closing:
                return
            if not self._pusher.attached:
                self._inbox.put(incoming)
                return
        self._pusher.push(incoming)

    def attach_receiver(self, receiver: Receiver) -> bool:
        # The thread that read an answer hands it to the engine itself: waking the
        # engine's reader to do that would cost a thread hand-off per call.
        return self._pusher.attach(receiver)

    def _fail(self, post: Post, make_error: Callable[[], RpcError]) -> None:
        """Answer every still unanswered request of ``post`` with an error of our own."""
        if not post.request_ids:
            log.warning("could not post a notification or response to %s: %s",
                        self.url, make_error())
            return
        for request_id in sorted(post.outstanding, key=str):
            self._deliver(ErrorResponse(request_id, make_error()), post)

    def _fail_status(self, post: Post, response: requests.Response,
                     body: tuple[str, str | None] | None = None) -> None:
        """Fail ``post`` with an HttpError for the status; ``body`` is the excerpt and
        JSON-RPC message of a body already read."""
        status = response.status_code
        url = response.url or self.url
        excerpt, detail = body_excerpt(response) if body is None else body
        if status == 401 and self._auth is not None:
            message = (f"the MCP server at {url} refused the credentials of "
                       f"{self._auth!r} (HTTP 401 Unauthorized)")
        elif status == 401:
            message = (f"the MCP server at {url} requires authorization (HTTP 401 "
                       "Unauthorized); pass auth=OAuth() or credentials, e.g. "
                       "auth=BearerToken('<token>')")
        elif status == 403:
            message = (f"the MCP server at {url} refused access (HTTP 403 Forbidden): "
                       "the credentials do not allow this")
        elif status == 404:
            message = (f"no MCP endpoint at {url} (HTTP 404 Not Found); check the path "
                       "(often /mcp)")
            if detail is not None and detail.strip().lower().rstrip(".") == "not found":
                detail = None
        else:
            message = f"the MCP server at {url} answered HTTP {status} {response.reason}"
        if detail:
            message = f"{message.rstrip()}: {detail}"
        data: dict[str, Any] = {"status": status, "body": excerpt}
        challenge = response.headers.get("WWW-Authenticate")
        if challenge:
            data["wwwAuthenticate"] = challenge
        error_class = AuthorizationError if status in (401, 403) else HttpError
        self._fail(post, lambda: error_class(message, dict(data), status=status))

    def _post_failed(self, post: Post, error: requests.RequestException) -> None:
        if self._stop.is_set():
            return
        if is_connect_failure(error):
            lost = ConnectionLost(f"cannot reach the MCP server at {self.url}: {error}")
            lost.__cause__ = error
            self._lose(lost)
            return
        self._fail(post, lambda: HttpError(f"the POST to {self.url} failed: {error}"))

    def _lose(self, error: McpError) -> None:
        with self._lock:
            if self._closing or self._lost is not None:
                return
            self._lost = error
            self._inbox.put(End(error))

    # --- the session ---------------------------------------------------------------------

    def _take_session_id(self, response: requests.Response) -> None:
        session_id = response.headers.get("Mcp-Session-Id")
        if session_id is None:
            return
        if not _visible_ascii(session_id):  # HTTP-30; it could not be sent back anyway
            log.warning("ignoring a malformed Mcp-Session-Id from %s: %r", self.url, session_id)
            return
        with self._lock:
            self._session_id = session_id

    def _take_version(self, result: dict[str, Any]) -> None:
        version = result.get("protocolVersion")
        if isinstance(version, str) and _visible_ascii(version):
            with self._lock:
                self._protocol_version = version


def _items(incoming: Incoming) -> Iterable[Any]:
    return incoming.items if isinstance(incoming, Batch) else (incoming,)


def resume_parser(previous: SseParser | None, max_size: int,
                  last_id: str | None = None) -> SseParser:
    """A fresh parser that continues from where ``previous`` (or ``last_id``) left off."""
    parser = SseParser(max_size)
    if previous is not None:
        parser.last_event_id = previous.last_event_id
        parser.retry = previous.retry
    else:
        parser.last_event_id = last_id
    return parser


def _visible_ascii(text: str) -> bool:
    return bool(text) and all("\x21" <= char <= "\x7e" for char in text)
