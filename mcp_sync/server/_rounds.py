"""Input-required results: one function body for both eras (MCP 2026-07-28, SEP-2322).

A legacy session asks the client for input with a request of its own
(``elicitation/create``, ``sampling/createMessage``, ``roots/list``) and waits for the
answer. The modern era has no requests from server to client: a ``tools/call``,
``prompts/get`` or ``resources/read`` instead ends with an *input-required result*
(``resultType: "input_required"``) naming what it needs in ``inputRequests`` (a map of
keys to those requests) with an opaque ``requestState``; the client gets the answers
and sends the same request again, with a new id, ``inputResponses`` (the answers by
key) and the ``requestState``.

Theory of operation. :class:`~mcp_sync.Context` hands every request for input to an
*asker*. In a legacy session it sends the request and waits (:class:`LegacyAsker`). In
a modern request (:class:`ModernAsker`) it looks the question's key up among the
answers this round brought; an answered question returns its answer at once, an
unanswered one is recorded and ends the function by raising :class:`InputRequired`, a
``BaseException`` so that a function's own ``except Exception`` does not swallow it.
:func:`serve_rounds` then answers with an input-required result asking for everything
recorded, and seals into ``requestState`` the answers so far, the keys asked and the
function's ``ctx.state``. When the request comes back, the function runs again from
the top: the questions answered before return their answers from the state, the new
ones from ``inputResponses``, and so on until the function returns.

Keys name questions. By default a question's key is its method and position in the run
(``elicit-1``, ``sample-2``, ``roots-3``), which is stable as long as the function asks
the same questions in the same order for the same answers; ``key=`` names it explicitly.
An answer is checked when the function reads it (the shape of the result, a form's
content against the requested schema); a wrong one is -32602.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

from ..errors import CapabilityError, InternalError, InvalidParams, MissingClientCapability
from ..protocol._request_state import RequestBinding, request_binding

if TYPE_CHECKING:
    from .. import types
    from ..engine._engine import IncomingRequest
    from ..protocol._versions import VersionProfile
    from ._connection import ServerConnection
    from ._registry import Handler

__all__ = ["INPUT_METHODS", "InputRequired", "asker_for", "gather", "serve_rounds"]

log = logging.getLogger("mcp_sync.server")

#: The requests an input-required result may answer (SEP-2322); any other fails at once.
INPUT_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})

#: What a modern round may ask of the client, and the short name of its default key.
_ASKABLE = {"elicitation/create": "elicit", "sampling/createMessage": "sample",
            "roots/list": "roots"}


class InputRequired(BaseException):
    """Ends a function whose modern request needs the client's input first.

    A ``BaseException``, like ``GeneratorExit``: a function's ``except Exception``
    lets it through. The library catches it; a function never sees it unless it
    catches ``BaseException``, and even then the request is answered as input-required.
    """


class _AnswerRefused(BaseException):
    """Ends a function whose client answered a question wrongly: -32602, not a tool error."""

    def __init__(self, error: InvalidParams) -> None:
        super().__init__(error.message)
        self.error = error


class Rounds:
    """What one modern request knows of its questions in this round."""

    def __init__(self, answers: dict[str, dict[str, Any]], state: dict[str, Any],
                 number: int) -> None:
        self._answers = answers
        self.state = state
        self.number = number
        #: Questions asked and not answered: key -> the request (method, params).
        self.pending: dict[str, dict[str, Any]] = {}
        self.used: set[str] = set()
        self.refused: InvalidParams | None = None
        self._asked = 0
        self._lock = threading.Lock()

    def ask(self, method: str, params: dict[str, Any] | None, key: str | None) -> dict[str, Any]:
        with self._lock:
            self._asked += 1
            if key is None:
                key = f"{_ASKABLE[method]}-{self._asked}"
            answer = self._answers.get(key)
            if answer is not None:
                self.used.add(key)
                return answer
            request: dict[str, Any] = {"method": method}
            if params is not None:
                request["params"] = params
            self.pending.setdefault(key, request)
        raise InputRequired(key)

    def refuse(self, error: InvalidParams) -> NoReturn:
        with self._lock:
            if self.refused is None:
                self.refused = error
        raise _AnswerRefused(error)


def _check_key(key: str | None) -> None:
    if key is not None and (not isinstance(key, str) or not key):
        raise ValueError(f"key must be a non-empty string, not {key!r}")


# The rounds of the modern requests being served, by request: every Context of a request
# (a hook's, the function's, a nested read's) finds them here. Entries live while the
# handler runs.
_ACTIVE: dict[IncomingRequest, Rounds] = {}


class LegacyAsker:
    """Requests for input as requests to the client, waited for (a legacy session)."""

    modern = False

    def __init__(self, connection: ServerConnection, incoming: IncomingRequest) -> None:
        self._connection = connection
        self._incoming = incoming
        self.profile: VersionProfile | None = connection.session.profile
        self.capabilities: types.ClientCapabilities | None = connection.client_capabilities

    def request(self, method: str, params: dict[str, Any] | None, *, timeout: float | None,
                key: str | None) -> dict[str, Any]:
        _check_key(key)  # unused here, but a key that would fail a modern request fails now
        return self._connection.send_request(method, params, timeout=timeout,
                                             related_to=self._incoming.id)

    def refuse(self, error: InvalidParams) -> NoReturn:
        raise error

    def missing(self, message: str, required: dict[str, Any]) -> CapabilityError:
        return CapabilityError(message)


class ModernAsker:
    """Requests for input as questions of an input-required result (a modern request)."""

    modern = True

    def __init__(self, incoming: IncomingRequest) -> None:
        self._incoming = incoming
        self.profile: VersionProfile | None = incoming.scope.profile
        self.capabilities: types.ClientCapabilities | None = incoming.scope.client_capabilities

    def request(self, method: str, params: dict[str, Any] | None, *, timeout: float | None,
                key: str | None) -> dict[str, Any]:
        if method not in _ASKABLE:
            raise CapabilityError(
                f"{method} cannot be sent in a modern (2026-07-28) request: the era has no "
                "requests from server to client but elicitation, sampling and roots, "
                "asked through an input-required result")
        _check_key(key)
        rounds = _ACTIVE.get(self._incoming)
        if rounds is None:
            raise CapabilityError(
                f"{method} is only possible while serving tools/call, prompts/get or "
                f"resources/read in a modern (2026-07-28) request, not {self._incoming.method}")
        from ._elicitation import client_modes  # here: only a function that asks needs it

        caps = self.capabilities
        if method == "sampling/createMessage" and (caps is None or caps.sampling is None):
            raise self.missing("the client did not declare the sampling capability",
                               {"sampling": {}})
        if method == "roots/list" and (caps is None or caps.roots is None):
            raise self.missing("the client did not declare the roots capability",
                               {"roots": {}})
        if method == "elicitation/create" and not client_modes(caps):
            raise self.missing("the client did not declare the elicitation capability",
                               {"elicitation": {}})
        return rounds.ask(method, params, key)

    def refuse(self, error: InvalidParams) -> NoReturn:
        rounds = _ACTIVE.get(self._incoming)
        if rounds is None:
            raise error
        rounds.refuse(error)

    def missing(self, message: str, required: dict[str, Any]) -> CapabilityError:
        """-32021 if it escapes the function (SEP-2575: a server must not rely on what
        the client did not declare)."""
        return MissingClientCapability(message, {"requiredCapabilities": required})


Asker = LegacyAsker | ModernAsker


def asker_for(connection: ServerConnection, incoming: IncomingRequest) -> Asker:
    """Where the requests for input of ``incoming``'s functions go."""
    if incoming.scope is not None:
        return ModernAsker(incoming)
    return LegacyAsker(connection, incoming)


