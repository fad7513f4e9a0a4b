"""Logging to clients: level order, the request a thread serves, and the logging.Handler.

Which request a worker thread is serving is kept in a thread-local while a user function
runs, so that a Python log record emitted inside a tool goes to the client that called
it, related to that call (over Streamable HTTP it travels on the call's own stream),
instead of to every connected client.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from .. import types
from ._content import json_safe

if TYPE_CHECKING:
    from ._connection import ServerConnection
    from ._context import Context
    from ._server import Server

__all__ = [
    "McpLogHandler",
    "RateLimit",
    "ServerLogging",
    "check_level",
    "current_context",
    "level_for_record",
    "level_rank",
    "run_serving",
]

_RANK: dict[str, int] = {level: rank for rank, level in enumerate(types.LOGGING_LEVELS)}
_current = threading.local()
_T = TypeVar("_T")


def check_level(level: Any) -> types.LoggingLevel:
    """``level`` if it is one of the RFC 5424 names MCP uses.

    Raises:
        ValueError: it is not (the message lists the valid names).
    """
    if not isinstance(level, str) or level not in _RANK:
        raise ValueError(f"unknown logging level {level!r}; expected one of "
                         f"{', '.join(types.LOGGING_LEVELS)}")
    return level  # type: ignore[return-value]


def level_rank(level: str) -> int:
    """Severity order: ``debug`` is 0, ``emergency`` 7."""
    return _RANK[level]


def level_for_record(levelno: int) -> types.LoggingLevel:
    """The MCP level of a Python logging level number."""
    if levelno >= logging.CRITICAL + 20:
        return "emergency"
    if levelno >= logging.CRITICAL + 10:
        return "alert"
    if levelno >= logging.CRITICAL:
        return "critical"
    if levelno >= logging.ERROR:
        return "error"
    if levelno >= logging.WARNING:
        return "warning"
    if levelno > logging.INFO:
        return "notice"
    if levelno == logging.INFO:
        return "info"
    return "debug"


class RateLimit:
    """A token bucket: at most ``rate`` events a second, in bursts of up to ``rate``.

    LOGGING-8: a chatty loop must not flood a client with log messages.
    """

    def __init__(self, rate: float) -> None:
        if rate <= 0:
            raise ValueError("a rate limit must be positive")
        self.rate = rate
        self._tokens = max(rate, 1.0)
        self._stamp = time.monotonic()
        self._lock = threading.Lock()

    def take(self) -> bool:
        """Use one token; False (and none used) when the bucket is empty."""
        with self._lock:
            now = time.monotonic()
            self._tokens = min(max(self.rate, 1.0),
                               self._tokens + (now - self._stamp) * self.rate)
            self._stamp = now
            if self._tokens < 1.0:
                return False
            self._tokens -= 1.0
            return True


def run_serving(context: Context, fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
    """``fn(*args, **kwargs)``, with the current thread marked as serving ``context``'s
    request."""
    # A plain try/finally rather than a context manager: this runs for every call.
    previous = getattr(_current, "context", None)
    _current.context = context
    try:
        return fn(*args, **kwargs)
    finally:
        _current.context = previous


def current_context() -> Context | None:
    """The context of the request this thread is serving, if any."""
    context: Context | None = getattr(_current, "context", None)
    return context


def _is_ours(name: str) -> bool:
    return name == "mcp_sync" or name.startswith("mcp_sync.")


class McpLogHandler(logging.Handler):
    """A :class:`logging.Handler` that forwards Python log records to MCP clients.

    A record emitted while a request of ``server`` is being served on that thread goes
    to that request's client only; any other record goes to every connected client. Each
    client receives only what passes the level it chose with ``logging/setLevel``. The
    record's formatted message is the ``data``, the logger name the ``logger``.

    Records of mcp_sync's own loggers are never forwarded, and nothing logged while a
    record is being forwarded is forwarded again, so the handler cannot feed itself.

    Args:
        server: the server whose clients receive the records.
        level: the least severe Python level handled.

    Example::

        logging.getLogger("myapp").addHandler(McpLogHandler(server))
    """

    def __init__(self, server: Server, level: int = logging.NOTSET) -> None:
        super().__init__(level)
        self.server = server
        self._busy = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        """Forward one record (called by :mod:`logging`)."""
        if _is_ours(record.name) or getattr(self._busy, "active", False):
            return
        self._busy.active = True
        try:
            data = self.format(record)
            level = level_for_record(record.levelno)
            context = current_context()
            if context is not None and context.server is self.server:
                context.log(level, data, logger=record.name)
            else:
                self.server.log(level, data, logger=record.name)
        except Exception:
            self.handleError(record)
        finally:
            self._busy.active = False


class ServerLogging:
    """The logging half of :class:`~mcp_sync.server.Server`: messages to every client."""

    if TYPE_CHECKING:  # what Server itself defines
        _lock: threading.Lock
        _connections: set[ServerConnection]

    def log(self, level: types.LoggingLevel, data: Any, logger: str | None = None) -> int:
        """Send a log message to every connected client whose level lets it through.

        Args:
            level: ``debug``, ``info``, ``notice``, ``warning``, ``error``, ``critical``,
                ``alert`` or ``emergency``.
            data: any JSON value; other objects are sent as their JSON form or ``str()``.
                Never put secrets or personal data here (LOGGING-7).
            logger: a name for the source of the message.

        Returns:
            How many clients it was sent to.

        Raises:
            ValueError: ``level`` is not one of the names above.
        """
        check_level(level)
        data = json_safe(data)
        with self._lock:
            connections = list(self._connections)
        return sum(1 for connection in connections if connection.log(level, data, logger))

    def logging_handler(self, level: int = logging.NOTSET) -> McpLogHandler:
        """A :class:`logging.Handler` forwarding Python log records to the clients.

        Records emitted while a request is served go to that request's client; others
        to all clients. mcp_sync's own records are never forwarded.

        Args:
            level: the least severe Python level handled.

        Example::

            logging.getLogger().addHandler(server.logging_handler(logging.INFO))
        """
        return McpLogHandler(cast("Server", self), level)
