"""The WSGI body of one SSE response of a session's stream, and SSE polling.

SSE polling (2025-11-25, V1125-12..17): in a session negotiated at 2025-11-25 a POST's
event stream opens with a *priming* event, an id and empty data, so that the client can
resume the stream from its very start; the server may end the HTTP response before the
stream's last response (after ``hang_up_after`` seconds), sending a ``retry:`` field
first, and the client comes back with GET and ``Last-Event-ID`` to take the rest. The
logical stream goes on meanwhile: what the server sends waits in the stream (and in the
event store) for the client's next GET. Sessions at older versions get none of this:
some of their clients read an empty ``data:`` as a broken message (NAMBIG-6, DES-8).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import attrs

from ...protocol._sse import format_comment, format_priming, format_retry

if TYPE_CHECKING:
    from ._session import SessionTransport, Stream

__all__ = ["Polling", "SseBody"]


@attrs.frozen
class Polling:
    """How a response of a polling session (2025-11-25) behaves.

    Attributes:
        hang_up_after: seconds after which an unfinished stream's response ends (with
            ``retry:``), so that the client polls; None keeps it open.
        retry_ms: the ``retry:`` sent before the server ends an unfinished stream.
    """

    hang_up_after: float | None
    retry_ms: int


class SseBody:
    """The WSGI body of one SSE response: events as they come, keep-alives in between.

    The first chunk goes out at once (a comment, the priming event when ``prime``, with
    the ``retry:`` of ``polling``, then any replayed events) so that the client has the
    response headers without waiting for the first event. With ``polling``, a stream
    that ends before its last response (the server hung up, or ended an idle stream)
    ends with a ``retry:`` field.
    ``on_close`` runs exactly once, when the server closes the body, with False if the
    client went away while the stream was still due events (see
    :meth:`SessionTransport.detach`); a hang-up of ours is no client going away.
    """

    def __init__(self, transport: SessionTransport, stream: Stream | None, token: object | None,
                 *, replay: Sequence[bytes] = (), keepalive: float,
                 idle_timeout: float | None = None,
                 on_close: Callable[[bool], None] | None = None,
                 prime: bool = False, polling: Polling | None = None) -> None:
        self._transport = transport
        self._stream = stream
        self._token = token
        primer = b""
        if prime and stream is not None:
            primer = format_priming(f"{stream.id}:0",
                                    polling.retry_ms if polling is not None else None)
        self._first: bytes | None = format_comment() + primer + b"".join(replay)
        self._keepalive = keepalive
        self._idle_timeout = idle_timeout
        self._on_close = on_close
        self._ended = stream is None or token is None
        self._closed = False
        self._retry_ms = polling.retry_ms if polling is not None else None
        self._hang_up_at = (time.monotonic() + polling.hang_up_after
                            if polling is not None and polling.hang_up_after is not None
                            else None)

    def __iter__(self) -> SseBody:
        return self

    def __next__(self) -> bytes:
        if self._first is not None:
            first, self._first = self._first, None
            return first
        stream, token = self._stream, self._token
        while not self._ended:
            assert stream is not None and token is not None
            if (self._hang_up_at is not None and not stream.finished
                    and time.monotonic() >= self._hang_up_at):
                # The logical stream goes on; its events wait for the client's GET.
                self._transport.detach(stream, token)
                self._ended = True
                break
            payload, self._ended = self._transport.next_chunk(
                stream, token, self._keepalive, self._idle_timeout, self._hang_up_at)
            if payload:
                return payload
        # Ended by the server (a hang-up, an idle stream) rather than by delivering the
        # stream's end: this consumer no longer holds the stream.
        if self._retry_ms is not None and stream is not None and stream.consumer is not token:
            retry, self._retry_ms = self._retry_ms, None
            return format_retry(retry)
        raise StopIteration

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        finished = True
        if self._stream is not None and self._token is not None:
            finished = self._transport.detach(self._stream, self._token)
        if self._on_close is not None:
            self._on_close(finished)
