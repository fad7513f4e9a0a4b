"""Checking JSON values against a JSON Schema a peer declared or we generated.

One rule for every session (NAMBIG-3, DES-11): the dialect named by ``$schema`` when the
schema has one, otherwise JSON Schema 2020-12. jsonschema is imported at the first check,
so a process that never checks a value never loads it.
"""

from __future__ import annotations

from typing import Any

from ._record import Record

__all__ = ["SchemaCheck"]


class SchemaCheck(Record):
    """A JSON Schema and, once first used, its compiled validator."""

    __slots__ = ("_validator", "schema")

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self._validator: Any = None

    def problems(self, data: Any) -> list[str]:
        """What makes ``data`` not conform, one message per error with its JSON path;
        empty when it conforms."""
        validator = self._validator
        if validator is None:
            from jsonschema import Draft202012Validator
            from jsonschema.validators import validator_for

            cls = validator_for(self.schema, default=Draft202012Validator)
            validator = self._validator = cls(self.schema)
        found = []
        for error in validator.iter_errors(data):
            where = "/".join(str(part) for part in error.absolute_path)
            found.append(f"at {where}: {error.message}" if where else error.message)
        return found
