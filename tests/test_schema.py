"""Tests for mcp_sync.server._schema: schemas from type hints, and argument binding."""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import functools
import sys
import textwrap
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, List, Literal, Optional, Union  # noqa: UP035

import attrs
import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_sync.errors import ErrorCode, InvalidParams
from mcp_sync.server import _schema, _signature
from mcp_sync.server._schema import schema_for_type
from mcp_sync.server._signature import FunctionSignature, inspect_function

if sys.version_info >= (3, 11):
    from typing import NotRequired, Required, TypedDict
else:
    from typing_extensions import NotRequired, Required, TypedDict


# ------------------------------------------------------------------ helpers and fixtures


class Ctx:
    """Stands in for the context object a server injects."""


class SubCtx(Ctx):
    pass


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass
class Point:
    x: float
    y: float = 0.0


@dataclasses.dataclass(frozen=True)
class FrozenPoint:
    x: int
    y: int


@dataclasses.dataclass
class Polygon:
    name: str
    points: list[Point] = dataclasses.field(default_factory=list)


@attrs.define
class Box:
    width: int
    _label: str = "box"
    tags: list[str] = attrs.Factory(list)
    cached: int = attrs.field(init=False, default=0)


@attrs.frozen
class Positive:
    value: int = attrs.field(validator=attrs.validators.gt(0))


@attrs.define
class Node:
    value: int
    child: Node | None = None


class Movie(TypedDict):
    title: str
    year: NotRequired[int]


class Patch(TypedDict, total=False):
    title: Required[str]
    rating: float


def check(schema: dict[str, Any], *samples: Any) -> None:
    """The schema is a valid 2020-12 schema, and every sample validates against it."""
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for sample in samples:
        validator.validate(sample)


def rejects(schema: dict[str, Any], sample: Any) -> bool:
    return not jsonschema.Draft202012Validator(schema).is_valid(sample)


def one(hint: Any) -> FunctionSignature:
    """A signature for ``def tool(x: hint)``."""

    def tool(x):  # type: ignore[no-untyped-def]
        pass

    tool.__annotations__ = {"x": hint}
    return inspect_function(tool)


def convert(hint: Any, value: Any) -> Any:
    return one(hint).bind({"x": value})["x"]


def error(hint: Any, value: Any) -> str:
    with pytest.raises(InvalidParams) as info:
        one(hint).bind({"x": value})
    return info.value.message


# ------------------------------------------------------------------ every supported hint

