"""The MCP 2025-03-26 message model: one attrs class per object type of the JSON Schema.

Conventions shared by every class here:

* Classes are frozen and keyword-only. Python field names are the snake_case form of
  the wire names (``inputSchema`` is ``input_schema``); the reserved wire member ``_meta``
  is the field ``meta``.
* A property the schema requires is a field without a default. An optional property
  defaults to ``None`` and is left out of the wire form while it is ``None``.
* The discriminators (``method`` of requests and notifications, ``type`` of content items
  and references) default to their only legal value and are always written out.
* The last field of every class, ``extra``, keeps wire members this revision does not
  define (for instance ``title`` or ``outputSchema`` sent by a newer peer). Decoding
  puts them there verbatim and encoding writes them back, so nothing a peer sends is
  lost on the way through. ``extra`` is never a wire member itself.
* Each request and notification ``X`` has a ``XParams`` class for its ``params`` member.
  :data:`REQUEST_TYPES` and :data:`NOTIFICATION_TYPES` map method names to those classes.
* JSON ``number`` properties are annotated ``float`` but keep integers as integers, so a
  value is re-encoded exactly as it arrived.

Use :func:`mcp_sync._convert.to_wire` and :func:`mcp_sync._convert.from_wire` to move
between these classes and JSON-ready data.
"""

from collections.abc import Mapping
from typing import Any, Literal

import attrs

__all__ = [
    "LOGGING_LEVELS", "NOTIFICATION_TYPES", "REQUEST_TYPES", "Annotations", "AudioContent",
    "BlobResourceContents", "CallToolRequest", "CallToolRequestParams", "CallToolResult",
    "CancelledNotification", "CancelledNotificationParams", "ClientCapabilities",
    "ClientNotification", "ClientRequest", "ClientResult", "CompleteRequest",
    "CompleteRequestParams", "CompleteResult", "Completion", "CompletionArgument", "Content",
    "CreateMessageRequest", "CreateMessageRequestParams", "CreateMessageResult", "Cursor",
    "EmbeddedResource", "EmptyResult", "GetPromptRequest", "GetPromptRequestParams",
    "GetPromptResult", "ImageContent", "Implementation", "IncludeContext", "InitializeRequest",
    "InitializeRequestParams", "InitializeResult", "InitializedNotification",
    "InitializedNotificationParams", "ListPromptsRequest", "ListPromptsRequestParams",
    "ListPromptsResult", "ListResourceTemplatesRequest", "ListResourceTemplatesRequestParams",
    "ListResourceTemplatesResult", "ListResourcesRequest", "ListResourcesRequestParams",
    "ListResourcesResult", "ListRootsRequest", "ListRootsRequestParams", "ListRootsResult",
    "ListToolsRequest", "ListToolsRequestParams", "ListToolsResult", "LoggingLevel",
    "LoggingMessageNotification", "LoggingMessageNotificationParams", "ModelHint",
    "ModelPreferences", "PingRequest", "PingRequestParams", "ProgressNotification",
    "ProgressNotificationParams", "ProgressToken", "Prompt", "PromptArgument",
    "PromptListChangedNotification", "PromptListChangedNotificationParams", "PromptMessage",
    "PromptReference", "PromptsCapability", "ReadResourceRequest", "ReadResourceRequestParams",
    "ReadResourceResult", "Reference", "RequestId", "Resource", "ResourceContents",
    "ResourceListChangedNotification", "ResourceListChangedNotificationParams",
    "ResourceReference", "ResourceTemplate", "ResourceUpdatedNotification",
    "ResourceUpdatedNotificationParams", "ResourcesCapability", "Result", "Role", "Root",
    "RootsCapability", "RootsListChangedNotification", "RootsListChangedNotificationParams",
    "SamplingContent", "SamplingMessage", "ServerCapabilities", "ServerNotification",
    "ServerRequest", "ServerResult", "SetLevelRequest", "SetLevelRequestParams",
    "SubscribeRequest", "SubscribeRequestParams", "TextContent", "TextResourceContents", "Tool",
    "ToolAnnotations", "ToolListChangedNotification", "ToolListChangedNotificationParams",
    "ToolsCapability", "UnknownContent", "UnsubscribeRequest", "UnsubscribeRequestParams",
]

