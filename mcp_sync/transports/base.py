"""The transport interface: whole JSON-RPC messages in and out, and a close."""

from __future__ import annotations

import abc
import collections
import threading
from collections.abc import Callable, Iterable, Sequence

from ..protocol._jsonrpc import Incoming, Message, RequestId

__all__ = ["DEFAULT_MAX_MESSAGE_SIZE", "Credentials", "Pusher", "Receiver", "Transport"]

#: What a transport that pushes messages calls: (message, serve_here) -> request servers.
Receiver = Callable[[Incoming, bool], list[Callable[[], None]]]

#: Frames larger than this are refused with an error instead of being buffered.
DEFAULT_MAX_MESSAGE_SIZE = 128 * 1024 * 1024


class Transport(abc.ABC):
    """Moves JSON-RPC messages between us and one peer.

    ``read`` is called by one thread at a time (whichever of the engine's threads is
    reading), ``write`` by one thread at a time (the engine serialises writes),
    ``close`` from any thread.
    """

    @abc.abstractmethod
    def read(self) -> Incoming | None:
        """Block until the next frame arrives and return it decoded; None at the end.

        Malformed frames come back as :class:`~mcp_sync.jsonrpc.Invalid`, never as an
        exception. After :meth:`close` it returns None promptly.
        """

    @abc.abstractmethod
    def write(self, message: Message | Sequence[Message], *,
              related_to: RequestId | None = None) -> None:
        """Send one message, or a batch given as a sequence, as a single frame.

        ``related_to`` is the id of the peer's request that a request or notification
        belongs to (progress, or a tool's own request to the client), if any. Transports
        with one channel per request (Streamable HTTP) send it there; others ignore it.
        Responses are routed by their own id.

        Raises:
            ConnectionLost: the peer is gone.
            ConnectionClosed: the transport was closed.
        """

    def write_before(self, message: Message | Sequence[Message], deadline: float | None, *,
                     related_to: RequestId | None = None) -> None:
        """Like :meth:`write`, giving up once ``deadline`` (a ``time.monotonic()`` value;
        None for no limit) passes while the peer takes nothing.

        A transport whose writes can block on a peer that stops reading overrides this;
        the default ignores the deadline.

        Raises:
            RequestTimeout: the deadline passed while the write was stuck. If part of
                the message had gone out, the rest follows ahead of the next write.
            ConnectionLost: the peer is gone.
            ConnectionClosed: the transport was closed.
        """
        self.write(message, related_to=related_to)

    def attach_receiver(self, receiver: Receiver) -> bool:
        """Offer to hand each incoming message to ``receiver`` on the thread that got it.

        The engine calls this once before it starts reading. A transport whose messages
        arrive on threads of their own (a WSGI server's) may accept: it then calls
        ``receiver(message, serve_here)`` for every message, one at a time and in
        arrival order, and :meth:`read` only reports the end. With ``serve_here`` the
        requests in the message are not handed to a worker; ``receiver`` returns a
        function per request, which the caller runs (outside any lock of its own) to
        serve it. The default declines.
        """
        return False

    def hang_up(self, related_to: RequestId) -> bool:
        """End the response stream that carries request ``related_to`` before its
        answer, so that the peer comes back for the rest (Streamable HTTP's SSE
        polling); False when there is no such stream to end. The default has none."""
        return False

    #: True for a transport that accepts a receiver and never ends by itself: only
    #: :meth:`close` ends it. The engine then reads nothing and starts no reader thread.
    ends_on_close = False

    #: True for a transport whose messages may open the modern era (2026-07-28): one
    #: connection carrying whole requests, as stdio and memory do, or the connection of
    #: one modern HTTP request. A legacy HTTP session's transport keeps it off: over HTTP
    #: the era is decided per POST, before a session is looked up.
    modern_era = False

    #: What the peer proved with its requests (an HTTP server's verified access
    #: tokens), kept by the server that feeds this transport; None where nothing is.
    credentials: Credentials | None = None

    def credentials_of(self, request_id: RequestId) -> object | None:
        """The credentials request ``request_id`` came with; None without any."""
        return None if self.credentials is None else self.credentials.of(request_id)

    @abc.abstractmethod
    def close(self) -> None:
        """Release everything; idempotent, safe from any thread, unblocks :meth:`read`."""

    def after_fork_in_child(self) -> None:
        """In the child of ``os.fork()``: let go of this process's copies of what the
        parent's transport uses, without a word to the peer and without :meth:`close`
        (which would end the parent's connection). The transport is not used again.

        The default does nothing; a transport whose copies would keep the peer from
        seeing the parent close (a child process's pipes) closes them.
        """
        return None


class Credentials:
    """The credentials each request on one transport came with, by request id.

    The ids of a session are never reused (JSONRPC-4), so the book keeps the newest
    ``limit`` of them (more than a session has in flight), not one per request the
    session ever made; a request older than those gets the newest credentials noted,
    which are the same identity's (a session is bound to one).
    """

    def __init__(self, limit: int = 64) -> None:
        self._by_id: collections.OrderedDict[RequestId, object] = collections.OrderedDict()
        self._limit = limit
        self._lock = threading.Lock()
        self.latest: object | None = None

    def note(self, request_ids: Iterable[RequestId], value: object) -> None:
        """Record that these requests came with ``value``."""
        with self._lock:
            self.latest = value
            for request_id in request_ids:
                self._by_id[request_id] = value
                self._by_id.move_to_end(request_id)
            while len(self._by_id) > self._limit:
                self._by_id.popitem(last=False)

    def of(self, request_id: RequestId) -> object | None:
        """What request ``request_id`` came with (the newest noted, if it is not known)."""
        with self._lock:
            return self._by_id.get(request_id, self.latest)


class Pusher:
    """The receiver a transport accepted in ``attach_receiver``, called one message at a
    time (the lock keeps the order in which the transport's threads hand messages over)."""

    def __init__(self) -> None:
        self._receiver: Receiver | None = None
        self._lock = threading.Lock()

    @property
    def attached(self) -> bool:
        return self._receiver is not None

    def attach(self, receiver: Receiver) -> bool:
        self._receiver = receiver
        return True

    def push(self, incoming: Incoming, serve_here: bool = False) -> list[Callable[[], None]]:
        """Hand ``incoming`` to the receiver; what it returns serves its requests."""
        assert self._receiver is not None
        with self._lock:
            return self._receiver(incoming, serve_here)
