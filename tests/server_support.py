"""Helpers shared by the server feature tests: raw client sessions, schema checks,
notification collection and a transport that records what each write related to."""

from __future__ import annotations

import itertools
import queue
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from mcp_sync import Client, Server
from mcp_sync.jsonrpc import Incoming, Message, RequestId
from mcp_sync.server import ServerConnection
from mcp_sync.transports.base import Transport
from mcp_sync.transports.memory import memory_pair
from tests.conftest import validator
from tests.helpers import INITIALIZED, LEGACY_ERA, RawPeer

_ids = itertools.count(1)


def check(result: Any, definition: str) -> Any:
    """Assert ``result`` fits the schema ``definition``; return it for chaining."""
    errors = [error.message for error in validator(definition).iter_errors(result)]
    assert not errors, f"{definition}: {errors} in {result!r}"
    return result


def request(method: str, params: dict[str, Any] | None = None,
            request_id: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0",
                               "id": request_id if request_id is not None else next(_ids),
                               "method": method}
    if params is not None:
        message["params"] = params
    return message


def initialize(capabilities: dict[str, Any] | None = None,
               version: str = "2025-03-26") -> dict[str, Any]:
    return request("initialize", {"protocolVersion": version,
                                  "capabilities": capabilities or {},
                                  "clientInfo": {"name": "raw", "version": "0"}}, "init")


@contextmanager
def raw_session(server: Server, capabilities: dict[str, Any] | None = None, *,
                version: str = "2025-03-26",
                initialized: bool = True) -> Iterator[tuple[RawPeer, ServerConnection]]:
    """A hand-driven client (with ``capabilities``) on a connection of ``server``."""
    peer = RawPeer()
    connection = server.connect(peer.transport)
    try:
        answer = peer.call(initialize(capabilities, version))
        assert "result" in answer, answer
        check(answer["result"], "InitializeResult")
        if initialized:
            peer.send(INITIALIZED)
            assert connection._operating.wait(5)
        yield peer, connection
    finally:
        peer.close()
        connection.close()


def result(peer: RawPeer, message: dict[str, Any], definition: str) -> Any:
    """Send a request and return its schema-checked result."""
    answer = peer.call(message)
    assert answer.get("id") == message["id"], answer
    assert "result" in answer, answer
    return check(answer["result"], definition)


def error(peer: RawPeer, message: dict[str, Any]) -> dict[str, Any]:
    """Send a request and return its JSON-RPC error member."""
    answer = peer.call(message)
    assert answer.get("id") == message["id"], answer
    assert "error" in answer, answer
    check(answer, "JSONRPCError")
    found: dict[str, Any] = answer["error"]
    return found


class Notifications:
    """Collects a Client's notifications in arrival order."""

    def __init__(self) -> None:
        self.queue: queue.Queue[tuple[str, dict[str, Any]]] = queue.Queue()

    def __call__(self, method: str, params: dict[str, Any]) -> None:
        self.queue.put((method, params))

    def next(self, timeout: float = 5.0) -> tuple[str, dict[str, Any]]:
        return self.queue.get(timeout=timeout)

    def empty(self) -> bool:
        return self.queue.empty()


class RecordingTransport(Transport):
    """Wraps a transport and remembers the ``related_to`` of every write."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.modern_era = inner.modern_era
        self.lock = threading.Lock()
        self.writes: list[tuple[Any, RequestId | None]] = []

    def read(self) -> Incoming | None:
        return self.inner.read()

    def write(self, message: Message | Sequence[Message], *,
              related_to: RequestId | None = None) -> None:
        with self.lock:
            self.writes.append((message, related_to))
        self.inner.write(message, related_to=related_to)

    def close(self) -> None:
        self.inner.close()

    def related(self, method: str) -> list[RequestId | None]:
        with self.lock:
            return [related for message, related in self.writes
                    if getattr(message, "method", None) == method]


@contextmanager
def recorded_client(server: Server, **options: Any,
                    ) -> Iterator[tuple[Client, RecordingTransport, ServerConnection]]:
    """A Client whose server-side transport records ``related_to``; a legacy session
    unless ``options`` say otherwise (requests a tool makes to the client exist there)."""
    options = {**LEGACY_ERA, **options}
    client_end, server_end = memory_pair()
    recording = RecordingTransport(server_end)
    connection = server.connect(recording)
    try:
        with Client(client_end, **options) as client:
            yield client, recording, connection
    finally:
        connection.close()


# --- the modern era (2026-07-28) ----------------------------------------------------------

MODERN = "2026-07-28"


def modern_meta(**overrides: Any) -> dict[str, Any]:
    """The ``_meta`` of a modern request: version, capabilities and client info; keys
    given as ``None`` are left out, others replace or add (``logLevel="debug"``)."""
    meta: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "modern-raw", "version": "1"},
    }
    for short, value in overrides.items():
        key = short if "/" in short else f"io.modelcontextprotocol/{short}"
        if value is None:
            meta.pop(key, None)
        else:
            meta[key] = value
    return meta


def modern_request(method: str, params: dict[str, Any] | None = None,
                   request_id: Any = None, **meta: Any) -> dict[str, Any]:
    """A modern request: ``params`` with :func:`modern_meta` (``meta`` overriding) merged
    into their ``_meta``."""
    params = dict(params or {})
    params["_meta"] = {**modern_meta(**meta), **params.get("_meta", {})}
    return request(method, params, request_id)


@contextmanager
def modern_peer(server: Server,
                transport_wrapper: Any = None) -> Iterator[tuple[RawPeer, ServerConnection]]:
    """A hand-driven client on a fresh connection of ``server``, no handshake made."""
    peer = RawPeer()
    transport = peer.transport if transport_wrapper is None else transport_wrapper(
        peer.transport)
    connection = server.connect(transport)
    try:
        yield peer, connection
    finally:
        peer.close()
        connection.close()
