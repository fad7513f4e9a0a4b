"""Validate wire messages against the official schema of a negotiated version (DES-19).

Each protocol revision has its schema in ``tests/spec/schema-<version>.json``: 2024-11-05
to 2025-06-18 are draft-07 with ``definitions``; 2025-11-25 and 2026-07-28 (the modern
era, ``MODERN_VERSIONS``: no ``initialize``, so a conversation names its version) are
draft 2020-12 with ``$defs``. This module hides the difference:

* ``validator(definition, version)`` gives a cached jsonschema validator for one
  definition (``"CallToolResult"``, ``"JSONRPCMessage"``, ...).
* ``message_errors(message, version, answers=None)`` checks one wire message (a dict, or
  a batch list): the JSON-RPC envelope, a request or notification against its method's
  definition, and a result against the result definition of the method it answers
  (``answers``, when the caller knows it).
* ``Conversation(version=None)`` checks a whole exchange: add every message each side
  sent (``sent_by_client`` / ``sent_by_server``, in any interleaving, from any thread);
  ``assert_valid()`` then checks each against the version given, or the one the
  ``initialize`` result names, results by the definition of the method they answer,
  and fails with the first few problems.
* ``RecordingTransport(transport, conversation)`` wraps a client's transport (memory,
  stdio, Streamable HTTP) and records both directions into a conversation.
* ``check_traffic(client_sent, server_sent, version)`` is the one-call form for
  recordings kept per direction (the interop tests).

Typical use::

    conversation = Conversation()
    with Client(RecordingTransport(transport, conversation)) as client:
        client.list_tools()
    conversation.assert_valid()

See tests/test_wire_schema.py for a representative session in every version.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, Literal

import jsonschema

from mcp_sync.jsonrpc import Batch, Incoming, Invalid, Message, RequestId, encode
from mcp_sync.transports.base import Receiver, Transport
from tests.conftest import SPEC_DIR

__all__ = [
    "MODERN_VERSIONS", "VERSIONS", "Conversation", "RecordingTransport", "check_traffic",
    "message_errors", "result_definition", "validator",
]

#: The revisions whose schema is in tests/spec, oldest first.
VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
#: The modern-era revisions whose schema is there too.
MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)

#: Error codes a modern schema defines a response shape for.
_MODERN_ERRORS = {-32022: "UnsupportedProtocolVersionError",
                  -32021: "MissingRequiredClientCapabilityError"}

Direction = Literal["client", "server"]


@cache
def _schema(version: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((SPEC_DIR / f"schema-{version}.json").read_text())
    return loaded


def _definitions_key(version: str) -> str:
    return "$defs" if "$defs" in _schema(version) else "definitions"


@cache
def validator(definition: str, version: str) -> jsonschema.protocols.Validator:
    """A validator for one definition of ``version``'s schema (draft-07 or 2020-12)."""
    schema = _schema(version)
    key = _definitions_key(version)
    wrapper = {"$ref": f"#/{key}/{definition}", key: schema[key]}
    if key == "$defs":
        return jsonschema.Draft202012Validator(wrapper)
    return jsonschema.Draft7Validator(wrapper)


