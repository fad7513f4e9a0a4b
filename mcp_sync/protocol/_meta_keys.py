"""The rules for ``_meta`` keys (V0618-5..7, V1125-5, DES-17).

A key is an optional prefix (dot-separated labels ending in ``/``) and a name. Prefixes
are reserved for MCP itself under two patterns, and both are refused for keys we or our
users mint: a label ``mcp`` or ``modelcontextprotocol`` followed by a further label
(2025-06-18: ``mcp.dev/``, ``tools.mcp.com/``), and a second label ``mcp`` or
``modelcontextprotocol`` (2025-11-25: ``io.modelcontextprotocol/``, ``com.mcp.tools/``).
Keys from peers are never refused: they are carried through unchanged.
"""

from __future__ import annotations

import re
from typing import Any

from ._jsonrpc import is_request_id

__all__ = [
    "MODEL_IMMEDIATE_RESPONSE_KEY",
    "PROGRESS_TOKEN_KEY",
    "RELATED_TASK_KEY",
    "check_meta_key",
    "is_reserved_meta_key",
    "is_valid_meta_key",
    "progress_token_of",
]

#: Keys the protocol defines (they are MCP's own, so the reserved prefix is theirs).
PROGRESS_TOKEN_KEY = "progressToken"
RELATED_TASK_KEY = "io.modelcontextprotocol/related-task"
MODEL_IMMEDIATE_RESPONSE_KEY = "io.modelcontextprotocol/model-immediate-response"

_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_NAME = r"(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?"
_KEY = re.compile(rf"(?:(?P<prefix>{_LABEL}(?:\.{_LABEL})*)/)?{_NAME}")
_MCP_LABELS = frozenset({"mcp", "modelcontextprotocol"})


def is_valid_meta_key(key: str) -> bool:
    """Whether ``key`` has the syntax of a ``_meta`` key (V0618-6)."""
    return _KEY.fullmatch(key) is not None


def is_reserved_meta_key(key: str) -> bool:
    """Whether ``key``'s prefix is reserved for MCP by 2025-06-18's rule or 2025-11-25's."""
    match = _KEY.fullmatch(key)
    prefix = match.group("prefix") if match else key.partition("/")[0] if "/" in key else None
    if not prefix:
        return False
    labels = prefix.lower().split(".")
    followed = any(label in _MCP_LABELS for label in labels[:-1])   # V0618-7
    second = len(labels) > 1 and labels[1] in _MCP_LABELS           # V1125-5
    return followed or second


def check_meta_key(key: str) -> str:
    """Return ``key`` if it may be minted outside MCP itself.

    Raises:
        ValueError: the key's syntax is wrong, or its prefix is reserved for MCP.
    """
    if not is_valid_meta_key(key):
        raise ValueError(f"{key!r} is not a valid _meta key: an optional prefix of "
                         "dot-separated labels ending in '/', then a name of letters, "
                         "digits, '-', '_' and '.' that starts and ends with a letter or digit")
    if is_reserved_meta_key(key):
        raise ValueError(f"the prefix of _meta key {key!r} is reserved for MCP; use a "
                         "reverse-DNS prefix of your own, such as 'com.example/'")
    return key


def progress_token_of(params: dict[str, Any] | None) -> str | int | None:
    """The progress token a request's ``_meta`` carries, if it is a valid one."""
    if not params:
        return None
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        return None
    token = meta.get(PROGRESS_TOKEN_KEY)
    return token if is_request_id(token) else None
