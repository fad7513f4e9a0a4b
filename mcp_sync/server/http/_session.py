"""One Streamable HTTP session: the transport its server connection runs on, and its streams.

Theory of operation
-------------------

Client messages arrive in POST bodies. The WSGI thread that received a body hands it to
:meth:`SessionTransport.feed`, and the engine's reader takes it from a queue in
:meth:`SessionTransport.read`. Server messages leave through
:meth:`SessionTransport.write`, which never blocks on the network: it appends the message
to exactly one stream (HTTP-23) and wakes whoever delivers that stream.

A :class:`Stream` is the ordered list of events one kind of HTTP response carries:

* each POST body holding requests gets a stream that owns those request ids. It carries
  their responses and, when it is an SSE stream, the requests and notifications related
  to them (progress, sampling). It is *finished* once every request is answered or
  cancelled (HTTP-12..15, AMBIG-8);
* the session's standalone stream, served to GET, carries everything else (HTTP-19). It
  never carries a response (HTTP-20).

Where a message goes: a response to the stream that owns its id; a request or
notification related to a request of a live SSE stream, to that stream; anything else to
the standalone stream while a GET delivers it, otherwise to the newest POST stream that
a client is reading (so a client refused a GET still hears from us), otherwise to the
standalone stream's queue, for the next GET. A JSON answer whose related messages went
to a stream being read leaves only once that stream's consumer has written them, so that
they reach the client first (:meth:`SessionTransport.wait_related_written`).

An HTTP response delivering a stream attaches to it with a token; a newer consumer (a
resumption, a second GET) takes over and the older one ends. Streams outlive their
consumers: a dropped connection is not a cancellation (HTTP-16), so events keep coming
and wait. Every event of a resumable stream goes to the event store as it is appended;
a GET with ``Last-Event-ID`` replays from the store what followed that event on that
stream and then follows the stream live (HTTP-26..28).

One condition variable guards everything here; the event store is called with it held.
"""

from __future__ import annotations

import collections
import itertools
import logging
import threading
import time
from collections.abc import Callable, Sequence

