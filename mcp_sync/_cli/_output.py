"""What each command prints: JSON with ``--json``, readable text otherwise."""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["print_json", "text_of"]


def print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


def _listed(rows: Sequence[tuple[str, str]]) -> str:
    if not rows:
        return "(none)"
    width = min(max(len(name) for name, _ in rows), 40)
    return "\n".join(f"{name:<{width}}  {about}".rstrip() for name, about in rows)


def text_of(command: str, wire: Any) -> str:
    """The readable text of a command's result, given in its wire (JSON) shape."""
    if command == "info":
        info = wire["serverInfo"]
        lines = [f"{info.get('title') or info['name']} {info.get('version', '')}".rstrip(),
                 f"protocol {wire['protocolVersion']}",
                 "capabilities: " + (", ".join(sorted(wire["capabilities"])) or "none")]
        if wire.get("instructions"):
            lines.append(wire["instructions"])
        return "\n".join(lines)
    if command == "tools":
        return _listed([(tool["name"], _first_line(tool.get("description"))
                         or tool.get("title", "")) for tool in wire])
    if command == "resources":
        return _listed([(item["uri"], " ".join(filter(None, [
            item.get("name"), f"({item['mimeType']})" if item.get("mimeType") else None])))
            for item in wire])
    if command == "templates":
        return _listed([(item["uriTemplate"], " ".join(filter(None, [
            item.get("name"), f"({item['mimeType']})" if item.get("mimeType") else None])))
            for item in wire])
    if command == "prompts":
        return _listed([(item["name"], _prompt_about(item)) for item in wire])
    if command == "call":
        return _content_text(wire.get("content") or [], wire.get("structuredContent"))
    if command == "read":
        return "\n".join(_resource_text(item) for item in wire.get("contents") or [])
    if command == "prompt":
        return "\n".join(f"{message['role']}: {_content_text([message['content']], None)}"
                         for message in wire.get("messages") or [])
    if command == "complete":
        return "\n".join(wire.get("completion", {}).get("values") or [])
    return json.dumps(wire, ensure_ascii=False)


def _prompt_about(prompt: Mapping[str, Any]) -> str:
    arguments = [argument["name"] + ("" if argument.get("required") else "?")
                 for argument in prompt.get("arguments") or []]
    about = _first_line(prompt.get("description"))
    return f"{about} ({', '.join(arguments)})" if arguments else about


def _content_text(content: Sequence[Mapping[str, Any]], structured: Any) -> str:
    parts: list[str] = []
    for item in content:
        kind = item.get("type")
        if kind == "text":
            parts.append(item.get("text", ""))
        elif kind in ("image", "audio"):
            size = len(base64.b64decode(item.get("data", ""), validate=False))
            parts.append(f"[{kind} {item.get('mimeType', '')}, {size} bytes]")
        elif kind == "resource_link":
            parts.append(f"[link {item.get('uri')}]")
        elif kind == "resource":
            parts.append(_resource_text(item.get("resource") or {}))
        else:
            parts.append(json.dumps(item, ensure_ascii=False))
    if not parts and structured is not None:
        parts.append(json.dumps(structured, indent=2, ensure_ascii=False))
    return "\n".join(parts)


def _resource_text(item: Mapping[str, Any]) -> str:
    if "text" in item:
        return str(item["text"])
    size = len(base64.b64decode(item.get("blob", ""), validate=False))
    return f"[{item.get('mimeType') or 'binary'} {item.get('uri', '')}, {size} bytes]"


def write_blob_if_piped(wire: Mapping[str, Any]) -> bool:
    """Write a lone binary resource's bytes to a piped stdout; True if written."""
    contents = wire.get("contents") or []
    if len(contents) != 1 or "blob" not in contents[0] or sys.stdout.isatty():
        return False
    sys.stdout.flush()
    sys.stdout.buffer.write(base64.b64decode(contents[0]["blob"]))
    sys.stdout.buffer.flush()
    return True