@cache
def _method_definitions(version: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for name, definition in _schema(version)[_definitions_key(version)].items():
        method = definition.get("properties", {}).get("method", {}).get("const")
        if method and not name.startswith("JSONRPC"):
            found[method] = name
    return found


def result_definition(method: str, version: str) -> str | None:
    """The definition a result of ``method`` must fit in ``version``, if the schema has one."""
    request = _method_definitions(version).get(method)
    if request is None:
        return None
    defs = _schema(version)[_definitions_key(version)]
    name = request.removesuffix("Request") + "Result"
    if name in defs:
        return name
    return "EmptyResult" if "EmptyResult" in defs else "Result"


def _is_null_id_error(item: Any) -> bool:
    # AMBIG-3 / V1125-1: an error that could not be tied to a request has no usable id.
    return isinstance(item, dict) and "error" in item and item.get("id") is None


def _id_optional(version: str) -> bool:
    # From 2025-11-25 the schema itself allows an error response without ``id``.
    error = _schema(version)[_definitions_key(version)].get("JSONRPCErrorResponse", {})
    return "id" not in error.get("required", ["id"])


def message_errors(message: Any, version: str, answers: str | None = None) -> list[str]:
    """Why ``message`` breaks ``version``'s schema; empty when it fits.

    ``answers`` names the method a response answers, to check its result too.
    """
    items = message if isinstance(message, list) else [message]
    errors: list[str] = []
    for item in items:
        if _is_null_id_error(item) and ("id" in item or not _id_optional(version)):
            continue
        errors += [e.message for e in validator("JSONRPCMessage", version).iter_errors(item)]
        if not isinstance(item, dict):
            continue
        if "method" in item:
            definition = _method_definitions(version).get(item["method"])
            if definition is not None:
                errors += [f"{definition}: {e.message}"
                           for e in validator(definition, version).iter_errors(item)]
        elif "error" in item and version in MODERN_VERSIONS:
            code = item["error"].get("code") if isinstance(item["error"], dict) else None
            if code in _MODERN_ERRORS:
                definition = _MODERN_ERRORS[code]
                errors += [f"{definition}: {e.message}"
                           for e in validator(definition, version).iter_errors(item)]
        elif "result" in item and answers is not None:
            definition = result_definition(answers, version)
            if (version in MODERN_VERSIONS and isinstance(item["result"], dict)
                    and item["result"].get("resultType") == "input_required"):
                definition = "InputRequiredResult"  # SEP-2322: instead of the result
            if definition is not None:
                errors += [f"{definition}: {e.message}"
                           for e in validator(definition, version).iter_errors(item["result"])]
    return errors


class Conversation:
    """Checks every message of one session against its negotiated version's schema.

    Give ``version``, or leave it None to take it from the ``initialize`` result seen in
    the conversation. Messages are kept as they are added and checked by
    :meth:`assert_valid` (or :meth:`problems`), when every request is known.
    """

    def __init__(self, version: str | None = None) -> None:
        self.version = version
        self.messages: list[tuple[Direction, Any]] = []
        self._lock = threading.Lock()

    def add(self, sender: Direction, message: Any) -> None:
        """Record one message ``sender`` wrote (a dict, or a batch list)."""
        with self._lock:
            self.messages.append((sender, message))

    def sent_by_client(self, message: Any) -> None:
        self.add("client", message)

    def sent_by_server(self, message: Any) -> None:
        self.add("server", message)

    def negotiated(self) -> str:
        """The version the messages are checked against."""
        if self.version is not None:
            return self.version
        initialize_ids = {m["id"] for who, m in self._items()
                          if who == "client" and m.get("method") == "initialize" and "id" in m}
        for who, item in self._items():
            if who == "server" and item.get("id") in initialize_ids and "result" in item:
                return str(item["result"]["protocolVersion"])
        raise AssertionError("no initialize result in the conversation; give a version")

    def _items(self) -> list[tuple[Direction, dict[str, Any]]]:
        with self._lock:
            recorded = list(self.messages)
        return [(who, item) for who, message in recorded
                for item in (message if isinstance(message, list) else [message])
                if isinstance(item, dict)]

    def problems(self) -> list[tuple[Direction, Any, list[str]]]:
        """Every message that breaks the schema, with why."""
        version = self.negotiated()
        with self._lock:
            recorded = list(self.messages)
        requests: dict[tuple[Direction, Any], str] = {
            (who, item["id"]): item["method"] for who, item in self._items()
            if "method" in item and "id" in item}
        found = []
        for sender, message in recorded:
            if isinstance(message, list):
                # A batch is a message only where the version has them (V0618-1).
                problems = [e.message for e in
                            validator("JSONRPCMessage", version).iter_errors(message)]
                if problems:
                    found.append((sender, message, problems))
            for item in message if isinstance(message, list) else [message]:
                answers = None
                if isinstance(item, dict) and "method" not in item:
                    other: Direction = "server" if sender == "client" else "client"
                    answers = requests.get((other, item.get("id")))
                problems = message_errors(item, version, answers)
                if problems:
                    found.append((sender, item, problems))
        return found

    def assert_valid(self) -> None:
        """Fail with the first problems found, if any."""
        assert self.messages, "no message was recorded"
        found = self.problems()
        assert not found, (
            f"{len(found)} message(s) break the {self.negotiated()} schema: "
            + "; ".join(f"{who} sent {item!r}: {problems[:3]}"
                        for who, item, problems in found[:3]))


def _wire_of(message: Any) -> Any:
    if isinstance(message, Batch):
        return [_wire_of(item) for item in message.items]
    if isinstance(message, Invalid):
        return None
    if isinstance(message, (list, tuple)):
        return [_wire_of(item) for item in message]
    return json.loads(encode(message))


class RecordingTransport(Transport):
    """Wraps a client's transport and adds every message to ``conversation``: what the
    client writes as the client's, what it reads as the server's.

    ``Client(RecordingTransport(HttpClientTransport(url), conversation))`` records a
    whole session over any transport, seen from our client.
    """

    def __init__(self, inner: Transport, conversation: Conversation) -> None:
        self.inner = inner
        self.conversation = conversation

    def _incoming(self, incoming: Any) -> None:
        wire = _wire_of(incoming)
        if wire is not None:
            self.conversation.sent_by_server(wire)

    def read(self) -> Incoming | None:
        incoming = self.inner.read()
        if incoming is not None:
            self._incoming(incoming)
        return incoming

    def write(self, message: Message | Sequence[Message], *,
              related_to: RequestId | None = None) -> None:
        self.conversation.sent_by_client(_wire_of(message))
        self.inner.write(message, related_to=related_to)

    def write_before(self, message: Message | Sequence[Message], deadline: float | None, *,
                     related_to: RequestId | None = None) -> None:
        self.conversation.sent_by_client(_wire_of(message))
        self.inner.write_before(message, deadline, related_to=related_to)

    def attach_receiver(self, receiver: Receiver) -> bool:
        def recording(incoming: Incoming, serve_here: bool) -> list[Callable[[], None]]:
            self._incoming(incoming)
            return receiver(incoming, serve_here)

        accepted = self.inner.attach_receiver(recording)
        self.ends_on_close = self.inner.ends_on_close
        self.modern_era = self.inner.modern_era
        return accepted

    def close(self) -> None:
        self.inner.close()


def check_traffic(client_sent: list[Any], server_sent: list[Any], version: str) -> None:
    """Assert that every message of both sides fits ``version``'s schema.

    For recordings kept per direction: the requests of both sides are known before any
    answer is checked, so each result is checked by its own method's definition.
    """
    conversation = Conversation(version)
    for message in client_sent:
        conversation.sent_by_client(message)
    for message in server_sent:
        conversation.sent_by_server(message)
    conversation.assert_valid()
