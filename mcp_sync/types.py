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

import attrs

from ._model import use_fast_inits
from ._types_common import (
    LOGGING_LEVELS,
    Annotations,
    AudioContent,
    BlobResourceContents,
    ClientCapabilities,
    Content,
    Cursor,
    EmbeddedResource,
    ImageContent,
    Implementation,
    IncludeContext,
    LoggingLevel,
    PromptsCapability,
    RequestId,
    ResourceContents,
    ResourcesCapability,
    Role,
    RootsCapability,
    SamplingContent,
    ServerCapabilities,
    TextContent,
    TextResourceContents,
    ToolsCapability,
    UnknownContent,
)
from ._types_features import (
    CallToolResult,
    CompleteResult,
    Completion,
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
    ModelHint,
    ModelPreferences,
    Prompt,
    PromptArgument,
    PromptMessage,
    PromptReference,
    ReadResourceResult,
    Reference,
    Resource,
    ResourceReference,
    ResourceTemplate,
    Result,
    Root,
    SamplingMessage,
    Tool,
    ToolAnnotations,
)
from ._types_messages import (
    NOTIFICATION_TYPES,
    REQUEST_TYPES,
    CallToolRequest,
    CallToolRequestParams,
    CancelledNotification,
    CancelledNotificationParams,
    ClientNotification,
    ClientRequest,
    ClientResult,
    CompleteRequest,
    CompleteRequestParams,
    CreateMessageRequest,
    CreateMessageRequestParams,
    GetPromptRequest,
    GetPromptRequestParams,
    InitializedNotification,
    InitializedNotificationParams,
    InitializeRequest,
    InitializeRequestParams,
    ListPromptsRequest,
    ListPromptsRequestParams,
    ListResourcesRequest,
    ListResourcesRequestParams,
    ListResourceTemplatesRequest,
    ListResourceTemplatesRequestParams,
    ListRootsRequest,
    ListRootsRequestParams,
    ListToolsRequest,
    ListToolsRequestParams,
    LoggingMessageNotification,
    LoggingMessageNotificationParams,
    PingRequest,
    PingRequestParams,
    ProgressNotification,
    ProgressNotificationParams,
    ProgressToken,
    PromptListChangedNotification,
    PromptListChangedNotificationParams,
    ReadResourceRequest,
    ReadResourceRequestParams,
    ResourceListChangedNotification,
    ResourceListChangedNotificationParams,
    ResourceUpdatedNotification,
    ResourceUpdatedNotificationParams,
    RootsListChangedNotification,
    RootsListChangedNotificationParams,
    ServerNotification,
    ServerRequest,
    ServerResult,
    SetLevelRequest,
    SetLevelRequestParams,
    SubscribeRequest,
    SubscribeRequestParams,
    ToolListChangedNotification,
    ToolListChangedNotificationParams,
    UnsubscribeRequest,
    UnsubscribeRequestParams,
)

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

# The classes are defined in private modules but belong to this one: their reprs, pickles
# and documentation name mcp_sync.types, and the content conversion recognises wire types
# by this module name.
for _name in __all__:
    _value = globals()[_name]
    if attrs.has(_value):
        _value.__module__ = __name__
del _name, _value

# Construction (a tool building thousands of content items) takes the faster __init__.
use_fast_inits()
