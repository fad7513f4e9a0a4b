"""The typed, blocking MCP requests of :class:`~mcp_sync.Client`, one method per request.

Each method builds the request's params, sends it through the client's
:meth:`~mcp_sync.Client.send_request` (which applies timeouts, capability checks and
session renewal) and decodes the result into :mod:`mcp_sync.types`. Arguments are
checked before anything is sent, so a bad call raises at once and leaves no traffic.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from .. import types
from ..engine._engine import Engine, ProgressCallback
from ..errors import InvalidParams, LocalProtocolError, McpError
from ..protocol._convert import from_wire, to_wire
from ..protocol._versions import profile_for
from ._handlers import ToolApproval, ToolCallDenied
from ._structured import OutputSchemas

__all__ = ["ReferenceLike", "RequestMethods"]

T = TypeVar("T")
R = TypeVar("R")

ReferenceLike: TypeAlias = (
    "types.PromptReference | types.ResourceReference | Mapping[str, Any] | str")


class RequestMethods:
    """Every client-to-server request of MCP 2025-03-26 as a typed method.

    Mixed into :class:`~mcp_sync.Client`, which supplies the transport-facing methods
    declared at the top.
    """

    _approve_tool_call: ToolApproval | None
    _output_schemas: OutputSchemas | None

    def send_request(self, method: str, params: dict[str, Any] | None = None, *,
                     timeout: float | None = None,
                     on_progress: ProgressCallback | None = None) -> dict[str, Any]:
        raise NotImplementedError

    def _send(self, method: str, params: dict[str, Any] | None, timeout: float | None,
              on_progress: ProgressCallback | None) -> Future[dict[str, Any]]:
        raise NotImplementedError

    def _typed_async(self, future: Future[dict[str, Any]],
                     convert: Callable[[dict[str, Any]], T]) -> Future[T]:
        raise NotImplementedError

    timeout: float
    if TYPE_CHECKING:  # supplied by the client's Lifeline, which follows in the MRO
        def _engine_for(self, timeout: float | None) -> Engine: ...

        def _screen_tools(self, page: types.ListToolsResult) -> types.ListToolsResult: ...

    def send_batch(self, requests: Iterable[tuple[str, dict[str, Any] | None]], *,
                   timeout: float | None = None) -> list[Future[dict[str, Any]]]:
        """Send several requests as one JSON-RPC batch; a Future of the raw result of each.

        Batches exist in 2025-03-26 only (BATCH-1): 2024-11-05 had not introduced them
        and 2025-06-18 removed them (V0618-1), so in those sessions this raises and
        sends nothing; send the requests one by one (they pipeline just as well).

        Args:
            requests: ``(method, params)`` pairs.
            timeout: seconds each request may take; the client's ``timeout`` by default.

        Raises:
            LocalProtocolError: the negotiated version has no batches.
            ValueError: ``requests`` is empty.
            CapabilityError: the server did not declare what a method needs.
        """
        calls = list(requests)
        if not calls:
            raise ValueError("a batch needs at least one request")
        engine = self._engine_for(timeout)
        profile = engine.session.profile
        if profile is None or not profile.batching:
            version = profile.version if profile is not None else "this session"
            raise LocalProtocolError(
                f"JSON-RPC batches do not exist in protocol version {version}; only "
                "2025-03-26 has them: send the requests one by one")
        timeout = self.timeout if timeout is None else timeout
        return [self._typed_async(future, _raw)
                for future in engine.request_batch(calls, timeout=timeout)]

    def _typed(self, method: str, params: dict[str, Any] | None, cls: type[T],
               timeout: float | None, on_progress: ProgressCallback | None = None) -> T:
        return from_wire(self.send_request(method, params, timeout=timeout,
                                           on_progress=on_progress), cls)

    def _typed_future(self, method: str, params: dict[str, Any] | None, cls: type[T],
                      timeout: float | None, on_progress: ProgressCallback | None) -> Future[T]:
        future = self._send(method, params, timeout, on_progress)
        return self._typed_async(future, lambda raw: from_wire(raw, cls))

    @property
    def protocol_version(self) -> str:
        """The protocol version agreed at initialization."""
        raise NotImplementedError

    # --- utilities ---------------------------------------------------------------------------

    def ping(self, *, timeout: float | None = None) -> None:
        """Check that the server answers (PING-1).

        Raises:
            RequestTimeout: no answer within ``timeout``.
            ConnectionLost, ConnectionClosed: the connection is over.
        """
        self.send_request("ping", timeout=timeout)

    def set_logging_level(self, level: types.LoggingLevel, *,
                          timeout: float | None = None) -> None:
        """Ask the server to send log messages at ``level`` or more severe (LOGGING-3).

        Messages arrive through the client's ``on_log`` callback.

        Args:
            level: one of :data:`mcp_sync.types.LOGGING_LEVELS`, e.g. ``"warning"``.
            timeout: seconds to wait for the server's answer.

        Raises:
            ValueError: ``level`` is not an MCP logging level (nothing was sent).
            CapabilityError: the server did not declare ``logging`` (CAPS-5).
        """
        if level not in types.LOGGING_LEVELS:
            raise ValueError(f"unknown logging level {level!r}; "
                             f"use one of {', '.join(types.LOGGING_LEVELS)}")
        self.send_request("logging/setLevel", {"level": level}, timeout=timeout)

    def complete(self, ref: ReferenceLike, argument_name: str, value: str, *,
                 context: Mapping[str, str] | None = None,
                 timeout: float | None = None) -> types.CompleteResult:
        """Ask the server for completions of one argument (COMPLETION-2).

        Args:
            ref: what the argument belongs to: a :class:`~mcp_sync.types.PromptReference`
                or :class:`~mcp_sync.types.ResourceReference`, a dict in the wire shape
                (``{"type": "ref/prompt", "name": "review"}``), or a string. A string
                containing ``://`` is a resource URI or URI template, any other string
                a prompt name; use a ``ResourceReference`` for a URI without ``//``.
            argument_name: the argument being completed.
            value: what the user has typed so far.
            context: the other arguments the user already chose, by name, so that the
                suggestions can depend on them (V0618-27); sent only in sessions of
                2025-06-18 and newer, left out before.
            timeout: seconds to wait for the answer.

        Returns:
            The result; ``result.completion.values`` holds at most 100 suggestions.

        Raises:
            TypeError, ValueError: ``ref`` or ``value`` is unusable (nothing was sent).
            CapabilityError: the server did not declare ``completions`` (CAPS-5; a
                2024-11-05 server is asked anyway, as that revision had no such flag).
        """
        if not isinstance(argument_name, str) or not isinstance(value, str):
            raise TypeError("argument_name and value must be strings")
        params: dict[str, Any] = {"ref": _reference(ref),
                                  "argument": {"name": argument_name, "value": value}}
        if context is not None:
            if not all(isinstance(key, str) and isinstance(item, str)
                       for key, item in context.items()):
                raise TypeError("context maps argument names to strings")
            if profile_for(self.protocol_version).completion_context:
                params["context"] = {"arguments": dict(context)}
        return self._typed("completion/complete", params, types.CompleteResult, timeout)

    # --- tools -------------------------------------------------------------------------------

    def list_tools(self, *, timeout: float | None = None) -> list[types.Tool]:
        """Every tool the server offers, following pagination cursors to the end.

        ``timeout`` applies to each page request. Tool descriptions and annotations come
        from the server and are only as trustworthy as it is (TOOLS-10).

        Raises:
            CapabilityError: the server did not declare ``tools`` (CAPS-5).
        """
        return _all_pages(lambda cursor: _items(self.list_tools_page(cursor, timeout=timeout),
                                                "tools"))

    def list_tools_page(self, cursor: str | None = None, *,
                        timeout: float | None = None) -> types.ListToolsResult:
        """One page of tools; pass the previous page's ``next_cursor`` for the next.

        In the modern era a tool whose schema misuses ``x-mcp-header`` is left out (it
        cannot be called correctly, SEP-2243); a warning names it."""
        page = self._screen_tools(
            self._typed("tools/list", _paginated(cursor), types.ListToolsResult, timeout))
        if self._output_schemas is not None:
            self._output_schemas.remember(page.tools)
        return page

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                  timeout: float | None = None,
                  on_progress: ProgressCallback | None = None) -> types.CallToolResult:
        """Call a tool and block for its result.

        A tool that failed while running returns a result with ``is_error`` True (False
        otherwise, also when the server left ``isError`` out); a protocol failure
        (unknown tool, invalid arguments) raises.

        Args:
            name: the tool's name.
            arguments: its arguments, as JSON-ready values.
            timeout: seconds to wait; each progress report starts it again, up to the
                client's ``max_timeout``.
            on_progress: called as ``fn(progress, total, message)`` for each progress
                report; asking for it is what makes the server send them.

        Raises:
            ToolCallDenied: the client's ``approve_tool_call`` hook said no; nothing sent.
            InvalidParams: unknown tool or invalid arguments.
            RequestTimeout: no answer in time; the call was cancelled at the server.
            CapabilityError: the server did not declare ``tools`` (CAPS-5).
            ToolOutputError: the result does not fit the tool's listed output schema
                (see the client's ``validate_tool_output``).
        """
        return self._checked(name, _tool_result(self.send_request(
            "tools/call", self._approved(name, arguments), timeout=timeout,
            on_progress=on_progress)))

    def call_tool_async(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                        timeout: float | None = None,
                        on_progress: ProgressCallback | None = None,
                        ) -> Future[types.CallToolResult]:
        """Like :meth:`call_tool`, returning a Future at once.

        The approval hook runs first, on the calling thread; a refusal raises
        :class:`ToolCallDenied` here rather than through the Future.

        ``future.cancel()``, from any thread (a "Cancel" button), cancels the call:
        the server is sent ``notifications/cancelled`` (the tool sees
        ``ctx.cancelled``), or never gets a request not yet sent, and whoever waits on
        the Future gets :class:`~mcp_sync.errors.RequestCancelled`. It returns False
        once the answer is being delivered.
        """
        future = self._send("tools/call", self._approved(name, arguments), timeout, on_progress)
        return self._typed_async(future, lambda raw: self._checked(name, _tool_result(raw)))

    def _checked(self, name: str, result: types.CallToolResult) -> types.CallToolResult:
        # V0618-20, DES-10: against the output schema tools/list gave for this tool.
        schemas = self._output_schemas
        return result if schemas is None else schemas.check(name, result)

    def _approved(self, name: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        hook = self._approve_tool_call
        # GEN-5, TOOLS-12: the user sees name and arguments before anything leaves.
        if hook is not None and not hook(name, dict(params.get("arguments", {}))):
            raise ToolCallDenied(name)
        return params

    # --- resources ---------------------------------------------------------------------------

    def list_resources(self, *, timeout: float | None = None) -> list[types.Resource]:
        """Every resource the server lists, following pagination cursors to the end.

        Raises:
            CapabilityError: the server did not declare ``resources`` (CAPS-5).
        """
        return _all_pages(lambda cursor: _items(
            self.list_resources_page(cursor, timeout=timeout), "resources"))

    def list_resources_page(self, cursor: str | None = None, *,
                            timeout: float | None = None) -> types.ListResourcesResult:
        """One page of resources; pass the previous page's ``next_cursor`` for the next."""
        return self._typed("resources/list", _paginated(cursor), types.ListResourcesResult,
                           timeout)

    def list_resource_templates(self, *, timeout: float | None = None,
                                ) -> list[types.ResourceTemplate]:
        """Every resource template, following pagination cursors to the end.

        Raises:
            CapabilityError: the server did not declare ``resources`` (CAPS-5).
        """
        return _all_pages(lambda cursor: _items(
            self.list_resource_templates_page(cursor, timeout=timeout), "resource_templates"))

    def list_resource_templates_page(
            self, cursor: str | None = None, *,
            timeout: float | None = None) -> types.ListResourceTemplatesResult:
        """One page of resource templates; pass ``next_cursor`` for the next."""
        return self._typed("resources/templates/list", _paginated(cursor),
                           types.ListResourceTemplatesResult, timeout)

    def read_resource(self, uri: str, *, timeout: float | None = None,
                      on_progress: ProgressCallback | None = None) -> types.ReadResourceResult:
        """Read a resource (RESOURCES-3).

        Args:
            uri: the resource's URI, as listed or filled into a template.
            timeout: seconds to wait; progress reports extend it up to ``max_timeout``.
            on_progress: called as ``fn(progress, total, message)`` for each report.

        Returns:
            The result; ``result.contents`` holds text and/or blob (base64) contents.

        Raises:
            ResourceNotFound: the server knows no such resource (-32002; in the modern
                era the server sends -32602, which ``code`` then holds).
            CapabilityError: the server did not declare ``resources`` (CAPS-5).
        """
        return self._typed("resources/read", {"uri": _text("uri", uri)},
                           types.ReadResourceResult, timeout, on_progress)

    def read_resource_async(self, uri: str, *, timeout: float | None = None,
                            on_progress: ProgressCallback | None = None,
                            ) -> Future[types.ReadResourceResult]:
        """Like :meth:`read_resource`, returning a Future at once."""
        return self._typed_future("resources/read", {"uri": _text("uri", uri)},
                                  types.ReadResourceResult, timeout, on_progress)

    def subscribe_resource(self, uri: str, *, timeout: float | None = None) -> None:
        """Ask to be told when a resource changes (RESOURCES-7).

        Changes arrive through the client's ``on_resource_updated`` callback; its URI may
        be one under ``uri`` (AMBIG-23: the client does not filter).

        Raises:
            CapabilityError: the server did not declare ``resources.subscribe``.
        """
        self.send_request("resources/subscribe", {"uri": _text("uri", uri)}, timeout=timeout)

    def unsubscribe_resource(self, uri: str, *, timeout: float | None = None) -> None:
        """Stop being told about changes to a resource (RESOURCES-7).

        Raises:
            CapabilityError: the server did not declare ``resources.subscribe``.
        """
        self.send_request("resources/unsubscribe", {"uri": _text("uri", uri)},
                          timeout=timeout)

    # --- prompts -----------------------------------------------------------------------------

    def list_prompts(self, *, timeout: float | None = None) -> list[types.Prompt]:
        """Every prompt the server offers, following pagination cursors to the end.

        Raises:
            CapabilityError: the server did not declare ``prompts`` (CAPS-5).
        """
        return _all_pages(lambda cursor: _items(
            self.list_prompts_page(cursor, timeout=timeout), "prompts"))

    def list_prompts_page(self, cursor: str | None = None, *,
                          timeout: float | None = None) -> types.ListPromptsResult:
        """One page of prompts; pass the previous page's ``next_cursor`` for the next."""
        return self._typed("prompts/list", _paginated(cursor), types.ListPromptsResult,
                           timeout)

    def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None, *,
                   timeout: float | None = None,
                   on_progress: ProgressCallback | None = None) -> types.GetPromptResult:
        """Render a prompt with its arguments (PROMPTS-3).

        Args:
            name: the prompt's name.
            arguments: its arguments; every value must be a string, as the protocol
                allows nothing else (convert numbers yourself, e.g. ``str(3)``).
            timeout: seconds to wait; progress reports extend it up to ``max_timeout``.
            on_progress: called as ``fn(progress, total, message)`` for each report.

        Raises:
            TypeError: an argument name or value is not a string (nothing was sent).
            InvalidParams: unknown prompt or a required argument missing.
            CapabilityError: the server did not declare ``prompts`` (CAPS-5).
        """
        return self._typed("prompts/get", _prompt_params(name, arguments),
                           types.GetPromptResult, timeout, on_progress)

    def get_prompt_async(self, name: str, arguments: Mapping[str, str] | None = None, *,
                         timeout: float | None = None,
                         on_progress: ProgressCallback | None = None,
                         ) -> Future[types.GetPromptResult]:
        """Like :meth:`get_prompt`, returning a Future at once."""
        return self._typed_future("prompts/get", _prompt_params(name, arguments),
                                  types.GetPromptResult, timeout, on_progress)


