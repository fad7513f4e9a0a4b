"""What a :class:`~mcp_sync.Client` does for its server: sampling, roots, notifications.

:class:`ClientHandlers` holds the user's handlers and callbacks, derives the capabilities
the client declares from them (CAPS-4: a feature is declared only when something can
serve it), answers the server's requests on a worker thread, and turns the server's
notifications into typed callbacks on the notifier thread. With a ``callback_executor``
the user's functions run there instead (see :mod:`mcp_sync.client._callbacks`).

Nothing here may take the reader down: every user function is called inside a guard
that turns a failure into a logged message or a JSON-RPC error for the server.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Executor
from pathlib import Path
from typing import Any, Literal, TypeAlias

from .. import types
from ..engine._engine import IncomingRequest
from ..errors import (
    InternalError,
    InvalidParams,
    MethodNotFound,
    RpcError,
    SamplingRejected,
    ToolCallDenied,
)
from ..protocol._convert import from_wire, to_wire
from ..protocol._jsonrpc import Notification
from ._callbacks import call_on
from ._elicitation import ElicitationHandler, ElicitationTracker

__all__ = [
    "ClientHandlers",
    "ListChangedCallback",
    "ListKind",
    "LogCallback",
    "NotificationCallback",
    "ResourceUpdatedCallback",
    "RootLike",
    "SamplingHandler",
    "SamplingRejected",
    "ToolApproval",
    "ToolCallDenied",
    "normalize_roots",
]

log = logging.getLogger("mcp_sync.client")

ListKind = Literal["tools", "resources", "prompts"]
# Quoted: these names would otherwise build the sampling types at import (see types._LAZY).
SamplingHandler = Callable[
    ["types.CreateMessageRequestParams"], "types.CreateMessageResult | Mapping[str, Any]"]
LogCallback = Callable[["types.LoggingMessageNotificationParams"], None]
ResourceUpdatedCallback = Callable[[str], None]
ListChangedCallback = Callable[[ListKind], None]
NotificationCallback = Callable[[str, "dict[str, Any]"], None]
ToolApproval = Callable[[str, "dict[str, Any]"], bool]
RootLike: TypeAlias = "types.Root | Mapping[str, Any] | str | os.PathLike[str]"

_LIST_CHANGED: dict[str, ListKind] = {
    "notifications/tools/list_changed": "tools",
    "notifications/resources/list_changed": "resources",
    "notifications/prompts/list_changed": "prompts",
}


def normalize_roots(roots: Iterable[RootLike]) -> tuple[types.Root, ...]:
    """Check and convert roots given as ``Root`` objects, dicts, URI strings or paths.

    Raises:
        ValueError: a root is not a ``file://`` URI (ROOTS-3) or a dict lacks ``uri``.
        TypeError: ``roots`` is a single root rather than a collection, or an item has
            an unsupported type.
    """
    if isinstance(roots, (str, bytes, Mapping, types.Root, os.PathLike)):
        raise TypeError("roots must be a list of roots, not a single root")
    return tuple(_to_root(item) for item in roots)


def _to_root(item: Any) -> types.Root:
    if isinstance(item, types.Root):
        root = item
    elif isinstance(item, str):
        root = types.Root(uri=item)
    elif isinstance(item, os.PathLike):
        root = types.Root(uri=Path(item).absolute().as_uri())
    elif isinstance(item, Mapping):
        try:
            root = from_wire(dict(item), types.Root)
        except InvalidParams as exc:
            raise ValueError(f"invalid root {dict(item)!r}: {exc.message}") from None
    else:
        raise TypeError(f"a root must be a Root, a dict, a file:// URI or a path, "
                        f"not {type(item).__name__}")
    if not isinstance(root.uri, str) or root.uri[:7].lower() != "file://":
        raise ValueError(f"root {root.uri!r} is not a file:// URI; MCP 2025-03-26 "
                         "allows only file:// roots")
    return root


class ClientHandlers:
    """The client's side of server-initiated traffic; see the module docstring.

    ``roots`` None means the client offers no roots at all (``roots/list`` gets -32601);
    an empty list offers roots, none yet, so that :meth:`replace_roots` may add some.
    """

    def __init__(
        self,
        *,
        sampling_handler: SamplingHandler | None = None,
        roots: Iterable[RootLike] | None = None,
        on_log: LogCallback | None = None,
        on_resource_updated: ResourceUpdatedCallback | None = None,
        on_list_changed: ListChangedCallback | None = None,
        on_notification: NotificationCallback | None = None,
        callback_executor: Executor | None = None,
        elicitation_handler: ElicitationHandler | None = None,
        elicitation_modes: Iterable[str] = ("form",),
        on_elicitation_complete: Callable[[str], None] | None = None,
        server_info: Callable[[], types.Implementation | None] | None = None,
        sampling_capabilities: Mapping[str, Any] | None = None,
    ) -> None:
        self.sampling_handler = sampling_handler
        self.sampling_capabilities = dict(sampling_capabilities or {})
        self.elicitation_handler = elicitation_handler
        self.elicitation_modes = frozenset(elicitation_modes)
        if not self.elicitation_modes or self.elicitation_modes - {"form", "url"}:
            raise ValueError('elicitation_modes are one or both of "form" and "url"')
        self._elicitations = ElicitationTracker(on_elicitation_complete)
        self._server_info = server_info
        self.callback_executor = callback_executor
        self.on_log = on_log
        self.on_resource_updated = on_resource_updated
        self.on_list_changed = on_list_changed
        self.on_notification = on_notification
        self._roots_lock = threading.Lock()
        self._roots: tuple[types.Root, ...] | None = (
            None if roots is None else normalize_roots(roots))

    # --- what we declare ---------------------------------------------------------------------

    @property
    def offers_roots(self) -> bool:
        """True when the client declared the ``roots`` capability."""
        return self._roots is not None

    def capabilities(self) -> types.ClientCapabilities:
        """The capabilities to declare in ``initialize`` (CAPS-4, ROOTS-1, SAMPLING-1)."""
        return types.ClientCapabilities(
            roots=types.RootsCapability(list_changed=True) if self.offers_roots else None,
            sampling=(dict(self.sampling_capabilities)
                      if self.sampling_handler is not None else None),
            elicitation=({mode: {} for mode in sorted(self.elicitation_modes)}  # V1125-34
                         if self.elicitation_handler is not None else None),
        )

    def served_methods(self) -> tuple[str, ...]:
        """The server requests we answer; the session refuses any other with -32601."""
        methods: list[str] = []
        if self.sampling_handler is not None:
            methods.append("sampling/createMessage")
        if self.offers_roots:
            methods.append("roots/list")
        if self.elicitation_handler is not None:
            methods.append("elicitation/create")
        return tuple(methods)

    # --- roots -------------------------------------------------------------------------------

    @property
    def roots(self) -> tuple[types.Root, ...]:
        """The roots offered now (empty when none are)."""
        with self._roots_lock:
            return self._roots or ()

    def replace_roots(self, roots: tuple[types.Root, ...]) -> bool:
        """Offer ``roots`` from now on; True if they differ from the ones before."""
        with self._roots_lock:
            if self._roots is None:
                raise RuntimeError("roots were not offered")
            changed = roots != self._roots
            self._roots = roots
        return changed

    # --- requests from the server ------------------------------------------------------------

    def serve(self, incoming: IncomingRequest) -> dict[str, Any]:
        """Answer one server request; runs on a worker thread.

        Raises:
            RpcError: the error to answer the server with.
        """
        if incoming.method == "roots/list":
            return {"roots": [to_wire(root) for root in self.roots]}
        if incoming.method == "sampling/createMessage" and self.sampling_handler is not None:
            return self._sample(incoming)
        if incoming.method == "elicitation/create" and self.elicitation_handler is not None:
            from ._elicitation import answer

            return answer(self.elicitation_handler, incoming, modes=self.elicitation_modes,
                          server_info=self._server_info() if self._server_info else None,
                          executor=self.callback_executor, tracker=self._elicitations)
        raise MethodNotFound(f"Method not found: {incoming.method}")

    def _sample(self, incoming: IncomingRequest) -> dict[str, Any]:
        assert self.sampling_handler is not None
        # A request that breaks the schema (an embedded resource in a message, say) is
        # -32602 before the handler ever sees it (SAMPLING-3).
        params = from_wire(incoming.params, types.CreateMessageRequestParams)
        _check_tool_use(params, "tools" in self.sampling_capabilities)
        try:
            if self.callback_executor is None:
                answer = self.sampling_handler(params)
            else:  # on the application's thread (a dialog may ask the user)
                answer = call_on(self.callback_executor, incoming.cancelled,
                                 self.sampling_handler, params)
        except RpcError:
            raise  # the handler chose the error, SamplingRejected included
        except Exception:
            # The message may hold local details (paths, keys); the server is not told.
            log.exception("the sampling handler failed")
            raise InternalError("Internal error: the client could not sample") from None
        return _sampling_result(answer)

    # --- notifications from the server --------------------------------------------------------

    def deliver(self, notification: Notification) -> None:
        """Run the callbacks for one notification; runs on the notifier thread, in order."""
        method = notification.method
        params = notification.params or {}
        if method == "notifications/message" and self.on_log is not None:
            record = _typed(params, types.LoggingMessageNotificationParams, method)
            if record is not None:
                _guarded("on_log", self.on_log, record)
        elif (method == "notifications/resources/updated"
              and self.on_resource_updated is not None):
            updated = _typed(params, types.ResourceUpdatedNotificationParams, method)
            if updated is not None:
                _guarded("on_resource_updated", self.on_resource_updated, updated.uri)
        elif (method == "notifications/elicitation/complete"
              and self._elicitations.on_complete is not None):
            done = self._elicitations.completed(params)  # V1125-42: unknown ids ignored
            if done is not None:
                _guarded("on_elicitation_complete", self._elicitations.on_complete, done)
        elif method in _LIST_CHANGED and self.on_list_changed is not None:
            _guarded("on_list_changed", self.on_list_changed, _LIST_CHANGED[method])
        if self.on_notification is not None:
            _guarded("on_notification", self.on_notification, method, params)


def _check_tool_use(params: types.CreateMessageRequestParams, declared: bool) -> None:
    """-32602 for tools we did not declare (V1125-47, NAMBIG-10) and for tool results
    that share a message with other content (V1125-49)."""
    if not declared and (params.tools is not None or params.tool_choice is not None):
        raise InvalidParams("Invalid params: this client did not declare sampling.tools")
    for message in params.messages:
        blocks = message.content if isinstance(message.content, list) else [message.content]
        results = [isinstance(block, types.ToolResultContent) for block in blocks]
        if any(results) and not all(results):
            raise InvalidParams("Invalid params: a message with tool results must hold "
                                "nothing else")


def _sampling_result(answer: Any) -> dict[str, Any]:
    # Whatever the handler returned goes through the strict decoder, so the server only
    # ever receives a result that fits CreateMessageResult (SAMPLING-4).
    try:
        if isinstance(answer, types.CreateMessageResult):
            wire = to_wire(answer)
        elif isinstance(answer, Mapping):
            wire = dict(answer)
        else:
            raise TypeError(f"expected CreateMessageResult or dict, got {type(answer).__name__}")
        result: dict[str, Any] = to_wire(from_wire(wire, types.CreateMessageResult))
    except Exception as exc:
        log.error("the sampling handler returned an invalid result: %s", str(exc))
        raise InternalError(
            "Internal error: the client's sampling handler returned an invalid result") from None
    return result


def _typed(params: dict[str, Any], cls: type[Any], method: str) -> Any:
    try:
        return from_wire(params, cls)
    except InvalidParams as exc:
        log.warning("ignoring malformed %s from the server: %s", method, exc.message)
        return None


def _guarded(name: str, callback: Callable[..., Any], *args: Any) -> None:
    try:
        callback(*args)
    except Exception:
        log.exception("the %s callback failed", name)
