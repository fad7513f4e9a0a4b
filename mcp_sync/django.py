"""Serving MCP from a Django project: database connections handled as Django does.

Django opens one database connection per thread and closes the stale ones when a request
starts and when it ends (``close_old_connections``, on its ``request_started`` and
``request_finished`` signals). Tools, resources and prompts run on the server's own
threads, outside that cycle, so nothing would ever close theirs: each thread's
connection stays open until the garbage collector finds it, and with PostgreSQL or
MySQL such connections pile up at the database. Register the hook here and every call
gets the same treatment as a Django view::

    from mcp_sync import Server
    from mcp_sync.django import close_old_connections

    server = Server("mysite")
    server.add_call_hook(close_old_connections)

With the default ``CONN_MAX_AGE = 0`` the connection a call opened is closed when it
ends; with a larger one it is kept for the next call on that thread while it is young
and healthy, as for a view. The server's threads end with their client's session at the
latest, and a connection kept on one is then left to the garbage collector
(docs/server.md).

Django itself is imported only when a call runs, never when :mod:`mcp_sync` is.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from .context import Context

__all__ = ["close_old_connections"]


@contextlib.contextmanager
def close_old_connections(ctx: Context) -> Iterator[None]:
    """A call hook (see :meth:`Server.add_call_hook <mcp_sync.Server.add_call_hook>`)
    that runs ``django.db.close_old_connections()`` before and after each call.

    Args:
        ctx: the request being served (unused: every call is treated alike).

    Raises:
        ImportError: Django is not installed.
    """
    from django.db import close_old_connections as close  # type: ignore[import-untyped,unused-ignore]

    close()
    try:
        yield
    finally:
        close()
