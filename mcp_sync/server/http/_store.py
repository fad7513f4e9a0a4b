"""Where stateful Streamable HTTP sessions are kept when several processes serve them.

Without a store (the default) a session lives only in the process that answered its
``initialize``. With a :class:`SessionStore` shared by several applications (processes,
hosts), each session is also written down as a :class:`SessionRecord`, so that any of
them can serve any request of it:

* a request for a session a process does not hold is served by a connection rebuilt
  from the record (already initialized, same version, capabilities, log level and
  subscriptions); a record that is gone (DELETE, expiry) means 404 on every process;
* the events of resumable streams go to the store's :attr:`SessionStore.event_store`,
  so a ``Last-Event-ID`` GET replays on any process;
* messages that a process has no stream of its own to carry (for the session's GET
  stream) and the client's answers to requests another process sent are handed to the
  process that needs them through :meth:`SessionStore.send`, addressed by the name of
  that process, which the store learnt through :meth:`SessionStore.claim`;
* a change announced by the server in one process (``notifications/tools/list_changed``,
  ``notifications/resources/updated``...) reaches every other process through
  :meth:`SessionStore.announce`, which tells its own listen streams and the sessions
  whose GET streams it holds.

:class:`MemorySessionStore` shares sessions between applications of one process;
:class:`~mcp_sync.server.http._redis_store.RedisSessionStore` between processes and hosts.
"""

from __future__ import annotations

import abc
import threading
from collections.abc import Callable
from typing import Any, Protocol

import attrs

from ...errors import McpError
from ...protocol._jsonrpc import RequestId
from ._event_store import EventStore, MemoryEventStore

__all__ = ["MemorySessionStore", "Relay", "SessionRecord", "SessionStore",
           "SessionStoreError"]

#: Called with the session id and payload of each message sent to this process; an
#: announcement to every process (:meth:`SessionStore.announce`) comes with the id "".
Deliver = Callable[[str, bytes], None]


class Relay(Protocol):
    """How a session served by several processes reaches the others (see
    :class:`SessionTransport`)."""

    def sent_request(self, session_id: str, request_id: RequestId) -> None:
        """This process sent ``request_id``: its answer must come back here."""

    def forward(self, session_id: str, data: bytes) -> bool:
        """Hand a message to the process whose GET stream can carry it; False if none."""


class SessionStoreError(McpError):
    """The session store could not be reached or answered wrongly (a lost Redis
    connection, a timeout). The request that needed it gets 503."""


@attrs.frozen(kw_only=True)
class SessionRecord:
    """What any process needs to serve a session it did not start.

    Attributes:
        session_id: the ``Mcp-Session-Id``.
        protocol_version: the version negotiated by ``initialize``.
        client_capabilities: the client's capabilities, as sent (JSON object).
        client_info: the client's ``clientInfo``, as sent (JSON object), if any.
        log_level: the least severe log level the client receives.
        subscriptions: the resource URIs it subscribed to.
        initialized: the client has sent ``notifications/initialized`` (to any process).
        created: when the session started (seconds since the epoch).
        last_seen: when it was last used (seconds since the epoch).
        identity: who the session is bound to, with authorization on (V0618-45): a
            request with another identity's token is refused in every process.
    """

    session_id: str
    protocol_version: str
    client_capabilities: dict[str, Any] = attrs.field(factory=dict)
    client_info: dict[str, Any] | None = None
    log_level: str = "info"
    subscriptions: tuple[str, ...] = ()
    initialized: bool = False
    created: float = 0.0
    last_seen: float = 0.0
    identity: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON object."""
        return {"sessionId": self.session_id, "protocolVersion": self.protocol_version,
                "clientCapabilities": self.client_capabilities,
                "clientInfo": self.client_info, "logLevel": self.log_level,
                "subscriptions": list(self.subscriptions),
                "initialized": self.initialized, "created": self.created,
                "lastSeen": self.last_seen, "identity": self.identity}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionRecord:
        """The record written by :meth:`to_json`.

        Raises:
            SessionStoreError: ``data`` is not such a record.
        """
        try:
            return cls(session_id=str(data["sessionId"]),
                       protocol_version=str(data["protocolVersion"]),
                       client_capabilities=dict(data.get("clientCapabilities") or {}),
                       client_info=data.get("clientInfo"),
                       log_level=str(data.get("logLevel", "info")),
                       subscriptions=tuple(data.get("subscriptions") or ()),
                       initialized=bool(data.get("initialized", False)),
                       created=float(data.get("created", 0.0)),
                       last_seen=float(data.get("lastSeen", 0.0)),
                       identity=_optional_str(data.get("identity")))
        except (KeyError, TypeError, ValueError) as exc:
            raise SessionStoreError(f"a malformed session record: {exc}") from exc


def _optional_str(value: Any) -> str | None:
    return None if value is None else str(value)


class SessionStore(abc.ABC):
    """Keeps session records, resumable events and the mail between processes.

    Pass one to ``make_wsgi_app(session_store=...)`` (or ``serve_http``,
    ``Server.wsgi_app``); every process given a store on the same backing service
    serves the same sessions. Every method may be called from many threads at once and
    must return within a bounded time: an implementation raises
    :class:`SessionStoreError` rather than wait indefinitely on its backend.
    """

    @property
    @abc.abstractmethod
    def event_store(self) -> EventStore:
        """Where the events of resumable streams are kept, readable by every process."""

    @abc.abstractmethod
    def create(self, record: SessionRecord, ttl: float | None) -> None:
        """Keep a new session's record; it expires ``ttl`` seconds after its last use
        (:meth:`save`, :meth:`touch`), never if None."""

    @abc.abstractmethod
    def load(self, session_id: str) -> SessionRecord | None:
        """The session's record; None if it never existed, ended or expired."""

    @abc.abstractmethod
    def save(self, record: SessionRecord, ttl: float | None) -> None:
        """Replace a record that still exists (an ended session stays ended)."""

    @abc.abstractmethod
    def touch(self, session_id: str, ttl: float | None) -> None:
        """Note that the session was used: its expiry starts again."""

    @abc.abstractmethod
    def end(self, session_id: str) -> bool:
        """End a session everywhere; False if it had no record."""

    @abc.abstractmethod
    def claim(self, key: str, process: str, ttl: float) -> None:
        """Note for ``ttl`` seconds that ``process`` holds ``key`` (a session's GET
        stream, a request waiting for its answer)."""

    @abc.abstractmethod
    def holder(self, key: str) -> str | None:
        """The process that claimed ``key`` last, if the claim has not expired."""

    @abc.abstractmethod
    def release(self, key: str, process: str) -> None:
        """Drop the claim on ``key`` if ``process`` still holds it."""

    @abc.abstractmethod
    def hold(self, session_id: str, payload: bytes, limit: int) -> None:
        """Keep a message for the session's next GET stream, wherever it opens; at most
        the newest ``limit`` are kept."""

    @abc.abstractmethod
    def take_held(self, session_id: str) -> list[bytes]:
        """The messages kept by :meth:`hold`, oldest first, removed from the store."""

    @abc.abstractmethod
    def counter(self, key: str) -> int:
        """The next value of a counter shared by every process (1, 2, ...)."""

    @abc.abstractmethod
    def listen(self, process: str, deliver: Deliver) -> None:
        """Call ``deliver(session_id, payload)`` for every message sent to ``process``,
        and ``deliver("", payload)`` for every :meth:`announce`, until
        :meth:`stop_listening`; the calls come from a thread of the store's."""

    @abc.abstractmethod
    def stop_listening(self, process: str) -> None:
        """Stop delivering to ``process`` and join the thread that did; idempotent."""

    @abc.abstractmethod
    def send(self, process: str, session_id: str, payload: bytes) -> bool:
        """Hand ``payload`` to ``process``; False if nobody listens for it."""

    @abc.abstractmethod
    def announce(self, payload: bytes) -> None:
        """Hand ``payload`` to every process listening, the caller's included."""

    def close(self) -> None:  # noqa: B027 - nothing to release in the simplest store
        """Release what the store holds (connections, threads)."""


