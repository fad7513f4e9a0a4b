"""Wire types of the features: tools, resources, prompts, completion, sampling, roots, results."""

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from ._model import NO_EXTRA, Model
from ._types_common import (
    Annotations,
    Content,
    Implementation,
    ResourceContents,
    Role,
    SamplingContent,
    ServerCapabilities,
    TextContent,
    _Meta,
)

# --- Server features: tools, resources, prompts, completion --------------------------------


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
    """A tool the server lets the client call; ``input_schema`` is a JSON Schema object."""
    name: str
    input_schema: dict[str, Any]
    description: str | None = None
    annotations: ToolAnnotations | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Resource(Model):
    """A resource the server can read (``size`` is the raw byte count, if known)."""
    uri: str
    name: str
    description: str | None = None
    mime_type: str | None = None
    annotations: Annotations | None = None
    # AMBIG-22: the schema files disagree (integer vs number); any number is accepted.
    size: float | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ResourceTemplate(Model):
    """An RFC 6570 URI template describing a family of readable resources."""
    uri_template: str
    name: str
    description: str | None = None
    mime_type: str | None = None
    annotations: Annotations | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class PromptArgument(Model):
    """One argument a prompt template accepts."""
    name: str
    description: str | None = None
    required: bool | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Prompt(Model):
    """A prompt or prompt template offered by the server."""
    name: str
    description: str | None = None
    arguments: list[PromptArgument] | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class PromptMessage(Model):
    """One message of a prompt; unlike sampling it may embed resources."""
    role: Role
    content: Content
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class PromptReference(Model):
    """Points at a prompt by name (for completion)."""
    type: Literal["ref/prompt"] = "ref/prompt"
    name: str
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ResourceReference(Model):
    """Points at a resource or resource template by URI (for completion)."""
    type: Literal["ref/resource"] = "ref/resource"
    uri: str
    extra: Mapping[str, Any] = NO_EXTRA


Reference = PromptReference | ResourceReference


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CompletionArgument(Model):
    """The argument being completed and what the user has typed so far."""
    name: str
    value: str
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Completion(Model):
    """Completion suggestions (at most 100) and whether more exist."""
    values: list[str]
    total: int | None = None
    has_more: bool | None = None
    extra: Mapping[str, Any] = NO_EXTRA


# --- Client features: sampling and roots --------------------------------------------------


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SamplingMessage(Model):
    """A message sent to or produced by a model during sampling (no embedded resources)."""
    role: Role
    content: SamplingContent
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
class ListResourcesResult(Model):
    """One page of the server's resources."""
    resources: list[Resource]
    next_cursor: str | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListResourceTemplatesResult(Model):
    """One page of the server's resource templates."""
    resource_templates: list[ResourceTemplate]
    next_cursor: str | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ReadResourceResult(Model):
    """The contents read from a resource (possibly several sub-resources)."""
    contents: list[ResourceContents]
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListPromptsResult(Model):
    """One page of the server's prompts."""
    prompts: list[Prompt]
    next_cursor: str | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class GetPromptResult(Model):
    """A rendered prompt: its messages and an optional description."""
    messages: list[PromptMessage]
    description: str | None = None
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
    """A tool's output; tool failures are reported here with ``is_error`` set."""
    content: list[Content]
    is_error: bool | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CompleteResult(Model):
    """The server's completion suggestions."""
    completion: Completion
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CreateMessageResult(Model):
    """The message a model produced for a sampling request, and which model made it."""
    role: Role
    content: SamplingContent
    model: str
    stop_reason: str | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA

    @property
    def text(self) -> str | None:
        """The generated text, or None when the model answered with an image or audio."""
        return self.content.text if isinstance(self.content, TextContent) else None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListRootsResult(Model):
    """The client's current roots."""
    roots: list[Root]
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA
