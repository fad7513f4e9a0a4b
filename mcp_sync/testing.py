"""Helpers for testing your own MCP server in-process, without pipes or sockets."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .client import Client
from .server import Server
from .transports.memory import memory_pair

__all__ = ["open_client"]


@contextmanager
def open_client(server: Server, **options: Any) -> Iterator[Client]:
    """Connect a :class:`~mcp_sync.Client` to ``server`` in memory; both close on exit.

    Messages are encoded and decoded exactly as over stdio, so what passes the test
    passes the wire.

    Example::

        def test_add():
            with open_client(server) as client:
                assert client.call_tool("add", {"a": 1, "b": 2}).content[0].text == "3"
    """
    client_end, server_end = memory_pair()
    connection = server.connect(server_end)
    try:
        with Client(client_end, **options) as client:
            yield client
    finally:
        connection.close()
