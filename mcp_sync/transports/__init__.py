"""Transports move whole JSON-RPC messages and know nothing of MCP methods.

Owns :class:`Transport` (read, write and close of whole messages), the in-memory pair
and stdio (a child process, or this process's stdin/stdout). A transport must never
import server/ or client/ code (tests/test_layout.py checks it); ``http_server`` and
``http_client`` here are the documented public entry points, thin re-exports of
``server/http`` and ``client/http``.
"""

from typing import TYPE_CHECKING, Any

from .base import Transport as Transport

if TYPE_CHECKING:
    from .memory import memory_pair as memory_pair

__all__ = ["Transport", "memory_pair"]


def __getattr__(name: str) -> Any:
    # The in-memory pair (tests, embedding) is imported on first use: a server reading
    # stdio imports this package for Transport alone, and need not load it and queue too.
    if name == "memory_pair":
        from .memory import memory_pair
        return memory_pair
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