# (hint, schema, JSON sample, converted result)
CASES: list[tuple[Any, dict[str, Any], Any, Any]] = [
    (str, {"type": "string"}, "hi", "hi"),
    (int, {"type": "integer"}, 3, 3),
    (int, {"type": "integer"}, 3.0, 3),
    (float, {"type": "number"}, 2.5, 2.5),
    (float, {"type": "number"}, 2, 2.0),
    (bool, {"type": "boolean"}, False, False),
    (None, {"type": "null"}, None, None),
    (type(None), {"type": "null"}, None, None),
    (Any, {}, {"any": ["thing"]}, {"any": ["thing"]}),
    (Optional[int], {"anyOf": [{"type": "integer"}, {"type": "null"}]}, None, None),  # noqa: UP045
    (int | None, {"anyOf": [{"type": "integer"}, {"type": "null"}]}, 4, 4),
    (Union[int, str], {"anyOf": [{"type": "integer"}, {"type": "string"}]}, "a", "a"),  # noqa: UP007
    (Union[int, Annotated[Any, "Anything."]], {"description": "Anything."}, [1], [1]),  # noqa: UP007
    (Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}, "b", "b"),
    (Literal["a", 1, None], {"enum": ["a", 1, None]}, 1, 1),
    (Literal[1, 2.5], {"type": "number", "enum": [1, 2.5]}, 1.0, 1),
    (Literal[Color.RED], {"type": "string", "enum": ["red"]}, "red", Color.RED),
    (Color, {"type": "string", "enum": ["red", "green"]}, "green", Color.GREEN),
    (Level, {"type": "integer", "enum": [1, 2]}, 2, Level.HIGH),
    (list[int], {"type": "array", "items": {"type": "integer"}}, [1, 2], [1, 2]),
    (List[str], {"type": "array", "items": {"type": "string"}}, ["a"], ["a"]),  # noqa: UP006
    (Sequence[int], {"type": "array", "items": {"type": "integer"}}, [1], [1]),
    (list, {"type": "array"}, [1, "a"], [1, "a"]),
    (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}, [1, 2], (1, 2)),
    (tuple[int, str],
     {"type": "array", "minItems": 2, "maxItems": 2,
      "prefixItems": [{"type": "integer"}, {"type": "string"}]},
     [1, "a"], (1, "a")),
    (tuple[()], {"type": "array", "minItems": 0, "maxItems": 0}, [], ()),
    (set[int], {"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
     [3, 1], {1, 3}),
    (frozenset[str], {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
     ["a"], frozenset({"a"})),
    (dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}},
     {"a": 1}, {"a": 1}),
    (Mapping[str, float], {"type": "object", "additionalProperties": {"type": "number"}},
     {"a": 1}, {"a": 1.0}),
    (dict, {"type": "object"}, {"k": [1]}, {"k": [1]}),
    (dict[Literal["a", "b"], int],
     {"type": "object", "additionalProperties": {"type": "integer"},
      "propertyNames": {"type": "string", "enum": ["a", "b"]}},
     {"b": 2}, {"b": 2}),
    (Point,
     {"type": "object",
      "properties": {"x": {"type": "number"}, "y": {"type": "number", "default": 0.0}},
      "required": ["x"], "additionalProperties": False},
     {"x": 1}, Point(1.0, 0.0)),
    (Polygon, None, {"name": "tri", "points": [{"x": 1, "y": 2}]},
     Polygon("tri", [Point(1.0, 2.0)])),
    (Box,
     {"type": "object",
      "properties": {"width": {"type": "integer"},
                     "label": {"type": "string", "default": "box"},
                     "tags": {"type": "array", "items": {"type": "string"}}},
      "required": ["width"], "additionalProperties": False},
     {"width": 2, "label": "crate"}, Box(2, "crate")),
    (Movie,
     {"type": "object",
      "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
      "required": ["title"], "additionalProperties": False},
     {"title": "Alien"}, {"title": "Alien"}),
    (Patch,
     {"type": "object",
      "properties": {"title": {"type": "string"}, "rating": {"type": "number"}},
      "required": ["title"], "additionalProperties": False},
     {"title": "x", "rating": 4}, {"title": "x", "rating": 4.0}),
    (Annotated[int, "How many."], {"type": "integer", "description": "How many."}, 1, 1),
    (typing.NewType("UserId", int), {"type": "integer"}, 7, 7),
    (set[FrozenPoint], None, [{"x": 1, "y": 2}], {FrozenPoint(1, 2)}),
]


@pytest.mark.parametrize(("hint", "schema", "sample", "result"), CASES,
                         ids=[repr(case[0]) for case in CASES])
def test_every_supported_hint(hint: Any, schema: Any, sample: Any, result: Any) -> None:
    generated = schema_for_type(hint)
    if schema is not None:
        assert generated == schema
    check(generated, sample)
    converted = convert(hint, sample)
    assert converted == result
    assert type(converted) is type(result)
    check(one(hint).input_schema, {"x": sample})


# (hint, bad JSON value, the message after "argument 'x': ")
BAD: list[tuple[Any, Any, str]] = [
    (str, 1, "expected string, got integer 1"),
    (int, "x", "expected integer, got string 'x'"),
    (int, True, "expected integer, got boolean true"),
    (int, 2.5, "expected integer, got number 2.5"),
    (float, "1", "expected number, got string '1'"),
    (float, False, "expected number, got boolean false"),
    (bool, 0, "expected boolean, got integer 0"),
    (None, 0, "expected null, got integer 0"),
    (int | None, "x", "expected integer or null, got string 'x'"),
    (int | str, [], "expected integer or string, got array"),
    (Literal["a", "b"], "c", "expected one of 'a', 'b', got string 'c'"),
    (Literal[1], True, "expected one of 1, got boolean true"),
    (Literal[True], 1, "expected one of true, got integer 1"),
    (Color, "blue", "expected one of 'red', 'green', got string 'blue'"),
    (Level, 3, "expected one of 1, 2, got integer 3"),
    (list[int], {"a": 1}, "expected array, got object"),
    (tuple[int, str], [1], "expected array of 2 items, got 1"),
    (tuple[int, str], "ab", "expected array of 2 items, got string 'ab'"),
    (set[int], [1, 1], "expected unique items, got duplicates"),
    (dict[str, int], [], "expected object, got array"),
    (dict[Literal["a"], int], {"b": 1}, "key 'b' is not one of 'a'"),
    (Point, "p", "expected object, got string 'p'"),
    (Point, {}, "missing required property 'x'"),
    (Point, {"x": 1, "z": 2}, "unexpected property 'z'"),
    (Movie, {"title": "x", "rated": 1}, "unexpected property 'rated'"),
    (str, None, "expected string, got null"),
]


