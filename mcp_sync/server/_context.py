"""The :class:`Context` handed to tool, resource and prompt functions that ask for one."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast, overload

from .. import types
from ..errors import InvalidParams
from ..protocol._convert import from_wire, to_wire
from ..protocol._jsonrpc import RequestId
from ._modern import modern_log
from ._reading import read_contents
from ._rounds import Asker, asker_for, gather, request_state_of

if TYPE_CHECKING:
    from ..engine._engine import IncomingRequest
    from ..protocol._elicitation import ElicitationResult
    from ._server import Server, ServerConnection
    from .http._auth import AccessToken

__all__ = ["Context"]

_T = TypeVar("_T")
_T1 = TypeVar("_T1")
_T2 = TypeVar("_T2")
_T3 = TypeVar("_T3")


class Context:
    """What a function can know and do about the request it is serving.

    Declare a parameter annotated ``Context`` (any name) on a tool, resource or prompt
    function and the server passes one in; it never appears in a schema. Every method is
    safe to call from any thread the function starts. The same function serves legacy
    sessions and modern (2026-07-28) requests. :meth:`elicit`, :meth:`elicit_url`,
    :meth:`sample` and :meth:`list_roots` send a request to the client and wait in a
    legacy session; in a modern request they end the function with an input-required
    result, and the function runs again from the top when the client sends the answers
    (docs/server.md "Eras": what runs twice, :attr:`state`, :meth:`gather`).

    Example::

        @server.tool()
        def summarise(path: str, ctx: Context) -> str:
            ctx.info(f"summarising {path}")
            text = ctx.read_resource(f"file:///{path}")[0].text
            return ctx.sample(f"Summarise:\\n{text}", max_tokens=200).content.text
    """

    def __init__(self, connection: ServerConnection, incoming: IncomingRequest) -> None:
        self._connection = connection
        self._incoming = incoming
        self._asker: Asker | None = None
        self._state: dict[str, Any] | None = None

    def _ask(self) -> Asker:
        if self._asker is None:
            self._asker = asker_for(self._connection, self._incoming)
        return self._asker

    # --- the request ------------------------------------------------------------------------

    @property
    def request_id(self) -> RequestId:
        """The JSON-RPC id of the request being served."""
        return self._incoming.id

    @property
    def method(self) -> str:
        """The method of the request being served (``tools/call``, ``resources/read``...)."""
        return self._incoming.method

    @property
    def cancelled(self) -> bool:
        """True once the client cancelled the request or the connection ended.

        Check it in long loops and stop early; whatever the function returns after a
        cancellation is discarded (CANCEL-4).
        """
        return self._incoming.cancelled.is_set()

    def wait_cancelled(self, timeout: float | None = None) -> bool:
        """Block until the request is cancelled or ``timeout`` passes; True if cancelled.

        Use it instead of ``time.sleep`` in a function that waits: it wakes at once on
        cancellation.
        """
        return self._incoming.cancelled.wait(timeout)

    @property
    def progress_token(self) -> str | int | None:
        """The client's progress token, or None if it did not ask for progress."""
        return self._incoming.progress_token

    def report_progress(self, progress: float, total: float | None = None,
                        message: str | None = None) -> bool:
        """Tell the client how far along the request is.

        A no-op (returning False) when the client did not ask for progress, when
        ``progress`` does not exceed the previous value (PROGRESS-4), or once the request
        is answered or cancelled (PROGRESS-6).
        """
        return self._incoming.report_progress(progress, total, message)

    @property
    def auth(self) -> AccessToken | None:
        """The verified access token this request came with, over HTTP behind a
        :class:`~mcp_sync.auth.ResourceServer`; None without authorization (and on
        stdio). Its ``subject``, ``scopes`` and ``claims`` say who is asking."""
        token = self._connection.engine.transport.credentials_of(self._incoming.id)
        return cast("AccessToken | None", token)

    # --- the connection ---------------------------------------------------------------------

    @property
    def connection(self) -> ServerConnection:
        """The client connection the request came on."""
        return self._connection

    @property
    def server(self) -> Server:
        """The server serving the request."""
        return self._connection.server

    # What the request is served under (DES-18): the session's in a legacy session, the
    # request's own ``_meta`` in a modern (2026-07-28) request.

    @property
    def client_info(self) -> types.Implementation | None:
        """The client's name and version (from ``initialize``, or this request)."""
        scope = self._incoming.scope
        return scope.client_info if scope is not None else self._connection.client_info

    @property
    def client_capabilities(self) -> types.ClientCapabilities | None:
        """What the client declared (in ``initialize``, or for this request)."""
        scope = self._incoming.scope
        if scope is not None:
            caps: types.ClientCapabilities | None = scope.client_capabilities
            return caps
        return self._connection.client_capabilities

    @property
    def protocol_version(self) -> str | None:
        """The protocol version of this request (agreed in ``initialize``, or named by
        a modern request)."""
        scope = self._incoming.scope
        return scope.version if scope is not None else self._connection.protocol_version

    def close_sse_stream(self) -> bool:
        """End the SSE response carrying this request before its answer (SSE polling).

        The call goes on: what it sends next, its answer included, waits for the client,
        which comes back with GET and ``Last-Event-ID`` after the ``retry:`` delay. Only
        over Streamable HTTP, in a session negotiated at 2025-11-25, while the answer
        travels on an SSE stream the client is reading; elsewhere it does nothing.

        Returns:
            True if the response was ended.
        """
        return self._connection.engine.transport.hang_up(self._incoming.id)

    # --- logging ----------------------------------------------------------------------------

    def log(self, level: types.LoggingLevel, data: Any, logger: str | None = None) -> bool:
        """Send a log message to the client, as part of this request.

        Args:
            level: ``debug``, ``info``, ``notice``, ``warning``, ``error``, ``critical``,
                ``alert`` or ``emergency``.
            data: any JSON value (a string, a dict...); other objects are sent as their
                JSON form or their ``str()``. Never put secrets here (LOGGING-7).
            logger: a name for the source of the message.

        Returns:
            True if sent; False if the client's level filters it out or the client does
            not take logs.

        Raises:
            ValueError: ``level`` is not one of the names above.
        """
        if self._incoming.scope is not None:
            return modern_log(self._connection, self._incoming, level, data, logger)
        return self._connection.log(level, data, logger, related_to=self._incoming.id)

    def debug(self, data: Any, logger: str | None = None) -> bool:
        """:meth:`log` at level ``debug``."""
        return self.log("debug", data, logger)

    def info(self, data: Any, logger: str | None = None) -> bool:
        """:meth:`log` at level ``info``."""
        return self.log("info", data, logger)

    def warning(self, data: Any, logger: str | None = None) -> bool:
        """:meth:`log` at level ``warning``."""
        return self.log("warning", data, logger)

    def error(self, data: Any, logger: str | None = None) -> bool:
        """:meth:`log` at level ``error``."""
        return self.log("error", data, logger)

    # --- requests to the client -------------------------------------------------------------

    @property
    def state(self) -> dict[str, Any]:
        """A dict of the function's own, kept across the rounds of a modern request.

        In a modern request whatever it holds when the function is ended for input
        comes back, in ``requestState``, when the function runs again: put there what
        must not happen twice (``if "order" not in ctx.state: ctx.state["order"] =
        place_order()``). Only JSON values (dicts, lists, strings, numbers, booleans,
        None) can travel; the client can read them (they are signed, not encrypted),
        so keep secrets out. In a legacy session, and in requests that cannot ask for
        input, it is a fresh dict for the one run.
        """
        carried = request_state_of(self._incoming)
        if carried is not None:
            return carried
        if self._state is None:
            self._state = {}
        return self._state

    def send_request(self, method: str, params: dict[str, Any] | None = None, *,
                     timeout: float | None = None, key: str | None = None) -> dict[str, Any]:
        """Send a request to the client and block for its result (nested requests work).

        In a modern request only ``elicitation/create``, ``sampling/createMessage`` and
        ``roots/list`` can be asked, as a question of an input-required result (``key``
        names it; see :meth:`elicit`); the result is not checked.

        Raises:
            CapabilityError: the client did not declare what ``method`` needs, or the
                modern era cannot ask it.
            RpcError: the client answered with an error.
            RequestTimeout: no answer within ``timeout`` (the server's default if None).
            RequestCancelled: the request being served was cancelled (or ended)
                while waiting; the nested request was cancelled at the client.
        """
        return self._ask().request(method, params, timeout=timeout, key=key)

    @overload
    def gather(self, first: Callable[[], _T1], /) -> tuple[_T1]: ...

    @overload
    def gather(self, first: Callable[[], _T1], second: Callable[[], _T2], /
               ) -> tuple[_T1, _T2]: ...

    @overload
    def gather(self, first: Callable[[], _T1], second: Callable[[], _T2],
               third: Callable[[], _T3], /) -> tuple[_T1, _T2, _T3]: ...

    @overload
    def gather(self, *calls: Callable[[], Any]) -> tuple[Any, ...]: ...

    def gather(self, *calls: Callable[[], Any]) -> tuple[Any, ...]:
        """Run ``calls`` (functions of no arguments that ask the client for input) and
        return their results in order, asking a modern client everything in one round.

        In a legacy session the calls run one after another, each request waited for.
        In a modern request a call that needs an answer is interrupted but the next ones
        still run, so one input-required result carries all their questions.

        Example::

            name, roots = ctx.gather(
                lambda: ctx.elicit("Your name?", {"name": str}).value["name"],
                ctx.list_roots)
        """
        return tuple(gather(self._incoming, calls))

    def sample(
        self,
        messages: str | Iterable[Any],
        *,
        max_tokens: int = 1024,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        model_preferences: types.ModelPreferences | Mapping[str, Any] | Sequence[str]
        | str | None = None,
        include_context: types.IncludeContext | None = None,
        metadata: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        tools: Sequence[types.Tool | Mapping[str, Any]] | None = None,
        tool_choice: str | types.ToolChoice | None = None,
        key: str | None = None,
    ) -> types.CreateMessageResult:
        """Ask the client to run its model (``sampling/createMessage``) and wait for it.

        Args:
            messages: a prompt string (one user message), or a list whose elements are
                :class:`~mcp_sync.types.SamplingMessage`, ``(role, content)`` tuples, or
                strings, :class:`~mcp_sync.content.Image` or
                :class:`~mcp_sync.content.Audio` for user messages.
            max_tokens: the most tokens the model may produce.
            system_prompt: a system prompt the client may use (or change, SAMPLING-6).
            temperature: the sampling temperature.
            stop_sequences: texts that end generation.
            model_preferences: :class:`~mcp_sync.types.ModelPreferences`, its wire dict,
                or model name hints in order of preference (``["claude-3-5", "gpt-4o"]``).
            include_context: ``"none"``, ``"thisServer"`` or ``"allServers"``.
            metadata: provider-specific parameters.
            timeout: seconds to wait; the server's default if None. A person may be
                reviewing the request (SAMPLING-7), so allow for that.
            tools: tools the model may call (``types.Tool`` or wire dicts), 2025-11-25
                and a client that declared ``sampling.tools`` only. The result's
                ``tool_uses`` then lists the calls; send their results back in a user
                message of ``types.ToolResultContent`` blocks alone.
            tool_choice: ``"auto"`` (the default), ``"required"`` or ``"none"``.
            key: the question's key in a modern request's input-required result (by
                default ``sample-N``, N its place among the function's questions).

        Returns:
            The generated message, the model that made it and why it stopped.

        Raises:
            CapabilityError: the client did not declare ``sampling`` (or, with tools,
                ``sampling.tools`` in a 2025-11-25 session); nothing was sent.
            RpcError: the client refused or failed (a user rejection is often code -1).
            RequestTimeout: no answer in time; the request was cancelled at the client.
            RequestCancelled: the request being served was cancelled (or ended)
                while waiting; the nested request was cancelled at the client.
            TypeError: a message holds something other than text, image or audio.
        """
        from ._content import to_sampling_messages
        from ._sampling import fit_sampling

        params = types.CreateMessageRequestParams(
            messages=to_sampling_messages(messages),
            max_tokens=max_tokens,
            system_prompt=system_prompt,
            include_context=include_context,
            temperature=temperature,
            stop_sequences=list(stop_sequences) if stop_sequences is not None else None,
            metadata=dict(metadata) if metadata is not None else None,
            model_preferences=_model_preferences(model_preferences),
        )
        asker = self._ask()
        params = fit_sampling(asker, params, tools, tool_choice)
        raw = asker.request("sampling/createMessage", to_wire(params), timeout=timeout,
                            key=key)
        try:
            return from_wire(raw, types.CreateMessageResult)
        except InvalidParams as exc:
            asker.refuse(exc)

    def list_roots(self, *, timeout: float | None = None,
                   key: str | None = None) -> list[types.Root]:
        """The client's roots (``roots/list``): the directories the user lets us work in.

        ``key`` names the question in a modern request (``roots-N`` by default).

        Raises:
            CapabilityError: the client did not declare ``roots``; nothing was sent.
            RpcError: the client failed.
            RequestTimeout: no answer in time.
            RequestCancelled: the request being served was cancelled (or ended)
                while waiting; the nested request was cancelled at the client.
        """
        asker = self._ask()
        if not asker.modern:
            return self._connection.list_roots(timeout=timeout, related_to=self._incoming.id)
        raw = asker.request("roots/list", {}, timeout=timeout, key=key)
        try:
            return from_wire(raw, types.ListRootsResult).roots
        except InvalidParams as exc:
            asker.refuse(exc)

    @overload
    def elicit(self, message: str, schema: type[_T], *, timeout: float | None = None,
               key: str | None = None) -> ElicitationResult[_T]: ...

    @overload
    def elicit(self, message: str, schema: Mapping[str, Any], *,
               timeout: float | None = None,
               key: str | None = None) -> ElicitationResult[dict[str, Any]]: ...

    def elicit(self, message: str, schema: Any, *, timeout: float | None = None,
               key: str | None = None) -> ElicitationResult[Any]:
        """Ask the client's user to fill in a form (``elicitation/create``) and wait.

        Never ask for passwords, keys, tokens or payment details this way (V1125-39):
        use :meth:`elicit_url`.

        Args:
            message: what the user is asked, and why.
            schema: the fields: an attrs class, a dataclass or a TypedDict (fields with
                defaults are optional, their defaults sent), or a dict mapping each name
                to a type hint (``str``, ``int``, ``float``, ``bool``, a ``Literal`` or
                ``Enum`` of strings, a ``list`` of those for several choices, ``X | None``
                when optional) or to a field schema as the specification writes it.
            timeout: seconds to wait; the server's default if None. A person answers.
            key: the question's key in a modern request's input-required result: by
                default ``elicit-N``, N its place among the function's questions; name
                it when the questions asked can change order from run to run.

        Returns:
            ``action`` (``accept``, ``decline`` or ``cancel``), the accepted
            ``content``, and ``value``: the content as an instance of ``schema``'s class
            (a dict for a TypedDict or a dict schema).

        Raises:
            CapabilityError: the session's version has no elicitation, or the client did
                not declare form-mode elicitation; nothing was sent.
            TypeError, ValueError: a field cannot be asked for in a form (nested objects,
                arrays other than choices; several choices before 2025-11-25).
            InvalidParams: the client's accepted content does not fit the schema.
            RpcError, RequestTimeout, RequestCancelled: as for :meth:`send_request`.
        """
        from ._elicitation import elicit_form

        return elicit_form(self._ask(), message, schema, timeout=timeout, key=key)

    def elicit_url(self, message: str, url: str, *, elicitation_id: str | None = None,
                   timeout: float | None = None,
                   key: str | None = None) -> ElicitationResult[Any]:
        """Ask the client's user to visit ``url`` (URL-mode elicitation, 2025-11-25 on).

        ``accept`` means only that the user agreed to open it. In a legacy session send
        :meth:`complete_elicitation` with the result's ``elicitation_id`` once the
        interaction at the URL is done; the modern era has no ids and no completion
        notice (``elicitation_id`` is then None). Put no credentials or personal data in
        the URL (V1125-46). ``key`` names the question in a modern request.

        Raises:
            CapabilityError: the session is older than 2025-11-25 or the client did not
                declare URL-mode elicitation; nothing was sent.
            ValueError: ``url`` is not a URL.
            RpcError, RequestTimeout, RequestCancelled: as for :meth:`send_request`.
        """
        from ._elicitation import elicit_url

        return elicit_url(self._ask(), message, url, elicitation_id=elicitation_id,
                          timeout=timeout, key=key)

    def complete_elicitation(self, elicitation_id: str) -> bool:
        """Tell the client the URL-mode elicitation ``elicitation_id`` is done
        (``notifications/elicitation/complete``, V1125-41); False if it could not be sent,
        as always in a modern request (the era has no such notice).
        """
        if self._incoming.scope is not None:
            return False
        return self._connection.notify_if_ready(
            "notifications/elicitation/complete", {"elicitationId": elicitation_id})

    # --- our own resources ------------------------------------------------------------------

    def read_resource(self, uri: str) -> list[types.ResourceContents]:
        """Read one of this server's own resources, as a client's ``resources/read`` would.

        Raises:
            ResourceNotFound: no resource or template matches ``uri``.
            RpcError: the resource function raised one.
            Exception: whatever else the resource function raised, unchanged.
        """
        return read_contents(self._connection.registry, self, uri, internal=True)


def _model_preferences(value: types.ModelPreferences | Mapping[str, Any] | Sequence[str]
                       | str | None) -> types.ModelPreferences | None:
    if value is None or isinstance(value, types.ModelPreferences):
        return value
    if isinstance(value, Mapping):
        return from_wire(dict(value), types.ModelPreferences)
    names = [value] if isinstance(value, str) else list(value)
    return types.ModelPreferences(hints=[types.ModelHint(name=name) for name in names])
