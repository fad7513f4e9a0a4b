"""A function's parameters as a published JSON Schema and a binder for its arguments.

A tool, prompt or resource template is a plain function. :func:`inspect_function` reads
its signature once, at registration, and compiles every parameter's type hint into a
node of :mod:`mcp_sync.server._schema`. :meth:`FunctionSignature.bind` then only runs those
nodes' converters, so a call costs no introspection.
"""

from __future__ import annotations

import copy
import functools
import inspect
import types
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Union, get_args, get_origin, get_type_hints

from ..errors import InvalidParams
from ._docstrings import parse_docstring
from ._param_header import check_header_properties, header_of, with_header
from ._schema import (
    _NULL,
    _build,
    _convert_fields,
    _describe,
    _Field,
    _is_class,
    _NoneType,
    _object_schema,
    _union_node,
    _with_default,
)

__all__ = ["FunctionSignature", "function_hints", "inspect_function", "is_context",
           "return_hint"]


class FunctionSignature:
    """The published schema of a function and the compiled checks for its arguments.

    Built once by :func:`inspect_function`; :meth:`bind` is then cheap to call.
    """

    __slots__ = ("_fields", "_names", "context_parameter", "description", "input_schema")

    def __init__(self, input_schema: dict[str, Any], description: str | None,
                 context_parameter: str | None, fields: tuple[_Field, ...]) -> None:
        self.input_schema = input_schema
        self.description = description
        self.context_parameter = context_parameter
        self._fields = fields
        self._names = frozenset(field.name for field in fields)

    def __repr__(self) -> str:
        return (f"FunctionSignature(parameters={[field.name for field in self._fields]!r}, "
                f"context_parameter={self.context_parameter!r})")

    def bind(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Validate and convert JSON arguments into keyword arguments for the function.

        The context parameter is never taken from ``arguments``; the caller adds it.

        Raises:
            InvalidParams: naming every bad, missing or unexpected argument.
        """
        if arguments is None:
            arguments = {}
        elif arguments.__class__ is not dict and not isinstance(arguments, Mapping):
            raise InvalidParams(f"arguments must be an object, got {_describe(arguments)}")
        result, problems = _convert_fields(self._fields, self._names, arguments, "")
        if problems:
            raise InvalidParams("; ".join(problems))
        return result


def is_context(hint: Any, skip_types: tuple[type, ...]) -> bool:
    # Annotated and Optional may nest either way: 3.10 wraps Optional around Annotated
    # when the default is None.
    while True:
        origin = get_origin(hint)
        members = [arg for arg in get_args(hint) if arg is not _NoneType]
        if origin is Annotated:
            hint = get_args(hint)[0]
        elif origin in (Union, types.UnionType) and len(members) == 1:
            hint = members[0]
        else:
            return _is_class(hint) and issubclass(hint, skip_types)


def function_hints(fn: Callable[..., Any], name: str) -> dict[str, Any]:
    target: Any = inspect.unwrap(fn)
    while isinstance(target, functools.partial):
        target = inspect.unwrap(target.func)
    if not (inspect.isfunction(target) or inspect.ismethod(target)):
        target = getattr(type(target), "__call__", None)  # noqa: B004 - a callable object
        if not (inspect.isfunction(target) or inspect.ismethod(target)):
            return {}  # a builtin or a class: the signature's annotations are all there is
    try:
        return get_type_hints(target, include_extras=True)
    except Exception as exc:
        raise TypeError(f"cannot resolve the type hints of {name}: {exc}") from exc


def inspect_function(fn: Callable[..., Any], *,
                     skip_types: tuple[type, ...] = ()) -> FunctionSignature:
    """Compile ``fn``'s signature into a schema and an argument binder.

    Args:
        fn: the tool (or prompt, or resource template) function.
        skip_types: a parameter annotated with one of these types, or a subclass, is the
            context parameter: it is left out of the schema and injected by the caller.

    Returns:
        The :class:`FunctionSignature`.

    Raises:
        TypeError: a parameter is variadic or positional-only, a hint is unsupported or
            unresolvable, or more than one parameter has a context type.
    """
    name = getattr(fn, "__qualname__", None) or repr(fn)
    try:
        signature = inspect.signature(fn)
    except ValueError as exc:  # some builtins have no introspectable signature
        raise TypeError(f"{name}: {exc}") from exc
    hints = function_hints(fn, name)
    description, param_docs = parse_docstring(inspect.getdoc(fn))
    context: str | None = None
    fields: list[_Field] = []
    properties: dict[str, Any] = {}
    for param in signature.parameters.values():
        where = f"{name}: parameter '{param.name}'"
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"{where}: *args and **kwargs cannot be described by a schema")
        if param.kind is param.POSITIONAL_ONLY:
            raise TypeError(f"{where}: positional-only parameters cannot be passed by name")
        hint = hints.get(param.name, param.annotation)
        if hint is param.empty:
            hint = Any  # an unannotated parameter accepts anything, as Python would
        elif isinstance(hint, str):
            raise TypeError(f"{where}: cannot resolve the type hint {hint!r}")
        if is_context(hint, skip_types):
            if context is not None:
                raise TypeError(f"{where}: only one context parameter is allowed, "
                                f"'{context}' is one already")
            context = param.name
            continue
        try:
            node = _build(hint, ())
        except TypeError as exc:
            raise TypeError(f"{where}: {exc}") from None
        if param.default is None and not node.kinds & {"null", "any"}:
            # `x: int = None` means Optional[int]; 3.10's get_type_hints says so, 3.11+ not.
            node = _union_node([node, _NULL])
        schema = node.schema
        if "description" not in schema and param_docs.get(param.name):
            schema = {**schema, "description": param_docs[param.name]}
        required = param.default is param.empty
        if not required:
            schema = _with_default(schema, param.default)
        header = header_of(hint)
        if header is not None:
            schema = with_header(schema, header, where)
        properties[param.name] = schema
        fields.append(_Field(param.name, node, required))
    # No "additionalProperties" at the top: some clients reject schemas carrying it, and bind
    # reports unknown names itself. The copy keeps callers from editing shared node schemas.
    # A function without parameters takes the form 2025-11-25 prefers (V1125-4).
    if not fields:
        return FunctionSignature({"type": "object", "additionalProperties": False},
                                 description, context, ())
    input_schema = copy.deepcopy(_object_schema(properties, [f.name for f in fields if f.required]))
    check_header_properties(input_schema, name)
    return FunctionSignature(input_schema, description, context, tuple(fields))


def return_hint(fn: Callable[..., Any]) -> Any:
    """``fn``'s resolved return annotation, or None when it has none."""
    name = getattr(fn, "__qualname__", None) or repr(fn)
    hint = function_hints(fn, name).get("return")
    if hint is None:
        try:
            annotation = inspect.signature(fn).return_annotation
        except ValueError:
            return None
        hint = None if annotation is inspect.Signature.empty else annotation
    return hint