@pytest.mark.parametrize(("hint", "value", "message"), BAD,
                         ids=[f"{case[0]!r}-{case[1]!r}" for case in BAD])
def test_every_error_kind(hint: Any, value: Any, message: str) -> None:
    assert error(hint, value) == f"argument 'x': {message}"
    # What bind refuses, the published schema refuses too.
    assert rejects(schema_for_type(hint), value)


def test_long_strings_are_shortened_in_messages() -> None:
    message = error(int, "y" * 100)
    assert message == f"argument 'x': expected integer, got string '{'y' * 36}..."


def test_paths_of_nested_values() -> None:
    """Each problem names where it is, and all of them are reported at once."""

    def tool(polygon: Polygon, scores: dict[str, list[int]]) -> None:
        pass

    with pytest.raises(InvalidParams) as info:
        inspect_function(tool).bind({
            "polygon": {"name": 1, "points": [{"x": 0}, {"x": 1}, {"x": "q"}, 5]},
            "scores": {"ok": [1], "bad key": [1, "2"], "b": 3},
        })
    assert info.value.message.split("; ") == [
        "argument 'polygon.name': expected string, got integer 1",
        "argument 'polygon.points[2].x': expected number, got string 'q'",
        "argument 'polygon.points[3]': expected object, got integer 5",
        "argument 'scores['bad key'][1]': expected integer, got string '2'",
        "argument 'scores.b': expected array, got integer 3",
    ]


def test_union_reports_the_alternative_that_takes_the_value() -> None:
    assert error(Point | None, {"x": "q"}) == (
        "argument 'x.x': expected number, got string 'q'")
    assert error(int | list[int], ["a"]) == (
        "argument 'x[0]': expected integer, got string 'a'")
    assert error(Point | Movie, {}) == (
        "argument 'x': expected object or object, got object")


def test_union_tries_alternatives_in_order() -> None:
    assert convert(int | float, 2.0) == 2
    assert type(convert(float | int, 2)) is float
    assert convert(int | str, "3") == "3"


def test_class_validators_become_invalid_params() -> None:
    assert convert(Positive, {"value": 2}) == Positive(2)
    message = error(Positive, {"value": 0})
    assert message.startswith("argument 'x': ")
    assert "value" in message


def test_typed_dict_stays_a_dict_and_optional_keys_may_be_absent() -> None:
    value = convert(Movie, {"title": "Alien", "year": 1979})
    assert value == {"title": "Alien", "year": 1979}
    assert type(value) is dict
    assert error(Patch, {"rating": 1}) == "argument 'x': missing required property 'title'"


def test_attrs_private_attribute_uses_its_init_name() -> None:
    box = convert(Box, {"width": 1, "label": "l", "tags": ["t"]})
    assert (box.width, box._label, box.tags, box.cached) == (1, "l", ["t"], 0)
    assert error(Box, {"width": 1, "_label": "l"}) == "argument 'x': unexpected property '_label'"


def test_float_too_large_for_a_float() -> None:
    assert error(float, 10**400) == "argument 'x': number is too large"


def test_non_json_python_values_are_described() -> None:
    assert error(int, object()) == (
        "argument 'x': expected integer, got Python object of type object")
    assert convert(list[int], (1, 2)) == [1, 2]


# ------------------------------------------------------------------ functions


