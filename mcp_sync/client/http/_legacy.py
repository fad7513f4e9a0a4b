"""The client side of the 2024-11-05 HTTP+SSE transport, for servers older than Streamable HTTP.

The old transport (HTTP-38) has two endpoints. The client GETs an event stream whose first
event, ``endpoint``, names the URI to POST every message to; everything the server sends,
responses included, arrives on that one stream as ``message`` events. There is no session
header, no resumption and no DELETE: the session lives as long as the stream.

:func:`open_legacy_stream` performs the probe of HTTP-37 (the GET that follows a refused
``initialize`` POST); :func:`legacy_messages` reads the stream it opened;
:class:`LegacyMixin` is the transport's side of it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from urllib.parse import urljoin

import attrs
import requests

from ...errors import AuthorizationError, ConnectionLost
from ...protocol._jsonrpc import Incoming
from ...protocol._sse import SseEvent, SseParser
from ...transports._decode import decode_frame
from ._core import ACCEPT_BOTH, HttpCore, Post
from ._io import STREAM_ERRORS, EventTooLarge, content_type, drain, feed, iter_raw, same_origin

__all__ = ["LegacyMixin", "LegacyStream", "legacy_messages", "open_legacy_stream"]

log = logging.getLogger("mcp_sync.http.client")

Timeout = tuple[float, "float | None"]

_PROBE_ERRORS: tuple[type[Exception], ...] = (EventTooLarge, *STREAM_ERRORS)


@attrs.define(eq=False)
class LegacyStream:
    """An open old-style event stream whose ``endpoint`` event was read."""

    response: requests.Response
    parser: SseParser
    chunks: Iterator[bytes]
    #: The absolute URI to POST messages to.
    endpoint: str
    #: Events that arrived in the same read as the ``endpoint`` event.
    pending: list[SseEvent]


def open_legacy_stream(session: requests.Session, url: str, headers: Mapping[str, str],
                       timeout: Timeout, max_event_size: int) -> LegacyStream | str:
    """GET ``url`` expecting an old-style event stream that starts with ``endpoint``.

    Returns the open stream, or why ``url`` is not an old-style server (the stream is then
    closed). The endpoint must be on the same origin as ``url``: a server must not be able
    to send our messages, and the credentials in ``headers``, to another host. Every
    failure, an oversized first event included, comes back as a reason, never raised.
    """
    try:
        response = session.get(url, headers={**headers, "Accept": "text/event-stream"},
                               stream=True, timeout=timeout)
    except (requests.RequestException, AuthorizationError) as exc:
        return f"GET {url} failed: {exc}"
    kind = content_type(response)
    if response.status_code != 200 or kind != "text/event-stream":
        response.close()
        return f"GET {url} answered HTTP {response.status_code} ({kind or 'no content type'})"
    parser = SseParser(max_event_size)
    chunks = iter_raw(response)
    events: list[SseEvent] = []
    try:
        for chunk in chunks:
            events = feed(parser, chunk)
            if events:
                break
    except _PROBE_ERRORS as exc:
        response.close()
        return f"reading the event stream failed: {exc}"
    if not events:
        response.close()
        return "the event stream ended before its first event"
    first = events[0]
    if first.event != "endpoint":
        response.close()
        return f"the first event was {first.event!r}, not 'endpoint'"
    endpoint = urljoin(url, first.data.strip())
    if not same_origin(url, endpoint):
        response.close()
        return f"the endpoint {endpoint!r} is not on the origin of {url!r}"
    return LegacyStream(response, parser, chunks, endpoint, events[1:])


def legacy_messages(stream: LegacyStream) -> Iterator[Incoming]:
    """Each ``message`` event's data, decoded, until the stream ends.

    Other events (a repeated ``endpoint``, a keep-alive) and events without data are
    skipped.

    Raises:
        EventTooLarge: an event grew beyond the size limit.
        Exception: one of ``STREAM_ERRORS`` when the stream broke.
    """
    pending, stream.pending = stream.pending, []
    yield from _messages(pending)
    for chunk in stream.chunks:
        yield from _messages(feed(stream.parser, chunk))


def _messages(events: list[SseEvent]) -> Iterator[Incoming]:
    for event in events:
        if event.event == "message" and event.data:
            yield decode_frame(event.data)


class LegacyMixin(HttpCore):
    """The fallback of :class:`~.http_client.HttpClientTransport` to the old transport."""

    def _try_legacy(self, post: Post) -> bool:
        """Probe for an old-style server; True when it took over answering ``post``."""
        log.info("%s refused initialize; trying the 2024-11-05 HTTP+SSE transport", self.url)
        session = self._new_session(self._stream_sockets)
        # The stream's read timeout holds for as long as the session lives: a silence
        # longer than read_timeout ends it, since the old transport cannot resume.
        opened = open_legacy_stream(session, self.url, self._user_headers,
                                    self._timeout, self._max_message_size)
        if isinstance(opened, str):
            session.close()
            log.info("%s is not a 2024-11-05 server either: %s", self.url, opened)
            return False
        with self._lock:
            if self._closing:
                opened.response.close()
                session.close()
                return True
            self._endpoint = opened.endpoint
            self._threads.start("legacy-stream", self._legacy_loop, opened, session)
        self._mode_known.set()
        self._send_legacy(self._sender_session(), opened.endpoint, post)
        return True

    def _legacy_loop(self, stream: LegacyStream, session: requests.Session) -> None:
        error: ConnectionLost
        try:
            for incoming in legacy_messages(stream):
                self._deliver(incoming, None)
            error = ConnectionLost(f"the server at {self.url} closed its event stream")
        except EventTooLarge as exc:
            error = ConnectionLost(f"the server at {self.url} sent an event that is too "
                                   f"large: {exc}")
        except Exception as exc:  # STREAM_ERRORS, or anything else: the session is over
            if not isinstance(exc, STREAM_ERRORS):
                log.exception("reading the event stream from %s failed", self.url)
            error = ConnectionLost(f"the event stream from {self.url} broke: {exc}")
            error.__cause__ = exc
        finally:
            stream.response.close()
            session.close()
        self._lose(error)

    def _send_legacy(self, session: requests.Session, endpoint: str, post: Post) -> None:
        headers = self._headers(ACCEPT_BOTH, None, None, json_body=True)
        try:
            response = session.post(endpoint, data=post.body, headers=headers, stream=True,
                                    timeout=self._timeout)
        except AuthorizationError as exc:
            failure = exc
            self._fail(post, lambda: failure)
            return
        except requests.RequestException as exc:
            self._post_failed(post, exc)
            return
        with response:
            if 200 <= response.status_code < 300:
                drain(response)  # the answers come on the event stream
            else:
                self._fail_status(post, response)
