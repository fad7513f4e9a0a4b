"""Sessions shared between processes through a :class:`~mcp_sync.server.http._store.SessionStore`.

The application calls this at a few points, and only when it was given a store:

* a session is started: its record is written (:meth:`SharedSessions.started`);
* a request names a session: the record is read; gone means 404 here too (and the local
  connection, if any, ends); one this process does not hold is rebuilt from it
  (:meth:`SharedSessions.enter`); after the request, a changed log level or subscription
  list is written back (:meth:`SharedSessions.left`);
* a POST carries answers to requests another process sent: they are sent there
  (:meth:`SharedSessions.route_answers`);
* a GET stream attaches: this process is noted as the one to forward to
  (:meth:`SharedSessions.holds_get_stream`).

Each session's transport gets this object as its relay: a request it sends is claimed for
this process before it leaves, and a message for the GET stream that no stream here can
carry is sent to the process holding that stream. Messages between processes are a kind
byte (``w``: write to the GET stream; ``a``: an answer from the client) and the JSON text.

It is also the server's announcer: a change the server announces here (a list changed, a
resource updated) is announced through the store to every other process (kind ``n``,
with the sessions already told here), which tells its own ``subscriptions/listen``
streams and the sessions whose GET streams it holds and that were not told.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import socket
import threading
import time
from typing import TYPE_CHECKING, Any

import attrs

from ... import types
from ...errors import ConnectionClosed
from ...protocol._convert import from_wire, to_wire
from ...protocol._jsonrpc import (
    Batch,
    ErrorResponse,
    Incoming,
    Invalid,
    Notification,
    RequestId,
    Response,
    encode,
)
from ...protocol._session import State
from ...protocol._subscriptions import RESOURCE_UPDATED, covers
from ...transports._decode import decode_frame
from ._session import MAX_QUEUED_EVENTS, SessionTransport
from ._store import SessionRecord, SessionStore, SessionStoreError

if TYPE_CHECKING:
    from .._connection import ServerConnection
    from ._app import StreamableHttpApp

__all__ = ["LocalSession", "SharedSessions"]

log = logging.getLogger("mcp_sync.http.server")

#: How long the claim on a request's answer lasts; longer than any request waits.
_REQUEST_CLAIM = 3600.0
#: Each process numbers its requests to a client from its own block of ids.
_ID_BLOCK = 1_000_000_000


class LocalSession:
    """A session as this process holds it: its transport and connection."""

    def __init__(self, session_id: str, transport: SessionTransport,
                 connection: ServerConnection, now: float) -> None:
        self.id = session_id
        self.transport = transport
        self.connection = connection
        self.last_seen = now
        self.active = 0  # HTTP requests of this session under way, open streams included
        # Its client dropped its GET stream and has sent nothing since: it is likely gone.
        self.abandoned = False
        self.record: SessionRecord | None = None  # as last read, with a session store
        #: Who the session is bound to (V0618-45): the token identity that started it.
        self.identity: str | None = None


class SharedSessions:
    """The store-facing half of an application whose sessions several processes serve."""

    def __init__(self, app: StreamableHttpApp, store: SessionStore) -> None:
        self.app = app
        self.store = store
        self._name_lock = threading.Lock()
        self._pid = os.getpid()
        self._process = secrets.token_hex(8)
        self._listening = False
        app.server._add_announcer(self._announce)

    @property
    def process(self) -> str:
        """This process's name in the store: claims and messages are addressed to it.

        An application made before a fork (gunicorn ``--preload``) is copied into every
        worker: each copy takes a name of its own at its first use, and listens afresh
        (the listener thread was not copied)."""
        with self._name_lock:
            if os.getpid() != self._pid:
                self._pid = os.getpid()
                self._process = secrets.token_hex(8)
                self._listening = False
            return self._process

    # --- the relay of every transport ---------------------------------------------------

    def sent_request(self, session_id: str, request_id: RequestId) -> None:
        self.store.claim(_request_key(session_id, request_id), self.process, _REQUEST_CLAIM)

    def forward(self, session_id: str, data: bytes) -> bool:
        try:
            holder = self.store.holder(f"get:{session_id}")
            if holder == self.process:
                return False
            if holder is None or not self.store.send(holder, session_id, b"w" + data):
                # No GET stream anywhere: it waits for the next, on whichever process.
                self.store.hold(session_id, data, MAX_QUEUED_EVENTS)
        except SessionStoreError as exc:
            log.warning("keeping a message for session %s here: %s", session_id, str(exc))
            return False
        return True

    # --- what the application calls -------------------------------------------------------

    def transport(self, session_id: str) -> SessionTransport:
        """A transport for a session of this store, its streams named for this process."""
        return SessionTransport(session_id, event_store=self.store.event_store,
                                clock=self.app.clock, stream_suffix=f"-{self.process}",
                                relay=self)

    def started(self, session: LocalSession) -> None:
        """Write down a session this process just started."""
        connection = session.connection
        assert connection.protocol_version is not None
        now = time.time()
        session.record = SessionRecord(
            session_id=session.id, protocol_version=connection.protocol_version,
            client_capabilities=to_wire(connection.client_capabilities or {}),
            client_info=(to_wire(connection.client_info)
                         if connection.client_info is not None else None),
            log_level=connection.log_level, subscriptions=tuple(sorted(
                connection.subscriptions)), created=now, last_seen=now,
            identity=session.identity)
        self.store.create(session.record, self.app.session_timeout)
        self._listen()

    def enter(self, session_id: str) -> LocalSession | None:
        """The session a request names, rebuilt here if need be; None if it is gone.

        Raises:
            SessionStoreError: the store failed.
        """

        record = self.store.load(session_id)
        app = self.app
        with app._lock:
            local = app._sessions.get(session_id)
            if record is None and local is not None:
                del app._sessions[session_id]
        if record is None:
            if local is not None:
                log.debug("session %s ended elsewhere", session_id)
                app._end_session(local, everywhere=False)
            return None
        self.store.touch(session_id, app.session_timeout)
        if local is None:
            local = self._rebuild(record)
            if local is None:
                return None
        local.record = record
        connection = local.connection
        if record.initialized and connection.session.state is State.INITIALIZED:
            # The client's notifications/initialized went to another process.
            with contextlib.suppress(ConnectionClosed):
                local.transport.feed(Notification("notifications/initialized"))
        connection.log_level = record.log_level  # type: ignore[assignment]
        for uri in connection.subscriptions - set(record.subscriptions):
            connection.unsubscribe(uri)
        for uri in record.subscriptions:
            connection.subscribe(uri)
        return app._enter(session_id, shared=False)

    def _rebuild(self, record: SessionRecord) -> LocalSession | None:
        app = self.app
        transport = self.transport(record.session_id)
        try:
            connection = app.server.connect(transport, assume_version=record.protocol_version)
        except Exception:
            log.exception("cannot serve session %s here", record.session_id)
            transport.close()
            return None
        connection.session.peer_capabilities = from_wire(record.client_capabilities,
                                                         types.ClientCapabilities)
        if record.client_info is not None:
            connection.session.peer_info = from_wire(record.client_info, types.Implementation)
        connection.session.number_requests_from(
            self.store.counter(f"ids:{record.session_id}") * _ID_BLOCK)
        session = LocalSession(record.session_id, transport, connection, app.clock())
        session.identity = record.identity
        with app._lock:
            if app._closed:
                closing = True
            else:
                closing = False
                session = app._sessions.setdefault(record.session_id, session)
                app._start_sweeper()
        if closing or session.connection is not connection:
            connection.close()
        if closing:
            return None
        if session.connection is connection:
            log.debug("session %s rebuilt from its record", record.session_id)
            self._listen()
        return session

    def left(self, session: LocalSession) -> None:
        """Write back what a request changed in the session (log level, subscriptions)."""
        record = session.record
        connection = session.connection
        if record is None or connection.closed:
            return
        subscriptions = tuple(sorted(connection.subscriptions))
        initialized = connection.session.state is State.OPERATING
        if (connection.log_level, subscriptions, initialized) == (
                record.log_level, record.subscriptions, record.initialized):
            return
        session.record = record = attrs.evolve(
            record, log_level=connection.log_level, subscriptions=subscriptions,
            initialized=initialized, last_seen=time.time())
        try:
            self.store.save(record, self.app.session_timeout)
        except Exception:
            log.exception("cannot write session %s back to the store", session.id)

    def ended(self, session_id: str, everywhere: bool) -> bool:
        """A session ended here; ``everywhere`` ends its record too. Returns whether its
        events are to be forgotten (not when other processes still serve it)."""
        if everywhere:
            self.store.end(session_id)
        return everywhere

    def holds_get_stream(self, session: LocalSession, renewed: bool = False) -> None:
        """This process now delivers the session's GET stream: messages for it come
        here, those held in the store first."""
        ttl = self.app.get_stream_timeout or self.app.session_timeout or _REQUEST_CLAIM
        self.store.claim(f"get:{session.id}", self.process, ttl)
        if not renewed:
            for data in self.store.take_held(session.id):
                session.transport.deliver(data)

    def dropped_get_stream(self, session: LocalSession) -> None:
        """A GET stream of the session ended here; unless another took its place,
        messages for it are held in the store again."""
        if session.transport.standalone.consumer is None:
            try:
                self.store.release(f"get:{session.id}", self.process)
            except Exception:
                log.exception("cannot release the GET stream of session %s", session.id)

    def route_answers(self, session: LocalSession, incoming: Incoming) -> Incoming | None:
        """Send the answers in ``incoming`` that another process waits for there; the
        rest (None if nothing) is for this process."""
        items = incoming.items if isinstance(incoming, Batch) else (incoming,)
        kept = []
        for item in items:
            if isinstance(item, (Response, ErrorResponse)) and item.id is not None:
                holder = self.store.holder(_request_key(session.id, item.id))
                if (holder is not None and holder != self.process
                        and self.store.send(holder, session.id, b"a" + encode(item))):
                    continue
            kept.append(item)
        if len(kept) == len(items):
            return incoming
        if not kept:
            return None
        return Batch(tuple(kept)) if isinstance(incoming, Batch) else kept[0]

    def sweep(self, sessions: list[LocalSession]) -> list[LocalSession]:
        """The sessions among ``sessions`` whose record is gone; renews the claims on
        the GET streams delivered here."""
        gone = []
        for session in sessions:
            try:
                if self.store.load(session.id) is None:
                    gone.append(session)
                elif session.transport.standalone.consumer is not None:
                    self.holds_get_stream(session, renewed=True)
            except Exception:
                log.exception("cannot check session %s in the store", session.id)
        return gone

    def close(self) -> None:
        """Stop receiving messages for this process."""
        self.app.server._remove_announcer(self._announce)
        process = self.process
        if self._listening:
            self.store.stop_listening(process)

    def serving_listen_streams(self) -> None:
        """A ``subscriptions/listen`` stream opens here: changes announced by the other
        processes must reach it."""
        self._listen()

    def _listen(self) -> None:
        process = self.process  # after a fork, a new name, and nobody listening yet
        if not self._listening:
            self._listening = True
            self.store.listen(process, self._deliver)

    # --- changes announced by the server, here and elsewhere -------------------------------

    def _announce(self, method: str, params: dict[str, Any] | None,
                  told: set[ServerConnection]) -> None:
        with self.app._lock:
            told_here = [session.id for session in self.app._sessions.values()
                         if session.connection in told]
        self.store.announce(b"n" + json.dumps({
            "origin": _origin(self.app.server), "method": method, "params": params,
            "told": told_here}).encode())

    def _announced(self, data: bytes) -> None:
        """Tell this process's listen streams and the sessions whose GET stream is here
        of a change another process announced."""
        try:
            announced = json.loads(data)
            method, params = str(announced["method"]), announced.get("params")
            told = set(announced.get("told") or ())
            if announced.get("origin") == _origin(self.app.server):
                return  # the server that made the change has told its own
        except (ValueError, KeyError, TypeError):
            log.warning("a malformed announcement from another process: %r", data[:200])
            return
        self.app.server._tell_listen_streams(method, params)
        with self.app._lock:
            sessions = [session for session in self.app._sessions.values()
                        if session.id not in told
                        and session.transport.standalone.consumer is not None]
        for session in sessions:
            if method == RESOURCE_UPDATED and not self._subscribed(session, params):
                continue
            with contextlib.suppress(ConnectionClosed):
                session.connection.notify_if_ready(method, params)

    def _subscribed(self, session: LocalSession, params: Any) -> bool:
        # Subscriptions may have changed on another process since this one last read
        # the record: read it again.
        uri = params.get("uri") if isinstance(params, dict) else None
        if not isinstance(uri, str):
            return False
        try:
            record = self.store.load(session.id)
        except SessionStoreError as exc:
            log.warning("cannot read session %s: %s", session.id, str(exc))
            return False
        return record is not None and any(covers(subscribed, uri)
                                          for subscribed in record.subscriptions)

    def _deliver(self, session_id: str, payload: bytes) -> None:
        if not session_id:
            if payload[:1] == b"n":
                self._announced(payload[1:])
            return
        with self.app._lock:
            session = self.app._sessions.get(session_id)
        if session is None:
            log.debug("a message for session %s, which is not served here", session_id)
            return
        kind, data = payload[:1], payload[1:]
        try:
            if kind == b"w":
                session.transport.deliver(data)
            elif kind == b"a" and not isinstance(answer := decode_frame(data), Invalid):
                session.transport.feed(answer)
        except ConnectionClosed:
            log.debug("a message for session %s, which has ended", session_id)


def _request_key(session_id: str, request_id: RequestId) -> str:
    return f"req:{session_id}:{request_id!r}"


def _origin(server: object) -> str:
    """Names the server object within this host and process: its own announcements come
    back to it through the store, and what it announced it has told already."""
    return f"{socket.gethostname()}/{os.getpid()}/{id(server)}"
