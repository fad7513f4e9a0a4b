"""Sampling requests fitted to the session: tools (2025-11-25) and ``includeContext``.

:meth:`~mcp_sync.Context.sample` builds its parameters and hands them here. Tools go only
to a client that declared ``sampling.tools`` in a 2025-11-25 session (V1125-47, DES-5);
``tool_use`` / ``tool_result`` blocks are never sent to an older session (DES-3); a
history is refused locally when a tool result shares its message with other content
(V1125-49); ``includeContext`` is left out in 2025-11-25 sessions unless the client
declared ``sampling.context`` (V1125-50).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from .. import types
from ..errors import CapabilityError
from ..protocol._convert import from_wire

if TYPE_CHECKING:
    from ._rounds import Asker

__all__ = ["fit_sampling"]

_TOOL_BLOCKS = (types.ToolUseContent, types.ToolResultContent)


def _blocks(message: types.SamplingMessage) -> list[Any]:
    return message.content if isinstance(message.content, list) else [message.content]


def _tool(tool: types.Tool | Mapping[str, Any]) -> types.Tool:
    return tool if isinstance(tool, types.Tool) else from_wire(dict(tool), types.Tool)


def _choice(choice: str | types.ToolChoice | None) -> types.ToolChoice | None:
    if choice is None or isinstance(choice, types.ToolChoice):
        return choice
    for mode in ("auto", "required", "none"):
        if choice == mode:
            return types.ToolChoice(mode=mode)
    raise ValueError(f'tool_choice is "auto", "required" or "none", not {choice!r}')


def fit_sampling(asker: Asker, params: types.CreateMessageRequestParams,
                 tools: Sequence[types.Tool | Mapping[str, Any]] | None,
                 tool_choice: str | types.ToolChoice | None,
                 ) -> types.CreateMessageRequestParams:
    """``params`` with ``tools`` and ``tool_choice``, as this request may send them.

    Raises:
        CapabilityError: tools or tool blocks without the version or the client's
            ``sampling.tools``; nothing is sent.
        ValueError: a tool result shares its message with other content, or
            ``tool_choice`` is unknown.
    """
    profile = asker.profile
    newest = profile is not None and profile.sampling_tools
    caps = asker.capabilities
    sampling = (caps.sampling if caps is not None else None) or {}
    uses_tools = tools is not None or tool_choice is not None
    has_blocks = False
    for message in params.messages:
        blocks = _blocks(message)
        if any(isinstance(block, types.ToolResultContent) for block in blocks) and not all(
                isinstance(block, types.ToolResultContent) for block in blocks):
            raise ValueError("a message with tool results holds nothing else (V1125-49)")
        has_blocks = has_blocks or any(isinstance(block, _TOOL_BLOCKS) for block in blocks)
        if isinstance(message.content, list) and not newest:
            raise CapabilityError("several content blocks in one sampling message need "
                                  "protocol version 2025-11-25")
    if (uses_tools or has_blocks) and not newest:
        version = profile.version if profile is not None else "(none yet)"
        raise CapabilityError(f"sampling with tools needs protocol version 2025-11-25; "
                              f"this session speaks {version}")
    if (uses_tools or has_blocks) and "tools" not in sampling:
        raise asker.missing("the client did not declare sampling.tools",
                            {"sampling": {"tools": {}}})
    changes: dict[str, Any] = {}
    if tools is not None:
        changes["tools"] = [_tool(tool) for tool in tools]
    if tool_choice is not None:
        changes["tool_choice"] = _choice(tool_choice)
    if newest and params.include_context not in (None, "none") and "context" not in sampling:
        changes["include_context"] = None  # soft-deprecated without sampling.context
    return attrs.evolve(params, **changes) if changes else params
