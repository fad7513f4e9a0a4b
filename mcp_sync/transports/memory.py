"""An in-process transport pair: two ends joined by queues, for tests and embedding.

Messages are encoded and decoded on the way, exactly as on a pipe, so what passes
through is what would pass over stdio.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Sequence

from ..errors import ConnectionClosed, ConnectionLost
from ..protocol._jsonrpc import Incoming, Message, RequestId, encode
from ._decode import decode_frame
from .base import Transport

__all__ = ["MemoryTransport", "memory_pair"]

_EOF = b""


class MemoryTransport(Transport):
    """One end of a :func:`memory_pair`.

    Besides the :class:`Transport` methods, :meth:`read_frame` and :meth:`write_frame`
    move raw bytes, for tests that play a peer by hand: inspect exactly what was sent,
    wait with a timeout, or send a frame that is not valid JSON-RPC.
    """

    modern_era = True

    def __init__(self, inbox: queue.SimpleQueue[bytes], outbox: queue.SimpleQueue[bytes]) -> None:
        self._inbox = inbox
        self._outbox = outbox
        self._closed = threading.Event()
        self._peer_closed = threading.Event()
        self._eof = False  # the end was seen once; every later read returns None at once
        self.peer: MemoryTransport | None = None

    def read(self) -> Incoming | None:
        frame = self.read_frame()
        return None if frame is None else decode_frame(frame)

    def read_frame(self, timeout: float | None = None) -> bytes | None:
        """The next frame as it was encoded; None at the end or after :meth:`close`.

        Raises:
            TimeoutError: nothing arrived within ``timeout`` seconds.
        """
        if self._eof or self._closed.is_set():
            return None
        try:
            frame = self._inbox.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no frame within {timeout}s") from None
        if frame is _EOF or self._closed.is_set():
            self._eof = True
            return None
        return frame

    def write(self, message: Message | Sequence[Message], *,
              related_to: RequestId | None = None) -> None:
        self.write_frame(encode(message))

    def write_frame(self, frame: bytes) -> None:
        """Send ``frame`` as is, unchecked; the peer decodes it like any other.

        Raises:
            ConnectionClosed: this end was closed.
            ConnectionLost: the other end was closed.
        """
        if not frame:
            raise ValueError("a frame cannot be empty")
        if self._closed.is_set():
            raise ConnectionClosed("the transport is closed")
        if self._peer_closed.is_set():
            raise ConnectionLost("the other end of the memory transport is closed")
        self._outbox.put(frame)

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        self._inbox.put(_EOF)  # wake our own reader
        if self.peer is not None:
            self.peer._peer_closed.set()
        self._outbox.put(_EOF)  # the peer reads to the end, then sees EOF


def memory_pair() -> tuple[MemoryTransport, MemoryTransport]:
    """Two connected transports: what one writes, the other reads."""
    a_to_b: queue.SimpleQueue[bytes] = queue.SimpleQueue()
    b_to_a: queue.SimpleQueue[bytes] = queue.SimpleQueue()
    a = MemoryTransport(inbox=b_to_a, outbox=a_to_b)
    b = MemoryTransport(inbox=a_to_b, outbox=b_to_a)
    a.peer, b.peer = b, a
    return a, b
