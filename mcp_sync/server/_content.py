"""What user functions return, turned into MCP content, resource contents and messages.

Tools (:func:`to_call_tool_result`): ``str`` becomes text; :class:`~mcp_sync.content.Image`
and :class:`~mcp_sync.content.Audio` become image and audio items; ``bytes`` of a known
image format become an image, other bytes an embedded binary resource; content objects
pass as they are, resource contents are embedded; a list holding any of those becomes one
item per element; a :class:`~mcp_sync.types.CallToolResult` is used whole; ``None`` is no
content; anything else (dicts, lists, numbers, attrs classes, dataclasses) is JSON text.

Resources (:func:`to_resource_contents`), prompts (:func:`to_prompt_messages`) and
sampling (:func:`to_sampling_messages`) follow the same rules where they apply.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from typing import Any, cast

import attrs

from .. import types
from ..content import Audio, Image, _base64_text, image_type
from ..protocol._convert import from_wire, to_wire
from ..protocol._versions import VersionProfile

__all__ = [
    "for_profile",
    "to_call_tool_result",
    "to_content",
    "to_prompt_messages",
    "to_resource_contents",
    "to_sampling_messages",
]

_CONTENT_CLASSES = (
    types.TextContent, types.ImageContent, types.AudioContent, types.EmbeddedResource,
    types.ResourceLink, types.UnknownContent,
)
_CONTENT_CLASS_SET = frozenset(_CONTENT_CLASSES)
_RESOURCE_CONTENTS = (types.TextResourceContents, types.BlobResourceContents)
_MEDIA = (Image, Audio)
_ROLES = ("user", "assistant")


def _jsonable(value: Any) -> Any:
    if attrs.has(type(value)):
        return to_wire(value) if type(value).__module__ == types.__name__ else attrs.asdict(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


def _fallback(value: Any) -> Any:
    converted = _jsonable(value)
    if converted is value:
        return str(value)
    return converted


def to_json_text(value: Any) -> str:
    """``value`` as JSON text; what JSON cannot hold is written as its ``str()``."""
    return json.dumps(_jsonable(value), ensure_ascii=False, default=_fallback)


def json_safe(value: Any) -> Any:
    """``value`` as plain JSON data (for log payloads, which may be any JSON value)."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    result: Any = json.loads(to_json_text(value))
    return result


def _is_content_like(value: Any) -> bool:
    return isinstance(value, (*_CONTENT_CLASSES, *_RESOURCE_CONTENTS, *_MEDIA))