class MemorySessionStore(SessionStore):
    """Sessions shared by the applications of one process (several ports, tests).

    Args:
        event_store: where resumable events go; a :class:`MemoryEventStore` by default.
        clock: the time source for expiry (seconds, monotonic).
    """

    def __init__(self, event_store: EventStore | None = None, *,
                 clock: Callable[[], float] | None = None) -> None:
        import time

        self._events = event_store if event_store is not None else MemoryEventStore()
        self._clock = clock or time.monotonic
        self._lock = threading.Lock()
        self._records: dict[str, tuple[SessionRecord, float | None]] = {}
        self._claims: dict[str, tuple[str, float]] = {}
        self._counters: dict[str, int] = {}
        self._held: dict[str, list[bytes]] = {}
        self._listeners: dict[str, Deliver] = {}

    @property
    def event_store(self) -> EventStore:
        return self._events

    def _deadline(self, ttl: float | None) -> float | None:
        return None if ttl is None else self._clock() + ttl

    def create(self, record: SessionRecord, ttl: float | None) -> None:
        with self._lock:
            self._records[record.session_id] = (record, self._deadline(ttl))

    def load(self, session_id: str) -> SessionRecord | None:
        with self._lock:
            kept = self._records.get(session_id)
            if kept is None:
                return None
            record, deadline = kept
            if deadline is not None and self._clock() >= deadline:
                del self._records[session_id]
                return None
            return record

    def save(self, record: SessionRecord, ttl: float | None) -> None:
        with self._lock:
            if record.session_id in self._records:
                self._records[record.session_id] = (record, self._deadline(ttl))

    def touch(self, session_id: str, ttl: float | None) -> None:
        with self._lock:
            kept = self._records.get(session_id)
            if kept is not None:
                self._records[session_id] = (kept[0], self._deadline(ttl))

    def end(self, session_id: str) -> bool:
        with self._lock:
            self._held.pop(session_id, None)
            return self._records.pop(session_id, None) is not None

    def claim(self, key: str, process: str, ttl: float) -> None:
        with self._lock:
            self._claims[key] = (process, self._clock() + ttl)

    def holder(self, key: str) -> str | None:
        with self._lock:
            claim = self._claims.get(key)
            if claim is None or self._clock() >= claim[1]:
                self._claims.pop(key, None)
                return None
            return claim[0]

    def release(self, key: str, process: str) -> None:
        with self._lock:
            if self._claims.get(key, ("",))[0] == process:
                del self._claims[key]

    def hold(self, session_id: str, payload: bytes, limit: int) -> None:
        with self._lock:
            held = self._held.setdefault(session_id, [])
            held.append(payload)
            del held[:-limit]

    def take_held(self, session_id: str) -> list[bytes]:
        with self._lock:
            return self._held.pop(session_id, [])

    def counter(self, key: str) -> int:
        with self._lock:
            value = self._counters[key] = self._counters.get(key, 0) + 1
            return value

    def listen(self, process: str, deliver: Deliver) -> None:
        with self._lock:
            self._listeners[process] = deliver

    def stop_listening(self, process: str) -> None:
        with self._lock:
            self._listeners.pop(process, None)

    def send(self, process: str, session_id: str, payload: bytes) -> bool:
        with self._lock:
            deliver = self._listeners.get(process)
        if deliver is None:
            return False
        deliver(session_id, payload)
        return True

    def announce(self, payload: bytes) -> None:
        with self._lock:
            listeners = list(self._listeners.values())
        for deliver in listeners:
            deliver("", payload)

