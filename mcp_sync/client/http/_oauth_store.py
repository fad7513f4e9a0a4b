"""Where an OAuth client keeps what it obtained: tokens and client registrations.

A :class:`TokenStore` maps a string key to a small JSON-able dict. The OAuth client keys
tokens by the resource (the MCP server) *and* the issuer of the authorization server
that granted them (V0618-41: a token goes only to the server it was issued for, and
credentials never move from one authorization server to another), and client
registrations by issuer alone.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

__all__ = ["FileTokenStore", "KeyringTokenStore", "MemoryTokenStore", "TokenStore"]


@runtime_checkable
class TokenStore(Protocol):
    """Keeps tokens and client registrations between uses, behind string keys.

    Implementations must be safe to call from several threads. Values are dicts of
    JSON types; a store may serialise them as it likes.
    """

    def load(self, key: str) -> dict[str, Any] | None:
        """The value saved under ``key``, or None."""

    def save(self, key: str, value: Mapping[str, Any]) -> None:
        """Keep ``value`` under ``key``, replacing what was there."""

    def delete(self, key: str) -> None:
        """Forget ``key``; nothing happens if it is unknown."""


class MemoryTokenStore:
    """Keeps everything in this process only: the default, gone when the program ends."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, dict[str, Any]] = {}

    def load(self, key: str) -> dict[str, Any] | None:
        """The value saved under ``key``, or None."""
        with self._lock:
            value = self._values.get(key)
            return json.loads(json.dumps(value)) if value is not None else None

    def save(self, key: str, value: Mapping[str, Any]) -> None:
        """Keep a copy of ``value`` under ``key``."""
        copy = json.loads(json.dumps(dict(value)))
        with self._lock:
            self._values[key] = copy

    def delete(self, key: str) -> None:
        """Forget ``key``."""
        with self._lock:
            self._values.pop(key, None)


class FileTokenStore:
    """Keeps everything in one JSON file that only its owner may read (mode 0600).

    Each change writes a new file next to the old one, created 0600, and renames it over
    the old one, so a crash never leaves a half-written file and no other user can read
    the tokens even for an instant. Several stores (or processes) may share one file:
    each change reads the file again before writing it.

    Args:
        path: the file; its directory is created (0700) if missing.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def load(self, key: str) -> dict[str, Any] | None:
        """The value saved under ``key``, or None."""
        with self._lock:
            value = self._read().get(key)
        return value if isinstance(value, dict) else None

    def save(self, key: str, value: Mapping[str, Any]) -> None:
        """Keep ``value`` under ``key`` and write the file."""
        with self._lock:
            values = self._read()
            values[key] = dict(value)
            self._write(values)

    def delete(self, key: str) -> None:
        """Forget ``key`` and write the file."""
        with self._lock:
            values = self._read()
            if values.pop(key, None) is not None:
                self._write(values)

    def _read(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        try:
            values = json.loads(text)
        except ValueError:
            # A file we cannot read is not ours to keep: it is replaced at the next save.
            return {}
        return values if isinstance(values, dict) else {}

    def _write(self, values: dict[str, Any]) -> None:
        directory = self.path.parent
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        # mkstemp creates the file 0600 whatever the umask.
        fd, temporary = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                json.dump(values, file, indent=1, sort_keys=True)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise


class KeyringTokenStore:
    """Keeps everything in the system's keyring (macOS Keychain, Windows Credential
    Locker, Secret Service), through the ``keyring`` package.

    Install it with ``pip install "mcp_sync[keyring]"``.

    Args:
        service: the keyring service name the entries are filed under.

    Raises:
        ImportError: ``keyring`` is not installed.
    """

    def __init__(self, service: str = "mcp_sync") -> None:
        try:
            import keyring  # type: ignore[import-not-found, unused-ignore]
        except ImportError as exc:
            raise ImportError('KeyringTokenStore needs the keyring package: '
                              'pip install "mcp_sync[keyring]"') from exc
        self._keyring: Any = keyring
        self.service = service

    def load(self, key: str) -> dict[str, Any] | None:
        """The value saved under ``key``, or None."""
        text = self._keyring.get_password(self.service, key)
        if not text:
            return None
        try:
            value = json.loads(text)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def save(self, key: str, value: Mapping[str, Any]) -> None:
        """Keep ``value`` under ``key`` in the keyring."""
        self._keyring.set_password(self.service, key, json.dumps(dict(value)))

    def delete(self, key: str) -> None:
        """Forget ``key``."""
        with contextlib.suppress(self._keyring.errors.PasswordDeleteError):
            self._keyring.delete_password(self.service, key)
