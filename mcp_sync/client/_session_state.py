"""What a server keeps per session, remembered so that a renewed session gets it back.

When a Streamable HTTP server forgets our session (HTTP-35) the client starts a new one.
The new session begins with the server's defaults, so the log level and resource
subscriptions the caller asked for are asked for again.
"""

from __future__ import annotations

import threading
from typing import Any

#: Requests repeated once in a new session (HTTP-35): they change nothing at the server,
#: or set what the new session lacks and the caller asked for.
SAFE_TO_REPEAT = frozenset({
    "ping", "tools/list", "resources/list", "resources/templates/list", "resources/read",
    "prompts/list", "prompts/get", "completion/complete",
    "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
})

#: Requests whose effect lasts for the session; repeated in a new one (HTTP-35).
SESSION_STATE = frozenset({"logging/setLevel", "resources/subscribe", "resources/unsubscribe"})


class SessionState:
    """The log level and subscriptions asked for in this session; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._log_level: dict[str, Any] | None = None
        self._subscriptions: dict[Any, dict[str, Any]] = {}

    def remember(self, method: str, params: dict[str, Any]) -> None:
        """Note a request of SESSION_STATE that the server accepted."""
        with self._lock:
            if method == "logging/setLevel":
                self._log_level = params
            elif method == "resources/subscribe":
                self._subscriptions[params.get("uri")] = params
            else:
                self._subscriptions.pop(params.get("uri"), None)

    def requests_to_restore(self) -> list[tuple[str, dict[str, Any]]]:
        """The requests that give a new session what the old one had, in order."""
        with self._lock:
            state = [("resources/subscribe", params) for params in self._subscriptions.values()]
            if self._log_level is not None:
                state.insert(0, ("logging/setLevel", self._log_level))
        return state

    def after_fork(self) -> None:
        """In the child of os.fork(): the lock may have been held by a parent thread."""
        self._lock = threading.Lock()
