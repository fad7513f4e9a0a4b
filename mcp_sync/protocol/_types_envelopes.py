"""Whole requests and notifications (method and params), the unions by direction, and
the method tables.

The library itself sends and reads the parameter classes; these mirror the schema's
message definitions for applications that want them."""

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from ._model import NO_EXTRA, Model, publish
from ._types_client_features import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ListRootsRequestParams,
    ListRootsResult,
    RootsListChangedNotificationParams,
)
from ._types_completion import CompleteRequestParams, CompleteResult
from ._types_features import CallToolResult, EmptyResult, InitializeResult, ListToolsResult
from ._types_messages import (
    CallToolRequestParams,
    CancelledNotificationParams,
    InitializedNotificationParams,
    InitializeRequestParams,
    ListToolsRequestParams,
    LoggingMessageNotificationParams,
    PingRequestParams,
    ProgressNotificationParams,
    SetLevelRequestParams,
    ToolListChangedNotificationParams,
)
from ._types_prompts import (
    GetPromptRequestParams,
    GetPromptResult,
    ListPromptsRequestParams,
    ListPromptsResult,
    PromptListChangedNotificationParams,
)
from ._types_resources import (
    ListResourcesRequestParams,
    ListResourcesResult,
    ListResourceTemplatesRequestParams,
    ListResourceTemplatesResult,
    ReadResourceRequestParams,
    ReadResourceResult,
    ResourceListChangedNotificationParams,
    ResourceUpdatedNotificationParams,
    SubscribeRequestParams,
    UnsubscribeRequestParams,
)


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


publish(globals())
