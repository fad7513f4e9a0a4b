"""Conversion between the classes of :mod:`mcp_sync.types` and JSON-ready data.

:func:`to_wire` and :func:`from_wire` are the only entry points the rest of the library
uses. Both run on private cattrs converters made by :func:`make_converter`, whose
functions for each class cattrs generates the first time that class is converted.

Decoding is strict, because what arrives comes from another program: a string field takes
only a ``str``, an integer field only an ``int`` (never a ``bool``), a number field an
``int`` or a ``float`` that is kept as it is. Members this revision does not define are
kept in ``extra``.

A message is decoded by :data:`converter`, made without cattrs' detailed validation: its
generated functions give up at the first thing that does not fit. Only then does the
detailed converter decode the message again, to say what is wrong: anything it turns
down becomes :class:`~mcp_sync.errors.InvalidParams` naming the path of each offending
member, e.g. ``$.content[2].text``. A well-formed message never pays for that
bookkeeping.
"""

import functools
from collections.abc import Callable, Mapping
from types import NoneType, UnionType
from typing import Any, Literal, NoReturn, TypeVar, Union, get_args, get_origin

import attrs
import cattrs
from cattrs.errors import (
    AttributeValidationNote,
    ClassValidationError,
    IterableValidationError,
    IterableValidationNote,
    StructureHandlerNotFoundError,
)
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from cattrs.v import format_exception

from .. import types
from ..errors import InvalidParams
from ._text_items import structure_with_text, unstructure_with_text
from ._types_common import TextContent

__all__ = ["converter", "from_wire", "make_converter", "prepare_decoding", "to_wire"]

T = TypeVar("T")
_F = TypeVar("_F", bound=Callable[..., Any])
StructureHook = Callable[[Any, Any], Any]
UnstructureHook = Callable[[Any], Any]

# The generated structure functions read ``extra`` from this key. No wire member can
# shadow it: a member of that name is itself unknown, so it ends up inside ``extra``.
# Plain ASCII, as some cattrs versions paste the key into generated source unescaped.
_EXTRA_KEY = "__mcp_sync_extra__"
# Fields whose single Literal value identifies the class inside a union.
_DISCRIMINATORS = ("type", "method")
_MISSING = object()
# Cap on the problems listed in one error message; a huge bad batch stays readable.
_MAX_REPORTED = 5


class _BadValue(ValueError):
    """A wire value of the wrong JSON type or outside the allowed values; says which."""


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _fail(expected: str, value: Any) -> _BadValue:
    return _BadValue(f"expected {expected}, got {_json_kind(value)}")


def _wire_name(field_name: str) -> str:
    if field_name == "meta":
        return "_meta"
    head, *rest = field_name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _discriminator(cls: type[Any]) -> tuple[str, str | None] | None:
    """The discriminating field of ``cls`` and its value (None for a catch-all class)."""
    for field in attrs.fields(cls):
        if field.name not in _DISCRIMINATORS:
            continue
        if get_origin(field.type) is Literal and isinstance(field.default, str):
            return field.name, field.default
        if field.type is str and field.default is attrs.NOTHING:
            return field.name, None
    return None


def _required_keys(cls: type[Any]) -> frozenset[str]:
    return frozenset(
        _wire_name(f.name) for f in attrs.fields(cls) if f.default is attrs.NOTHING
    )


def _add_note(exc: BaseException, note: str) -> None:
    # cattrs reads its path notes from __notes__, which Python 3.10 lacks (no add_note).
    notes = [*getattr(exc, "__notes__", []), note]
    setattr(exc, "__notes__", notes)  # noqa: B010 - the attribute is missing from 3.10's stubs


def _raise_at_field(target: Any, name: str, field_type: Any, exc: Exception) -> NoReturn:
    """Raise ``exc`` as the failure of member ``name`` so the error path points at it."""
    _add_note(exc, AttributeValidationNote(name, name, field_type))
    raise ClassValidationError(f"While structuring {_type_name(target)}", [exc], target)


# --- Primitive structure hooks -------------------------------------------------------------


def _structure_str(value: Any, _: Any) -> str:
    if isinstance(value, str):
        return value
    raise _fail("string", value)