def _one_item(value: Any) -> types.Content:
    """The single content item for one value (never a list)."""
    if isinstance(value, str):
        return types.TextContent(text=value)
    if isinstance(value, _CONTENT_CLASSES):
        return value
    if isinstance(value, _MEDIA):
        return value.to_content()
    if isinstance(value, _RESOURCE_CONTENTS):
        return types.EmbeddedResource(resource=value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        encoded = _base64_text(data)
        mime_type = image_type(data)
        if mime_type is not None:
            return types.ImageContent(data=encoded, mime_type=mime_type)
        return types.EmbeddedResource(resource=types.BlobResourceContents(
            uri="data:application/octet-stream", blob=encoded,
            mime_type="application/octet-stream"))
    return types.TextContent(text=to_json_text(value))


def to_content(value: Any) -> list[types.Content]:
    """The content items for one returned value (see the module docstring)."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)) and value and any(
            _is_content_like(item) for item in value):
        # Content objects, the items of a large result, are taken without a call each.
        return cast("list[types.Content]", [
            item if item.__class__ in _CONTENT_CLASS_SET else _one_item(item)
            for item in value])
    return [_one_item(value)]


def to_call_tool_result(value: Any) -> types.CallToolResult:
    """The ``tools/call`` result for a tool function's return value."""
    if isinstance(value, types.CallToolResult):
        return value
    return types.CallToolResult(content=to_content(value))


def for_profile(items: list[types.Content], profile: VersionProfile | None,
                ) -> list[types.Content]:
    """``items`` as a peer of ``profile``'s version can receive them (DES-3).

    Audio did not exist before 2025-03-26: such a peer gets a short text note instead.
    Resource links did not exist before 2025-06-18: such a peer gets a text block
    naming the linked URI.
    """
    if profile is None or (profile.audio_content and profile.resource_link):
        return items
    if not any(isinstance(item, (types.AudioContent, types.ResourceLink)) for item in items):
        return items
    return [_downgraded(item, profile) for item in items]


def _downgraded(item: types.Content, profile: VersionProfile) -> types.Content:
    if isinstance(item, types.AudioContent) and not profile.audio_content:
        return types.TextContent(text=f"[audio ({item.mime_type}) omitted]")
    if isinstance(item, types.ResourceLink) and not profile.resource_link:
        label = types.display_name(item)
        text = item.uri if label == item.uri else f"{label}: {item.uri}"
        return types.TextContent(text=f"[resource link] {text}")
    return item


def to_resource_contents(value: Any, uri: str, mime_type: str | None,
                         ) -> list[types.ResourceContents]:
    """The ``resources/read`` contents for a resource function's return value.

    Args:
        value: what the function returned.
        uri: the URI that was read; every item made here carries it.
        mime_type: the type the resource was registered with, if any.
    """
    if value is None:
        return []
    if isinstance(value, _RESOURCE_CONTENTS):
        return [value]
    if isinstance(value, (list, tuple)) and value and all(
            isinstance(item, _RESOURCE_CONTENTS) for item in value):
        return list(value)
    if isinstance(value, str):
        return [types.TextResourceContents(uri=uri, text=value,
                                           mime_type=mime_type or "text/plain")]
    if isinstance(value, _MEDIA):
        return [types.BlobResourceContents(
            uri=uri, blob=_base64_text(value.data),
            mime_type=value.mime_type)]
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        return [types.BlobResourceContents(
            uri=uri, blob=_base64_text(data),
            mime_type=mime_type or image_type(data) or "application/octet-stream")]
    return [types.TextResourceContents(uri=uri, text=to_json_text(value),
                                       mime_type=mime_type or "application/json")]


def _role_pair(value: Any) -> bool:
    return (isinstance(value, tuple) and len(value) == 2 and value[0] in _ROLES
            and not isinstance(value[1], types.PromptMessage))


def _message(value: Any) -> types.PromptMessage:
    if isinstance(value, types.PromptMessage):
        return value
    if _role_pair(value):
        role, content = value
        return types.PromptMessage(role=role, content=_one_item(content))
    if isinstance(value, dict) and "role" in value and "content" in value:
        return from_wire(value, types.PromptMessage)
    if isinstance(value, (list, tuple)):
        raise TypeError("a prompt message cannot be a nested list")
    return types.PromptMessage(role="user", content=_one_item(value))


def to_prompt_messages(value: Any) -> list[types.PromptMessage]:
    """The messages for a prompt function's return value.

    A string or a single content value is one user message; a ``(role, content)`` tuple
    or a :class:`~mcp_sync.types.PromptMessage` is one message; a list is one message
    per element.
    """
    if value is None:
        return []
    if isinstance(value, list) or (isinstance(value, tuple) and not _role_pair(value)):
        return [_message(item) for item in value]
    return [_message(value)]


def _sampling_content(value: Any) -> types.SamplingContent:
    item = _one_item(value)
    if not isinstance(item, (types.TextContent, types.ImageContent, types.AudioContent)):
        raise TypeError(f"sampling messages hold text, images or audio, not {type(value)!r}")
    return item


def to_sampling_messages(messages: str | Iterable[Any]) -> list[types.SamplingMessage]:
    """The ``messages`` of a sampling request from a prompt string or a list of messages.

    Each element may be a :class:`~mcp_sync.types.SamplingMessage`, a ``(role, content)``
    tuple, or a string, image or audio for a user message.

    Raises:
        TypeError: an element is none of those (SAMPLING-3 forbids embedded resources).
    """
    if isinstance(messages, str):
        return [types.SamplingMessage(role="user", content=types.TextContent(text=messages))]
    result: list[types.SamplingMessage] = []
    for item in messages:
        if isinstance(item, types.SamplingMessage):
            result.append(item)
        elif _role_pair(item):
            role: types.Role = "user" if item[0] == "user" else "assistant"
            result.append(types.SamplingMessage(role=role, content=_sampling_content(item[1])))
        else:
            result.append(types.SamplingMessage(role="user", content=_sampling_content(item)))
    if not result:
        raise ValueError("a sampling request needs at least one message")
    return result


def guess_mime_type(uri: str) -> str | None:
    """The MIME type suggested by the URI's file extension, if it has a known one."""
    import mimetypes  # here, not at import: only resources without a declared type need it

    guessed, _ = mimetypes.guess_type(uri, strict=False)
    return guessed

