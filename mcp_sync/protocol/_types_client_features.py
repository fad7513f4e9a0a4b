"""Wire types of the client's features: sampling (``sampling/createMessage``) and roots."""

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from ._model import NO_EXTRA, Model, publish
from ._types_common import (
    IncludeContext,
    Role,
    SamplingContent,
    TextContent,
    ToolUseContent,
    _Meta,
)
from ._types_features import Tool
from ._types_messages import _MetadataOnly


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SamplingMessage(Model):
    """A message sent to or produced by a model during sampling (no embedded resources);
    its content is one block or, from 2025-11-25, a list of blocks."""
    role: Role
    content: SamplingContent | list[SamplingContent]
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ToolChoice(Model):
    """How the model may use the tools of a sampling request: ``auto`` (the default),
    ``required`` or ``none`` (2025-11-25)."""
    mode: Literal["auto", "required", "none"] | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ModelHint(Model):
    """A model name fragment the client should try to match, in order of preference."""
    name: str | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ModelPreferences(Model):
    """Advisory preferences for picking a model; priorities range from 0 to 1."""
    hints: list[ModelHint] | None = None
    cost_priority: float | None = None
    speed_priority: float | None = None
    intelligence_priority: float | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Root(Model):
    """A directory or file (a ``file://`` URI) the server may work within."""
    uri: str
    name: str | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CreateMessageResult(Model):
    """The message a model produced for a sampling request, and which model made it."""
    role: Role
    content: SamplingContent | list[SamplingContent]
    model: str
    #: ``endTurn``, ``stopSequence``, ``maxTokens``, ``toolUse`` (2025-11-25) or another.
    stop_reason: str | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA

    @property
    def text(self) -> str | None:
        """The generated text, or None when the model answered with no text (an image,
        audio, or only tool calls)."""
        if isinstance(self.content, TextContent):
            return self.content.text
        if isinstance(self.content, list):
            texts = [item.text for item in self.content if isinstance(item, TextContent)]
            return "".join(texts) if texts else None
        return None

    @property
    def tool_uses(self) -> list[ToolUseContent]:
        """The tool calls the model asked for (``stop_reason`` ``toolUse``), if any."""
        items = self.content if isinstance(self.content, list) else [self.content]
        return [item for item in items if isinstance(item, ToolUseContent)]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListRootsResult(Model):
    """The client's current roots."""
    roots: list[Root]
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CreateMessageRequestParams(Model):
    """Parameters of ``sampling/createMessage``: the conversation and sampling options."""
    messages: list[SamplingMessage]
    max_tokens: int
    system_prompt: str | None = None
    include_context: IncludeContext | None = None
    temperature: float | None = None
    stop_sequences: list[str] | None = None
    metadata: dict[str, Any] | None = None
    model_preferences: ModelPreferences | None = None
    tools: list[Tool] | None = None
    tool_choice: ToolChoice | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListRootsRequestParams(_MetadataOnly):
    """Parameters of ``roots/list`` (only metadata)."""


@attrs.frozen(kw_only=True, repr=False, eq=False)
class RootsListChangedNotificationParams(_MetadataOnly):
    """Parameters of ``notifications/roots/list_changed`` (only metadata)."""


publish(globals())