def _structure_int(value: Any, _: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise _fail("integer", value)


def _structure_float(value: Any, _: Any) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    raise _fail("number", value)


def _structure_bool(value: Any, _: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise _fail("boolean", value)


def _structure_str_or_int(value: Any, _: Any) -> str | int:
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise _fail("string or integer", value)


def _keep(value: Any, _: Any = None) -> Any:
    return value


def _literal_hook(literal: Any) -> StructureHook:
    # Every literal in the MCP schema is a string; checking the type first keeps 1 from
    # matching True and an unhashable value from reaching the comparison.
    allowed = get_args(literal)
    listed = ", ".join(repr(a) for a in allowed)

    def structure_literal(value: Any, _: Any) -> Any:
        if isinstance(value, str) and value in allowed:
            return value
        raise _BadValue(f"expected one of {listed}, got {value!r}")

    return structure_literal


class _ByClass(dict[type[Any], _F]):
    """A function for each of a union's member classes, made when an item of it first comes;
    a KeyError for any other class."""

    def __init__(self, classes: tuple[type[Any], ...], make: Callable[[type[Any]], _F]) -> None:
        super().__init__()
        self._classes = frozenset(classes)
        self._make = make

    def __missing__(self, cls: type[Any]) -> _F:
        if cls not in self._classes:
            raise KeyError(cls)
        made = self[cls] = self._make(cls)  # a race between threads only makes it twice
        return made


# --- Container hooks -----------------------------------------------------------------------


def _is_literal(t: Any) -> bool:
    return get_origin(t) is Literal


def _is_list(t: Any) -> bool:
    return get_origin(t) is list


def _is_mapping(t: Any) -> bool:
    return get_origin(t) in (dict, Mapping)


def _admits_text(item_type: Any) -> bool:
    return item_type is TextContent or (_is_class_union(item_type)
                                        and TextContent in get_args(item_type))


def _list_hook(conv: cattrs.Converter, list_type: Any) -> StructureHook:
    item_type = (get_args(list_type) or (Any,))[0]
    item_hook = conv.get_structure_hook(item_type)
    with_text = structure_with_text(item_type, item_hook) if _admits_text(item_type) else None

    def structure_list(value: Any, _: Any) -> list[Any]:
        if not isinstance(value, list):
            raise _fail("array", value)
        if with_text is not None:
            return with_text(value)
        return [item_hook(item, item_type) for item in value]

    def structure_list_detailed(value: Any, _: Any) -> list[Any]:
        if not isinstance(value, list):
            raise _fail("array", value)
        result: list[Any] = []
        errors: list[Exception] = []
        for index, item in enumerate(value):
            try:
                result.append(item_hook(item, item_type))
            except Exception as exc:
                _add_note(exc, IterableValidationNote(f"item {index}", index, item_type))
                errors.append(exc)
        if errors:
            raise IterableValidationError("While structuring a list", errors, list_type)
        return result

    return structure_list_detailed if conv.detailed_validation else structure_list


def _mapping_hook(conv: cattrs.Converter, mapping_type: Any) -> StructureHook:
    value_type = (get_args(mapping_type) or (str, Any))[1]
    if value_type is Any:
        # Free-form JSON objects (arguments, _meta, schemas) pass through untouched.
        def structure_object(value: Any, _: Any) -> Any:
            if isinstance(value, dict):
                return value
            raise _fail("object", value)

        return structure_object

    value_hook = conv.get_structure_hook(value_type)

    def structure_mapping(value: Any, _: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise _fail("object", value)
        result: dict[str, Any] = {}
        errors: list[Exception] = []
        for key, item in value.items():
            try:
                result[key] = value_hook(item, value_type)
            except Exception as exc:
                _add_note(exc, IterableValidationNote(f"member {key!r}", key, value_type))
                errors.append(exc)
        if errors:
            raise IterableValidationError("While structuring an object", errors, mapping_type)
        return result

    return structure_mapping


# --- Attrs classes -------------------------------------------------------------------------


def _structure_class_hook(conv: cattrs.Converter, cls: type[Any]) -> StructureHook:
    fields = attrs.fields(cls)
    overrides: dict[str, Any] = {f.name: override(rename=_wire_name(f.name)) for f in fields}
    overrides["extra"] = override(rename=_EXTRA_KEY, struct_hook=_keep)
    found = _discriminator(cls)
    # A discriminator with one allowed value has it as its default, for the caller's
    # convenience, yet must be on the wire. It is checked here, and the instance takes the
    # declared string (shared by every item of a long list) rather than a decoded copy.
    tag = found[0] if found is not None and found[1] is not None else None
    if tag is not None:
        tag_type = attrs.fields_dict(cls)[tag].type
        allowed = get_args(tag_type)
        if len(allowed) != 1:
            tag = None
    if tag is not None:
        overrides[tag] = override(omit=True)
        declared = allowed[0]
    generated = make_dict_structure_fn(
        cls,
        conv,
        _cattrs_forbid_extra_keys=False,
        _cattrs_detailed_validation=conv.detailed_validation,
        **overrides,
    )
    known = frozenset(_wire_name(f.name) for f in fields if f.name != "extra")

    def structure_class(value: Any, _: Any) -> Any:
        if not isinstance(value, dict):
            raise _fail("object", value)
        if tag is not None:
            given = value.get(tag, _MISSING)
            if given is _MISSING:
                _raise_at_field(cls, tag, tag_type, KeyError(tag))
            if not (isinstance(given, str) and given == declared):
                problem = _BadValue(f"expected one of {declared!r}, got {given!r}")
                _raise_at_field(cls, tag, tag_type, problem)
        if not known.issuperset(value):
            unknown = {k: v for k, v in value.items() if k not in known}
            value = {**value, _EXTRA_KEY: unknown}
        return generated(value, cls)

    return structure_class


def _unstructure_class_hook(conv: cattrs.Converter, cls: type[Any]) -> UnstructureHook:
    fields = attrs.fields(cls)
    overrides: dict[str, Any] = {f.name: override(rename=_wire_name(f.name)) for f in fields}
    found = _discriminator(cls)
    if found is not None:
        overrides[found[0]] = override(rename=found[0], omit_if_default=False)
    overrides["extra"] = override(omit=True)
    generated = make_dict_unstructure_fn(cls, conv, _cattrs_omit_if_default=True, **overrides)
    known = frozenset(_wire_name(f.name) for f in fields if f.name != "extra")

    def unstructure_class(obj: Any) -> dict[str, Any]:
        result = generated(obj)
        if obj.extra:
            for key, item in obj.extra.items():
                if key not in known:
                    result[key] = item
        return result

    return unstructure_class


# --- Unions --------------------------------------------------------------------------------


def _is_union(t: Any) -> bool:
    return get_origin(t) in (Union, UnionType)


def _is_class_union(t: Any) -> bool:
    members = get_args(t)
    return _is_union(t) and NoneType not in members and all(attrs.has(m) for m in members)


def _union_hook(conv: cattrs.Converter, union: Any) -> StructureHook:
    """Pick the member of a union of classes from the wire data, never by trial and error.

    Members are told apart by their discriminator value (``type`` or ``method``), with a
    member whose discriminator is a free string catching the rest; failing that, by a
    required member only one of them has (``text`` versus ``blob``).
    """
    members: tuple[type[Any], ...] = get_args(union)
    tags = {m: _discriminator(m) for m in members}
    keys = {tag[0] for tag in tags.values() if tag is not None}
    if len(keys) == 1 and None not in tags.values():
        return _tag_hook(conv, union, keys.pop(), {m: t[1] for m, t in tags.items() if t})
    return _marker_hook(conv, union, members)


def _tag_hook(
    conv: cattrs.Converter, union: Any, key: str, tags: dict[type[Any], str | None]
) -> StructureHook:
    table = {tag: member for member, tag in tags.items() if tag is not None}
    fallback = next((member for member, tag in tags.items() if tag is None), None)
    # Each member's hook is made when an item of it first comes: a content item of one
    # kind then leaves the other kinds' decoding ungenerated.
    hooks: _ByClass[StructureHook] = _ByClass(tuple(tags), conv.get_structure_hook)
    expected = ", ".join(repr(tag) for tag in table)

    def by_tag(value: Any, _: Any) -> Any:
        if not isinstance(value, dict):
            raise _fail("object", value)
        tag = value.get(key)
        cls = table.get(tag) if isinstance(tag, str) else None
        if cls is None:
            if key not in value:
                _raise_at_field(union, key, str, KeyError(key))
            if fallback is None or not isinstance(tag, str):
                problem = _BadValue(f"expected one of {expected}, got {tag!r}")
                _raise_at_field(union, key, str, problem)
            cls = fallback
        return hooks[cls](value, cls)

    return by_tag


def _marker_hook(
    conv: cattrs.Converter, union: Any, members: tuple[type[Any], ...]
) -> StructureHook:
    required = [_required_keys(m) for m in members]
    markers = []
    for index, member in enumerate(members):
        others = frozenset().union(*(r for i, r in enumerate(required) if i != index))
        unique = sorted(required[index] - others)
        if not unique:
            raise StructureHandlerNotFoundError(
                f"cannot tell the members of {union} apart from the wire data", union
            )
        markers.append((unique[0], member, conv.get_structure_hook(member)))
    wanted = " or ".join(repr(marker) for marker, _, _ in markers)

    def by_marker(value: Any, _: Any) -> Any:
        if not isinstance(value, dict):
            raise _fail("object", value)
        for marker, cls, hook in markers:
            if marker in value:
                return hook(value, cls)
        raise _BadValue(f"expected an object with a {wanted} member")

    return by_marker


def _one_or_many(t: Any) -> tuple[Any, Any] | None:
    """``(X, list[X])`` for a union ``X | list[X]`` of classes (sampling content)."""
    if not _is_union(t):
        return None
    members = get_args(t)
    lists = [member for member in members if get_origin(member) is list]
    if len(lists) != 1:
        return None
    single = [member for member in members if member is not lists[0]]
    item = (get_args(lists[0]) or (None,))[0]
    if set(get_args(item) or (item,)) != set(single) or not all(map(attrs.has, single)):
        return None
    return Union[tuple(single)], lists[0]  # noqa: UP007 - a union built at run time


def _one_or_many_hook(conv: cattrs.Converter, union: Any) -> StructureHook:
    found = _one_or_many(union)
    assert found is not None
    one, many = conv.get_structure_hook(found[0]), conv.get_structure_hook(found[1])

    def structure(value: Any, _: Any) -> Any:
        return many(value, found[1]) if isinstance(value, list) else one(value, found[0])

    return structure


def _unstructure_union_hook(conv: cattrs.Converter, union: Any) -> UnstructureHook:
    hooks: dict[type[Any], UnstructureHook] = {}
    for member in get_args(union):
        if attrs.has(member):
            hooks[member] = conv.get_unstructure_hook(member)
        elif get_origin(member) in (list, dict):
            hooks[get_origin(member)] = conv.get_unstructure_hook(member)
    if not hooks:
        return _keep  # unions of JSON scalars are already wire values

    def unstructure_union(obj: Any) -> Any:
        hook = hooks.get(type(obj))
        return hook(obj) if hook is not None else conv.unstructure(obj)

    return unstructure_union


# --- The converters ------------------------------------------------------------------------


def make_converter(*, detailed_validation: bool = False) -> cattrs.Converter:
    """Build a converter for the MCP types, with strict, lossless primitive hooks.

    Without ``detailed_validation`` a failure is whatever exception stops the generated
    function first; with it, a cattrs validation error that holds every failure with its
    path (see :func:`from_wire`).
    """
    conv = cattrs.Converter(detailed_validation=detailed_validation)

    for primitive, hook in (
        (str, _structure_str),
        (int, _structure_int),
        (float, _structure_float),
        (bool, _structure_bool),
    ):
        conv.register_structure_hook(primitive, hook)
    conv.register_structure_hook_func(lambda t: t == str | int, _structure_str_or_int)
    conv.register_structure_hook_factory(_is_literal, _literal_hook)
    conv.register_structure_hook_factory(_is_list, lambda t: _list_hook(conv, t))
    conv.register_structure_hook_factory(_is_mapping, lambda t: _mapping_hook(conv, t))
    conv.register_structure_hook_factory(_is_class_union, lambda t: _union_hook(conv, t))
    conv.register_structure_hook_factory(
        lambda t: _one_or_many(t) is not None, lambda t: _one_or_many_hook(conv, t))
    conv.register_structure_hook_factory(
        attrs.has, lambda t: _structure_class_hook(conv, t))

    conv.register_unstructure_hook_factory(_is_mapping, lambda _: _keep)
    conv.register_unstructure_hook_factory(
        lambda t: _is_list(t) and _admits_text((get_args(t) or (Any,))[0]),
        lambda t: unstructure_with_text(conv.get_unstructure_hook(get_args(t)[0])))
    conv.register_unstructure_hook_factory(
        _is_union, lambda t: _unstructure_union_hook(conv, t)
    )
    conv.register_unstructure_hook_factory(
        attrs.has, lambda t: _unstructure_class_hook(conv, t)
    )
    return conv


converter = make_converter()
# Made, with its functions, only when a message first fails to decode.
_detailed = functools.cache(functools.partial(make_converter, detailed_validation=True))


@functools.cache
def _alias_names() -> dict[Any, str]:
    """The unions and literals of :mod:`mcp_sync.types` by their names there. Made for the
    first error message that needs one: it looks up every name, which builds the types
    not built yet (see ``types._LAZY``)."""
    names: dict[Any, str] = {}
    for name in [*vars(types), *types.__all__]:
        value = getattr(types, name)
        # RequestId and ProgressToken are one and the same union; the first name wins.
        if not name.startswith("_") and (_is_union(value) or _is_literal(value)):
            names.setdefault(value, name)
    return names


def _type_name(target: Any) -> str:
    """The name to show for ``target``: its alias in :mod:`mcp_sync.types` if it has one."""
    alias = _alias_names().get(target) if _is_union(target) or _is_literal(target) else None
    return alias or getattr(target, "__name__", None) or str(target)


def _describe(exc: BaseException, field_type: Any) -> str:
    if isinstance(exc, _BadValue):
        return str(exc)
    return format_exception(exc, field_type)


def _problems(exc: BaseException, path: str = "$") -> list[str]:
    """Every failure inside ``exc``, each as ``<what> @ <wire path>``."""
    if not isinstance(exc, (ClassValidationError, IterableValidationError)):
        return [f"{_describe(exc, None)} @ {path}"]
    found: list[str] = []
    with_notes, without = exc.group_exceptions()
    for sub, note in with_notes:
        if isinstance(note, AttributeValidationNote):
            where = f"{path}.{_wire_name(note.name)}"
        else:
            where = f"{path}[{note.index!r}]"
        if isinstance(sub, (ClassValidationError, IterableValidationError)):
            found.extend(_problems(sub, where))
        else:
            found.append(f"{_describe(sub, note.type)} @ {where}")
    for sub in without:
        found.extend(_problems(sub, path))
    return found


def prepare_decoding(cls: type[Any]) -> None:
    """Have cattrs generate the decoding of ``cls`` and of the classes its members hold
    now, rather than when the first message holding it arrives.

    For a caller with time to spare before a message it will surely decode: a client
    waiting for the server's ``initialize`` answer while the server starts.
    """
    converter.get_structure_hook(cls)


def to_wire(obj: Any) -> Any:
    """Turn a :mod:`mcp_sync.types` object (or a list of them) into JSON-ready data."""
    return converter.unstructure(obj)


def from_wire(data: Any, cls: type[T]) -> T:
    """Decode JSON data into ``cls``, raising :class:`InvalidParams` if it does not fit."""
    try:
        return converter.structure(data, cls)
    except StructureHandlerNotFoundError:
        raise
    except Exception:
        pass  # the detailed converter below finds and reports the problem
    try:
        return _detailed().structure(data, cls)
    except StructureHandlerNotFoundError:
        raise
    except Exception as exc:
        problems = _problems(exc)
        if len(problems) > _MAX_REPORTED:
            hidden = len(problems) - _MAX_REPORTED
            problems = [*problems[:_MAX_REPORTED], f"and {hidden} more"]
        raise InvalidParams(f"invalid {_type_name(cls)}: " + "; ".join(problems)) from exc
