"""The server's answers to MCP requests, one function per method.

Each handler takes the :class:`~mcp_sync.server.ServerConnection` and the
:class:`~mcp_sync.engine._engine.IncomingRequest` and returns the wire result, or raises an
:class:`~mcp_sync.errors.RpcError` for the engine to send. User functions run inside
:func:`~mcp_sync.server._logging.run_serving`, so Python logging from them reaches the right client.

Failures inside user functions: a tool's become an ``isError`` result (TOOLS-6),
whatever the exception; a resource's, prompt's or completer's become -32603 with a short
message, except that an :class:`~mcp_sync.errors.RpcError` they raise
(``ResourceNotFound``, ``InvalidParams``) is sent as it is. Every such failure is logged
with its traceback at ERROR on the ``mcp_sync.server`` logger, so a server author sees
it with Python's default logging; the traceback never goes to the client.
"""

from __future__ import annotations

import binascii
import itertools
import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import attrs

from .. import types
from ..errors import (
    InternalError,
    InvalidParams,
    MissingClientCapability,
    RpcError,
    UrlElicitationRequired,
)
from ..protocol._convert import from_wire, to_wire
from ._content import (
    for_profile,
    to_call_tool_result,
    to_prompt_messages,
)
from ._context import Context
from ._features import Completions
from ._logging import check_level, run_serving
from ._modern import request_profile
from ._reading import read_contents, run_with_context
from ._registry import Handler
from ._structured import structured_result
from ._version_rules import argument_error_result, errors_as_results

if TYPE_CHECKING:
    from ..engine._engine import IncomingRequest
    from ._server import ServerConnection

__all__ = ["HANDLERS"]

log = logging.getLogger("mcp_sync.server")


#: COMPLETION-3: at most this many values in one completion result.
MAX_COMPLETIONS = 100


# --- pagination ----------------------------------------------------------------------------


def _page(items: list[Any], params: dict[str, Any], page_size: int,
          kind: str) -> tuple[list[Any], str | None]:
    cursor = params.get("cursor")
    start = _decode_cursor(cursor, kind) if cursor is not None else 0
    if start > len(items):
        raise InvalidParams("Invalid params: the cursor is out of range", {"cursor": cursor})
    end = start + page_size
    next_cursor = _encode_cursor(end, kind) if end < len(items) else None
    return items[start:end], next_cursor


def _encode_cursor(offset: int, kind: str) -> str:
    import base64  # here, not at import: only a paginated list needs it (a start-up cost)

    return base64.urlsafe_b64encode(f"{kind}:{offset}".encode()).decode("ascii")


def _decode_cursor(cursor: Any, kind: str) -> int:
    # Cursors are opaque to clients (PAGINATION-3); anything we did not mint for this
    # list, a cursor of another list included, is -32602 (PAGINATION-5).
    import base64

    try:
        text = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii")
        found_kind, _, number = text.partition(":")
        if found_kind != kind or not number.isdigit():
            raise ValueError(text)
        return int(number)
    except (AttributeError, ValueError, binascii.Error, UnicodeError):
        raise InvalidParams("Invalid params: unknown cursor", {"cursor": cursor}) from None


def _wire(result: Any) -> dict[str, Any]:
    wire: dict[str, Any] = to_wire(result)
    return wire


def _string_param(params: dict[str, Any], name: str) -> str:
    value = params.get(name)
    if not isinstance(value, str):
        raise InvalidParams(f'Invalid params: "{name}" must be a string')
    return value


def _run(connection: ServerConnection, incoming: IncomingRequest, fn: Callable[..., Any],
         kwargs: dict[str, Any], context_parameter: str | None) -> Any:
    return run_with_context(Context(connection, incoming), fn, kwargs, context_parameter)


# --- tools ---------------------------------------------------------------------------------


def list_tools(connection: ServerConnection, incoming: IncomingRequest) -> dict[str, Any]:
    server = connection.server
    page, next_cursor = _page(connection.registry.tools(), incoming.params, server.page_size,
                              "tools")
    profile = request_profile(connection, incoming)
    if profile is not None and not profile.tool_annotations:
        page = [attrs.evolve(tool, annotations=None) for tool in page]
    if profile is not None and not profile.structured_output:
        # DES-10: an older client gets no outputSchema; its results keep their JSON text.
        page = [attrs.evolve(tool, output_schema=None) if tool.output_schema else tool
                for tool in page]
    return _wire(types.ListToolsResult(tools=page, next_cursor=next_cursor))


