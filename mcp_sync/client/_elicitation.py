"""The client's side of elicitation: one normalised request for the user's handler.

A server's ``elicitation/create`` reaches the ``elicitation_handler`` as an
:class:`ElicitationRequest` (mode, message, requested schema or URL, the server's identity,
the URL's host), whatever the version and however the server wrote it (a missing
``mode`` is form, V1125-36). The handler answers with :meth:`ElicitationRequest.accept`,
``decline()`` or ``cancel()``; accepted content is checked against the requested schema
before it is sent (V0618-34). The library never opens or fetches a URL (V1125-44): the
handler decides, with the user, whether to open it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from typing import Any, Literal
from urllib.parse import urlsplit

import attrs

from .. import types
from ..engine._engine import IncomingRequest
from ..errors import InternalError, InvalidParams, RpcError
from ..protocol._elicitation import (
    ElicitationResult,
    check_requested_schema,
    content_errors,
    decode_result,
)
from ._callbacks import call_on

__all__ = ["ElicitationHandler", "ElicitationRequest", "ElicitationTracker", "answer"]

log = logging.getLogger("mcp_sync.client")


@attrs.frozen(kw_only=True)
class ElicitationRequest:
    """A server's request for the user's input, as the ``elicitation_handler`` gets it.

    Show the user which server asks (``server_info``) and what for (``message``); in form
    mode let them review and edit the values, and always let them decline or cancel; in
    URL mode show the full ``url`` and its ``url_host`` and open it (in the system
    browser) only with their consent (V1125-44/45).
    """

    #: ``"form"`` or ``"url"``.
    mode: Literal["form", "url"]
    message: str
    #: Form mode: the flat object schema of the fields asked for.
    requested_schema: dict[str, Any] | None = None
    #: URL mode: the URL to visit, its host, and the server's id for this elicitation.
    url: str | None = None
    url_host: str | None = None
    elicitation_id: str | None = None
    #: The server's ``serverInfo`` (name, version...), as it introduced itself.
    server_info: types.Implementation | None = None

    @property
    def defaults(self) -> dict[str, Any]:
        """The default value of every field that has one, to pre-fill a form (V1125-38)."""
        properties = (self.requested_schema or {}).get("properties", {})
        return {name: prop["default"] for name, prop in properties.items()
                if isinstance(prop, Mapping) and "default" in prop}

    def accept(self, content: Mapping[str, Any] | None = None) -> ElicitationResult[Any]:
        """The user accepted: with the form's values, or (URL mode) agreed to open it."""
        return ElicitationResult(action="accept",
                                 content=dict(content) if content is not None else None)

    def decline(self) -> ElicitationResult[Any]:
        """The user said no."""
        return ElicitationResult(action="decline")

    def cancel(self) -> ElicitationResult[Any]:
        """The user dismissed the request without choosing."""
        return ElicitationResult(action="cancel")


ElicitationHandler = Callable[[ElicitationRequest], "ElicitationResult[Any] | Mapping[str, Any]"]


class ElicitationTracker:
    """URL-mode elicitations the server may still say are complete (V1125-42)."""

    def __init__(self, on_complete: Callable[[str], None] | None) -> None:
        self.on_complete = on_complete
        self._lock = threading.Lock()
        self._open: set[str] = set()

    def opened(self, elicitation_id: str) -> None:
        with self._lock:
            self._open.add(elicitation_id)

    def completed(self, params: Mapping[str, Any]) -> str | None:
        """The id to report as complete, or None for an unknown or finished one."""
        elicitation_id = params.get("elicitationId")
        with self._lock:
            if not isinstance(elicitation_id, str) or elicitation_id not in self._open:
                return None
            self._open.discard(elicitation_id)
        return elicitation_id


def _request(params: Mapping[str, Any], modes: frozenset[str],
             server_info: types.Implementation | None) -> ElicitationRequest:
    mode = params.get("mode", "form")
    if mode not in ("form", "url"):
        raise InvalidParams(f"Invalid params: unknown elicitation mode {mode!r}")
    if mode not in modes:
        raise InvalidParams(f"Invalid params: this client does not support {mode}-mode "
                            "elicitation")  # V1125-35
    message = params.get("message")
    if not isinstance(message, str):
        raise InvalidParams('Invalid params: "message" must be a string')
    if mode == "url":
        url, elicitation_id = params.get("url"), params.get("elicitationId")
        if not isinstance(url, str) or not isinstance(elicitation_id, str):
            raise InvalidParams('Invalid params: URL mode needs "url" and "elicitationId"')
        return ElicitationRequest(mode="url", message=message, url=url,
                                  url_host=urlsplit(url).hostname,
                                  elicitation_id=elicitation_id, server_info=server_info)
    schema = params.get("requestedSchema")
    try:
        if not isinstance(schema, Mapping):
            raise ValueError('"requestedSchema" must be an object')
        check_requested_schema(schema)
    except ValueError as exc:
        raise InvalidParams(f"Invalid params: {exc}") from None
    return ElicitationRequest(mode="form", message=message, requested_schema=dict(schema),
                              server_info=server_info)


def answer(handler: ElicitationHandler, incoming: IncomingRequest, *,
           modes: frozenset[str], server_info: types.Implementation | None,
           executor: Executor | None, tracker: ElicitationTracker) -> dict[str, Any]:
    """Answer one ``elicitation/create`` with the user's handler; runs on a worker.

    Raises:
        RpcError: -32602 for an undeclared mode or a malformed request, -32603 when the
            handler fails or answers with content that does not fit the schema.
    """
    request = _request(incoming.params, modes, server_info)
    try:
        if executor is None:
            result = handler(request)
        else:  # on the application's thread: a dialog asks the user
            result = call_on(executor, incoming.cancelled, handler, request)
    except RpcError:
        raise
    except Exception:
        log.exception("the elicitation handler failed")
        raise InternalError("Internal error: the client could not ask its user") from None
    try:
        if isinstance(result, ElicitationResult):
            decoded = result
        elif isinstance(result, Mapping):
            decoded = decode_result(result)
        else:
            raise TypeError(f"expected an ElicitationResult, got {type(result).__name__}")
    except (TypeError, InvalidParams) as exc:
        log.error("the elicitation handler returned an invalid answer: %s", exc)
        raise InternalError("Internal error: the client's elicitation handler returned an "
                            "invalid answer") from None
    if decoded.accepted and request.mode == "form":
        assert request.requested_schema is not None
        problems = content_errors(request.requested_schema, decoded.content or {})
        if problems:
            log.error("the elicitation handler's content does not fit the schema: %s",
                      "; ".join(problems))
            raise InternalError("Internal error: the user's answer does not fit the "
                                "requested schema")
    if decoded.accepted and request.mode == "url":
        assert request.elicitation_id is not None
        tracker.opened(request.elicitation_id)
        decoded = attrs.evolve(decoded, content=None)
    return decoded.to_wire()
