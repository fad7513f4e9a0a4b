"""Descriptions from docstrings: the text, and each parameter's line (Google or reST style)."""

from __future__ import annotations

import re

__all__ = ["parse_docstring"]

_GOOGLE_HEADER = re.compile(
    r"^(\s*)(?:Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments):\s*$")
_GOOGLE_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:(.*)$")
_REST_FIELD = re.compile(
    r"^(\s*):(param|parameter|arg|argument|key|keyword|type)\s+(?:[^:]*\s)?(\w+)\s*:(.*)$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def parse_docstring(doc: str | None) -> tuple[str | None, dict[str, str]]:
    """Split a docstring into its description and its per-parameter descriptions."""
    if not doc:
        return None, {}
    lines = doc.expandtabs().splitlines()
    kept: list[str] = []
    params: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        header = _GOOGLE_HEADER.match(line)
        if header:
            section_indent = len(header.group(1))
            entry_indent: int | None = None
            current: str | None = None
            while i < len(lines):
                text = lines[i].strip()
                if text:
                    indent = _indent(lines[i])
                    if indent <= section_indent:
                        break
                    if entry_indent is None:
                        entry_indent = indent
                    entry = _GOOGLE_ENTRY.match(text) if indent <= entry_indent else None
                    if entry:
                        current = entry.group(1)
                        params[current] = entry.group(2).strip()
                    elif current is not None:
                        params[current] = f"{params[current]} {text}".strip()
                i += 1
            continue
        field = _REST_FIELD.match(line)
        if field:
            text = field.group(4).strip()
            while i < len(lines) and lines[i].strip() and _indent(lines[i]) > len(field.group(1)):
                text = f"{text} {lines[i].strip()}".strip()
                i += 1
            if field.group(2) != "type":
                params[field.group(3)] = text
            continue
        kept.append(line.rstrip())
    description = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
    return description or None, params
