"""The GET stream for server-initiated messages (HTTP-17 to HTTP-21).

Once ``notifications/initialized`` was accepted, one thread holds a GET stream open and
delivers what arrives on it. When the server ends the stream it is reopened after a
backoff, with ``Last-Event-ID`` so that nothing sent meanwhile is lost (HTTP-21, HTTP-26).
A 405 means the server offers no such stream (HTTP-18): its messages then come on the
streams of our POSTs. A new session replaces the listener of the old one.

A server may send a request about a call (an elicitation, say) on the GET stream as soon
as that call arrives, and a message sent while no stream is open may be lost. So the
first requests of a session wait, for at most ``LISTENER_GRACE`` seconds, until the GET
stream has been answered (opened, refused or failed).
"""

from __future__ import annotations

import logging

import requests

from ...errors import AuthorizationError
from ._core import EVENT_STREAM, HttpCore, Outcome, resume_parser
from ._io import SocketRegistry, content_type

__all__ = ["LISTENER_GRACE", "ListenerMixin"]

#: How long requests wait for a new session's GET stream to be answered.
LISTENER_GRACE = 2.0

log = logging.getLogger("mcp_sync.http.client")


class ListenerMixin(HttpCore):
    """The GET listener of :class:`~.http_client.HttpClientTransport`."""

    def _start_listener(self) -> None:
        with self._lock:
            if self._closing or not self._listen or self._endpoint is not None:
                return
            self._listener_generation += 1
            generation = self._listener_generation
            old, self._listener_sockets = self._listener_sockets, SocketRegistry()
            self._listener_settled.clear()
            # Started under the lock, so close() cannot miss it when it joins our threads.
            self._threads.start("listener", self._listen_loop, generation,
                                self._listener_sockets)
        if old is not None:
            old.shutdown()

    def _listening(self, generation: int) -> bool:
        return not self._stop.is_set() and generation == self._listener_generation

    def _listen_loop(self, generation: int, sockets: SocketRegistry) -> None:
        session = self._new_session(sockets)
        failures = 0
        last_id: str | None = None
        retry: int | None = None
        try:
            while self._listening(generation):
                with self._lock:
                    session_id, version = self._session_id, self._protocol_version
                headers = self._headers(EVENT_STREAM, session_id, version,
                                        last_event_id=last_id)
                try:
                    response = session.get(self.url, headers=headers, stream=True,
                                           timeout=self._timeout)
                except (requests.RequestException, AuthorizationError) as exc:
                    log.debug("opening the GET stream at %s failed: %s", self.url, str(exc))
                    self._settle(generation)
                    failures += 1
                else:
                    self._settle(generation)
                    with response:
                        status = response.status_code
                        if status == 405:  # HTTP-18: no server push; POST streams carry it
                            log.debug("the server at %s offers no GET stream", self.url)
                            return
                        if status == 404:
                            log.debug("the session at %s ended; GET stream stopped", self.url)
                            return
                        if 200 <= status < 300 and content_type(response) == EVENT_STREAM:
                            parser = resume_parser(None, self._max_message_size, last_id)
                            outcome = self._pump(response, parser, None)
                            last_id = parser.last_event_id
                            retry = parser.retry if parser.retry is not None else retry
                            failures = 0 if outcome is not Outcome.TOO_LARGE else failures + 1
                        else:
                            log.debug("the GET stream at %s was refused: HTTP %d",
                                      self.url, status)
                            failures += 1
                if failures and failures >= self._max_reconnects:
                    log.warning("giving up on the GET stream at %s after %d failures",
                                self.url, failures)
                    return
                if self._stop.wait(self._delay(retry, failures)):
                    return
        finally:
            self._settle(generation)
            session.close()

    def _settle(self, generation: int) -> None:
        # Requests waiting for this stream go on; a newer listener has its own wait.
        with self._lock:
            if generation == self._listener_generation:
                self._listener_settled.set()

    def _wait_for_listener(self) -> None:
        if not self._listener_settled.wait(LISTENER_GRACE):
            log.debug("the GET stream at %s is not open yet; sending anyway", self.url)
