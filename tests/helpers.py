"""Test helpers: a raw JSON-RPC peer on one end of an in-memory transport."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any, ParamSpec, Protocol, TypeVar

from mcp_sync.transports.memory import MemoryTransport, memory_pair

INITIALIZE = {
    "jsonrpc": "2.0", "id": "init", "method": "initialize",
    "params": {"protocolVersion": "2025-03-26", "capabilities": {},
               "clientInfo": {"name": "raw", "version": "0"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


class RawPeer:
    """Writes frames verbatim to the other end and reads back what it answers."""

    def __init__(self) -> None:
        self.end, self.other = memory_pair()

    def send(self, message: Any) -> None:
        """Send a JSON value, or bytes/str exactly as given."""
        if isinstance(message, str):
            message = message.encode()
        if not isinstance(message, bytes):
            message = json.dumps(message).encode()
        self.end._outbox.put(message)

    def receive(self, timeout: float = 5.0) -> Any:
        """The next frame the other end wrote, parsed; raises queue.Empty on timeout."""
        frame = self.end._inbox.get(timeout=timeout)
        if frame == b"":
            raise EOFError("the other end closed")
        return json.loads(frame)

    def nothing_more(self, timeout: float = 0.2) -> bool:
        """True if no frame arrives within ``timeout`` (for messages that get no answer)."""
        try:
            frame = self.end._inbox.get(timeout=timeout)
        except queue.Empty:
            return True
        self.end._inbox.put(frame)
        return False

    def call(self, message: dict[str, Any], timeout: float = 5.0) -> Any:
        self.send(message)
        return self.receive(timeout)

    def handshake(self) -> Any:
        result = self.call(INITIALIZE)
        self.send(INITIALIZED)
        return result

    def close(self) -> None:
        self.end.close()

    @property
    def transport(self) -> MemoryTransport:
        """The end to hand to a Server or Client."""
        return self.other


class Gates:
    """Named pairs of events: a handler sets ``started(name)``, waits for ``release(name)``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._started: dict[str, threading.Event] = {}
        self._release: dict[str, threading.Event] = {}

    def started(self, name: str) -> threading.Event:
        with self._lock:
            return self._started.setdefault(name, threading.Event())

    def release(self, name: str) -> threading.Event:
        with self._lock:
            return self._release.setdefault(name, threading.Event())

    def release_all(self) -> None:
        with self._lock:
            events = list(self._release.values())
        for event in events:
            event.set()


class Callers:
    """``count`` threads each calling ``call(n)``; what each returned or raised is kept."""

    def __init__(self, count: int, call: Callable[[int], Any]) -> None:
        self.outcomes: list[Any] = []
        self._lock = threading.Lock()
        self._call = call
        self.threads = [threading.Thread(target=self._run, args=(n,), name=f"test:caller-{n}")
                        for n in range(count)]
        for thread in self.threads:
            thread.start()

    def _run(self, n: int) -> None:
        try:
            outcome = self._call(n)
        except BaseException as exc:
            outcome = exc
        with self._lock:
            self.outcomes.append(outcome)

    def join(self, timeout: float) -> bool:
        """Wait for every caller; True if none is left running."""
        for thread in self.threads:
            thread.join(timeout)
        return not any(thread.is_alive() for thread in self.threads)


class _Closable(Protocol):
    def close(self) -> None: ...


_Params = ParamSpec("_Params")
_Made = TypeVar("_Made", bound=_Closable)


def closing_all(make: Callable[_Params, _Made]) -> Iterator[Callable[_Params, _Made]]:
    """For a fixture, ``yield from closing_all(Thing)``: the test gets ``make``, and
    everything it made is closed, in order, when the test ends."""
    made: list[_Made] = []

    def start(*args: _Params.args, **kwargs: _Params.kwargs) -> _Made:
        item = make(*args, **kwargs)
        made.append(item)
        return item

    yield start
    for item in made:
        item.close()
