"""JSON Schema from Python type hints, and argument validation against it.

Every type hint compiles once into a node: the JSON Schema that is published, plus a
closure that checks and converts one JSON value. :mod:`mcp_sync.server._signature` builds the
nodes of a whole function's parameters at registration, so a call costs no
introspection.

Converters are strict (``"3"`` is not an integer, ``1`` is not ``True``); the only
coercions are the lossless ones JSON forces on us: an integral float is an ``int``, an
``int`` is a ``float``, an array becomes a tuple or set, an object becomes a dataclass or
attrs instance. Problems are collected across all arguments and reported together, each
prefixed with the path of the bad value.
"""

from __future__ import annotations

import collections.abc
import copy
import dataclasses
import enum
import math
import sys
import types
import typing
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Union, get_args, get_origin, get_type_hints

import attrs

from ..protocol._record import Record

__all__ = ["schema_for_type"]

_Converter = Callable[[Any, str], Any]
_NoneType = type(None)


class _Invalid(Exception):
    """Raised by converters; carries every problem found in one value."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(problems)
        self.problems = problems


class _Node(Record):
    """A compiled type hint: its schema and the converter for values of it.

    ``kinds`` are the JSON types the node can accept (``"any"`` for everything); unions
    use them to decide which alternative's error is worth reporting. ``hashable`` says
    whether converted values can go into a set.
    """

    __slots__ = ("convert", "expected", "hashable", "kinds", "schema")

    def __init__(self, schema: dict[str, Any], convert: _Converter, expected: str,
                 kinds: frozenset[str], hashable: bool = True) -> None:
        self.schema = schema
        self.convert = convert
        self.expected = expected
        self.kinds = kinds
        self.hashable = hashable


def _problem(path: str, message: str) -> str:
    return f"argument '{path}': {message}"


_KINDS = {_NoneType: "null", bool: "boolean", int: "integer", float: "number", str: "string",
          list: "array", tuple: "array", dict: "object"}


def _kind(value: Any) -> str:
    kind = _KINDS.get(type(value))
    if kind is None:  # subclasses, such as an IntEnum member or an OrderedDict
        kind = next((name for cls, name in reversed(_KINDS.items()) if isinstance(value, cls)),
                    "object" if isinstance(value, Mapping) else "other")
    return kind


def _describe(value: Any) -> str:
    kind = _kind(value)
    if kind in ("string", "integer", "number", "boolean"):
        text = _json_literal(value)
        return f"{kind} {text if len(text) <= 40 else text[:37] + '...'}"
    return f"Python object of type {type(value).__qualname__}" if kind == "other" else kind


def _mismatch(path: str, expected: str, value: Any) -> _Invalid:
    return _Invalid([_problem(path, f"expected {expected}, got {_describe(value)}")])


def _join(path: str, key: Any) -> str:
    if not path:
        return str(key)
    if isinstance(key, str) and key.isidentifier():
        return f"{path}.{key}"
    return f"{path}[{key!r}]"


def _json_literal(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def _exact(cls: type, expected: str) -> _Converter:
    def convert(value: Any, path: str) -> Any:
        if isinstance(value, cls):
            return value
        raise _mismatch(path, expected, value)

    return convert


def _convert_int(value: Any, path: str) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    # JSON has a single number type; some clients serialise 3 as 3.0.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise _mismatch(path, "integer", value)


def _convert_float(value: Any, path: str) -> Any:
    if isinstance(value, float):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:
            raise _Invalid([_problem(path, "number is too large")]) from None
    raise _mismatch(path, "number", value)


_ANY = _Node({}, lambda value, path: value, "any value", frozenset({"any"}))
_NULL = _Node({"type": "null"}, _exact(_NoneType, "null"), "null", frozenset({"null"}))
_SCALARS: dict[Any, _Node] = {
    str: _Node({"type": "string"}, _exact(str, "string"), "string", frozenset({"string"})),
    int: _Node({"type": "integer"}, _convert_int, "integer", frozenset({"integer"})),
    float: _Node({"type": "number"}, _convert_float, "number", frozenset({"number"})),
    bool: _Node({"type": "boolean"}, _exact(bool, "boolean"), "boolean",
                frozenset({"boolean"})),
}


_NO_JSON = object()


def _to_json(value: Any) -> Any:
    """``value`` as JSON data, or ``_NO_JSON`` when it has no faithful JSON form."""
    if isinstance(value, enum.Enum):
        return _to_json(value.value)
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else _NO_JSON
    if isinstance(value, (set, frozenset)):
        try:
            value = sorted(value)
        except TypeError:
            return _NO_JSON
    if isinstance(value, (list, tuple)):
        items = [_to_json(item) for item in value]
        return _NO_JSON if any(item is _NO_JSON for item in items) else items
    if isinstance(value, Mapping) and all(isinstance(key, str) for key in value):
        members = {key: _to_json(item) for key, item in value.items()}
        return _NO_JSON if any(item is _NO_JSON for item in members.values()) else members
    return _NO_JSON


def _with_default(schema: dict[str, Any], default: Any) -> dict[str, Any]:
    encoded = _to_json(default)
    return schema if encoded is _NO_JSON else {**schema, "default": encoded}


def _special_forms(name: str) -> tuple[Any, ...]:
    # On 3.10 typing_extensions defines its own NotRequired/Literal objects; look them up
    # only if the user's code already imported it, so it is never a dependency of ours.
    found = []
    for module in (typing, sys.modules.get("typing_extensions")):
        form = getattr(module, name, None)
        if form is not None and form not in found:
            found.append(form)
    return tuple(found)


def _is_class(tp: Any) -> bool:
    # On 3.10 list[int] passes isinstance(..., type); a parameterised alias is not a class.
    return isinstance(tp, type) and get_origin(tp) is None


def _type_name(tp: Any) -> str:
    return tp.__qualname__ if _is_class(tp) else repr(tp)


def _union_node(alternatives: list[_Node]) -> _Node:
    for node in alternatives:
        if "any" in node.kinds:
            return node
    expected = " or ".join(node.expected for node in alternatives)
    kinds = frozenset().union(*(node.kinds for node in alternatives))

    def convert(value: Any, path: str) -> Any:
        failures: list[_Invalid] = []
        for node in alternatives:
            try:
                return node.convert(value, path)
            except _Invalid as exc:
                failures.append(exc)
        # When exactly one alternative takes this JSON type, its detailed complaint is more
        # useful than "expected A or B".
        kind = _kind(value)
        relevant = [
            failure for node, failure in zip(alternatives, failures, strict=True)
            if kind in node.kinds or "any" in node.kinds
            or (kind == "integer" and "number" in node.kinds)
            or (kind == "number" and "integer" in node.kinds)
        ]
        if len(relevant) == 1:
            raise relevant[0]
        raise _mismatch(path, expected, value)

    schema = {"anyOf": [node.schema for node in alternatives]}
    return _Node(schema, convert, expected, kinds,
                 all(node.hashable for node in alternatives))


def _choice_node(choices: list[tuple[Any, Any]]) -> _Node:
    """An enumeration of JSON scalars; ``choices`` pairs each JSON value with its result."""
    table: dict[tuple[str, Any], Any] = {}
    kinds = set()
    for encoded, result in choices:
        if encoded is not None and not isinstance(encoded, (str, int, float, bool)):
            raise TypeError(f"enumeration value {encoded!r} is not a JSON scalar")
        kind = _kind(encoded)
        kinds.add(kind)
        # bool is kept apart from numbers, so True never matches 1.
        table.setdefault(("number" if kind == "integer" else kind, encoded), result)
    shown = [_json_literal(encoded) for encoded, _ in choices]
    expected = "one of " + (", ".join(shown) if len(shown) <= 10
                            else ", ".join(shown[:10]) + f", ... ({len(shown)} values)")

    def convert(value: Any, path: str) -> Any:
        kind = _kind(value)
        try:
            return table[("number" if kind == "integer" else kind, value)]
        except (KeyError, TypeError):
            raise _mismatch(path, expected, value) from None

    schema: dict[str, Any] = {"enum": [encoded for encoded, _ in choices]}
    if len(kinds) == 1:
        schema = {"type": next(iter(kinds)), **schema}
    elif kinds == {"integer", "number"}:
        schema = {"type": "number", **schema}
    return _Node(schema, convert, expected, frozenset(kinds))


def _array_node(item: _Node, result: Callable[[list[Any]], Any], unique: bool,
                hashable: bool) -> _Node:
    item_convert = item.convert
    schema: dict[str, Any] = {"type": "array"}
    if item.schema:
        schema["items"] = item.schema
    if unique:
        schema["uniqueItems"] = True

    def convert(value: Any, path: str) -> Any:
        if not isinstance(value, (list, tuple)):
            raise _mismatch(path, "array", value)
        items: list[Any] = []
        problems: list[str] = []
        for index, element in enumerate(value):
            try:
                items.append(item_convert(element, f"{path}[{index}]"))
            except _Invalid as exc:
                problems.extend(exc.problems)
        if problems:
            raise _Invalid(problems)
        if unique:
            try:
                distinct = len(set(items))
            except TypeError:
                raise _Invalid([_problem(path, "array items must be hashable")]) from None
            if distinct != len(items):
                raise _Invalid([_problem(path, "expected unique items, got duplicates")])
        return result(items)

    return _Node(schema, convert, "array", frozenset({"array"}), hashable)


def _tuple_node(items: list[_Node]) -> _Node:
    count = len(items)
    schema: dict[str, Any] = {"type": "array", "minItems": count, "maxItems": count}
    if items:
        schema["prefixItems"] = [node.schema for node in items]
    expected = f"array of {count} items"

    def convert(value: Any, path: str) -> Any:
        if not isinstance(value, (list, tuple)):
            raise _mismatch(path, expected, value)
        if len(value) != count:
            raise _Invalid([_problem(path, f"expected {expected}, got {len(value)}")])
        result: list[Any] = []
        problems: list[str] = []
        for index, (node, element) in enumerate(zip(items, value, strict=True)):
            try:
                result.append(node.convert(element, f"{path}[{index}]"))
            except _Invalid as exc:
                problems.extend(exc.problems)
        if problems:
            raise _Invalid(problems)
        return tuple(result)

    return _Node(schema, convert, expected, frozenset({"array"}),
                 all(node.hashable for node in items))


def _mapping_node(key: _Node | None, value_node: _Node) -> _Node:
    schema: dict[str, Any] = {"type": "object"}
    if value_node.schema:
        schema["additionalProperties"] = value_node.schema
    if key is not None:
        schema["propertyNames"] = key.schema
    value_convert = value_node.convert

    def convert(value: Any, path: str) -> Any:
        if not isinstance(value, Mapping):
            raise _mismatch(path, "object", value)
        result: dict[Any, Any] = {}
        problems: list[str] = []
        for name, element in value.items():
            converted_key = name
            if key is not None:
                try:
                    converted_key = key.convert(name, path)
                except _Invalid:
                    problems.append(_problem(path, f"key {name!r} is not {key.expected}"))
                    continue
            try:
                result[converted_key] = value_convert(element, _join(path, name))
            except _Invalid as exc:
                problems.extend(exc.problems)
        if problems:
            raise _Invalid(problems)
        return result

    return _Node(schema, convert, "object", frozenset({"object"}), hashable=False)


class _Field(Record):
    __slots__ = ("name", "node", "required")

    def __init__(self, name: str, node: _Node, required: bool) -> None:
        self.name = name  # the JSON name, also the keyword the constructor or function takes
        self.node = node
        self.required = required


def _convert_fields(fields: tuple[_Field, ...], names: frozenset[str],
                    value: Mapping[str, Any], path: str) -> tuple[dict[str, Any], list[str]]:
    """Convert an object's members; ``path == ""`` means the function's own arguments."""
    result: dict[str, Any] = {}
    problems: list[str] = []
    for field in fields:
        if field.name in value:
            try:
                result[field.name] = field.node.convert(value[field.name], _join(path, field.name))
            except _Invalid as exc:
                problems.extend(exc.problems)
        elif field.required:
            problems.append(_problem(path, f"missing required property '{field.name}'")
                            if path else f"missing required argument '{field.name}'")
    # Unknown names are rejected rather than dropped: a silently ignored argument hides a
    # typo from the model, which would then believe its option was applied.
    if not names.issuperset(value.keys()):
        for name in value:
            if name not in names:
                problems.append(_problem(path, f"unexpected property {name!r}")
                                if path else f"unexpected argument {name!r}")
    return result, problems


def _object_schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    # An empty "required" array is invalid in draft 4, which some clients still use.
    if required:
        schema["required"] = required
    return schema


def _object_node(fields: list[tuple[_Field, Any, bool]], factory: Callable[..., Any],
                 hashable: bool) -> _Node:
    """``fields`` holds (field, default, has_default) triples."""
    properties = {field.name: _with_default(field.node.schema, default) if has_default
                  else field.node.schema for field, default, has_default in fields}
    schema = _object_schema(properties, [field.name for field, _, _ in fields if field.required])
    # Nested objects say what bind enforces. The function's own schema leaves this out
    # (see inspect_function), because clients differ on whether they accept it there.
    schema["additionalProperties"] = False
    compiled = tuple(field for field, _, _ in fields)
    names = frozenset(field.name for field in compiled)

    def convert(value: Any, path: str) -> Any:
        if not isinstance(value, Mapping):
            raise _mismatch(path, "object", value)
        members, problems = _convert_fields(compiled, names, value, path)
        if problems:
            raise _Invalid(problems)
        try:
            return factory(**members)
        except (TypeError, ValueError) as exc:
            # Validators and __post_init__ checks of the user's class are input checks too.
            raise _Invalid([_problem(path, str(exc) or type(exc).__name__)]) from None

    return _Node(schema, convert, "object", frozenset({"object"}), hashable)


def _class_hints(cls: type) -> dict[str, Any]:
    try:
        return get_type_hints(cls, include_extras=True)
    except Exception as exc:
        raise TypeError(f"cannot resolve the type hints of {cls.__qualname__}: {exc}") from exc


def _class_node(cls: type, seen: tuple[type, ...]) -> _Node:
    hints = _class_hints(cls)
    fields: list[tuple[_Field, Any, bool]] = []
    hashable = getattr(cls, "__hash__", None) is not None

    def field(name: str, hint: Any, required: bool, default: Any) -> None:
        try:
            node = _build(hint, seen)
        except TypeError as exc:
            raise TypeError(f"field '{name}' of {cls.__qualname__}: {exc}") from None
        fields.append((_Field(name, node, required), default, not required))

    if attrs.has(cls):
        for attribute in attrs.fields(cls):
            if not attribute.init:
                continue
            default = attribute.default
            if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
                default = _NO_JSON
            hint = hints.get(attribute.name, attribute.type)
            field(attribute.alias, Any if hint is None else hint,
                  attribute.default is attrs.NOTHING, default)
        return _object_node(fields, cls, hashable)

    if any(isinstance(hint, dataclasses.InitVar) for hint in hints.values()):
        raise TypeError(f"dataclass {cls.__qualname__} has an InitVar, which is not supported")
    for item in dataclasses.fields(cls):
        if not item.init:
            continue
        missing = (item.default is dataclasses.MISSING
                   and item.default_factory is dataclasses.MISSING)
        field(item.name, hints.get(item.name, Any), missing, item.default)
    return _object_node(fields, cls, hashable)


def _typeddict_node(cls: type, seen: tuple[type, ...]) -> _Node:
    required_forms, optional_forms = _special_forms("Required"), _special_forms("NotRequired")
    wrappers = required_forms + optional_forms + _special_forms("ReadOnly")
    required_keys: frozenset[str] = getattr(cls, "__required_keys__", frozenset())
    fields: list[tuple[_Field, Any, bool]] = []
    for name, hint in _class_hints(cls).items():
        required = name in required_keys
        # Under postponed annotations the class could not see these wrappers when it
        # computed __required_keys__; the resolved hints can.
        while (origin := get_origin(hint)) in wrappers:
            if origin in required_forms:
                required = True
            elif origin in optional_forms:
                required = False
            hint = get_args(hint)[0]
        try:
            node = _build(hint, seen)
        except TypeError as exc:
            raise TypeError(f"key '{name}' of {cls.__qualname__}: {exc}") from None
        fields.append((_Field(name, node, required), None, False))
    return _object_node(fields, dict, hashable=False)


def _is_typeddict(tp: Any) -> bool:
    # Checked by shape so that typing's and typing_extensions' TypedDict both qualify.
    return (isinstance(tp, type) and issubclass(tp, dict)
            and hasattr(tp, "__required_keys__") and hasattr(tp, "__optional_keys__"))


_SEQUENCES = {list, collections.abc.Sequence, collections.abc.MutableSequence}
_SETS: dict[Any, Callable[[list[Any]], Any]] = {
    set: set, frozenset: frozenset,
    collections.abc.Set: frozenset, collections.abc.MutableSet: set,
}
_MAPPINGS = {dict, collections.abc.Mapping, collections.abc.MutableMapping}


def _build(tp: Any, seen: tuple[type, ...]) -> _Node:
    if tp is Any:
        return _ANY
    if tp is None or tp is _NoneType:
        return _NULL
    if isinstance(tp, type) and tp in _SCALARS:
        return _SCALARS[tp]
    origin = get_origin(tp)
    args = get_args(tp)
    if origin is Annotated:
        node = _build(args[0], seen)
        notes = [item for item in tp.__metadata__ if isinstance(item, str)]
        if notes:
            node = _Node({**node.schema, "description": "\n".join(notes)}, node.convert,
                         node.expected, node.kinds, node.hashable)
        return node
    if hasattr(tp, "__supertype__"):  # typing.NewType
        return _build(tp.__supertype__, seen)
    if origin is Union or origin is types.UnionType:
        return _union_node([_build(arg, seen) for arg in args])
    if origin is not None and origin in _special_forms("Literal"):
        return _choice_node([(_to_json(arg) if isinstance(arg, enum.Enum) else arg, arg)
                             for arg in args])
    container = tp if origin is None else origin
    if not isinstance(container, type):
        raise TypeError(f"unsupported type hint {_type_name(tp)}")
    if container in _SEQUENCES:
        return _array_node(_build(args[0], seen) if args else _ANY, list, False, False)
    if container is tuple:
        if tp is tuple or tp is typing.Tuple:  # noqa: UP006 - bare typing.Tuple is a form
            return _array_node(_ANY, tuple, False, True)
        if len(args) == 2 and args[1] is Ellipsis:
            item = _build(args[0], seen)
            return _array_node(item, tuple, False, item.hashable)
        return _tuple_node([_build(arg, seen) for arg in args if arg != ()])
    if container in _SETS:
        item = _build(args[0], seen) if args else _ANY
        if not item.hashable:
            raise TypeError(f"set items of type {_type_name(args[0])} are not hashable")
        return _array_node(item, _SETS[container], True, container is not set and
                           container is not collections.abc.MutableSet)
    if container in _MAPPINGS:
        if not args:
            return _mapping_node(None, _ANY)
        key = _build(args[0], seen)
        if key.kinds != {"string"}:
            raise TypeError(f"mapping keys must be strings, not {_type_name(args[0])}")
        return _mapping_node(None if args[0] is str else key, _build(args[1], seen))
    if _is_class(tp) and issubclass(tp, enum.Enum):
        return _choice_node([(_to_json(member), member) for member in tp])
    if _is_class(tp) and (attrs.has(tp) or dataclasses.is_dataclass(tp) or _is_typeddict(tp)):
        if tp in seen:
            raise TypeError(f"recursive type {tp.__qualname__} is not supported")
        if _is_typeddict(tp):
            return _typeddict_node(tp, (*seen, tp))
        return _class_node(tp, (*seen, tp))
    raise TypeError(f"unsupported type hint {_type_name(tp)}")


def schema_for_type(tp: Any) -> dict[str, Any]:
    """Return the JSON Schema of one type hint.

    Raises:
        TypeError: the hint is not one this module can validate.
    """
    return copy.deepcopy(_build(tp, ()).schema)
