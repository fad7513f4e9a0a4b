"""Sessions kept in Redis, for Streamable HTTP served by several processes or hosts.

Needs redis-py (``pip install mcp_sync[redis]``), imported only when a store is made.
Keys, all under one prefix (``mcp_sync:`` by default):

* ``s:<session>``: the session record (JSON), expiring ``session_timeout`` after its
  last use;
* ``e:<session>:<stream>``: a list of ``"<seq> <json>"`` events, the newest
  ``max_events_per_stream``, and ``es:<session>``: the set of its streams;
* ``c:<key>``: a claim (the process holding a GET stream, awaiting an answer);
  ``n:<key>``: a counter; ``h:<session>``: messages held for the next GET stream;
* channel ``to:<process>``: messages for one process, ``<session>\\n<payload>``;
  channel ``all``: announcements to every process, ``\\n<payload>``.

Every call has a socket timeout; a Redis that cannot be reached raises
:class:`~mcp_sync.server.http._store.SessionStoreError` (the request gets 503) rather than
waiting.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ...engine._threads import ThreadGroup
from ._event_store import EventStore, StoredEvent
from ._store import Deliver, SessionRecord, SessionStore, SessionStoreError

if TYPE_CHECKING:
    import redis

__all__ = ["STORE_VARIABLE", "RedisEventStore", "RedisSessionStore", "session_store_from_env"]

#: The environment variable :func:`session_store_from_env` reads.
STORE_VARIABLE = "MCP_SYNC_STORE"

log = logging.getLogger("mcp_sync.http.server")

#: How long a listener waits for a message before it checks whether to stop.
_POLL = 0.5
#: How long :meth:`RedisSessionStore.listen` waits for its subscriptions, at most, when
#: the client has no socket timeout.
_SUBSCRIBE_WAIT = 5.0
#: How long a listener waits before it reconnects to a Redis that went away.
_RECONNECT = 1.0
#: Deletes a claim only if it is still the caller's.
_RELEASE = ("if redis.call('get', KEYS[1]) == ARGV[1] then "
            "return redis.call('del', KEYS[1]) end return 0")


@contextlib.contextmanager
def _translated(what: str) -> Iterator[None]:
    import redis

    try:
        yield
    except redis.RedisError as exc:
        raise SessionStoreError(f"Redis failed to {what}: {exc}") from exc


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


class RedisEventStore(EventStore):
    """The events of resumable streams, in Redis, readable by every process.

    Args:
        client: a ``redis.Redis`` client.
        prefix: put before every key.
        max_events_per_stream: how many events each stream keeps; the oldest go first.
        ttl: how long a session's events stay after the last one was stored.
    """

    def __init__(self, client: redis.Redis, *, prefix: str = "mcp_sync:",
                 max_events_per_stream: int = 1000, ttl: float = 3600.0) -> None:
        if max_events_per_stream < 1 or ttl <= 0:
            raise ValueError("max_events_per_stream and ttl must be positive")
        self.client = client
        self.prefix = prefix
        self.max_events_per_stream = max_events_per_stream
        self.ttl = ttl

    def _stream_key(self, session_id: str, stream_id: str) -> str:
        return f"{self.prefix}e:{session_id}:{stream_id}"

    def store_event(self, session_id: str, stream_id: str, seq: int, data: str) -> None:
        key = self._stream_key(session_id, stream_id)
        streams = f"{self.prefix}es:{session_id}"
        with _translated("store an event"):
            pipe = self.client.pipeline(transaction=False)
            pipe.rpush(key, f"{seq} {data}")
            pipe.ltrim(key, -self.max_events_per_stream, -1)
            pipe.pexpire(key, _ms(self.ttl))
            pipe.sadd(streams, stream_id)
            pipe.pexpire(streams, _ms(self.ttl))
            pipe.execute()

    def events_after(self, session_id: str, stream_id: str,
                     seq: int) -> list[StoredEvent] | None:
        with _translated("read events"):
            raw: list[bytes] = self.client.lrange(  # type: ignore[assignment]
                self._stream_key(session_id, stream_id), 0, -1)
        events = []
        for entry in raw:
            number, _, data = entry.partition(b" ")
            events.append(StoredEvent(int(number), data.decode("utf-8")))
        # An empty list is an unknown stream; a first event after seq + 1, a gap.
        if not events or seq < events[0].seq - 1:
            return None
        return [event for event in events if event.seq > seq]

    def forget_session(self, session_id: str) -> None:
        streams = f"{self.prefix}es:{session_id}"
        with _translated("forget a session's events"):
            names: set[bytes] = self.client.smembers(streams)  # type: ignore[assignment]
            keys = [self._stream_key(session_id, name.decode()) for name in names]
            self.client.delete(streams, *keys)


class RedisSessionStore(SessionStore):
    """Session records, events and messages between processes, in one Redis database.

    Give every process serving the same sessions a store on the same Redis database
    (and prefix). Made from a URL with :meth:`from_url`.

    Args:
        client: a ``redis.Redis`` client; give it a ``socket_timeout`` so that no call
            waits indefinitely (:meth:`from_url` does).
        prefix: put before every key and channel name.
        max_events_per_stream: how many events each stream keeps for resumption.
        event_ttl: how long a session's events stay after its last one.
    """

    def __init__(self, client: redis.Redis, *, prefix: str = "mcp_sync:",
                 max_events_per_stream: int = 1000, event_ttl: float = 3600.0) -> None:
        self.client = client
        self.prefix = prefix
        self._events = RedisEventStore(client, prefix=prefix, ttl=event_ttl,
                                       max_events_per_stream=max_events_per_stream)
        self._lock = threading.Lock()
        self._listeners: dict[str, tuple[threading.Event, ThreadGroup]] = {}

    @classmethod
    def from_url(cls, url: str, *, timeout: float = 5.0, **options: Any) -> RedisSessionStore:
        """A store on the Redis at ``url`` (``redis://host:port/db``, ``rediss://``,
        ``unix://``).

        Args:
            url: where Redis is.
            timeout: the longest any Redis call may take (connecting included).
            options: ``prefix``, ``max_events_per_stream``, ``event_ttl``.

        Raises:
            ImportError: redis-py is not installed (``pip install mcp_sync[redis]``).
            ValueError: ``url`` is not a Redis URL.
        """
        try:
            import redis
        except ImportError as exc:
            raise ImportError("RedisSessionStore needs redis-py: "
                              "pip install 'mcp_sync[redis]'") from exc
        client = redis.Redis.from_url(url, socket_timeout=timeout,
                                      socket_connect_timeout=timeout,
                                      health_check_interval=30)
        return cls(client, **options)

    @property
    def event_store(self) -> EventStore:
        return self._events

    def _key(self, session_id: str) -> str:
        return f"{self.prefix}s:{session_id}"

    def create(self, record: SessionRecord, ttl: float | None) -> None:
        with _translated("keep a session"):
            self.client.set(self._key(record.session_id), json.dumps(record.to_json()),
                            px=None if ttl is None else _ms(ttl))

    def load(self, session_id: str) -> SessionRecord | None:
        with _translated("read a session"):
            raw = self.client.get(self._key(session_id))
        if raw is None:
            return None
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise SessionStoreError(f"session {session_id} has a malformed record") from exc
        return SessionRecord.from_json(data)

    def save(self, record: SessionRecord, ttl: float | None) -> None:
        with _translated("update a session"):
            self.client.set(self._key(record.session_id), json.dumps(record.to_json()),
                            px=None if ttl is None else _ms(ttl), xx=True)

    def touch(self, session_id: str, ttl: float | None) -> None:
        if ttl is not None:
            with _translated("renew a session"):
                self.client.pexpire(self._key(session_id), _ms(ttl))

    def end(self, session_id: str) -> bool:
        with _translated("end a session"):
            pipe = self.client.pipeline(transaction=False)
            pipe.delete(self._key(session_id))
            pipe.delete(f"{self.prefix}h:{session_id}")
            ended, _ = pipe.execute()
        return bool(ended)

    def claim(self, key: str, process: str, ttl: float) -> None:
        with _translated("claim"):
            self.client.set(f"{self.prefix}c:{key}", process, px=_ms(ttl))

    def holder(self, key: str) -> str | None:
        with _translated("read a claim"):
            raw = self.client.get(f"{self.prefix}c:{key}")
        return None if raw is None else raw.decode()  # type: ignore[union-attr]

    def release(self, key: str, process: str) -> None:
        with _translated("release a claim"):
            self.client.eval(_RELEASE, 1, f"{self.prefix}c:{key}", process)

    def hold(self, session_id: str, payload: bytes, limit: int) -> None:
        key = f"{self.prefix}h:{session_id}"
        with _translated("keep a message"):
            pipe = self.client.pipeline(transaction=False)
            pipe.rpush(key, payload)
            pipe.ltrim(key, -limit, -1)
            pipe.pexpire(key, _ms(self._events.ttl))
            pipe.execute()

    def take_held(self, session_id: str) -> list[bytes]:
        key = f"{self.prefix}h:{session_id}"
        with _translated("take kept messages"):
            pipe = self.client.pipeline(transaction=True)
            pipe.lrange(key, 0, -1)
            pipe.delete(key)
            held, _ = pipe.execute()
        return list(held)

    def counter(self, key: str) -> int:
        with _translated("count"):
            pipe = self.client.pipeline(transaction=False)
            pipe.incr(f"{self.prefix}n:{key}")
            pipe.expire(f"{self.prefix}n:{key}", 7 * 24 * 3600)
            value, _ = pipe.execute()
        return int(value)

    def send(self, process: str, session_id: str, payload: bytes) -> bool:
        with _translated("send to another process"):
            receivers = self.client.publish(f"{self.prefix}to:{process}",
                                            session_id.encode() + b"\n" + payload)
        return bool(receivers)

    def announce(self, payload: bytes) -> None:
        with _translated("announce to the other processes"):
            self.client.publish(f"{self.prefix}all", b"\n" + payload)

    def listen(self, process: str, deliver: Deliver) -> None:
        """As :meth:`SessionStore.listen`; returns once Redis has confirmed the
        subscriptions (or after the client's timeout, when it is unreachable: the
        listener keeps trying), so that what is announced from then on arrives."""
        stop = threading.Event()
        subscribed = threading.Event()
        threads = ThreadGroup("redis-store")
        with self._lock:
            if process in self._listeners:
                return
            self._listeners[process] = (stop, threads)
        threads.start("listener", self._listen, f"{self.prefix}to:{process}", deliver, stop,
                      subscribed)
        timeout = self.client.connection_pool.connection_kwargs.get("socket_timeout")
        subscribed.wait(timeout if isinstance(timeout, (int, float)) else _SUBSCRIBE_WAIT)

    def stop_listening(self, process: str) -> None:
        with self._lock:
            listener = self._listeners.pop(process, None)
        if listener is not None:
            stop, threads = listener
            stop.set()
            threads.join(_POLL + 10.0)

    def close(self) -> None:
        with self._lock:
            processes = list(self._listeners)
        for process in processes:
            self.stop_listening(process)
        self.client.close()

    def _listen(self, channel: str, deliver: Deliver, stop: threading.Event,
                subscribed: threading.Event) -> None:
        import redis

        channels = (channel, f"{self.prefix}all")
        while not stop.is_set():
            pubsub = self.client.pubsub()
            try:
                pubsub.subscribe(*channels)
                while not stop.is_set():
                    message = pubsub.get_message(timeout=_POLL)
                    if message is None:
                        continue
                    if message.get("type") == "subscribe":
                        # Counts this connection's channels: all of them are heard now.
                        if message.get("data") == len(channels):
                            subscribed.set()
                        continue
                    if message.get("type") != "message":
                        continue
                    session, _, payload = bytes(message["data"]).partition(b"\n")
                    try:
                        deliver(session.decode(), payload)
                    except Exception:
                        log.exception("delivering a message from another process failed")
            except redis.RedisError as exc:
                log.warning("lost Redis while listening on %s (%s); reconnecting",
                            channel, str(exc))
                stop.wait(_RECONNECT)
            finally:
                with contextlib.suppress(redis.RedisError):
                    pubsub.close()


def session_store_from_env(variable: str = STORE_VARIABLE) -> SessionStore | None:
    """The session store named by an environment variable, None if it is unset or empty.

    ``MCP_SYNC_STORE=redis://HOST:PORT/DB`` (or ``rediss://``, ``unix://``) gives a
    :class:`RedisSessionStore` on that database.

    Raises:
        ValueError: the variable names no store this library knows.
        ImportError: it names Redis and redis-py is not installed.
    """
    import os

    url = os.environ.get(variable, "").strip()
    if not url:
        return None
    if url.split(":", 1)[0] in ("redis", "rediss", "unix"):
        return RedisSessionStore.from_url(url)
    raise ValueError(f"{variable}={url!r}: expected redis://HOST:PORT/DB")