_Meta = dict[str, Any] | None


# --- Primitive aliases -------------------------------------------------------------------

RequestId = str | int
ProgressToken = str | int
Cursor = str
Role = Literal["user", "assistant"]
LoggingLevel = Literal[
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
]
IncludeContext = Literal["none", "thisServer", "allServers"]

#: The logging levels from least to most severe (RFC 5424 order).
LOGGING_LEVELS: tuple[LoggingLevel, ...] = (
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency",
)


# --- Shared building blocks ----------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Annotations:
    """Hints for the client about who a piece of data is for and how much it matters."""
    audience: list[Role] | None = None
    priority: float | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class Implementation:
    """The name and version of a client or server program."""
    name: str
    version: str
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class TextResourceContents:
    """The contents of a resource that can be represented as text."""
    uri: str
    text: str
    mime_type: str | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class BlobResourceContents:
    """The contents of a binary resource, base64-encoded."""
    uri: str
    blob: str
    mime_type: str | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


ResourceContents = TextResourceContents | BlobResourceContents


@attrs.frozen(kw_only=True)
class TextContent:
    """A text item given to or produced by a model."""
    type: Literal["text"] = "text"
    text: str
    annotations: Annotations | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ImageContent:
    """An image (base64 data plus its MIME type) given to or produced by a model."""
    type: Literal["image"] = "image"
    data: str
    mime_type: str
    annotations: Annotations | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class AudioContent:
    """An audio clip (base64 data plus its MIME type) given to or produced by a model."""
    type: Literal["audio"] = "audio"
    data: str
    mime_type: str
    annotations: Annotations | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class EmbeddedResource:
    """A resource's contents placed inline in a prompt or a tool result."""
    type: Literal["resource"] = "resource"
    resource: ResourceContents
    annotations: Annotations | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class UnknownContent:
    """A content item of a type unknown to this revision; its other members are in ``extra``."""
    type: str
    extra: Mapping[str, Any] = attrs.field(factory=dict)


Content = TextContent | ImageContent | AudioContent | EmbeddedResource | UnknownContent
SamplingContent = TextContent | ImageContent | AudioContent


# --- Capabilities ------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class RootsCapability:
    """The client can list its roots."""
    list_changed: bool | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ClientCapabilities:
    """What a client supports; unknown capabilities are kept in ``extra``."""
    experimental: dict[str, dict[str, Any]] | None = None
    roots: RootsCapability | None = None
    sampling: dict[str, Any] | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class PromptsCapability:
    """The server offers prompts."""
    list_changed: bool | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ResourcesCapability:
    """The server offers resources, optionally with subscriptions and list updates."""
    subscribe: bool | None = None
    list_changed: bool | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ToolsCapability:
    """The server offers tools."""
    list_changed: bool | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ServerCapabilities:
    """What a server supports; unknown capabilities are kept in ``extra``."""
    experimental: dict[str, dict[str, Any]] | None = None
    logging: dict[str, Any] | None = None
    completions: dict[str, Any] | None = None
    prompts: PromptsCapability | None = None
    resources: ResourcesCapability | None = None
    tools: ToolsCapability | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


# --- Server features: tools, resources, prompts, completion --------------------------------


@attrs.frozen(kw_only=True)
class ToolAnnotations:
    """Untrusted hints about a tool's behaviour; an absent hint takes the spec's default."""
    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)

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


