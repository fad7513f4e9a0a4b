"""What each message needs declared before it may be sent (CAPS-5, CAPS-6, LIFECYCLE-5/6).

Tables only, read by :class:`~mcp_sync.protocol._session.Session`: the capability of the peer a
request needs, the capability of our own a notification needs, and what may be sent
before initialization completes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = [
    "EARLY_NOTIFICATIONS",
    "EARLY_REQUESTS",
    "OWN_CAPABILITY",
    "PEER_CAPABILITY",
    "SERVER_CAPABILITY_FLAGS",
    "CapabilityCheck",
    "implementation_for",
    "server_capabilities_for",
]

CapabilityCheck = Callable[[Any], bool]


def _has(name: str) -> CapabilityCheck:
    return lambda caps: getattr(caps, name, None) is not None


def _flag(name: str, flag: str) -> CapabilityCheck:
    return lambda caps: bool(getattr(getattr(caps, name, None), flag, False))


#: What a request we send needs the peer to have declared.
PEER_CAPABILITY: dict[str, tuple[str, CapabilityCheck]] = {
    "tools/list": ("tools", _has("tools")),
    "tools/call": ("tools", _has("tools")),
    "resources/list": ("resources", _has("resources")),
    "resources/templates/list": ("resources", _has("resources")),
    "resources/read": ("resources", _has("resources")),
    "resources/subscribe": ("resources.subscribe", _flag("resources", "subscribe")),
    "resources/unsubscribe": ("resources.subscribe", _flag("resources", "subscribe")),
    "prompts/list": ("prompts", _has("prompts")),
    "prompts/get": ("prompts", _has("prompts")),
    "logging/setLevel": ("logging", _has("logging")),
    "completion/complete": ("completions", _has("completions")),
    "sampling/createMessage": ("sampling", _has("sampling")),
    "roots/list": ("roots", _has("roots")),
}

#: What a notification we send needs us to have declared (CAPS-6).
OWN_CAPABILITY: dict[str, tuple[str, CapabilityCheck]] = {
    "notifications/tools/list_changed": ("tools.listChanged", _flag("tools", "list_changed")),
    "notifications/prompts/list_changed": (
        "prompts.listChanged", _flag("prompts", "list_changed")),
    "notifications/resources/list_changed": (
        "resources.listChanged", _flag("resources", "list_changed")),
    "notifications/resources/updated": ("resources.subscribe", _flag("resources", "subscribe")),
    "notifications/message": ("logging", _has("logging")),
    "notifications/roots/list_changed": ("roots.listChanged", _flag("roots", "list_changed")),
}

#: Sendable before initialization completes (LIFECYCLE-5/6, AMBIG-7).
EARLY_REQUESTS = frozenset({"ping"})
EARLY_NOTIFICATIONS = frozenset(
    {"notifications/message", "notifications/cancelled", "notifications/progress"})

#: Server capabilities that exist only from some version on, by the profile flag saying so.
SERVER_CAPABILITY_FLAGS: dict[str, str] = {
    "completions": "completions_capability",  # 2025-03-26
    "tasks": "tasks",                          # 2025-11-25
}


def server_capabilities_for(capabilities: dict[str, Any], profile: Any) -> dict[str, Any]:
    """``capabilities`` (wire shape) without the keys the negotiated version lacks (DES-5)."""
    dropped = [key for key, flag in SERVER_CAPABILITY_FLAGS.items()
               if key in capabilities and not getattr(profile, flag)]
    if not dropped:
        return capabilities
    return {key: value for key, value in capabilities.items() if key not in dropped}


#: Implementation (clientInfo / serverInfo) members newer than 2025-03-26, by flag.
IMPLEMENTATION_FLAGS: dict[str, str] = {
    "title": "titles",              # 2025-06-18
    "description": "icons",         # 2025-11-25 (V1125-6)
    "websiteUrl": "icons",
    "icons": "icons",
}


def implementation_for(info: dict[str, Any], profile: Any) -> dict[str, Any]:
    """``info`` (wire shape) without the members the negotiated version lacks (DES-2)."""
    dropped = [key for key, flag in IMPLEMENTATION_FLAGS.items()
               if key in info and not getattr(profile, flag)]
    if not dropped:
        return info
    return {key: value for key, value in info.items() if key not in dropped}