def call_tool(connection: ServerConnection, incoming: IncomingRequest) -> dict[str, Any]:
    name = _string_param(incoming.params, "name")
    registered = connection.registry.tool(name)
    if registered is None:
        raise InvalidParams(f"Unknown tool: {name}", {"tool": name})
    arguments = incoming.params.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        raise InvalidParams('Invalid params: "arguments" must be an object')
    try:
        kwargs = registered.signature.bind(arguments)
    except InvalidParams as exc:
        if not errors_as_results(request_profile(connection, incoming)):
            raise
        return argument_error_result(name, exc)  # V1125-32, DES-9
    try:
        value = _run(connection, incoming, registered.fn, kwargs,
                     registered.signature.context_parameter)
        if registered.output is not None:
            result = structured_result(value, registered.output, name)
        elif value.__class__ is str:
            # The commonest tool returns text. Its answer is written as it is on the wire,
            # without a result and an item built only to be encoded again: a tenth of
            # what serving a short call costs.
            return {"content": [{"type": "text", "text": value}]}
        else:
            result = to_call_tool_result(value)
    except Exception as exc:
        if isinstance(exc, UrlElicitationRequired) and _has_url_mode(connection, incoming):
            raise  # answered as the -32042 error itself (V1125-43)
        if isinstance(exc, MissingClientCapability) and incoming.scope is not None:
            raise  # -32021: the modern request needs what its client did not declare
        # TOOLS-6: a failure while the tool runs, whatever it is (an RpcError from a
        # nested request included), is a result the model can see; the traceback stays
        # in our log. Only what the library checks before the call is a JSON-RPC error.
        log.error("tool %r raised", name, exc_info=True)
        message = str(exc) or type(exc).__name__
        return _wire(types.CallToolResult(
            content=[types.TextContent(text=f"Error: {message}")], is_error=True))
    if not registered.embeds_warned and connection.capabilities.resources is None and any(
            # The kinds first: walking a large result's items one by one costs more.
            issubclass(kind, types.EmbeddedResource) for kind in set(map(type, result.content))):
        # V0618-23: embedded resources come with the resources capability.
        registered.embeds_warned = True
        log.warning("tool %r returned an embedded resource, but the server offers no "
                    "resources; register them, or pass resources=True to Server", name)
    profile = request_profile(connection, incoming)
    content = for_profile(result.content, profile)
    if content is not result.content:
        result = attrs.evolve(result, content=content)
    if result.structured_content is not None and profile is not None and (
            not profile.structured_output):
        result = attrs.evolve(result, structured_content=None)  # DES-10: the text stays
    return _wire(result)


def _has_url_mode(connection: ServerConnection, incoming: IncomingRequest) -> bool:
    profile = request_profile(connection, incoming)
    return profile is not None and profile.elicitation_url


# --- resources -----------------------------------------------------------------------------


def list_resources(connection: ServerConnection, incoming: IncomingRequest) -> dict[str, Any]:
    page, next_cursor = _page(connection.registry.resources(), incoming.params,
                              connection.server.page_size, "resources")
    return _wire(types.ListResourcesResult(resources=page, next_cursor=next_cursor))


def list_resource_templates(connection: ServerConnection,
                            incoming: IncomingRequest) -> dict[str, Any]:
    page, next_cursor = _page(connection.registry.resource_templates(), incoming.params,
                              connection.server.page_size, "templates")
    return _wire(types.ListResourceTemplatesResult(resource_templates=page,
                                                   next_cursor=next_cursor))


def read_resource(connection: ServerConnection, incoming: IncomingRequest) -> dict[str, Any]:
    uri = _string_param(incoming.params, "uri")
    contents = read_contents(connection.registry, Context(connection, incoming), uri)
    return _wire(types.ReadResourceResult(contents=contents))


def subscribe(connection: ServerConnection, incoming: IncomingRequest) -> dict[str, Any]:
    uri = _string_param(incoming.params, "uri")
    if not uri:
        raise InvalidParams('Invalid params: "uri" is empty')
    connection.subscribe(uri)
    return {}


def unsubscribe(connection: ServerConnection, incoming: IncomingRequest) -> dict[str, Any]:
    connection.unsubscribe(_string_param(incoming.params, "uri"))
    return {}


# --- prompts -------------------------------------------------------------------------------


def list_prompts(connection: ServerConnection, incoming: IncomingRequest) -> dict[str, Any]:
    page, next_cursor = _page(connection.registry.prompts(), incoming.params,
                              connection.server.page_size, "prompts")
    return _wire(types.ListPromptsResult(prompts=page, next_cursor=next_cursor))


