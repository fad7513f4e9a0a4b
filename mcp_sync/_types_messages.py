"""Wire types of requests and notifications, the unions by direction, the method tables."""

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from ._model import NO_EXTRA, Model
from ._types_common import (
    ClientCapabilities,
    Implementation,
    IncludeContext,
    LoggingLevel,
    RequestId,
    _Meta,
)
from ._types_features import (
    CallToolResult,
    CompleteResult,
    CompletionArgument,
    CreateMessageResult,
    EmptyResult,
    GetPromptResult,
    InitializeResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListRootsResult,
    ListToolsResult,
    ModelPreferences,
    ReadResourceResult,
    Reference,
    SamplingMessage,
)

# The same union as RequestId under its own name. It lives here rather than beside
# RequestId so that mcp_sync.types binds RequestId first, keeping that name in messages
# about this union (see _convert._alias_names).
ProgressToken = str | int


# --- Request parameters --------------------------------------------------------------------


@attrs.frozen(kw_only=True, repr=False, eq=False)
class _MetadataOnly(Model):
    """Parameters that carry nothing but metadata."""
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class _Paginated(Model):
    """Parameters of a paginated list request."""
    cursor: str | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class InitializeRequestParams(Model):
    """Parameters of ``initialize``: the client's newest version, capabilities and identity."""
    protocol_version: str
    capabilities: ClientCapabilities
    client_info: Implementation
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class PingRequestParams(_MetadataOnly):
    """Parameters of ``ping`` (only metadata)."""


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListResourcesRequestParams(_Paginated):
    """Parameters of ``resources/list``: where the previous page ended."""


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListResourceTemplatesRequestParams(_Paginated):
    """Parameters of ``resources/templates/list``: where the previous page ended."""


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ReadResourceRequestParams(Model):
    """Parameters of ``resources/read``: the URI to read."""
    uri: str
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SubscribeRequestParams(Model):
    """Parameters of ``resources/subscribe``: the URI to watch."""
    uri: str
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class UnsubscribeRequestParams(Model):
    """Parameters of ``resources/unsubscribe``: the URI to stop watching."""
    uri: str
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListPromptsRequestParams(_Paginated):
    """Parameters of ``prompts/list``: where the previous page ended."""


@attrs.frozen(kw_only=True, repr=False, eq=False)
class GetPromptRequestParams(Model):
    """Parameters of ``prompts/get``: the prompt name and string arguments for its template."""
    name: str
    arguments: dict[str, str] | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListToolsRequestParams(_Paginated):
    """Parameters of ``tools/list``: where the previous page ended."""


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CallToolRequestParams(Model):
    """Parameters of ``tools/call``: the tool name and its arguments."""
    name: str
    arguments: dict[str, Any] | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SetLevelRequestParams(Model):
    """Parameters of ``logging/setLevel``: the least severe level to receive."""
    level: LoggingLevel
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CompleteRequestParams(Model):
    """Parameters of ``completion/complete``: what is completed and the partial value."""
    ref: Reference
    argument: CompletionArgument
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
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListRootsRequestParams(_MetadataOnly):
    """Parameters of ``roots/list`` (only metadata)."""


# --- Requests ------------------------------------------------------------------------------


@attrs.frozen(kw_only=True, repr=False, eq=False)
class InitializeRequest(Model):
    """The client's first request, opening the session."""
    method: Literal["initialize"] = "initialize"
    params: InitializeRequestParams
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class PingRequest(Model):
    """A liveness check either side may send; the answer is an empty result."""
    method: Literal["ping"] = "ping"
    params: PingRequestParams | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListResourcesRequest(Model):
    """Asks the server for (a page of) its resources."""
    method: Literal["resources/list"] = "resources/list"
    params: ListResourcesRequestParams | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListResourceTemplatesRequest(Model):
    """Asks the server for (a page of) its resource templates."""
    method: Literal["resources/templates/list"] = "resources/templates/list"
    params: ListResourceTemplatesRequestParams | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ReadResourceRequest(Model):
    """Asks the server for the contents of a resource."""
    method: Literal["resources/read"] = "resources/read"
    params: ReadResourceRequestParams
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SubscribeRequest(Model):
    """Asks the server to announce changes to a resource."""
    method: Literal["resources/subscribe"] = "resources/subscribe"
    params: SubscribeRequestParams
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class UnsubscribeRequest(Model):
    """Withdraws an earlier subscription to a resource."""
    method: Literal["resources/unsubscribe"] = "resources/unsubscribe"
    params: UnsubscribeRequestParams
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListPromptsRequest(Model):
    """Asks the server for (a page of) its prompts."""
    method: Literal["prompts/list"] = "prompts/list"
    params: ListPromptsRequestParams | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class GetPromptRequest(Model):
    """Asks the server to render a prompt."""
    method: Literal["prompts/get"] = "prompts/get"
    params: GetPromptRequestParams
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListToolsRequest(Model):
    """Asks the server for (a page of) its tools."""
    method: Literal["tools/list"] = "tools/list"
    params: ListToolsRequestParams | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CallToolRequest(Model):
    """Asks the server to run a tool."""
    method: Literal["tools/call"] = "tools/call"
    params: CallToolRequestParams
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SetLevelRequest(Model):
    """Sets the least severe log level the client wants to receive."""
    method: Literal["logging/setLevel"] = "logging/setLevel"
    params: SetLevelRequestParams
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CompleteRequest(Model):
    """Asks the server for completions of a prompt or resource-template argument."""
    method: Literal["completion/complete"] = "completion/complete"
    params: CompleteRequestParams
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CreateMessageRequest(Model):
    """The server asks the client to sample a model (the user stays in control)."""
    method: Literal["sampling/createMessage"] = "sampling/createMessage"
    params: CreateMessageRequestParams
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListRootsRequest(Model):
    """The server asks the client for its roots."""
    method: Literal["roots/list"] = "roots/list"
    params: ListRootsRequestParams | None = None
    extra: Mapping[str, Any] = NO_EXTRA