def test_tool_without_parameters_publishes_an_object_schema() -> None:
    """TOOLS-3, V1125-4: inputSchema is an object schema even with nothing in it, in the
    form 2025-11-25 prefers (valid draft-07 too)."""

    def ping() -> str:
        return "pong"

    signature = inspect_function(ping)
    assert signature.input_schema == {"type": "object", "additionalProperties": False}
    check(signature.input_schema, {})
    assert signature.bind(None) == {}
    assert signature.bind({}) == {}
    assert signature.description is None
    assert signature.context_parameter is None


def test_required_parameters_and_defaults() -> None:
    """TOOLS-3: properties and required come from the signature."""

    def tool(a: int, b: str = "x", *, c: Color = Color.RED, d: list[int] | None = None,
             e: tuple[int, int] = (1, 2), f: frozenset[str] = frozenset({"b", "a"}),
             g: object = None, h: float = float("nan"), i: Point | None = None) -> None:
        pass

    tool.__annotations__["g"] = Any  # object itself is not supported; Any with a bad default
    tool.__defaults__ = None
    tool.__kwdefaults__ = {"c": Color.RED, "d": None, "e": (1, 2), "f": frozenset({"b", "a"}),
                           "g": object(), "h": float("nan"), "i": Point(1.0)}
    schema = inspect_function(tool).input_schema
    assert schema["required"] == ["a", "b"]
    properties = schema["properties"]
    assert properties["c"]["default"] == "red"
    assert properties["d"]["default"] is None
    assert properties["e"]["default"] == [1, 2]
    assert properties["f"]["default"] == ["a", "b"]
    for name in "ghi":  # defaults without a faithful JSON form are left out
        assert "default" not in properties[name]
    assert "additionalProperties" not in schema
    check(schema, {"a": 1, "b": "y"}, {"a": 1, "b": "", "c": "green", "d": [1]})


def test_none_default_makes_a_parameter_nullable() -> None:
    def tool(a: int = None,  # type: ignore[assignment]  # noqa: RUF013
             b: Any = None, c: str | None = None) -> None:
        pass

    signature = inspect_function(tool)
    properties = signature.input_schema["properties"]
    assert properties["a"] == {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}
    assert properties["b"] == {"default": None}
    assert properties["c"] == {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}
    assert signature.bind({"a": None, "b": None}) == {"a": None, "b": None}


def test_missing_arguments_keep_the_function_default() -> None:
    def tool(a: int, b: str = "x") -> None:
        pass

    assert inspect_function(tool).bind({"a": 1}) == {"a": 1}


def test_all_problems_in_one_error() -> None:
    """TOOLS-11, TOOLS-7: arguments are checked before the handler runs; one -32602 error."""
    calls: list[Any] = []

    def add(a: int, b: int) -> int:
        calls.append((a, b))
        return a + b

    signature = inspect_function(add)
    with pytest.raises(InvalidParams) as info:
        add(**signature.bind({"a": "x", "c": 1}))
    assert info.value.message == (
        "argument 'a': expected integer, got string 'x'; missing required argument 'b'; "
        "unexpected argument 'c'")
    assert info.value.code == ErrorCode.INVALID_PARAMS
    assert calls == []
    assert add(**signature.bind({"a": 1, "b": 2.0})) == 3


@pytest.mark.parametrize("arguments", [[1, 2], "ab", 3])
def test_arguments_must_be_an_object(arguments: Any) -> None:
    def tool(a: int = 0) -> None:
        pass

    with pytest.raises(InvalidParams, match="arguments must be an object"):
        inspect_function(tool).bind(arguments)


def test_unannotated_parameter_accepts_anything() -> None:
    def tool(a, b: int):  # type: ignore[no-untyped-def]
        pass

    signature = inspect_function(tool)
    assert signature.input_schema["properties"]["a"] == {}
    assert signature.bind({"a": [1, {"x": None}], "b": 1}) == {"a": [1, {"x": None}], "b": 1}


# ------------------------------------------------------------------ descriptions