@attrs.frozen(kw_only=True)
class Tool:
    """A tool the server lets the client call; ``input_schema`` is a JSON Schema object."""
    name: str
    input_schema: dict[str, Any]
    description: str | None = None
    annotations: ToolAnnotations | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class Resource:
    """A resource the server can read (``size`` is the raw byte count, if known)."""
    uri: str
    name: str
    description: str | None = None
    mime_type: str | None = None
    annotations: Annotations | None = None
    # AMBIG-22: the schema files disagree (integer vs number); any number is accepted.
    size: float | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ResourceTemplate:
    """An RFC 6570 URI template describing a family of readable resources."""
    uri_template: str
    name: str
    description: str | None = None
    mime_type: str | None = None
    annotations: Annotations | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class PromptArgument:
    """One argument a prompt template accepts."""
    name: str
    description: str | None = None
    required: bool | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class Prompt:
    """A prompt or prompt template offered by the server."""
    name: str
    description: str | None = None
    arguments: list[PromptArgument] | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class PromptMessage:
    """One message of a prompt; unlike sampling it may embed resources."""
    role: Role
    content: Content
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class PromptReference:
    """Points at a prompt by name (for completion)."""
    type: Literal["ref/prompt"] = "ref/prompt"
    name: str
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ResourceReference:
    """Points at a resource or resource template by URI (for completion)."""
    type: Literal["ref/resource"] = "ref/resource"
    uri: str
    extra: Mapping[str, Any] = attrs.field(factory=dict)


Reference = PromptReference | ResourceReference


@attrs.frozen(kw_only=True)
class CompletionArgument:
    """The argument being completed and what the user has typed so far."""
    name: str
    value: str
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class Completion:
    """Completion suggestions (at most 100) and whether more exist."""
    values: list[str]
    total: int | None = None
    has_more: bool | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


# --- Client features: sampling and roots --------------------------------------------------


@attrs.frozen(kw_only=True)
class SamplingMessage:
    """A message sent to or produced by a model during sampling (no embedded resources)."""
    role: Role
    content: SamplingContent
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ModelHint:
    """A model name fragment the client should try to match, in order of preference."""
    name: str | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ModelPreferences:
    """Advisory preferences for picking a model; priorities range from 0 to 1."""
    hints: list[ModelHint] | None = None
    cost_priority: float | None = None
    speed_priority: float | None = None
    intelligence_priority: float | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class Root:
    """A directory or file (a ``file://`` URI) the server may work within."""
    uri: str
    name: str | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


# --- Results -------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class EmptyResult:
    """A result with no content of its own (``ping``, subscriptions, ``logging/setLevel``)."""
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


Result = EmptyResult


@attrs.frozen(kw_only=True)
class InitializeResult:
    """The server's answer to ``initialize``: chosen version, capabilities and identity."""
    protocol_version: str
    capabilities: ServerCapabilities
    server_info: Implementation
    instructions: str | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ListResourcesResult:
    """One page of the server's resources."""
    resources: list[Resource]
    next_cursor: str | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ListResourceTemplatesResult:
    """One page of the server's resource templates."""
    resource_templates: list[ResourceTemplate]
    next_cursor: str | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ReadResourceResult:
    """The contents read from a resource (possibly several sub-resources)."""
    contents: list[ResourceContents]
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ListPromptsResult:
    """One page of the server's prompts."""
    prompts: list[Prompt]
    next_cursor: str | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class GetPromptResult:
    """A rendered prompt: its messages and an optional description."""
    messages: list[PromptMessage]
    description: str | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ListToolsResult:
    """One page of the server's tools."""
    tools: list[Tool]
    next_cursor: str | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class CallToolResult:
    """A tool's output; tool failures are reported here with ``is_error`` set."""
    content: list[Content]
    is_error: bool | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class CompleteResult:
    """The server's completion suggestions."""
    completion: Completion
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class CreateMessageResult:
    """The message a model produced for a sampling request, and which model made it."""
    role: Role
    content: SamplingContent
    model: str
    stop_reason: str | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)

    @property
    def text(self) -> str | None:
        """The generated text, or None when the model answered with an image or audio."""
        return self.content.text if isinstance(self.content, TextContent) else None


@attrs.frozen(kw_only=True)
class ListRootsResult:
    """The client's current roots."""
    roots: list[Root]
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