def request_state_of(incoming: IncomingRequest) -> dict[str, Any] | None:
    """The ``ctx.state`` of a modern request being served with rounds, or None."""
    rounds = _ACTIVE.get(incoming)
    return rounds.state if rounds is not None else None


def gather(incoming: IncomingRequest, calls: tuple[Callable[[], Any], ...]) -> list[Any]:
    """Run ``calls`` in order; in a modern request, every question they ask in one round.

    A call that needs input is interrupted as usual, but the next calls still run, so
    the input-required result asks all their questions at once.
    """
    results: list[Any] = []
    waiting: InputRequired | None = None
    for call in calls:
        if incoming.scope is None:
            results.append(call())
            continue
        try:
            results.append(call())
        except InputRequired as exc:
            waiting = waiting or exc
            results.append(None)
    if waiting is not None:
        raise waiting
    return results


# --- serving a round ------------------------------------------------------------------------


def _input_responses(params: dict[str, Any]) -> dict[str, dict[str, Any]]:
    responses = params.get("inputResponses", {})
    if not isinstance(responses, dict):
        raise InvalidParams('Invalid params: "inputResponses" must be an object mapping '
                            "keys to the client's results", {"inputResponses": responses})
    for key, value in responses.items():
        if not isinstance(value, dict):
            raise InvalidParams(f'Invalid params: "inputResponses.{key}" must be a result '
                                "object (ElicitResult, CreateMessageResult or ListRootsResult)",
                                {"key": key})
    return responses


