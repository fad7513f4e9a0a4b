"""Checking JSON values against a JSON Schema a peer declared or we generated.

One rule for every session (V1125-2, NAMBIG-3, DES-11): the dialect named by ``$schema``
when the schema has one, otherwise JSON Schema 2020-12. The dialects jsonschema knows are
supported (draft 3, 4, 6 and 7, 2019-09 and 2020-12); a schema naming another one cannot
be checked, and :class:`UnsupportedDialect` says so (V1125-3). jsonschema is imported at
the first check, so a process that never checks a value never loads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from ._record import Record

__all__ = ["DEFAULT_DIALECT", "SchemaCheck", "UnsupportedDialect", "check_schema",
           "validator_class"]

#: The dialect of a schema without ``$schema`` (V1125-2).
DEFAULT_DIALECT = "https://json-schema.org/draft/2020-12/schema"


class UnsupportedDialect(ValueError):
    """A schema names, with ``$schema``, a dialect that cannot be checked (V1125-3)."""

    def __init__(self, dialect: object) -> None:
        super().__init__(
            f"unsupported JSON Schema dialect {dialect!r} in $schema: supported are "
            "2020-12 (the default), 2019-09 and drafts 7, 6, 4 and 3")
        self.dialect = dialect


def validator_class(schema: Mapping[str, Any] | bool) -> Any:
    """The jsonschema validator class for ``schema``'s dialect.

    Raises:
        UnsupportedDialect: ``$schema`` names a dialect jsonschema does not know.
    """
    from jsonschema import Draft202012Validator
    from jsonschema.validators import validator_for

    if not isinstance(schema, Mapping) or "$schema" not in schema:
        return Draft202012Validator
    dialect = schema["$schema"]
    # An explicit default of None turns an unknown dialect into None, not a silent 2020-12.
    found = validator_for(schema, default=cast(Any, None)) if isinstance(dialect, str) else None
    if found is None:
        raise UnsupportedDialect(dialect)
    return found


class SchemaCheck(Record):
    """A JSON Schema and, once first used, its compiled validator."""

    __slots__ = ("_validator", "schema")

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self._validator: Any = None

    def problems(self, data: Any) -> list[str]:
        """What makes ``data`` not conform, one message per error with its JSON path;
        empty when it conforms.

        Raises:
            UnsupportedDialect: the schema's ``$schema`` names a dialect not supported.
        """
        validator = self._validator
        if validator is None:
            validator = self._validator = validator_class(self.schema)(self.schema)
        found = []
        for error in validator.iter_errors(data):
            where = "/".join(str(part) for part in error.absolute_path)
            found.append(f"at {where}: {error.message}" if where else error.message)
        return found


def check_schema(schema: Mapping[str, Any], where: str) -> None:
    """Make sure ``schema`` is a valid schema of a supported dialect (V1125-3, V1125-4).

    Raises:
        ValueError: it is not (:class:`UnsupportedDialect` for an unknown dialect).
    """
    from jsonschema.exceptions import SchemaError

    cls = validator_class(schema)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        path = "/".join(str(part) for part in exc.absolute_path)
        raise ValueError(f"{where}: not a valid JSON Schema"
                         f"{f' at {path}' if path else ''}: {exc.message}") from None