def get_prompt(connection: ServerConnection, incoming: IncomingRequest) -> dict[str, Any]:
    name = _string_param(incoming.params, "name")
    registered = connection.registry.prompt(name)
    if registered is None:
        raise InvalidParams(f"Unknown prompt: {name}", {"prompt": name})
    arguments = incoming.params.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        raise InvalidParams('Invalid params: "arguments" must be an object')
    kwargs = registered.bind(arguments)
    try:
        value = _run(connection, incoming, registered.fn, kwargs,
                     registered.signature.context_parameter)
        if isinstance(value, types.GetPromptResult):
            result = value
        else:
            result = types.GetPromptResult(messages=to_prompt_messages(value),
                                           description=registered.prompt.description)
    except RpcError:
        raise
    except Exception:
        log.exception("prompt %r failed", name)
        raise InternalError("Internal error while rendering the prompt",
                            {"prompt": name}) from None
    profile = request_profile(connection, incoming)
    messages = [attrs.evolve(message, content=for_profile([message.content], profile)[0])
                for message in result.messages]
    return _wire(attrs.evolve(result, messages=messages))


# --- completion ----------------------------------------------------------------------------


def _completions_for(connection: ServerConnection, ref: types.Reference) -> Completions | None:
    registry = connection.registry
    if isinstance(ref, types.PromptReference):
        prompt = registry.prompt(ref.name)
        if prompt is None:
            raise InvalidParams(f"Unknown prompt: {ref.name}", {"prompt": ref.name})
        return prompt.completions
    template = registry.template(ref.uri)
    if template is not None:
        return template.completions
    if registry.resource(ref.uri) is not None:
        return None  # a fixed URI has no arguments to complete
    raise InvalidParams(f"Unknown resource template: {ref.uri}", {"uri": ref.uri})


def _completion(values: Iterable[str]) -> types.Completion:
    if isinstance(values, (list, tuple)):
        total: int | None = len(values)
        kept = list(values[:MAX_COMPLETIONS])
        has_more = len(values) > MAX_COMPLETIONS
    else:
        kept = list(itertools.islice(values, MAX_COMPLETIONS + 1))
        has_more = len(kept) > MAX_COMPLETIONS
        kept = kept[:MAX_COMPLETIONS]
        total = None if has_more else len(kept)
    if not all(isinstance(value, str) for value in kept):
        raise TypeError("completion values must be strings")
    return types.Completion(values=kept, total=total, has_more=has_more)


def complete(connection: ServerConnection, incoming: IncomingRequest) -> dict[str, Any]:
    params = from_wire(incoming.params, types.CompleteRequestParams)
    completions = _completions_for(connection, params.ref)
    argument = params.argument
    if completions is None:
        return _wire(types.CompleteResult(completion=types.Completion(values=[], total=0,
                                                                      has_more=False)))
    chosen = _completion_context(params.extra.get("context"))
    context = Context(connection, incoming)
    try:
        completion = _completion(run_serving(
            context, completions.complete, argument.name, argument.value, chosen))
    except RpcError:
        raise
    except Exception:
        log.exception("completing %r failed", argument.name)
        raise InternalError("Internal error while completing the argument",
                            {"argument": argument.name}) from None
    return _wire(types.CompleteResult(completion=completion))


def _completion_context(context: Any) -> dict[str, str]:
    """The other arguments the user already chose (``context.arguments``, V0618-27)."""
    if context is None:
        return {}
    arguments = context.get("arguments") if isinstance(context, dict) else None
    if arguments is None and isinstance(context, dict):
        return {}
    if not isinstance(arguments, dict) or not all(
            isinstance(value, str) for value in arguments.values()):
        raise InvalidParams('Invalid params: "context.arguments" must map names to strings')
    return arguments


# --- logging -------------------------------------------------------------------------------


def set_level(connection: ServerConnection, incoming: IncomingRequest) -> dict[str, Any]:
    level = incoming.params.get("level")
    try:
        connection.log_level = check_level(level)
    except ValueError as exc:
        raise InvalidParams(f"Invalid params: {exc}", {"level": level}) from None
    return {}


HANDLERS: dict[str, Handler] = {
    "tools/list": list_tools,
    "tools/call": call_tool,
    "resources/list": list_resources,
    "resources/templates/list": list_resource_templates,
    "resources/read": read_resource,
    "resources/subscribe": subscribe,
    "resources/unsubscribe": unsubscribe,
    "prompts/list": list_prompts,
    "prompts/get": get_prompt,
    "completion/complete": complete,
    "logging/setLevel": set_level,
}