def _tool_result(raw: dict[str, Any]) -> types.CallToolResult:
    # TOOLS-4: a missing isError means false; the caller sees False rather than None,
    # also from a server that wrote null there.
    if raw.get("isError") is None:
        raw["isError"] = False
    return from_wire(raw, types.CallToolResult)


def _all_pages(fetch: Callable[[str | None], tuple[list[R], str | None]]) -> list[R]:
    # The cursor lives only in this loop (PAGINATION-3); a page without one is the last
    # (PAGINATION-4), whatever its size (PAGINATION-2).
    items: list[R] = []
    seen: set[str] = set()
    cursor: str | None = None
    while True:
        page, cursor = fetch(cursor)
        items.extend(page)
        if not cursor:
            return items
        if cursor in seen:
            raise McpError(f"the server sent the pagination cursor {cursor!r} twice; "
                           "stopped listing rather than loop forever")
        seen.add(cursor)


def _items(result: Any, field: str) -> tuple[list[Any], str | None]:
    return getattr(result, field), result.next_cursor


def _paginated(cursor: str | None) -> dict[str, Any] | None:
    return None if cursor is None else {"cursor": _text("cursor", cursor)}


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, not {type(value).__name__}")
    return value


def _prompt_params(name: str, arguments: Mapping[str, str] | None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": _text("name", name)}
    if arguments is not None:
        for key, value in arguments.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise TypeError(
                    f"prompt arguments must be strings; {key!r} is "
                    f"{type(value).__name__ if isinstance(key, str) else 'a non-string key'}"
                    " (convert it, e.g. with str())")
        params["arguments"] = dict(arguments)
    return params


def _reference(ref: Any) -> dict[str, Any]:
    if isinstance(ref, str):
        if "://" in ref:
            return {"type": "ref/resource", "uri": ref}
        return {"type": "ref/prompt", "name": ref}
    if isinstance(ref, (types.PromptReference, types.ResourceReference)):
        wire: dict[str, Any] = to_wire(ref)
        return wire
    if isinstance(ref, Mapping):
        try:
            decoded: types.Reference = from_wire(
                dict(ref), types.Reference)  # type: ignore[arg-type]
        except InvalidParams as exc:
            raise ValueError(f"invalid completion reference {dict(ref)!r}: "
                             f"{exc.message}") from None
        wire = to_wire(decoded)
        return wire
    raise TypeError("ref must be a PromptReference, a ResourceReference, a dict or a "
                    f"string, not {type(ref).__name__}")


def _raw(result: dict[str, Any]) -> dict[str, Any]:
    return result
