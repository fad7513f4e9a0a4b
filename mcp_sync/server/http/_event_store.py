"""Where the Streamable HTTP server keeps sent SSE events, so that broken streams can resume.

Every event sent on a resumable stream is stored under its session id, stream id and
sequence number before it is written; the event id on the wire is ``<stream-id>:<seq>``
(AMBIG-16). When a client comes back with ``Last-Event-ID``, the server asks the store
for what followed that event on that stream, and nothing else (HTTP-27/28).
"""

from __future__ import annotations

import abc
import collections
import threading

import attrs

__all__ = ["EventStore", "MemoryEventStore", "StoredEvent"]


@attrs.frozen
class StoredEvent:
    """One event as stored: its place in its stream and the JSON text it carried."""

    seq: int
    data: str


class EventStore(abc.ABC):
    """Keeps the events of a session's SSE streams for replay after a dropped connection.

    Implement it to keep events somewhere else (a database, Redis). The server calls it
    from many threads at once, while it holds a lock of the session the call is about:
    an implementation must be thread-safe, should be quick, and must not call back into
    the server. Sequence numbers count up from 1 in each stream.
    """

    @abc.abstractmethod
    def store_event(self, session_id: str, stream_id: str, seq: int, data: str) -> None:
        """Keep one event.

        Args:
            session_id: the ``Mcp-Session-Id`` the stream belongs to.
            stream_id: the stream within the session.
            seq: the event's number in its stream; each call gives the next one.
            data: the JSON-RPC message the event carried, as JSON text.
        """

    @abc.abstractmethod
    def events_after(self, session_id: str, stream_id: str,
                     seq: int) -> list[StoredEvent] | None:
        """What followed event ``seq`` on one stream, oldest first.

        Args:
            session_id: the session the stream belongs to.
            stream_id: the stream to replay; events of other streams never appear.
            seq: the last event the client received.

        Returns:
            The events after ``seq`` (an empty list if there are none), or None when the
            store cannot tell: the stream is unknown, or events that followed ``seq``
            were discarded.
        """

    @abc.abstractmethod
    def forget_session(self, session_id: str) -> None:
        """Drop everything kept for a session; it ended and can no longer be resumed."""


@attrs.define
class _StreamLog:
    events: collections.deque[StoredEvent] = attrs.field(factory=collections.deque)
    #: The highest sequence number discarded from this stream, 0 if none was.
    discarded_through: int = 0


@attrs.define
class _SessionLog:
    streams: dict[str, _StreamLog] = attrs.field(factory=dict)
    #: (stream id, size) of every kept event, oldest first, for eviction across streams.
    order: collections.deque[tuple[str, int]] = attrs.field(factory=collections.deque)
    size: int = 0


class MemoryEventStore(EventStore):
    """The default store: the newest events of each session, in memory.

    Args:
        max_events_per_session: how many events a session keeps; the oldest go first.
        max_bytes_per_session: how much JSON text a session keeps; an event larger than
            this is not kept at all (so a stream cannot be resumed from before it).
    """

    def __init__(self, max_events_per_session: int = 1000,
                 max_bytes_per_session: int = 16 * 1024 * 1024) -> None:
        if max_events_per_session < 0 or max_bytes_per_session < 0:
            raise ValueError("the limits of an event store cannot be negative")
        self.max_events_per_session = max_events_per_session
        self.max_bytes_per_session = max_bytes_per_session
        self._sessions: dict[str, _SessionLog] = {}
        self._lock = threading.Lock()

    def store_event(self, session_id: str, stream_id: str, seq: int, data: str) -> None:
        size = len(data)
        with self._lock:
            session = self._sessions.setdefault(session_id, _SessionLog())
            stream = session.streams.get(stream_id)
            if stream is None:
                # A log emptied by eviction is dropped; whatever came before this event
                # is then known to be gone.
                stream = session.streams[stream_id] = _StreamLog(discarded_through=seq - 1)
            if size > self.max_bytes_per_session or self.max_events_per_session == 0:
                stream.discarded_through = seq
                return
            stream.events.append(StoredEvent(seq, data))
            session.order.append((stream_id, size))
            session.size += size
            while (len(session.order) > self.max_events_per_session
                   or session.size > self.max_bytes_per_session):
                self._evict_oldest(session)

    @staticmethod
    def _evict_oldest(session: _SessionLog) -> None:
        # Events of one stream are stored in order, so the session's oldest event is
        # also the oldest of its stream.
        stream_id, size = session.order.popleft()
        session.size -= size
        stream = session.streams[stream_id]
        evicted = stream.events.popleft()
        stream.discarded_through = evicted.seq
        if not stream.events:
            del session.streams[stream_id]

    def events_after(self, session_id: str, stream_id: str,
                     seq: int) -> list[StoredEvent] | None:
        with self._lock:
            session = self._sessions.get(session_id)
            stream = session.streams.get(stream_id) if session is not None else None
            if stream is None or seq < stream.discarded_through:
                return None
            return [event for event in stream.events if event.seq > seq]

    def forget_session(self, session_id: str) -> None:
        with self._lock:
            self._sessions.pop(session_id, None)