def test_google_docstring() -> None:
    def tool(a: int, b: str, c: bool, d: int = 0) -> None:
        """Add things up.

        The body explains
        more.

        Args:
            a: The first
                number.
            b (str): The second.
            c:
                On its own line.

        Returns:
            The sum.
        """

    signature = inspect_function(tool)
    assert signature.description == (
        "Add things up.\n\nThe body explains\nmore.\n\nReturns:\n    The sum.")
    properties = signature.input_schema["properties"]
    assert properties["a"]["description"] == "The first number."
    assert properties["b"]["description"] == "The second."
    assert properties["c"]["description"] == "On its own line."
    assert "description" not in properties["d"]


@pytest.mark.parametrize("header", ["Args", "Arguments", "Parameters"])
def test_google_section_headers(header: str) -> None:
    def tool(a: int) -> None:
        pass

    tool.__doc__ = f"Summary.\n\n{header}:\n    a: Alpha.\n"
    signature = inspect_function(tool)
    assert signature.description == "Summary."
    assert signature.input_schema["properties"]["a"]["description"] == "Alpha."


def test_rest_docstring() -> None:
    def tool(a: int, b: str) -> None:
        """Do a thing.

        :param a: The first,
            continued.
        :type a: int
        :param str b: The second.
        :returns: nothing.
        """

    signature = inspect_function(tool)
    assert signature.description == "Do a thing.\n\n:returns: nothing."
    properties = signature.input_schema["properties"]
    assert properties["a"]["description"] == "The first, continued."
    assert properties["b"]["description"] == "The second."


def test_docstring_with_only_parameters() -> None:
    def tool(a: int, b: int) -> None:
        """
        Args:
            a:
            b: Bee.
        """

    signature = inspect_function(tool)
    assert signature.description is None
    assert signature.input_schema["properties"] == {
        "a": {"type": "integer"}, "b": {"type": "integer", "description": "Bee."}}


def test_annotated_description_wins_over_docstring() -> None:
    def tool(a: Annotated[int, "From the hint."], b: Annotated[list[str], "Tags."] = ()) -> None:  # type: ignore[assignment]
        """Summary.

        Args:
            a: From the docstring.
        """

    properties = inspect_function(tool).input_schema["properties"]
    assert properties["a"] == {"type": "integer", "description": "From the hint."}
    assert properties["b"]["description"] == "Tags."
    assert properties["b"]["default"] == []


def test_annotated_inside_containers_and_fields() -> None:
    @dataclasses.dataclass
    class Item:
        sku: Annotated[str, "Stock keeping unit."]

    schema = schema_for_type(list[Annotated[Item, "One line."]])
    assert schema["items"]["description"] == "One line."
    assert schema["items"]["properties"]["sku"]["description"] == "Stock keeping unit."
    assert convert(Annotated[Item, "x"], {"sku": "a"}) == Item("a")


# ------------------------------------------------------------------ context parameter


def test_context_parameter_is_found_by_type() -> None:
    def tool(query: str, ctx: Ctx) -> None:
        pass

    def other(c: Optional[SubCtx], n: Annotated[int, "N"] = 1) -> None:  # noqa: UP045
        pass

    def third(n: int, c: Annotated[Ctx | None, "hidden"] = None) -> None:
        pass

    def named_ctx_but_not_context(ctx: int) -> None:
        pass

    signature = inspect_function(tool, skip_types=(Ctx,))
    assert signature.context_parameter == "ctx"
    assert signature.input_schema == {"type": "object", "properties": {"query": {"type": "string"}},
                                      "required": ["query"]}
    assert signature.bind({"query": "q"}) == {"query": "q"}
    with pytest.raises(InvalidParams, match="unexpected argument 'ctx'"):
        signature.bind({"query": "q", "ctx": {}})
    assert inspect_function(other, skip_types=(Ctx,)).context_parameter == "c"
    assert inspect_function(third, skip_types=(Ctx,)).input_schema["required"] == ["n"]
    assert inspect_function(named_ctx_but_not_context, skip_types=(Ctx,)).context_parameter is None


def test_two_context_parameters_are_refused() -> None:
    def tool(a: Ctx, b: SubCtx) -> None:
        pass

    with pytest.raises(TypeError, match="only one context parameter"):
        inspect_function(tool, skip_types=(Ctx,))


