"""What a server registers: tools, resources, resource templates, prompts, completers.

Each ``make_*`` function inspects a user function once, at registration, and returns a
frozen record holding the protocol object to list (a :class:`~mcp_sync.types.Tool`, a
:class:`~mcp_sync.types.Resource`, ...), the function and its compiled signature. Mistakes
in the function (a hint with no schema, a template variable the function does not take)
are raised then, not when a client first calls it.

Values that arrive as strings (URI template variables, prompt arguments) are converted
to the parameter's type first: ``"42"`` for an ``int`` parameter becomes ``42``, then the
usual validation of :meth:`~mcp_sync.server._schema.FunctionSignature.bind` applies.
"""

from __future__ import annotations

import inspect
import json
import math
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, TypeAlias

from .. import types
from ..errors import InvalidParams
from ..protocol._convert import from_wire
from ..protocol._make_icons import IconsSpec, make_icons
from ..protocol._record import Record
from ._content import guess_mime_type
from ._context import Context
from ._input_schema import schema_signature
from ._signature import FunctionSignature, inspect_function, return_hint
from ._structured import OutputSchema, output_schema_for
from ._uri_template import UriTemplate

__all__ = [
    "CompleteSpec",
    "Completions",
    "RegisteredPrompt",
    "RegisteredResource",
    "RegisteredTemplate",
    "RegisteredTool",
    "check_decorator_argument",
    "guess_mime_type",
    "make_prompt",
    "make_resource",
    "make_template",
    "make_tool",
]

#: ``{argument: fn(value) -> suggestions | list of choices}`` or ``fn(argument, value)``;
#: a function that takes one more argument also gets the other arguments already chosen
#: (``context.arguments``, V0618-27).
CompleteSpec: TypeAlias = (
    "Mapping[str, Callable[..., Iterable[str]] | Iterable[str]]"
    " | Callable[..., Iterable[str]]"
)
AnnotationsSpec: TypeAlias = "types.Annotations | Mapping[str, Any] | None"

_INTEGER = re.compile(r"[+-]?\d+")


def _refuse_coroutine(fn: Callable[..., Any], kind: str) -> None:
    if inspect.iscoroutinefunction(fn):
        name = getattr(fn, "__name__", repr(fn))
        raise TypeError(f"{kind} {name!r} is a coroutine function; mcp_sync calls it on a "
                        "worker thread, so define it with a plain 'def'")


def check_decorator_argument(kind: str, value: object) -> None:
    """Refuse, at decoration time, a decorator argument that is not what ``kind`` takes.

    ``@server.resource`` needs a URI; a tool's or prompt's name must be a string. The
    message says how to write the decorator.
    """
    if kind == "resource":
        if isinstance(value, str):
            return
        what = (f"above {_default_name(value)}()" if callable(value)
                else f"given {value!r}")
        raise TypeError(f"@server.resource {what}: a resource needs its URI; write "
                        '@server.resource("scheme://path"), or with a URI template '
                        '@server.resource("users://{user_id}/profile")')
    if value is not None and not isinstance(value, str):
        raise TypeError(f"the {kind}'s name must be a string, not {type(value).__name__}; "
                        f'write @server.{kind}, @server.{kind}() or @server.{kind}("name")')