from ...errors import ConnectionClosed, InternalError, InvalidRequest
from ...protocol._jsonrpc import (
    Batch,
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
from ...protocol._sse import format_comment, format_data_event, format_event
from ...transports.base import Pusher, Receiver, Transport
from ._event_store import EventStore, StoredEvent
from ._inbox import Inbox
from ._store import Relay

__all__ = ["STANDALONE_STREAM", "CannotResume", "SessionTransport", "Stream", "encode_answer"]

log = logging.getLogger("mcp_sync.http.server")

#: The id of every session's standalone (GET) stream; POST streams are "p1", "p2", ...
STANDALONE_STREAM = "g"

#: How many cancellations of requests it has not received a session remembers.
MAX_EARLY_CANCELS = 256

#: Events a stream holds for a consumer that is not reading, beyond which the oldest
#: notifications (progress, logs) are dropped; requests and responses are always kept.
MAX_QUEUED_EVENTS = 1000


class CannotResume(Exception):
    """The stream named by a ``Last-Event-ID`` can no longer be replayed."""


class _Event:
    __slots__ = ("droppable", "payload", "seq")

    def __init__(self, seq: int, payload: bytes, droppable: bool) -> None:
        self.seq = seq
        self.payload = payload
        self.droppable = droppable


class Stream:
    """The events of one POST body's requests, or of the session's standalone stream.

    ``sse`` streams hold SSE events (with ids when ``resumable``); the others hold the
    JSON text of responses, for a reply in one ``application/json`` body.
    """

    def __init__(self, stream_id: str, *, sse: bool, resumable: bool) -> None:
        self.id = stream_id
        self.sse = sse
        self.resumable = resumable
        self.next_seq = 1
        self.queue: collections.deque[_Event] = collections.deque()
        self.pending: set[RequestId] = set()
        self.finished = False
        self.consumer: object | None = None
        self.last_delivery = 0.0
        # The newest event related to this stream's requests that went to another
        # stream (JSON mode: the standalone one), as (that stream, its seq).
        self.related_tail: tuple[Stream, int] | None = None
        # The seq of the last event handed to a consumer, and of the last one it has
        # written: a consumer asks for more only after writing what it had.
        self.handed = 0
        self.written = 0

    def __repr__(self) -> str:
        return f"<Stream {self.id} pending={len(self.pending)} finished={self.finished}>"


class OpenedStream:
    """What :meth:`SessionTransport.open_stream` made: the stream, and what it refused."""

    def __init__(self, stream: Stream, token: object | None, refused: list[Request]) -> None:
        self.stream = stream
        self.token = token
        self.refused = refused


class SessionTransport(Transport):
    """The transport of one HTTP session (or one stateless POST); see the module docstring.

    Args:
        session_id: the ``Mcp-Session-Id``; None in stateless mode.
        event_store: where resumable events are kept; streams are resumable only with
            a store and a session id.
        stateless: only the POST's own stream exists; unrelated messages are dropped.
        clock: the time source for idle tracking.
        stream_suffix: added to every stream id, so that the streams of one session
            served by several processes never share an id.
        relay: what a session shared between processes does with a request it sends
            (:meth:`Relay.sent_request`, before it leaves) and with a message no stream
            of this process carries (:meth:`Relay.forward`).
    """

    # Messages are pushed (attach_receiver) and the session ends only when closed.
    ends_on_close = True

    def __init__(self, session_id: str | None, *, event_store: EventStore | None = None,
                 stateless: bool = False, clock: Callable[[], float] = time.monotonic,
                 max_queued: int = MAX_QUEUED_EVENTS, stream_suffix: str = "",
                 relay: Relay | None = None) -> None:
        self.session_id = session_id
        self._suffix = stream_suffix
        self._relay = relay
        self._store = event_store if session_id is not None else None
        self._stateless = stateless
        self._clock = clock
        self._max_queued = max_queued
        self._cond = threading.Condition()
        self._inbox = Inbox()
        self._pusher = Pusher()
        self._closed = False
        self._serial = itertools.count(1)
        self._owners: dict[RequestId, Stream] = {}
        self._posts: dict[str, Stream] = {}
        self._cancelled_early: dict[RequestId, None] = {}  # oldest first
        self._when_idle: list[Callable[[], None]] = []
        self.standalone = Stream(STANDALONE_STREAM + stream_suffix, sse=True,
                                 resumable=self._store is not None)
        #: The session negotiated SSE polling (2025-11-25): its streams are primed, so
        #: one may end before its answer (:meth:`hang_up`).
        self.polling = False

    @property
    def closed(self) -> bool:
        return self._closed

    # --- the engine's side -----------------------------------------------------------------

    def read(self) -> Incoming | None:
        return self._inbox.get()

    def attach_receiver(self, receiver: Receiver) -> bool:
        # The WSGI thread that received a message hands it to the engine itself: waking
        # the engine's reader to do that would cost a thread hand-off per message.
        return self._pusher.attach(receiver)

    def write(self, message: Message | Sequence[Message], *,
              related_to: RequestId | None = None) -> None:
        if isinstance(message, (Request, Notification, Response, ErrorResponse)):
            encoded = [(message, encode(message))]
        else:
            encoded = [(item, encode_answer(item)) for item in message]
        if self._relay is not None and self.session_id is not None:
            for item, _ in encoded:
                if isinstance(item, Request):
                    # Before it leaves: its answer may come to another process.
                    self._relay.sent_request(self.session_id, item.id)
        callbacks: list[Callable[[], None]] = []
        with self._cond:
            if self._closed:
                raise ConnectionClosed("the HTTP session has ended")
            for item, data in encoded:
                self._route(item, data, related_to, callbacks)
            self._cond.notify_all()
        _run(callbacks)

    def close(self) -> None:
        callbacks: list[Callable[[], None]] = []
        with self._cond:
            if self._closed:
                return
            self._closed = True
            for stream in list(self._posts.values()):
                self._finish(stream, callbacks)
            self.standalone.finished = True
            self._owners.clear()
            self._inbox.end()
            self._cond.notify_all()
        _run(callbacks)

    def _route(self, item: Message, data: bytes, related_to: RequestId | None,
               callbacks: list[Callable[[], None]]) -> None:
        if isinstance(item, (Response, ErrorResponse)):
            owner = self._owners.pop(item.id, None) if item.id is not None else None
            if owner is None:
                log.debug("dropping the answer to %r: no stream waits for it", item.id)
                return
            self._append(owner, data, droppable=False)
            owner.pending.discard(item.id)
            if not owner.pending:
                self._finish(owner, callbacks)
            return
        stream = self._stream_for(related_to)
        if stream is None:
            log.debug("dropping %s: no stream can carry it", item.method)
            return
        if (stream is self.standalone and stream.consumer is None and self._relay is not None
                and self.session_id is not None):
            callbacks.append(lambda: self._forward(data))
            return
        self._append(stream, data, droppable=isinstance(item, Notification))
        owner = self._owners.get(related_to) if related_to is not None else None
        if owner is not None and owner is not stream:
            owner.related_tail = (stream, stream.next_seq - 1)

    def _stream_for(self, related_to: RequestId | None) -> Stream | None:
        if related_to is not None:
            owner = self._owners.get(related_to)
            if owner is not None and owner.sse:
                return owner
        if self._stateless:
            return None
        if self.standalone.consumer is not None:
            return self.standalone
        for stream in reversed(self._posts.values()):
            if stream.sse and stream.consumer is not None:
                return stream
        return self.standalone

    def _forward(self, data: bytes) -> None:
        assert self._relay is not None and self.session_id is not None
        if not self._relay.forward(self.session_id, data):
            self.deliver(data)

    def deliver(self, data: bytes) -> None:
        """Send a message (JSON text) another process of the session could not carry."""
        with self._cond:
            stream = None if self._closed else self._stream_for(None)
            if stream is not None:
                self._append(stream, data, droppable=True)
                self._cond.notify_all()

    def _append(self, stream: Stream, data: bytes, *, droppable: bool) -> None:
        seq = stream.next_seq
        stream.next_seq += 1
        if stream.sse:
            event_id: str | None = None
            if stream.resumable:
                event_id = f"{stream.id}:{seq}"
                self._keep(stream.id, seq, data.decode("utf-8"))
            payload = format_data_event(data, event_id=event_id)
        else:
            payload = data
        stream.queue.append(_Event(seq, payload, droppable))
        if len(stream.queue) > self._max_queued:
            for event in stream.queue:
                if event.droppable:
                    stream.queue.remove(event)
                    log.debug("stream %s: dropped an unread notification", stream.id)
                    break

    def _keep(self, stream_id: str, seq: int, text: str) -> None:
        assert self._store is not None and self.session_id is not None
        try:
            self._store.store_event(self.session_id, stream_id, seq, text)
        except Exception:
            log.exception("the event store failed to keep event %s:%d", stream_id, seq)

    def _finish(self, stream: Stream, callbacks: list[Callable[[], None]]) -> None:
        stream.finished = True
        self._posts.pop(stream.id, None)
        for request_id in stream.pending:
            self._owners.pop(request_id, None)
        stream.pending.clear()
        if not self._posts:
            callbacks.extend(self._when_idle)
            self._when_idle.clear()

    # --- the HTTP side ---------------------------------------------------------------------

    def open_stream(self, requests: Sequence[Request], *, sse: bool,
                    immediate: Sequence[ErrorResponse] = (), attach: bool = False,
                    ) -> OpenedStream:
        """Open the stream for one POST body, before its messages are fed.

        A request whose id is already awaiting an answer in this session (or earlier in
        the same body) is refused with -32600 at once instead of being forwarded, so
        that every answer has exactly one place to go. A request whose cancellation
        came first is refused without an answer (CANCEL-4). ``immediate`` answers (for
        invalid batch elements) go first.

        Raises:
            ConnectionClosed: the session has ended.
        """
        callbacks: list[Callable[[], None]] = []
        with self._cond:
            if self._closed:
                raise ConnectionClosed("the HTTP session has ended")
            stream = Stream(f"p{next(self._serial)}{self._suffix}", sse=sse,
                            resumable=sse and self._store is not None)
            refused: list[Request] = []
            answers = list(immediate)
            for request in requests:
                if request.id in self._cancelled_early:
                    # Its cancellation, posted on another connection, overtook it. An id
                    # is never used twice in a session (JSONRPC-4): it is never served.
                    del self._cancelled_early[request.id]
                    log.debug("dropping request %r: it was cancelled before it arrived",
                              request.id)
                    refused.append(request)
                elif request.id in self._owners or request.id in stream.pending:
                    refused.append(request)
                    answers.append(ErrorResponse(request.id, InvalidRequest(
                        f"Invalid Request: id {request.id!r} is already in use")))
                else:
                    stream.pending.add(request.id)
            for request_id in stream.pending:
                self._owners[request_id] = stream
            for answer in answers:
                self._append(stream, encode(answer), droppable=False)
            token: object | None = None
            if attach:
                token = stream.consumer = object()
                stream.last_delivery = self._clock()
            if stream.pending:
                self._posts[stream.id] = stream
            else:
                self._finish(stream, callbacks)
        _run(callbacks)
        return OpenedStream(stream, token, refused)

    def feed(self, incoming: Incoming, *, serve_here: bool = False) -> None:
        """Hand a client message (or batch) to the engine.

        A ``notifications/cancelled`` for a request of ours ends that request's place in
        its stream: a cancelled request is never answered (AMBIG-8), and its stream
        closes once the rest are. A request cancelled before it was fed is not served
        (CANCEL-7). With ``serve_here`` (for a caller that would only wait
        for the answers) the requests are served on the calling thread before this
        returns, rather than by the engine's workers.

        Raises:
            ConnectionClosed: the session has ended.
        """
        callbacks: list[Callable[[], None]] = []
        with self._cond:
            if self._closed:
                raise ConnectionClosed("the HTTP session has ended")
            messages = incoming.items if isinstance(incoming, Batch) else (incoming,)
            for message in messages:
                if isinstance(message, Notification) and message.method == (
                        "notifications/cancelled"):
                    self._note_cancel(message, callbacks)
            forward: Incoming | None = incoming
            kept = [message for message in messages if not isinstance(message, Request)
                    or message.id in self._owners]
            if len(kept) < len(messages):
                # Cancelled since its stream was opened, by a POST that came in meanwhile.
                log.debug("dropping %d request(s) cancelled before they were served",
                          len(messages) - len(kept))
                forward = Batch(tuple(kept)) if isinstance(incoming, Batch) and kept else None
            pushed = self._pusher.attached
            if not pushed and forward is not None:
                self._inbox.put(forward)
                self._cond.notify_all()
        servers = (self._pusher.push(forward, serve_here)
                   if pushed and forward is not None else [])
        _run(callbacks)
        for serve in servers:
            serve()

    def _note_cancel(self, notification: Notification,
                     callbacks: list[Callable[[], None]]) -> None:
        request_id = (notification.params or {}).get("requestId")
        if not is_request_id(request_id):
            return
        owner = self._owners.pop(request_id, None)
        if owner is None:
            # Not received yet (or answered already): should it come, it is not served.
            self._cancelled_early[request_id] = None
            if len(self._cancelled_early) > MAX_EARLY_CANCELS:
                del self._cancelled_early[next(iter(self._cancelled_early))]
            return
        owner.pending.discard(request_id)
        if not owner.pending:
            self._finish(owner, callbacks)
            # Its consumer ends the stream now, not at the next keep-alive tick: until
            # then it would hold a WSGI thread and one of the client's connections.
            self._cond.notify_all()

    def attach(self, stream: Stream) -> object:
        """Become the one consumer of ``stream``; the previous one, if any, ends."""
        token = object()
        with self._cond:
            stream.consumer = token
            stream.last_delivery = self._clock()
            self._cond.notify_all()
        return token

    def detach(self, stream: Stream, token: object) -> bool:
        """Stop consuming ``stream``; False if the client left while it was still due
        events (its consumer, with the stream unfinished), True otherwise: the stream
        finished, or another consumer or the server's idle check took it over."""
        with self._cond:
            if stream.consumer is not token:
                return True
            stream.consumer = None
            return stream.finished

    def call_when_idle(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once no POST stream awaits an answer (now, if none does)."""
        with self._cond:
            if self._posts:
                self._when_idle.append(callback)
                return
        callback()

    def next_chunk(self, stream: Stream, token: object, keepalive: float,
                   idle_timeout: float | None, until: float | None = None,
                   ) -> tuple[bytes, bool]:
        """Wait for events of ``stream`` and take them all.

        Returns ``(data, ended)``: the events (or a keep-alive comment after
        ``keepalive`` seconds of silence; nothing, if ``until``, a ``time.monotonic()``
        value, comes first), and whether this consumer is done: the stream finished,
        another consumer took over, or nothing was delivered for ``idle_timeout`` seconds.
        """
        deadline = time.monotonic() + keepalive
        quiet = until is not None and until < deadline
        if until is not None and quiet:
            deadline = until
        with self._cond:
            if stream.consumer is token and stream.written < stream.handed:
                stream.written = stream.handed
                self._cond.notify_all()
            while True:
                if stream.consumer is not token:
                    return b"", True
                if stream.queue:
                    payload = b"".join(event.payload for event in stream.queue)
                    stream.handed = stream.queue[-1].seq
                    stream.queue.clear()
                    stream.last_delivery = self._clock()
                    return payload, stream.finished
                if stream.finished:
                    return b"", True
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    if (idle_timeout is not None
                            and self._clock() - stream.last_delivery >= idle_timeout):
                        stream.consumer = None
                        return b"", True
                    return (b"" if quiet else format_comment("keep-alive")), False
                self._cond.wait(remaining)

    def wait_finished(self, stream: Stream, timeout: float | None = None) -> bool:
        """Block until every request of ``stream`` is answered or cancelled."""
        with self._cond:
            return self._cond.wait_for(lambda: stream.finished, timeout)

    def wait_related_written(self, stream: Stream, timeout: float) -> bool:
        """Wait until what ``stream``'s requests sent elsewhere has been written out.

        In JSON mode a request's progress and log messages travel on the GET stream and
        its answer in the POST body, two connections with no order between them; holding
        the answer until the GET stream's consumer has written them lets them arrive
        first. Nobody reading that stream is no reason to wait: they are held for the
        next GET. Returns False if ``timeout`` ran out first.
        """
        with self._cond:
            tail = stream.related_tail
            if tail is None:
                return True
            target, seq = tail
            return self._cond.wait_for(
                lambda: self._closed or target.consumer is None or target.written >= seq,
                timeout)

    def take(self, stream: Stream) -> list[bytes]:
        """Everything queued on ``stream``, removed from it."""
        with self._cond:
            payloads = [event.payload for event in stream.queue]
            stream.queue.clear()
            return payloads

    def resume(self, stream_id: str, after_seq: int) -> tuple[list[bytes], Stream | None,
                                                               object | None]:
        """Replay a stream after its event ``after_seq`` and, if it is live, take it over.

        Returns the replayed events, and the live stream with the consumer token (None
        for a stream that has finished: the replay is all there is).

        Raises:
            CannotResume: the stream is unknown or its events after ``after_seq`` are gone.
            ConnectionClosed: the session has ended.
        """
        with self._cond:
            if self._closed:
                raise ConnectionClosed("the HTTP session has ended")
            stored: list[StoredEvent] | None = None
            if self._store is not None and self.session_id is not None:
                try:
                    stored = self._store.events_after(self.session_id, stream_id, after_seq)
                except Exception:
                    log.exception("the event store failed to replay %s", stream_id)
            live = (self.standalone if stream_id.startswith(STANDALONE_STREAM)
                    else self._posts.get(stream_id))
            if live is not None and not live.resumable:
                live = None
            if stored is None and live is None:
                raise CannotResume(f"the events after {stream_id}:{after_seq} are gone")
            replay = [format_event(event.data, event_id=f"{stream_id}:{event.seq}")
                      for event in stored or ()]
            if live is None:
                return replay, None, None
            last = stored[-1].seq if stored else after_seq
            live.queue = collections.deque(e for e in live.queue if e.seq > last)
            live.handed = max(live.handed, last)
            token = live.consumer = object()
            live.last_delivery = self._clock()
            self._cond.notify_all()
            return replay, live, token

    def hang_up(self, related_to: RequestId) -> bool:
        """End the response of the SSE stream carrying ``related_to`` (V1125-13); the
        stream goes on, for the client's GET with ``Last-Event-ID``. Only in a polling
        session, and only while a consumer delivers that stream."""
        with self._cond:
            owner = self._owners.get(related_to)
            if (not self.polling or owner is None or not owner.sse or not owner.resumable
                    or owner.consumer is None):
                return False
            owner.consumer = None
            self._cond.notify_all()
            return True

    def kick_idle_consumer(self, stream: Stream, idle_timeout: float) -> bool:
        """End the consumer of ``stream`` if nothing was delivered for ``idle_timeout``."""
        with self._cond:
            if stream.consumer is None or self._clock() - stream.last_delivery < idle_timeout:
                return False
            stream.consumer = None
            self._cond.notify_all()
            return True


def encode_answer(message: Message) -> bytes:
    # One answer of a batch that cannot be encoded must not take the others with it.
    try:
        return encode(message)
    except (TypeError, ValueError) as exc:
        if not isinstance(message, Response):
            raise
        log.error("the result for %r is not valid JSON: %s", message.id, str(exc))
        return encode(ErrorResponse(message.id, InternalError(
            "Internal error: the result could not be encoded")))


def _run(callbacks: list[Callable[[], None]]) -> None:
    for callback in callbacks:
        try:
            callback()
        except Exception:
            log.exception("stream callback failed")
