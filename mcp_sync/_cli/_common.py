"""What the commands share: connecting to the server, failing in one line, waiting."""

from __future__ import annotations

import argparse
import os
import sys
import webbrowser
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..client import Client
from ._args import UsageError

__all__ = ["connect", "fail", "wait_lost"]


def fail(message: str) -> None:
    """One line on stderr: the whole of what a failure prints."""
    print(f"mcp-sync: {' '.join(str(message).split())}", file=sys.stderr)


def connect(options: argparse.Namespace, server: Sequence[str], **client_options: Any
            ) -> Client:
    """A client of the server the command line names."""
    if options.url is not None:
        if options.oauth:
            client_options["auth"] = _oauth(options.token_file)
        return Client.http(options.url, headers=options.headers or None,
                           timeout=options.timeout, **client_options)
    return Client.stdio(list(server), timeout=options.timeout, **client_options)


def default_token_file() -> Path:
    """Where ``--oauth`` keeps tokens: mcp-sync/tokens.json in the user's config folder."""
    if sys.platform == "win32":
        base = Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "mcp-sync" / "tokens.json"


def _oauth(token_file: str | None) -> Any:
    try:
        from ..auth import FileTokenStore, LoopbackRedirect, OAuth
    except ImportError as exc:  # pragma: no cover - the oauth extra is in the test install
        raise UsageError(f'--oauth needs pip install "mcp-sync[oauth]" ({exc})') from None

    def open_browser(url: str) -> None:
        # The library's own warning is silenced here: the user must see the URL.
        print(f"mcp-sync: authorize in your browser: {url}", file=sys.stderr, flush=True)
        webbrowser.open(url)

    path = Path(token_file) if token_file is not None else default_token_file()
    try:
        return OAuth(client_name="mcp-sync", storage=FileTokenStore(path),
                     redirect=LoopbackRedirect(open_browser=open_browser))
    except ImportError as exc:
        raise UsageError(f'--oauth needs pip install "mcp-sync[oauth]" ({exc})') from None


def wait_lost(client: Client, stop: Callable[[], bool] | None = None) -> None:
    """Block until the client's connection ends (Ctrl-C raises KeyboardInterrupt)."""
    engine = client._engine
    while not engine.wait_closed(0.5):
        if stop is not None and stop():
            return