def _default_name(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__name__", None) or type(fn).__name__


def _meta(value: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return None if value is None else dict(value)


def _annotations(value: AnnotationsSpec) -> types.Annotations | None:
    if isinstance(value, Mapping):
        value = from_wire(dict(value), types.Annotations)
    if value is not None and value.priority is not None and not 0 <= value.priority <= 1:
        raise ValueError(f"annotation priority must be between 0 and 1, not {value.priority}")
    return value


# --- completion ---------------------------------------------------------------------------


def _choices(values: Iterable[str], owner: str) -> Callable[[str], Iterable[str]]:
    options = list(values)
    if not all(isinstance(option, str) for option in options):
        raise TypeError(f"{owner}: completion choices must be strings")

    def complete(prefix: str) -> list[str]:
        lowered = prefix.lower()
        return [option for option in options if option.lower().startswith(lowered)]

    return complete


def _takes(fn: Callable[..., Any], count: int) -> bool:
    """True if ``fn`` can be called with ``count`` positional arguments."""
    try:
        inspect.signature(fn).bind(*range(count))
    except (TypeError, ValueError):
        return False
    return True


class Completions:
    """The completers of one prompt or resource template, by argument name.

    Args:
        spec: what the user passed as ``complete=`` (see :data:`CompleteSpec`).
        arguments: the names that can be completed (prompt arguments, template variables).
        owner: names the prompt or template in error messages.

    Raises:
        TypeError: ``spec`` has the wrong shape.
        ValueError: ``spec`` names an argument that does not exist.
    """

    def __init__(self, spec: CompleteSpec | None, arguments: Collection[str],
                 owner: str) -> None:
        self.arguments = frozenset(arguments)
        self._owner = owner
        self._each: Callable[..., Iterable[str]] | None = None
        self._each_context = False
        self._by_argument: dict[str, Callable[..., Iterable[str]]] = {}
        self._with_context: set[str] = set()
        if spec is None:
            return
        if isinstance(spec, Mapping):
            unknown = sorted(set(spec) - self.arguments)
            if unknown:
                raise ValueError(f"{owner}: cannot complete {unknown}; its arguments are "
                                 f"{sorted(self.arguments)}")
            for argument, completer in spec.items():
                if isinstance(completer, str):
                    raise TypeError(f"{owner}: the completer of {argument!r} is a string; "
                                    "give a list of choices or a function")
                if callable(completer) and _takes(completer, 2):
                    self._with_context.add(argument)
                self._by_argument[argument] = (
                    completer if callable(completer) else _choices(completer, owner))
        elif callable(spec):
            self._each = spec
            self._each_context = _takes(spec, 3)
        else:
            raise TypeError(f"{owner}: complete= takes a mapping or a function, "
                            f"not {type(spec).__name__}")

    @property
    def defined(self) -> bool:
        """True if any argument has a completer."""
        return self._each is not None or bool(self._by_argument)

    def complete(self, argument: str, value: str,
                 context: Mapping[str, str] | None = None) -> Iterable[str]:
        """The suggestions for ``argument`` given what was typed so far, and the other
        arguments already chosen (``context``) for completers that take them.

        Raises:
            InvalidParams: the prompt or template has no such argument (COMPLETION-5).
        """
        if argument not in self.arguments:
            raise InvalidParams(f"{self._owner} has no argument {argument!r}",
                                {"argument": argument})
        chosen = dict(context or {})
        if self._each is not None:
            if self._each_context:
                return self._each(argument, value, chosen)
            return self._each(argument, value)
        completer = self._by_argument.get(argument)
        if completer is None:
            return ()
        if argument in self._with_context:
            return completer(value, chosen)
        return completer(value)


# --- records -------------------------------------------------------------------------------


class RegisteredTool(Record):
    __slots__ = ("embeds_warned", "fn", "output", "scopes", "signature", "tool")

    def __init__(self, tool: types.Tool, fn: Callable[..., Any],
                 signature: FunctionSignature, output: OutputSchema | None = None) -> None:
        self.tool = tool
        self.fn = fn
        self.signature = signature
        self.output = output
        #: Set once the tool was warned about embedding resources without the capability.
        self.embeds_warned = False
        #: The OAuth scopes a call needs, over HTTP with authorization (V1125-24).
        self.scopes: frozenset[str] = frozenset()


class RegisteredResource(Record):
    __slots__ = ("fn", "resource", "signature")

    def __init__(self, resource: types.Resource, fn: Callable[..., Any],
                 signature: FunctionSignature) -> None:
        self.resource = resource
        self.fn = fn
        self.signature = signature


class RegisteredTemplate(Record):
    __slots__ = ("completions", "fn", "matcher", "signature", "template")

    def __init__(self, template: types.ResourceTemplate, matcher: UriTemplate,
                 fn: Callable[..., Any], signature: FunctionSignature,
                 completions: Completions) -> None:
        self.template = template
        self.matcher = matcher
        self.fn = fn
        self.signature = signature
        self.completions = completions

    def bind(self, uri: str) -> dict[str, Any] | None:
        """Keyword arguments for reading ``uri``, or None if this template does not fit.

        A variable that cannot be converted to its parameter's type (``abc`` for an
        ``int``) means no fit, so the next template gets its chance.
        """
        values = self.matcher.match(uri)
        if values is None:
            return None
        try:
            return self.signature.bind(coerce_strings(self.signature, values))
        except InvalidParams:
            return None


class RegisteredPrompt(Record):
    __slots__ = ("completions", "fn", "prompt", "signature")

    def __init__(self, prompt: types.Prompt, fn: Callable[..., Any],
                 signature: FunctionSignature, completions: Completions) -> None:
        self.prompt = prompt
        self.fn = fn
        self.signature = signature
        self.completions = completions

    def bind(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Keyword arguments from the client's string arguments.

        Raises:
            InvalidParams: a value is not a string (PROMPTS-3), a required argument is
                missing or an unknown one was given (PROMPTS-6), or a value does not
                convert to its parameter's type.
        """
        arguments = dict(arguments or {})
        wrong = sorted(name for name, value in arguments.items() if not isinstance(value, str))
        if wrong:
            raise InvalidParams(f"Invalid params: prompt arguments are strings; {wrong} "
                                "are not", {"arguments": wrong})
        return self.signature.bind(coerce_strings(self.signature, arguments))


# --- string arguments ----------------------------------------------------------------------


def _json_types(schema: Mapping[str, Any]) -> set[str]:
    if not schema:
        return {"any"}
    kinds: set[str] = set()
    declared = schema.get("type")
    if isinstance(declared, str):
        kinds.add(declared)
    elif isinstance(declared, list):
        kinds.update(kind for kind in declared if isinstance(kind, str))
    for option in schema.get("enum", ()):
        kinds.add("string" if isinstance(option, str) else "other")
    for alternative in schema.get("anyOf", ()):
        kinds |= _json_types(alternative)
    return kinds or {"any"}


def _from_string(text: str, kinds: set[str]) -> Any:
    if kinds & {"string", "any"}:
        return text
    if "integer" in kinds and _INTEGER.fullmatch(text.strip()):
        return int(text)
    if kinds & {"number", "integer"}:
        try:
            number = float(text)
        except ValueError:
            pass
        else:
            if math.isfinite(number):
                return number
    if "boolean" in kinds and text.strip().lower() in ("true", "false"):
        return text.strip().lower() == "true"
    if kinds & {"array", "object"}:
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text  # bind() reports it with the parameter's expected type


def coerce_strings(signature: FunctionSignature, values: Mapping[str, str]) -> dict[str, Any]:
    """String values converted towards the types of the function's parameters.

    An empty string for an optional parameter that does not take strings counts as
    left out: chat clients send blank fields that way.
    """
    properties: Mapping[str, Any] = signature.input_schema.get("properties", {})
    required = set(signature.input_schema.get("required", ()))
    result: dict[str, Any] = {}
    for name, text in values.items():
        schema = properties.get(name)
        if schema is None or not isinstance(text, str):
            result[name] = text  # unknown or not a string: bind() reports it
            continue
        kinds = _json_types(schema)
        if text == "" and name not in required and not kinds & {"string", "any"}:
            continue
        result[name] = _from_string(text, kinds)
    return result


# --- builders ------------------------------------------------------------------------------


def make_tool(fn: Callable[..., Any], *, name: str | None, description: str | None,
              annotations: types.ToolAnnotations | Mapping[str, Any] | None,
              title: str | None = None,
              output_schema: Mapping[str, Any] | bool | None = None,
              meta: Mapping[str, Any] | None = None,
              icons: IconsSpec = None,
              input_schema: Mapping[str, Any] | None = None) -> RegisteredTool:
    """Inspect a tool function; see :meth:`mcp_sync.Server.add_tool`."""
    _refuse_coroutine(fn, "tool")
    tool_name = name or _default_name(fn)
    if input_schema is None:
        signature = inspect_function(fn, skip_types=(Context,))
    else:
        signature = schema_signature(fn, input_schema, f"tool {tool_name!r}", (Context,))
    if isinstance(annotations, Mapping):
        annotations = from_wire(dict(annotations), types.ToolAnnotations)
    output = output_schema_for(return_hint(fn), output_schema, f"tool {tool_name!r}")
    tool = types.Tool(
        name=tool_name,
        title=title,
        description=description if description is not None else signature.description,
        input_schema=signature.input_schema,
        output_schema=None if output is None else output.schema,
        annotations=annotations,
        icons=make_icons(icons, f"tool {tool_name!r}"),
        meta=_meta(meta),
    )
    return RegisteredTool(tool, fn, signature, output)


def make_resource(fn: Callable[..., Any], uri: str, *, name: str | None,
                  description: str | None, mime_type: str | None,
                  annotations: AnnotationsSpec, title: str | None = None,
                  icons: IconsSpec = None,
                  meta: Mapping[str, Any] | None = None) -> RegisteredResource:
    """Inspect the function of a resource with a fixed URI."""
    _refuse_coroutine(fn, "resource")
    if not uri:
        raise ValueError("a resource needs a URI")
    signature = inspect_function(fn, skip_types=(Context,))
    required = signature.input_schema.get("required", [])
    if required:
        raise TypeError(f"resource {uri!r}: the function requires {required}, but a fixed "
                        "URI has nothing to pass; use a URI template such as "
                        f"'{uri}/{{{required[0]}}}'")
    resource = types.Resource(
        uri=uri,
        name=name or _default_name(fn),
        description=description if description is not None else signature.description,
        mime_type=mime_type or guess_mime_type(uri),
        annotations=_annotations(annotations),
        title=title,
        icons=make_icons(icons, f"resource {uri!r}"),
        meta=_meta(meta),
    )
    return RegisteredResource(resource, fn, signature)


def make_template(fn: Callable[..., Any], uri_template: str, *, name: str | None,
                  description: str | None, mime_type: str | None,
                  annotations: AnnotationsSpec,
                  complete: CompleteSpec | None, title: str | None = None,
                  icons: IconsSpec = None,
                  meta: Mapping[str, Any] | None = None) -> RegisteredTemplate:
    """Inspect the function of a resource template; its variables are its parameters."""
    _refuse_coroutine(fn, "resource template")
    matcher = UriTemplate(uri_template)
    signature = inspect_function(fn, skip_types=(Context,))
    parameters = set(signature.input_schema.get("properties", {}))
    missing = [variable for variable in matcher.variables if variable not in parameters]
    if missing:
        raise TypeError(f"resource template {uri_template!r}: the function has no parameter "
                        f"for {missing}")
    unfilled = [parameter for parameter in signature.input_schema.get("required", [])
                if parameter not in matcher.variables]
    if unfilled:
        raise TypeError(f"resource template {uri_template!r}: required parameters "
                        f"{unfilled} are not variables of the template")
    template = types.ResourceTemplate(
        uri_template=uri_template,
        name=name or _default_name(fn),
        description=description if description is not None else signature.description,
        mime_type=mime_type,
        annotations=_annotations(annotations),
        title=title,
        icons=make_icons(icons, f"resource template {uri_template!r}"),
        meta=_meta(meta),
    )
    completions = Completions(complete, matcher.variables,
                              f"resource template {uri_template!r}")
    return RegisteredTemplate(template, matcher, fn, signature, completions)


def make_prompt(fn: Callable[..., Any], *, name: str | None, description: str | None,
                complete: CompleteSpec | None, title: str | None = None,
                icons: IconsSpec = None, meta: Mapping[str, Any] | None = None,
                argument_titles: Mapping[str, str] | None = None) -> RegisteredPrompt:
    """Inspect a prompt function; its parameters are the prompt's arguments."""
    _refuse_coroutine(fn, "prompt")
    signature = inspect_function(fn, skip_types=(Context,))
    properties: Mapping[str, Any] = signature.input_schema.get("properties", {})
    required = set(signature.input_schema.get("required", ()))
    prompt_name = name or _default_name(fn)
    titles = dict(argument_titles or {})
    unknown = sorted(set(titles) - set(properties))
    if unknown:
        raise ValueError(f"prompt {prompt_name!r}: argument_titles names {unknown}, which "
                         f"are not among its arguments {sorted(properties)}")
    arguments = [
        types.PromptArgument(name=argument, title=titles.get(argument),
                             description=schema.get("description"),
                             required=argument in required)
        for argument, schema in properties.items()
    ]
    prompt = types.Prompt(
        name=prompt_name,
        title=title,
        description=description if description is not None else signature.description,
        arguments=arguments or None,
        icons=make_icons(icons, f"prompt {prompt_name!r}"),
        meta=_meta(meta),
    )
    completions = Completions(complete, list(properties), f"prompt {prompt_name!r}")
    return RegisteredPrompt(prompt, fn, signature, completions)
