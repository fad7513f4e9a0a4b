"""What the commands share: connecting to the server, failing in one line, waiting."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ..client import Client

__all__ = ["connect", "fail", "wait_lost"]


def fail(message: str) -> None:
    """One line on stderr: the whole of what a failure prints."""
    print(f"mcp-sync: {' '.join(str(message).split())}", file=sys.stderr)


def connect(options: argparse.Namespace, server: Sequence[str], **client_options: Any
            ) -> Client:
    """A client of the server the command line names."""
    if options.url is not None:
        return Client.http(options.url, headers=options.headers or None,
                           timeout=options.timeout, **client_options)
    return Client.stdio(list(server), timeout=options.timeout, **client_options)


def wait_lost(client: Client, stop: Callable[[], bool] | None = None) -> None:
    """Block until the client's connection ends (Ctrl-C raises KeyboardInterrupt)."""
    engine = client._engine
    while not engine.wait_closed(0.5):
        if stop is not None and stop():
            return