# --- Request parameters --------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class _MetadataOnly:
    """Parameters that carry nothing but metadata."""
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class _Paginated:
    """Parameters of a paginated list request."""
    cursor: str | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class InitializeRequestParams:
    """Parameters of ``initialize``: the client's newest version, capabilities and identity."""
    protocol_version: str
    capabilities: ClientCapabilities
    client_info: Implementation
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class PingRequestParams(_MetadataOnly):
    """Parameters of ``ping`` (only metadata)."""


@attrs.frozen(kw_only=True)
class ListResourcesRequestParams(_Paginated):
    """Parameters of ``resources/list``: where the previous page ended."""


@attrs.frozen(kw_only=True)
class ListResourceTemplatesRequestParams(_Paginated):
    """Parameters of ``resources/templates/list``: where the previous page ended."""


@attrs.frozen(kw_only=True)
class ReadResourceRequestParams:
    """Parameters of ``resources/read``: the URI to read."""
    uri: str
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class SubscribeRequestParams:
    """Parameters of ``resources/subscribe``: the URI to watch."""
    uri: str
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class UnsubscribeRequestParams:
    """Parameters of ``resources/unsubscribe``: the URI to stop watching."""
    uri: str
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ListPromptsRequestParams(_Paginated):
    """Parameters of ``prompts/list``: where the previous page ended."""


@attrs.frozen(kw_only=True)
class GetPromptRequestParams:
    """Parameters of ``prompts/get``: the prompt name and string arguments for its template."""
    name: str
    arguments: dict[str, str] | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ListToolsRequestParams(_Paginated):
    """Parameters of ``tools/list``: where the previous page ended."""


@attrs.frozen(kw_only=True)
class CallToolRequestParams:
    """Parameters of ``tools/call``: the tool name and its arguments."""
    name: str
    arguments: dict[str, Any] | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class SetLevelRequestParams:
    """Parameters of ``logging/setLevel``: the least severe level to receive."""
    level: LoggingLevel
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class CompleteRequestParams:
    """Parameters of ``completion/complete``: what is completed and the partial value."""
    ref: Reference
    argument: CompletionArgument
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class CreateMessageRequestParams:
    """Parameters of ``sampling/createMessage``: the conversation and sampling options."""
    messages: list[SamplingMessage]
    max_tokens: int
    system_prompt: str | None = None
    include_context: IncludeContext | None = None
    temperature: float | None = None
    stop_sequences: list[str] | None = None
    metadata: dict[str, Any] | None = None
    model_preferences: ModelPreferences | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ListRootsRequestParams(_MetadataOnly):
    """Parameters of ``roots/list`` (only metadata)."""


# --- Requests ------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class InitializeRequest:
    """The client's first request, opening the session."""
    method: Literal["initialize"] = "initialize"
    params: InitializeRequestParams
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class PingRequest:
    """A liveness check either side may send; the answer is an empty result."""
    method: Literal["ping"] = "ping"
    params: PingRequestParams | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ListResourcesRequest:
    """Asks the server for (a page of) its resources."""
    method: Literal["resources/list"] = "resources/list"
    params: ListResourcesRequestParams | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ListResourceTemplatesRequest:
    """Asks the server for (a page of) its resource templates."""
    method: Literal["resources/templates/list"] = "resources/templates/list"
    params: ListResourceTemplatesRequestParams | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ReadResourceRequest:
    """Asks the server for the contents of a resource."""
    method: Literal["resources/read"] = "resources/read"
    params: ReadResourceRequestParams
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class SubscribeRequest:
    """Asks the server to announce changes to a resource."""
    method: Literal["resources/subscribe"] = "resources/subscribe"
    params: SubscribeRequestParams
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class UnsubscribeRequest:
    """Withdraws an earlier subscription to a resource."""
    method: Literal["resources/unsubscribe"] = "resources/unsubscribe"
    params: UnsubscribeRequestParams
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ListPromptsRequest:
    """Asks the server for (a page of) its prompts."""
    method: Literal["prompts/list"] = "prompts/list"
    params: ListPromptsRequestParams | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class GetPromptRequest:
    """Asks the server to render a prompt."""
    method: Literal["prompts/get"] = "prompts/get"
    params: GetPromptRequestParams
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ListToolsRequest:
    """Asks the server for (a page of) its tools."""
    method: Literal["tools/list"] = "tools/list"
    params: ListToolsRequestParams | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class CallToolRequest:
    """Asks the server to run a tool."""
    method: Literal["tools/call"] = "tools/call"
    params: CallToolRequestParams
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class SetLevelRequest:
    """Sets the least severe log level the client wants to receive."""
    method: Literal["logging/setLevel"] = "logging/setLevel"
    params: SetLevelRequestParams
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class CompleteRequest:
    """Asks the server for completions of a prompt or resource-template argument."""
    method: Literal["completion/complete"] = "completion/complete"
    params: CompleteRequestParams
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class CreateMessageRequest:
    """The server asks the client to sample a model (the user stays in control)."""
    method: Literal["sampling/createMessage"] = "sampling/createMessage"
    params: CreateMessageRequestParams
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ListRootsRequest:
    """The server asks the client for its roots."""
    method: Literal["roots/list"] = "roots/list"
    params: ListRootsRequestParams | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


