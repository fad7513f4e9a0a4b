"""A tool whose input schema is written by hand (``input_schema=``) rather than derived.

Type hints cannot say everything JSON Schema 2020-12 can (``$defs`` and ``$ref``,
``$anchor``, ``allOf``/``anyOf``, ``if``/``then``/``else``). Such a schema is published
exactly as given (V1125-2), checked once at registration to be a valid schema of a
supported dialect (V1125-3, V1125-4), and each call's arguments are validated against it
with jsonschema; the function then receives them as keyword arguments, as JSON values.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import InvalidParams
from ..protocol._schema_check import SchemaCheck, check_schema
from ._docstrings import parse_docstring
from ._param_header import check_header_properties
from ._signature import FunctionSignature, function_hints, is_context

__all__ = ["SchemaSignature", "schema_signature"]


class SchemaSignature(FunctionSignature):
    """A :class:`FunctionSignature` whose arguments are checked by a JSON Schema."""

    __slots__ = ("_check", "_takes")

    def __init__(self, input_schema: dict[str, Any], description: str | None,
                 context_parameter: str | None, takes: frozenset[str] | None) -> None:
        super().__init__(input_schema, description, context_parameter, ())
        self._check = SchemaCheck(input_schema)
        self._takes = takes  # the argument names the function takes; None: any (**kwargs)

    def bind(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Validate ``arguments`` against the schema; they are passed on unchanged.

        Raises:
            InvalidParams: naming every way the arguments break the schema, or an
                argument the schema allows but the function does not take.
        """
        if arguments is None:
            arguments = {}
        elif not isinstance(arguments, Mapping):
            raise InvalidParams("arguments must be an object")
        problems = self._check.problems(arguments)
        if self._takes is not None:
            problems += [f"unexpected argument {name!r}" for name in arguments
                         if name not in self._takes]
        if problems:
            raise InvalidParams("; ".join(problems))
        return dict(arguments)


def schema_signature(fn: Callable[..., Any], schema: Mapping[str, Any], where: str,
                     skip_types: tuple[type, ...]) -> SchemaSignature:
    """Check ``schema``, and that ``fn`` can take every argument it names.

    Raises:
        TypeError: ``schema`` is not an object schema, or ``fn`` does not take an
            argument the schema names, or needs one it does not name.
        ValueError: ``schema`` is not a valid schema of a supported dialect.
    """
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        raise TypeError(f'{where}: input_schema must be a JSON Schema with "type": "object" '
                        "(V1125-4)")
    published: dict[str, Any] = json.loads(json.dumps(schema))  # a copy, and JSON only
    check_schema(published, where)
    check_header_properties(published, where)
    name = getattr(fn, "__qualname__", None) or repr(fn)
    hints = function_hints(fn, name)
    parameters = inspect.signature(fn).parameters.values()
    context = next((p.name for p in parameters
                    if is_context(hints.get(p.name, p.annotation), skip_types)), None)
    named = {p.name: p for p in parameters if p.name != context
             and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    takes_any = any(p.kind is p.VAR_KEYWORD for p in parameters)
    properties = published.get("properties")
    names = set(properties) if isinstance(properties, Mapping) else set()
    unknown = sorted(names - set(named))
    if unknown and not takes_any:
        raise TypeError(f"{where}: input_schema names {unknown}, which the function does "
                        "not take; add them as parameters, or **kwargs")
    needed = sorted(key for key, p in named.items() if p.default is p.empty
                    and key not in names)
    if needed:
        raise TypeError(f"{where}: the function needs {needed}, which input_schema does "
                        "not name")
    description, _ = parse_docstring(inspect.getdoc(fn))
    return SchemaSignature(published, description, context,
                           None if takes_any else frozenset(named))
