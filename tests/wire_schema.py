"""Validate wire messages against the official schema of a negotiated version (DES-19).

Each protocol revision has its schema in ``tests/spec/schema-<version>.json``: 2024-11-05
to 2025-06-18 are draft-07 with ``definitions``; 2025-11-25 is draft 2020-12 with
``$defs``. This module hides the difference:

* ``validator(definition, version)`` gives a cached jsonschema validator for one
  definition (``"CallToolResult"``, ``"JSONRPCMessage"``, ...).
* ``message_errors(message, version, answers=None)`` checks one wire message (a dict, or
  a batch list): the JSON-RPC envelope, a request or notification against its method's
  definition, and a result against the result definition of the method it answers
  (``answers``, when the caller knows it).
* ``Conversation(version)`` checks a whole exchange: feed it every message each side
  sent (``sent_by_client`` / ``sent_by_server``, in any interleaving); it remembers which
  method each request id was so that results are checked by their own definition, and
  collects the problems in ``errors``. ``assert_valid()`` fails with the first few.

Typical use, with the messages recorded at a transport::

    conversation = Conversation("2025-11-25")
    for direction, message in recorded:
        conversation.add(direction, message)
    conversation.assert_valid()
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any, Literal

import jsonschema

from tests.conftest import SPEC_DIR

__all__ = [
    "VERSIONS", "Conversation", "check_traffic", "message_errors", "result_definition",
    "validator",
]

#: The revisions whose schema is in tests/spec, oldest first.
VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

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
        elif "result" in item and answers is not None:
            definition = result_definition(answers, version)
            if definition is not None:
                errors += [f"{definition}: {e.message}"
                           for e in validator(definition, version).iter_errors(item["result"])]
    return errors


class Conversation:
    """Checks every message of one session against its negotiated version's schema."""

    def __init__(self, version: str) -> None:
        self.version = version
        self.errors: list[tuple[Direction, Any, list[str]]] = []
        self.checked = 0
        # (who sent the request, its id) -> method
        self._requests: dict[tuple[Direction, Any], str] = {}

    def remember(self, sender: Direction, message: Any) -> None:
        """Note the requests in ``message`` (so that answers can be checked) unchecked."""
        for item in message if isinstance(message, list) else [message]:
            if isinstance(item, dict) and "method" in item and "id" in item:
                self._requests[(sender, item["id"])] = item["method"]

    def add(self, sender: Direction, message: Any) -> None:
        """Check one message ``sender`` wrote (a dict, or a batch list)."""
        self.remember(sender, message)
        for item in message if isinstance(message, list) else [message]:
            answers = None
            if isinstance(item, dict) and "method" not in item:
                other: Direction = "server" if sender == "client" else "client"
                answers = self._requests.get((other, item.get("id")))
            problems = message_errors(item, self.version, answers)
            self.checked += 1
            if problems:
                self.errors.append((sender, item, problems))

    def sent_by_client(self, message: Any) -> None:
        self.add("client", message)

    def sent_by_server(self, message: Any) -> None:
        self.add("server", message)

    def assert_valid(self) -> None:
        """Fail with the first problems found, if any."""
        assert self.checked, "no message was checked"
        assert not self.errors, (
            f"{len(self.errors)} message(s) break the {self.version} schema: "
            + "; ".join(f"{who} sent {item!r}: {problems[:3]}"
                        for who, item, problems in self.errors[:3]))


def check_traffic(client_sent: list[Any], server_sent: list[Any], version: str) -> None:
    """Assert that every message of both sides fits ``version``'s schema.

    For recordings kept per direction: the requests of both sides are known before any
    answer is checked, so each result is checked by its own method's definition.
    """
    conversation = Conversation(version)
    for sender, messages in (("client", client_sent), ("server", server_sent)):
        for message in messages:
            conversation.remember(sender, message)  # type: ignore[arg-type]
    for message in client_sent:
        conversation.sent_by_client(message)
    for message in server_sent:
        conversation.sent_by_server(message)
    conversation.assert_valid()