def test_context_type_without_skip_types_is_unsupported() -> None:
    def tool(ctx: Ctx) -> None:
        pass

    with pytest.raises(TypeError, match="tool: parameter 'ctx': unsupported type hint Ctx"):
        inspect_function(tool)


# ------------------------------------------------------------------ refused at inspect time


class Random:
    pass


def _with_hint(hint: Any) -> Callable[..., Any]:
    def tool(x):  # type: ignore[no-untyped-def]
        pass

    tool.__annotations__ = {"x": hint}
    return tool


@pytest.mark.parametrize(("hint", "message"), [
    (Random, "unsupported type hint Random"),
    (list[Random], "unsupported type hint Random"),
    (dict[int, str], "mapping keys must be strings, not int"),
    (set[list[int]], "set items of type list[int] are not hashable"),
    (set[Point], "set items of type Point are not hashable"),
    (Literal[b"x"], "enumeration value b'x' is not a JSON scalar"),
    (Node, "field 'child' of Node: recursive type Node is not supported"),
    (Polygon | Random, "unsupported type hint Random"),
    (typing.Callable[[], int], "unsupported type hint"),
    (bytes, "unsupported type hint bytes"),
    (typing.TypeVar("T"), "unsupported type hint ~T"),
    ([int], "unsupported type hint [<class 'int'>]"),
    (collections.abc.Iterable[int], "unsupported type hint collections.abc.Iterable[int]"),
])
def test_unsupported_hints(hint: Any, message: str) -> None:
    with pytest.raises(TypeError, match=r"^_with_hint.<locals>.tool: parameter 'x': ") as info:
        inspect_function(_with_hint(hint))
    assert message in str(info.value)
    with pytest.raises(TypeError):
        schema_for_type(hint)


def test_nested_field_errors_name_the_field() -> None:
    @dataclasses.dataclass
    class Holder:
        thing: Random

    with pytest.raises(TypeError, match=r"field 'thing' of .*Holder: unsupported type hint"):
        schema_for_type(Holder)


def test_variadic_and_positional_only_parameters_are_refused() -> None:
    def star(*args: int) -> None:
        pass

    def double_star(**kwargs: int) -> None:
        pass

    def positional(a: int, /) -> None:
        pass

    with pytest.raises(TypeError, match=r"star: parameter 'args': \*args and \*\*kwargs"):
        inspect_function(star)
    with pytest.raises(TypeError, match="double_star: parameter 'kwargs'"):
        inspect_function(double_star)
    with pytest.raises(TypeError, match="positional: parameter 'a': positional-only"):
        inspect_function(positional)


def test_unresolvable_hint_is_a_type_error() -> None:
    def tool(a: int) -> None:
        pass

    tool.__annotations__ = {"a": "DoesNotExist"}
    with pytest.raises(TypeError, match=r"cannot resolve the type hints of .*tool"):
        inspect_function(tool)


# ------------------------------------------------------------------ postponed annotations

FUTURE_SOURCE = '''
from __future__ import annotations

import dataclasses
from typing import Annotated, Literal, Optional


class Ctx:
    pass


@dataclasses.dataclass
class Where:
    city: str
    units: Literal["metric", "imperial"] = "metric"


def weather(where: Where, days: Annotated[int, "How many days."] = 1,
            note: Optional[str] = None, ctx: Ctx | None = None) -> str:
    """Forecast the weather.

    Args:
        where: The place.
    """
    return where.city
'''


def test_postponed_annotations() -> None:
    module = types.ModuleType("mcp_sync_test_future")
    sys.modules[module.__name__] = module
    try:
        exec(compile(textwrap.dedent(FUTURE_SOURCE), "<future>", "exec"), module.__dict__)
        signature = inspect_function(module.weather, skip_types=(module.Ctx,))
    finally:
        del sys.modules[module.__name__]
    assert signature.context_parameter == "ctx"
    assert signature.description == "Forecast the weather."
    schema = signature.input_schema
    assert schema["required"] == ["where"]
    assert schema["properties"]["where"]["description"] == "The place."
    assert schema["properties"]["where"]["properties"]["units"] == {
        "type": "string", "enum": ["metric", "imperial"], "default": "metric"}
    assert schema["properties"]["days"] == {"type": "integer", "description": "How many days.",
                                            "default": 1}
    check(schema, {"where": {"city": "Oslo"}, "days": 3, "note": None})
    bound = signature.bind({"where": {"city": "Oslo"}, "days": 3.0})
    assert bound == {"where": module.Where("Oslo"), "days": 3}
    assert module.weather(**bound) == "Oslo"