# --- Notifications -------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class CancelledNotificationParams:
    """Parameters of ``notifications/cancelled``: the request given up on, and why."""
    request_id: RequestId
    reason: str | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class InitializedNotificationParams(_MetadataOnly):
    """Parameters of ``notifications/initialized`` (only metadata)."""


@attrs.frozen(kw_only=True)
class ProgressNotificationParams:
    """Parameters of ``notifications/progress``: token, progress so far, total, message."""
    progress_token: ProgressToken
    progress: float
    total: float | None = None
    message: str | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class RootsListChangedNotificationParams(_MetadataOnly):
    """Parameters of ``notifications/roots/list_changed`` (only metadata)."""


@attrs.frozen(kw_only=True)
class ResourceListChangedNotificationParams(_MetadataOnly):
    """Parameters of ``notifications/resources/list_changed`` (only metadata)."""


@attrs.frozen(kw_only=True)
class ResourceUpdatedNotificationParams:
    """Parameters of ``notifications/resources/updated``: the URI that changed."""
    uri: str
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class PromptListChangedNotificationParams(_MetadataOnly):
    """Parameters of ``notifications/prompts/list_changed`` (only metadata)."""


@attrs.frozen(kw_only=True)
class ToolListChangedNotificationParams(_MetadataOnly):
    """Parameters of ``notifications/tools/list_changed`` (only metadata)."""


@attrs.frozen(kw_only=True)
class LoggingMessageNotificationParams:
    """Parameters of ``notifications/message``: severity, logger name and any JSON data."""
    level: LoggingLevel
    data: Any
    logger: str | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class CancelledNotification:
    """Either side gives up on a request it sent; the answer, if any, will be ignored."""
    method: Literal["notifications/cancelled"] = "notifications/cancelled"
    params: CancelledNotificationParams
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class InitializedNotification:
    """The client confirms that initialization is complete."""
    method: Literal["notifications/initialized"] = "notifications/initialized"
    params: InitializedNotificationParams | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ProgressNotification:
    """Reports progress on a long-running request that asked for it."""
    method: Literal["notifications/progress"] = "notifications/progress"
    params: ProgressNotificationParams
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class RootsListChangedNotification:
    """The client's set of roots has changed."""
    method: Literal["notifications/roots/list_changed"] = "notifications/roots/list_changed"
    params: RootsListChangedNotificationParams | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ResourceListChangedNotification:
    """The server's list of resources has changed."""
    method: Literal["notifications/resources/list_changed"] = (
        "notifications/resources/list_changed"
    )
    params: ResourceListChangedNotificationParams | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ResourceUpdatedNotification:
    """A subscribed resource (or one below it) has changed."""
    method: Literal["notifications/resources/updated"] = "notifications/resources/updated"
    params: ResourceUpdatedNotificationParams
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class PromptListChangedNotification:
    """The server's list of prompts has changed."""
    method: Literal["notifications/prompts/list_changed"] = (
        "notifications/prompts/list_changed"
    )
    params: PromptListChangedNotificationParams | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ToolListChangedNotification:
    """The server's list of tools has changed."""
    method: Literal["notifications/tools/list_changed"] = "notifications/tools/list_changed"
    params: ToolListChangedNotificationParams | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class LoggingMessageNotification:
    """A log record sent from the server to the client."""
    method: Literal["notifications/message"] = "notifications/message"
    params: LoggingMessageNotificationParams
    extra: Mapping[str, Any] = attrs.field(factory=dict)


