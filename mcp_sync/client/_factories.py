"""How :class:`~mcp_sync.Client` is made for the two usual transports: a child process
over stdio, or a Streamable HTTP endpoint.

Each factory hands the client a :class:`Connector`: the function that makes a new
transport (for reconnecting) together with the key under which the server's era is
cached (see :mod:`mcp_sync.client._eras`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any, TypeVar

from ..transports.base import DEFAULT_MAX_MESSAGE_SIZE, Transport
from ._eras import http_era_key, stdio_era_key

if TYPE_CHECKING:
    import requests

C = TypeVar("C", bound="Factories")

__all__ = ["Connector", "Factories"]


class Connector:
    """Makes a new transport to one server; ``era_key`` names that server for the era cache."""

    def __init__(self, connect: Callable[[], Transport], era_key: str) -> None:
        self._connect = connect
        self.era_key = era_key

    def __call__(self) -> Transport:
        return self._connect()


class Factories:
    """The ``stdio`` and ``http`` constructors of :class:`~mcp_sync.Client`, mixed into it."""

    def __init__(self, transport: Transport | Callable[[], Transport], **options: Any) -> None:
        raise NotImplementedError

    @classmethod
    def stdio(
        cls: type[C],
        command: str | Sequence[str],
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        inherit_env: bool = True,
        cwd: str | os.PathLike[str] | None = None,
        stderr: IO[Any] | int | None = None,
        close_timeout: float = 2.0,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        **options: Any,
    ) -> C:
        """Start a server as a child process and connect to it over its stdin/stdout.

        Args:
            command: the program, or the program and its arguments as a list.
            args: more arguments, after those in ``command``.
            env: environment variables for the server, over ours (see ``inherit_env``).
            inherit_env: False to give the server only ``env``.
            cwd: the server's working directory.
            stderr: where the server's stderr goes: by default each line is logged to
                the ``mcp_sync.stdio.stderr`` logger; or a file, or ``subprocess.DEVNULL``.
            close_timeout: on close, seconds to wait after closing the server's stdin, and
                again after SIGTERM, before escalating to SIGTERM and SIGKILL.
            max_message_size: the largest message accepted from the server, in bytes.
            options: passed on to :class:`Client` (``timeout``, ``name``,
                ``reconnect``, ...). With ``reconnect=True`` a server that exited is
                started again at the next call.

        Example::

            with Client.stdio(["python", "server.py"]) as client:
                print(client.call_tool("add", {"a": 1, "b": 2}).content[0].text)
        """
        from ..transports.stdio import StdioClientTransport

        argv = [command] if isinstance(command, str) else list(command)

        def connect() -> Transport:
            return StdioClientTransport(
                [*argv, *args], env=env, inherit_env=inherit_env, cwd=cwd, stderr=stderr,
                close_timeout=close_timeout, max_message_size=max_message_size)

        return cls(Connector(connect, stdio_era_key([*argv, *args], cwd)), **options)

    @classmethod
    def http(
        cls: type[C],
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        http_timeout: float = 30.0,
        read_timeout: float | None = 300.0,
        session_factory: Callable[[], requests.Session] | None = None,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        legacy_fallback: bool = True,
        listen: bool = True,
        auth: requests.auth.AuthBase | None = None,
        **options: Any,
    ) -> C:
        """Connect to a server over Streamable HTTP (or the older HTTP+SSE transport).

        Args:
            url: the server's MCP endpoint, e.g. ``http://127.0.0.1:8000/mcp``.
            headers: sent with every request (``Authorization: Bearer ...``).
            http_timeout: the connect timeout, in seconds.
            read_timeout: the longest silence on an answer or a stream.
            session_factory: builds each ``requests.Session`` (proxies, certificates).
            max_message_size: the largest answer or event accepted, in bytes.
            legacy_fallback: try the 2024-11-05 HTTP+SSE transport when the server
                refuses ``initialize`` with 400, 404 or 405 (HTTP-37).
            listen: open the GET stream for messages the server sends on its own.
            auth: a ``requests`` auth object for every request: ``OAuth()`` (a user
                authorizes in the browser), ``ClientCredentials(...)``,
                ``BearerToken("...")`` from :mod:`mcp_sync.auth`, or any other. See
                docs/auth.md.
            options: passed on to :class:`Client` (``timeout``, ``name``, handlers,
                ``reconnect``...). With ``reconnect=True`` a server that could not be
                reached is connected to again, in a new session, at the next call.

        Raises:
            AuthorizationError: no token could be obtained, or the server refused it.
            HttpError: the server refused with an HTTP error status (401, 403, ...).
            ConnectionLost: the server cannot be reached.
            ProtocolVersionError: the server speaks no version we do.

        See docs/http.md for sessions, resumption and session renewal.
        """
        from .http._transport import HttpClientTransport

        def connect() -> Transport:
            return HttpClientTransport(
                url, headers=headers, http_timeout=http_timeout, read_timeout=read_timeout,
                session_factory=session_factory, max_message_size=max_message_size,
                legacy_fallback=legacy_fallback, listen=listen, auth=auth)

        return cls(Connector(connect, http_era_key(url)), **options)
