"""The modern era (2026-07-28) in the Streamable HTTP client transport.

A modern request is a POST of its own with no session: it names its version in
``MCP-Protocol-Version`` (the one in its ``_meta``) and its method, name and marked tool
arguments in headers (:mod:`._headers`). A 4xx whose body is a modern JSON-RPC error is
that error (-32022 with the server's versions must reach the client; so must -32022 in
answer to ``initialize``, COEX-10). Cancelling a modern request closes its answer's
stream: the era has no ``notifications/cancelled`` over HTTP.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
from collections.abc import Sequence
from typing import TYPE_CHECKING

import requests

from ...errors import RpcError
from ...protocol._jsonrpc import Notification, Request
from ._core import HttpCore, Post
from ._headers import header_paths, header_problem, request_headers
from ._io import read_limited

__all__ = ["ModernPosts", "add_headers", "names_version"]

log = logging.getLogger("mcp_sync.http.client")

#: The codes only a modern server answers with (COEX-3, COEX-10).
MODERN_CODES = frozenset({-32020, -32021, -32022})
#: The initialize answers that may mean "this is a 2024-11-05 server" (HTTP-37, AMBIG-24).
LEGACY_HINTS = frozenset({400, 404, 405})
_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


class ModernPosts(HttpCore):
    """The modern requests' part of :class:`~._transport.HttpClientTransport`."""

    _tool_headers: dict[str, dict[tuple[str, ...], str]]

    if TYPE_CHECKING:
        def _try_legacy(self, post: Post) -> bool: ...

    def remember_tools(self, tools: Sequence[tuple[str, object]]) -> list[str]:
        """Note the ``x-mcp-header`` arguments of listed tools, as ``(name, input schema)``
        pairs; returns the names of tools whose annotations are invalid (SEP-2243)."""
        invalid: list[str] = []
        with self._lock:
            for name, schema in tools:
                problem = header_problem(schema)
                if problem is not None:
                    log.warning("tool %r of %s cannot be called: %s", name, self.url, problem)
                    invalid.append(name)
                    self._tool_headers.pop(name, None)
                else:
                    self._tool_headers[name] = header_paths(schema)
        return invalid

    def _refused(self, post: Post, response: requests.Response) -> bool:
        """A modern request, or initialize, answered 4xx with a JSON-RPC error body: a
        modern server's refusal (-32022 with its versions, -32601 for an unknown method)
        is that error, not an HTTP failure; a modern code in answer to initialize means a
        modern-only server, never a 2024-11-05 one (COEX-10). False leaves the status to
        decide."""
        data: bytes | None = None
        try:
            data = read_limited(response, 64 * 1024)
            value = json.loads(data.decode("utf-8")) if data else None
        except (requests.RequestException, ValueError):
            value = None
        error = value.get("error") if isinstance(value, dict) else None
        code = error.get("code") if isinstance(error, dict) else None
        if not isinstance(code, int) or not (post.modern or code in MODERN_CODES):
            if post.probe and response.status_code in LEGACY_HINTS and self._try_legacy(post):
                return True
            detail = error.get("message") if isinstance(error, dict) else None
            text = data.decode("utf-8", "replace")[:2000] if data else ""
            self._fail_status(post, response, (text, detail if isinstance(detail, str)
                                               else None))
            return True
        assert isinstance(error, dict)
        self._fail(post, lambda: RpcError.from_wire(dict(error)))
        return True

    def _close_answer(self, post: Post) -> None:
        with self._lock:
            post.close_requested = True
            response = post.response
        if response is not None:
            shut(response)


def names_version(message: Notification | Request) -> bool:
    """Whether a message's ``_meta`` names a protocol version (a modern message)."""
    meta = (message.params or {}).get("_meta")
    return isinstance(meta, dict) and isinstance(meta.get(_VERSION_KEY), str)


def shut(response: requests.Response) -> None:
    """End the reading of ``response`` from any thread."""
    # Shutting the socket down ends the sender's blocked read of this answer at once;
    # the connection is not used again.
    # Never response.close() here: it would wait for the reading thread.
    sock = getattr(getattr(response.raw, "connection", None), "sock", None)
    if sock is None:  # urllib3 let go of the connection: the socket under the reader
        reader = getattr(getattr(response.raw, "_fp", None), "fp", None)
        sock = getattr(getattr(reader, "raw", None), "_sock", None)
    if isinstance(sock, socket.socket):
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
    else:
        log.debug("cannot close the answer of a cancelled request; it is left to end")


def add_headers(post: Post, message: object,
                 tool_headers: dict[str, dict[tuple[str, ...], str]]) -> None:
    """Set the headers of ``post`` beyond the usual ones, and whether it is modern."""
    # Mcp-Method (and Mcp-Name) on every single message: gateways route on them, and a
    # legacy server ignores them (COEX-8). A modern request also names its version.
    if not isinstance(message, (Request, Notification)):
        return
    params = message.params or {}
    meta = params.get("_meta")
    version = meta.get(_VERSION_KEY) if isinstance(meta, dict) else None
    if isinstance(message, Request) and isinstance(version, str) and version.isprintable():
        post.modern = True
        post.extra_headers = request_headers(message.method, params, version, tool_headers)
    else:
        post.extra_headers = {"Mcp-Method": message.method}
