"""What a tool function returns, turned into MCP content.

``str`` becomes text; ``bytes`` of a known image format become image content and other
bytes an embedded binary resource; content objects (or a list of them) pass as they are;
a :class:`~mcp_sync.types.CallToolResult` is used whole; ``None`` is no content; anything
else (dicts, lists, numbers, attrs classes, dataclasses) becomes its JSON text.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from typing import Any

import attrs

from . import types
from ._convert import to_wire

__all__ = ["to_call_tool_result", "to_content"]

_CONTENT_CLASSES = (
    types.TextContent, types.ImageContent, types.AudioContent, types.EmbeddedResource,
    types.UnknownContent,
)

_IMAGE_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def _image_type(data: bytes) -> str | None:
    for magic, mime_type in _IMAGE_MAGIC:
        if data.startswith(magic):
            return mime_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _jsonable(value: Any) -> Any:
    if attrs.has(type(value)):
        return to_wire(value) if type(value).__module__ == types.__name__ else attrs.asdict(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


def to_content(value: Any) -> list[types.Content]:
    """The content items for one returned value (see the module docstring)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [types.TextContent(text=value)]
    if isinstance(value, _CONTENT_CLASSES):
        return [value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        encoded = base64.b64encode(data).decode("ascii")
        mime_type = _image_type(data)
        if mime_type is not None:
            return [types.ImageContent(data=encoded, mime_type=mime_type)]
        return [types.EmbeddedResource(resource=types.BlobResourceContents(
            uri="data:application/octet-stream", blob=encoded,
            mime_type="application/octet-stream"))]
    if isinstance(value, (list, tuple)) and value and all(
            isinstance(item, _CONTENT_CLASSES) for item in value):
        return list(value)
    text = json.dumps(_jsonable(value), ensure_ascii=False, default=_fallback)
    return [types.TextContent(text=text)]


def _fallback(value: Any) -> Any:
    converted = _jsonable(value)
    if converted is value:
        return str(value)
    return converted


def to_call_tool_result(value: Any) -> types.CallToolResult:
    """The ``tools/call`` result for a tool function's return value."""
    if isinstance(value, types.CallToolResult):
        return value
    return types.CallToolResult(content=to_content(value))