def test_this_module_uses_postponed_annotations_too() -> None:
    def tool(p: Point, when: Level | None = None) -> None:
        pass

    assert isinstance(tool.__annotations__["p"], str)
    assert inspect_function(tool).bind({"p": {"x": 1}, "when": 1}) == {
        "p": Point(1.0), "when": Level.LOW}


# ------------------------------------------------------------------ kinds of callables


def test_methods_callable_objects_and_partials() -> None:
    class Service:
        def lookup(self, key: str, limit: int = 5) -> None:
            pass

        def __call__(self, key: str) -> None:
            pass

    def base(a: int, b: str) -> None:
        pass

    @functools.wraps(base)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        pass

    assert inspect_function(Service().lookup).input_schema["required"] == ["key"]
    assert inspect_function(Service()).bind({"key": "k"}) == {"key": "k"}
    assert inspect_function(functools.partial(base, b="x")).bind({"a": 1}) == {"a": 1}
    assert inspect_function(wrapper).input_schema["required"] == ["a", "b"]


# ------------------------------------------------------------------ compiled once


def test_bind_does_no_introspection(monkeypatch: pytest.MonkeyPatch) -> None:
    def tool(a: list[Point], b: Color | None = None) -> None:
        pass

    signature = inspect_function(tool)

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("introspection during bind")

    monkeypatch.setattr(_signature, "get_type_hints", forbidden)
    monkeypatch.setattr(_signature.inspect, "signature", forbidden)
    monkeypatch.setattr(_signature, "get_origin", forbidden)
    monkeypatch.setattr(_signature, "_build", forbidden)
    monkeypatch.setattr(_schema, "get_origin", forbidden)
    monkeypatch.setattr(_schema, "_build", forbidden)
    assert signature.bind({"a": [{"x": 1}], "b": "red"}) == {"a": [Point(1.0)], "b": Color.RED}


def test_published_schemas_are_private_copies() -> None:
    def tool(a: str) -> None:
        pass

    inspect_function(tool).input_schema["properties"]["a"]["type"] = "broken"
    schema_for_type(list[str])["items"]["type"] = "broken"
    assert schema_for_type(str) == {"type": "string"}
    assert inspect_function(tool).input_schema["properties"]["a"] == {"type": "string"}


def test_abstract_collection_hints() -> None:
    assert convert(collections.abc.MutableSequence[int], [1]) == [1]
    assert convert(collections.abc.Set[int], [1]) == frozenset({1})
    assert type(convert(collections.abc.MutableSet[int], [1])) is set
    assert convert(collections.abc.MutableMapping[str, int], {"a": 1}) == {"a": 1}
    assert convert(tuple, [1, "a"]) == (1, "a")
    assert convert(typing.Tuple, []) == ()  # noqa: UP006


# ------------------------------------------------------------------ bind agrees with the schema

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=3),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.sampled_from(["x", "y", "a"]), children, max_size=3),
    max_leaves=8,
)

_AGREEMENT_HINTS: list[Any] = [
    int, float, str, bool, None, int | None, int | str, list[int], set[int], tuple[int, str],
    tuple[float, ...], dict[str, bool], Literal["a", 1, True, None], Color, Point, Movie,
    list[Point] | None, dict[Literal["a", "x"], float], frozenset[tuple[int, int]], Any,

]


@pytest.mark.parametrize("hint", _AGREEMENT_HINTS, ids=repr)
@given(value=_JSON)
def test_bind_accepts_exactly_what_the_schema_accepts(hint: Any, value: Any) -> None:
    schema = schema_for_type(hint)
    accepted_by_schema = jsonschema.Draft202012Validator(schema).is_valid(value)
    try:
        convert(hint, value)
    except InvalidParams:
        accepted = False
    else:
        accepted = True
    assert accepted == accepted_by_schema
