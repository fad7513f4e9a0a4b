"""Test helpers shared by the test files: a raw JSON-RPC peer on one end of an in-memory
transport, fake servers that answer from a script, and closing what a fixture made."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any, ParamSpec, Protocol, TypeVar

from mcp_sync.errors import RpcError
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


def initialize_result(version: str = "2025-03-26", **extra: Any) -> dict[str, Any]:
    return {"protocolVersion": version, "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "1"}, **extra}


def answer_initialize(peer: RawPeer, result: dict[str, Any]) -> dict[str, Any]:
    request = peer.receive()
    assert request["method"] == "initialize"
    peer.send({"jsonrpc": "2.0", "id": request["id"], "result": result})
    return request  # type: ignore[no-any-return]


Answer = Callable[[dict[str, Any]], Any]


class ScriptedServer:
    """A fake server that answers each request with ``answers[method](params)``.

    An answer function returns the result dict or raises :class:`RpcError` to answer
    with that error; a method without one gets -32601. Everything the client sends after
    ``initialize`` is recorded in ``received``, notifications but the handshake's also
    in the ``notifications`` queue; :meth:`request` sends the client a
    request and waits for its answer. The thread ends when the client disconnects.
    """

    def __init__(self, capabilities: dict[str, Any] | None = None,
                 answers: dict[str, Answer] | None = None,
                 version: str = "2025-03-26") -> None:
        self.peer = RawPeer()
        self.capabilities = {} if capabilities is None else capabilities
        self.answers = dict(answers or {})
        self.version = version
        self.initialize: dict[str, Any] = {}
        # Set once ``initialize`` holds the request: the client may have its answer (and
        # even be closed) before this thread gets round to keeping it.
        self.initialize_kept = threading.Event()
        self.received: list[dict[str, Any]] = []
        self.notifications: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
        self.error: BaseException | None = None
        self._responses: dict[Any, queue.SimpleQueue[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._serial = 0
        self.thread = threading.Thread(target=self._run, name="scripted-server")
        self.thread.start()

    def requests(self, method: str | None = None) -> list[dict[str, Any]]:
        """The requests received so far, of ``method`` if given."""
        with self._lock:
            return [m for m in self.received if "id" in m
                    and (method is None or m["method"] == method)]

    def _run(self) -> None:
        try:
            self.initialize = answer_initialize(self.peer, initialize_result(
                self.version, capabilities=self.capabilities))
            self.initialize_kept.set()
            while True:
                try:
                    frame = self.peer.receive(timeout=30)
                except EOFError:
                    return
                for message in frame if isinstance(frame, list) else [frame]:
                    self._handle(message)
        except BaseException as exc:  # reported by close()
            self.error = exc

    def _handle(self, message: dict[str, Any]) -> None:
        if "method" not in message:
            with self._lock:
                waiting = self._responses.get(message.get("id"))
            if waiting is not None:
                waiting.put(message)
            return
        with self._lock:
            self.received.append(message)
        if "id" not in message:
            if message["method"] != "notifications/initialized":  # part of the handshake
                self.notifications.put(message)
            return
        answer = self.answers.get(message["method"])
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if answer is None:
            reply["error"] = {"code": -32601, "message": "Method not found"}
        else:
            try:
                reply["result"] = answer(message.get("params") or {})
            except RpcError as exc:
                reply["error"] = exc.to_wire()
        self.peer.send(reply)

    def send(self, message: dict[str, Any]) -> None:
        """Send the client any frame."""
        self.peer.send(message)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.peer.send(message)

    def request(self, method: str, params: dict[str, Any] | None = None,
                timeout: float = 5.0) -> dict[str, Any]:
        """Send the client a request and return its whole answer (result or error)."""
        with self._lock:
            self._serial += 1
            request_id = f"s-{self._serial}"
            answers: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
            self._responses[request_id] = answers
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.peer.send(message)
        return answers.get(timeout=timeout)

    def close(self) -> None:
        self.peer.close()
        self.thread.join(10)
        assert not self.thread.is_alive()
        if self.error is not None:
            raise self.error


def scripted_servers() -> Iterator[Callable[..., ScriptedServer]]:
    """Starts :class:`ScriptedServer` instances and stops them after the test; use it
    as ``yield from scripted_servers()`` in a fixture."""
    yield from closing_all(ScriptedServer)