# --- Notifications -------------------------------------------------------------------------


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CancelledNotificationParams(Model):
    """Parameters of ``notifications/cancelled``: the request given up on, and why."""
    request_id: RequestId
    reason: str | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class InitializedNotificationParams(_MetadataOnly):
    """Parameters of ``notifications/initialized`` (only metadata)."""


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ProgressNotificationParams(Model):
    """Parameters of ``notifications/progress``: token, progress so far, total, message."""
    progress_token: ProgressToken
    progress: float
    total: float | None = None
    message: str | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class RootsListChangedNotificationParams(_MetadataOnly):
    """Parameters of ``notifications/roots/list_changed`` (only metadata)."""


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ResourceListChangedNotificationParams(_MetadataOnly):
    """Parameters of ``notifications/resources/list_changed`` (only metadata)."""


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ResourceUpdatedNotificationParams(Model):
    """Parameters of ``notifications/resources/updated``: the URI that changed."""
    uri: str
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class PromptListChangedNotificationParams(_MetadataOnly):
    """Parameters of ``notifications/prompts/list_changed`` (only metadata)."""


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ToolListChangedNotificationParams(_MetadataOnly):
    """Parameters of ``notifications/tools/list_changed`` (only metadata)."""


@attrs.frozen(kw_only=True, repr=False, eq=False)
class LoggingMessageNotificationParams(Model):
    """Parameters of ``notifications/message``: severity, logger name and any JSON data."""
    level: LoggingLevel
    data: Any
    logger: str | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CancelledNotification(Model):
    """Either side gives up on a request it sent; the answer, if any, will be ignored."""
    method: Literal["notifications/cancelled"] = "notifications/cancelled"
    params: CancelledNotificationParams
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class InitializedNotification(Model):
    """The client confirms that initialization is complete."""
    method: Literal["notifications/initialized"] = "notifications/initialized"
    params: InitializedNotificationParams | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ProgressNotification(Model):
    """Reports progress on a long-running request that asked for it."""
    method: Literal["notifications/progress"] = "notifications/progress"
    params: ProgressNotificationParams
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class RootsListChangedNotification(Model):
    """The client's set of roots has changed."""
    method: Literal["notifications/roots/list_changed"] = "notifications/roots/list_changed"
    params: RootsListChangedNotificationParams | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ResourceListChangedNotification(Model):
    """The server's list of resources has changed."""
    method: Literal["notifications/resources/list_changed"] = (
        "notifications/resources/list_changed"
    )
    params: ResourceListChangedNotificationParams | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ResourceUpdatedNotification(Model):
    """A subscribed resource (or one below it) has changed."""
    method: Literal["notifications/resources/updated"] = "notifications/resources/updated"
    params: ResourceUpdatedNotificationParams
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class PromptListChangedNotification(Model):
    """The server's list of prompts has changed."""
    method: Literal["notifications/prompts/list_changed"] = (
        "notifications/prompts/list_changed"
    )
    params: PromptListChangedNotificationParams | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ToolListChangedNotification(Model):
    """The server's list of tools has changed."""
    method: Literal["notifications/tools/list_changed"] = "notifications/tools/list_changed"
    params: ToolListChangedNotificationParams | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class LoggingMessageNotification(Model):
    """A log record sent from the server to the client."""
    method: Literal["notifications/message"] = "notifications/message"
    params: LoggingMessageNotificationParams
    extra: Mapping[str, Any] = NO_EXTRA


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
