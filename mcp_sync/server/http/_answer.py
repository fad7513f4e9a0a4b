"""The HTTP answers of the Streamable HTTP application that do not need werkzeug's
``Response``: a POST's JSON body, its event stream, 202; and the CORS fields."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ._checks import SESSION_HEADER
from ._sse_body import SseBody

__all__ = ["SSE_HEADERS", "PostAnswer", "cors_fields"]

SSE_HEADERS = {"Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no"}


def cors_fields(origin: str) -> list[tuple[str, str]]:
    """What lets a page at ``origin`` read an answer, and its session id."""
    return [("Access-Control-Allow-Origin", origin),
            ("Access-Control-Expose-Headers", SESSION_HEADER)]


class PostAnswer:
    """A POST's answer in its usual forms (a JSON body, an event stream, 202), handed to
    the WSGI server as it is, without werkzeug's ``Response``, which builds its headers
    and wraps its body in an iterator of its own for every answer, on the path every
    call takes. The status line and header fields are those werkzeug wrote for
    the same answers.
    """

    __slots__ = ("_body", "_headers", "_status", "status_code")

    def __init__(self, status_code: int, status: str, headers: list[tuple[str, str]],
                 body: Any) -> None:
        self.status_code = status_code
        self._status = status
        self._headers = headers
        self._body = body

    @classmethod
    def json(cls, data: bytes) -> PostAnswer:
        return cls(200, "200 OK", [("Content-Type", "application/json"),
                                   ("Content-Length", str(len(data)))], [data])

    @classmethod
    def events(cls, body: SseBody | Iterator[bytes]) -> PostAnswer:
        # The body itself, whose close() the WSGI server calls when the stream ends.
        return cls(200, "200 OK", [*SSE_HEADERS.items(),
                                   ("Content-Type", "text/event-stream")], body)

    @classmethod
    def accepted(cls) -> PostAnswer:
        return cls(202, "202 ACCEPTED", [("Content-Type", "text/plain; charset=utf-8"),
                                         ("Content-Length", "0")], [])

    def allow_origin(self, origin: str) -> None:
        """The CORS fields a browser needs to read the answer (see ``__call__``)."""
        self._headers += [*cors_fields(origin), ("Vary", "Origin")]

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        start_response(self._status, self._headers)
        return self._body
