"""The inbox of a transport fed by other threads (an HTTP server's request handlers)."""

from __future__ import annotations

import queue

from ...protocol._jsonrpc import Incoming

__all__ = ["Inbox"]


class Inbox:
    """Messages handed over by other threads, read by the engine's reader; the end sticks."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[Incoming | None] = queue.SimpleQueue()
        self._ended = False

    def put(self, incoming: Incoming) -> None:
        self._queue.put(incoming)

    def end(self) -> None:
        """Make the reader's next :meth:`get` (after what is queued) return None."""
        self._queue.put(None)

    def get(self) -> Incoming | None:
        """Block for the next message; None once the inbox has ended, and ever after."""
        if self._ended:
            return None
        incoming = self._queue.get()
        if incoming is None:
            self._ended = True
        return incoming
