"""Wire types every session uses: tools, and the results of initialize, ping and tools.

The types of the other features live in modules of their own, which :mod:`mcp_sync.types`
loads when one of their names is first used (see there).
"""

from collections.abc import Mapping
from typing import Any

import attrs

from ._model import NO_EXTRA, Model, publish
from ._types_common import Content, Icon, Implementation, ServerCapabilities, _Meta

# --- Tools -----------------------------------------------------------------------------------


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ToolAnnotations(Model):
    """Untrusted hints about a tool's behaviour; an absent hint takes the spec's default."""
    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None
    extra: Mapping[str, Any] = NO_EXTRA

    # TOOLS-9: what each hint means when the server left it out. These are hints from a
    # possibly untrusted server (TOOLS-10); base no safety decision on them alone.
    @property
    def read_only(self) -> bool:
        """``read_only_hint``, False when absent."""
        return bool(self.read_only_hint)

    @property
    def destructive(self) -> bool:
        """``destructive_hint``, True when absent (meaningful only when not read-only)."""
        return True if self.destructive_hint is None else self.destructive_hint

    @property
    def idempotent(self) -> bool:
        """``idempotent_hint``, False when absent (meaningful only when not read-only)."""
        return bool(self.idempotent_hint)

    @property
    def open_world(self) -> bool:
        """``open_world_hint``, True when absent."""
        return True if self.open_world_hint is None else self.open_world_hint


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Tool(Model):
    """A tool the server lets the client call; ``input_schema`` is a JSON Schema object.

    ``output_schema`` (2025-06-18) describes the object the tool returns as
    ``structured_content``; ``title`` is display text (see :func:`display_name`).
    """
    name: str
    input_schema: dict[str, Any]
    title: str | None = None
    description: str | None = None
    output_schema: dict[str, Any] | None = None
    annotations: ToolAnnotations | None = None
    icons: list[Icon] | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


# --- Results -------------------------------------------------------------------------------


@attrs.frozen(kw_only=True, repr=False, eq=False)
class EmptyResult(Model):
    """A result with no content of its own (``ping``, subscriptions, ``logging/setLevel``)."""
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


Result = EmptyResult


@attrs.frozen(kw_only=True, repr=False, eq=False)
class InitializeResult(Model):
    """The server's answer to ``initialize``: chosen version, capabilities and identity."""
    protocol_version: str
    capabilities: ServerCapabilities
    server_info: Implementation
    instructions: str | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListToolsResult(Model):
    """One page of the server's tools."""
    tools: list[Tool]
    next_cursor: str | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CallToolResult(Model):
    """A tool's output; tool failures are reported here with ``is_error`` set.

    ``structured_content`` (2025-06-18) is the JSON object a tool with an output schema
    returns, also readable as :attr:`structured`.
    """
    content: list[Content]
    structured_content: dict[str, Any] | None = None
    is_error: bool | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA

    @property
    def structured(self) -> dict[str, Any] | None:
        """The structured result (``structuredContent``), or None when there is none."""
        return self.structured_content


publish(globals())