def _audience(connection: ServerConnection, incoming: IncomingRequest) -> str:
    """Whom a request state is for: the server, and over HTTP with authorization the
    identity of the request's token, so that state minted for one user is foreign to
    another (V0618-45)."""
    token = connection.engine.transport.credentials_of(incoming.id)
    identity = getattr(token, "identity", None)
    name = connection.server.name
    return name if not isinstance(identity, str) else f"{name}\x00{identity}"


def serve_rounds(connection: ServerConnection, incoming: IncomingRequest,
                 handler: Handler) -> dict[str, Any]:
    """Run ``handler`` for a modern request that may need input; its result, complete or
    input-required.

    Raises:
        InvalidParams: malformed ``inputResponses``; a tampered, foreign or expired
            ``requestState``; an answer that does not fit its question.
        InternalError: ``ctx.state`` holds something JSON cannot carry.
    """
    params = incoming.params
    responses = _input_responses(params) if "inputResponses" in params else {}
    seal = connection.server._request_state
    token = params.get("requestState")
    # Only a state read or written needs the binding: a call that asks nothing never
    # pays for digesting its arguments (a megabyte of them, perhaps).
    binding: RequestBinding | None = None
    answers: dict[str, dict[str, Any]] = {}
    state: dict[str, Any] = {}
    number = 1
    if token is None:
        # A first round, or a client answering without state: any key may answer.
        fresh = responses
    else:
        binding = request_binding(incoming.method, params, _audience(connection, incoming))
        content = seal.open(token, binding, time.time())
        answers = dict(content.get("answers") or {})
        state = dict(content.get("state") or {})
        number = int(content.get("round") or 1) + 1
        asked = content.get("asked") or {}
        fresh = {key: value for key, value in responses.items() if key in asked}
    rounds = Rounds({**answers, **fresh} if answers else fresh, state, number)
    _ACTIVE[incoming] = rounds
    try:
        result = handler(connection, incoming) or {}
    except InputRequired:
        result = {}
    except _AnswerRefused as exc:
        raise exc.error from None
    finally:
        del _ACTIVE[incoming]
    if rounds.refused is not None:  # the function caught what ended it, and went on
        raise rounds.refused
    if not rounds.pending:
        return result
    carried = {**answers, **{key: fresh[key] for key in fresh
                             if token is not None or key in rounds.used}}
    content = {"round": number, "answers": carried, "state": rounds.state,
               "asked": {key: request["method"] for key, request in rounds.pending.items()}}
    if binding is None:
        binding = request_binding(incoming.method, params, _audience(connection, incoming))
    try:
        sealed = seal.seal(binding, content, time.time())
    except (TypeError, ValueError) as exc:
        log.error("ctx.state of %s cannot be carried to the next round: %s",
                  incoming.method, exc)
        raise InternalError("Internal error: ctx.state holds something JSON cannot carry",
                            {"reason": str(exc)}) from None
    return {"resultType": "input_required", "inputRequests": dict(rounds.pending),
            "requestState": sealed}