# --- Unions by direction and method tables -----------------------------------------------

ClientRequest = (
    InitializeRequest | PingRequest | ListResourcesRequest | ListResourceTemplatesRequest
    | ReadResourceRequest | SubscribeRequest | UnsubscribeRequest | ListPromptsRequest
    | GetPromptRequest | ListToolsRequest | CallToolRequest | SetLevelRequest | CompleteRequest
)
ServerRequest = PingRequest | CreateMessageRequest | ListRootsRequest
ClientNotification = (
    CancelledNotification | InitializedNotification | ProgressNotification
    | RootsListChangedNotification
)
ServerNotification = (
    CancelledNotification | ProgressNotification | ResourceListChangedNotification
    | ResourceUpdatedNotification | PromptListChangedNotification
    | ToolListChangedNotification | LoggingMessageNotification
)
ClientResult = EmptyResult | CreateMessageResult | ListRootsResult
ServerResult = (
    EmptyResult | InitializeResult | ListResourcesResult | ListResourceTemplatesResult
    | ReadResourceResult | ListPromptsResult | GetPromptResult | ListToolsResult
    | CallToolResult | CompleteResult
)

#: Request method -> (params class, result class). Results carry no method of their own,
#: so the method of the request they answer is what tells how to decode them.
REQUEST_TYPES: dict[str, tuple[type[Any], type[Any]]] = {
    "initialize": (InitializeRequestParams, InitializeResult),
    "ping": (PingRequestParams, EmptyResult),
    "resources/list": (ListResourcesRequestParams, ListResourcesResult),
    "resources/templates/list": (ListResourceTemplatesRequestParams, ListResourceTemplatesResult),
    "resources/read": (ReadResourceRequestParams, ReadResourceResult),
    "resources/subscribe": (SubscribeRequestParams, EmptyResult),
    "resources/unsubscribe": (UnsubscribeRequestParams, EmptyResult),
    "prompts/list": (ListPromptsRequestParams, ListPromptsResult),
    "prompts/get": (GetPromptRequestParams, GetPromptResult),
    "tools/list": (ListToolsRequestParams, ListToolsResult),
    "tools/call": (CallToolRequestParams, CallToolResult),
    "logging/setLevel": (SetLevelRequestParams, EmptyResult),
    "completion/complete": (CompleteRequestParams, CompleteResult),
    "sampling/createMessage": (CreateMessageRequestParams, CreateMessageResult),
    "roots/list": (ListRootsRequestParams, ListRootsResult),
}

#: Notification method -> params class. Where the schema makes ``params`` optional, an
#: absent member stands for the params class with every field unset.
NOTIFICATION_TYPES: dict[str, type[Any]] = {
    "notifications/cancelled": CancelledNotificationParams,
    "notifications/initialized": InitializedNotificationParams,
    "notifications/progress": ProgressNotificationParams,
    "notifications/roots/list_changed": RootsListChangedNotificationParams,
    "notifications/resources/list_changed": ResourceListChangedNotificationParams,
    "notifications/resources/updated": ResourceUpdatedNotificationParams,
    "notifications/prompts/list_changed": PromptListChangedNotificationParams,
    "notifications/tools/list_changed": ToolListChangedNotificationParams,
    "notifications/message": LoggingMessageNotificationParams,
}
