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
* The classes of resources, prompts, completion, sampling and roots, and the
  whole-message classes with the unions and method tables, are built when one of their
  names is first used: a program that never uses a feature never pays for its classes.
  Every name is here all the same, for ``import``, ``dir()``, type checkers and pickle.

Use ``to_wire`` and ``from_wire`` of :mod:`mcp_sync.protocol._convert` to move between
these classes and JSON-ready data.
"""

from types import ModuleType
from typing import TYPE_CHECKING, Any

from .protocol._icons import is_safe_icon_src
from .protocol._types_common import (
    LOGGING_LEVELS,
    Annotations,
    AudioContent,
    BlobResourceContents,
    ClientCapabilities,
    Content,
    Cursor,
    EmbeddedResource,
    Icon,
    ImageContent,
    Implementation,
    IncludeContext,
    LoggingLevel,
    PromptsCapability,
    RequestId,
    ResourceContents,
    ResourceLink,
    ResourcesCapability,
    Role,
    RootsCapability,
    SamplingContent,
    ServerCapabilities,
    TextContent,
    TextResourceContents,
    ToolResultContent,
    ToolsCapability,
    ToolUseContent,
    UnknownContent,
    display_name,
)
from .protocol._types_features import (
    CallToolResult,
    EmptyResult,
    InitializeResult,
    ListToolsResult,
    Result,
    Tool,
    ToolAnnotations,
)
from .protocol._types_messages import (
    CallToolRequestParams,
    CancelledNotificationParams,
    InitializedNotificationParams,
    InitializeRequestParams,
    ListToolsRequestParams,
    LoggingMessageNotificationParams,
    PingRequestParams,
    ProgressNotificationParams,
    ProgressToken,
    SetLevelRequestParams,
    ToolListChangedNotificationParams,
)

if TYPE_CHECKING:
    from .protocol._types_client_features import (
        CreateMessageRequestParams,
        CreateMessageResult,
        ListRootsRequestParams,
        ListRootsResult,
        ModelHint,
        ModelPreferences,
        Root,
        RootsListChangedNotificationParams,
        SamplingMessage,
        ToolChoice,
    )
    from .protocol._types_completion import (
        CompleteRequestParams,
        CompleteResult,
        Completion,
        CompletionArgument,
        PromptReference,
        Reference,
        ResourceReference,
    )
    from .protocol._types_envelopes import (
        NOTIFICATION_TYPES,
        REQUEST_TYPES,
        CallToolRequest,
        CancelledNotification,
        ClientNotification,
        ClientRequest,
        ClientResult,
        CompleteRequest,
        CreateMessageRequest,
        GetPromptRequest,
        InitializedNotification,
        InitializeRequest,
        ListPromptsRequest,
        ListResourcesRequest,
        ListResourceTemplatesRequest,
        ListRootsRequest,
        ListToolsRequest,
        LoggingMessageNotification,
        PingRequest,
        ProgressNotification,
        PromptListChangedNotification,
        ReadResourceRequest,
        ResourceListChangedNotification,
        ResourceUpdatedNotification,
        RootsListChangedNotification,
        ServerNotification,
        ServerRequest,
        ServerResult,
        SetLevelRequest,
        SubscribeRequest,
        ToolListChangedNotification,
        UnsubscribeRequest,
    )
    from .protocol._types_prompts import (
        GetPromptRequestParams,
        GetPromptResult,
        ListPromptsRequestParams,
        ListPromptsResult,
        Prompt,
        PromptArgument,
        PromptListChangedNotificationParams,
        PromptMessage,
    )
    from .protocol._types_resources import (
        ListResourcesRequestParams,
        ListResourcesResult,
        ListResourceTemplatesRequestParams,
        ListResourceTemplatesResult,
        ReadResourceRequestParams,
        ReadResourceResult,
        Resource,
        ResourceListChangedNotificationParams,
        ResourceTemplate,
        ResourceUpdatedNotificationParams,
        SubscribeRequestParams,
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
    "GetPromptResult", "Icon", "ImageContent", "Implementation", "IncludeContext",
    "InitializeRequest",
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
    "ResourceLink",
    "ResourceListChangedNotification", "ResourceListChangedNotificationParams",
    "ResourceReference", "ResourceTemplate", "ResourceUpdatedNotification",
    "ResourceUpdatedNotificationParams", "ResourcesCapability", "Result", "Role", "Root",
    "RootsCapability", "RootsListChangedNotification", "RootsListChangedNotificationParams",
    "SamplingContent", "SamplingMessage", "ServerCapabilities", "ServerNotification",
    "ServerRequest", "ServerResult", "SetLevelRequest", "SetLevelRequestParams",
    "SubscribeRequest", "SubscribeRequestParams", "TextContent", "TextResourceContents", "Tool",
    "ToolAnnotations", "ToolChoice", "ToolListChangedNotification",
    "ToolListChangedNotificationParams", "ToolResultContent", "ToolUseContent",
    "ToolsCapability", "UnknownContent", "UnsubscribeRequest", "UnsubscribeRequestParams",
    "display_name", "is_safe_icon_src",
]

# The types of the features a program may never use are built when one of their names is
# first looked up here (PEP 562): a stdio server offering only tools then starts without
# building some sixty classes it would not use (see docs/benchmarks.md). Each module
# publishes its classes as this module's own as it loads (_model.publish).
_LAZY: dict[str, str] = {name: module for module, names in (
    ("_types_resources", """
        ListResourceTemplatesRequestParams ListResourceTemplatesResult
        ListResourcesRequestParams ListResourcesResult ReadResourceRequestParams
        ReadResourceResult Resource ResourceListChangedNotificationParams ResourceTemplate
        ResourceUpdatedNotificationParams SubscribeRequestParams UnsubscribeRequestParams
    """),
    ("_types_prompts", """
        GetPromptRequestParams GetPromptResult ListPromptsRequestParams ListPromptsResult
        Prompt PromptArgument PromptListChangedNotificationParams PromptMessage
    """),
    ("_types_completion", """
        CompleteRequestParams CompleteResult Completion CompletionArgument PromptReference
        Reference ResourceReference
    """),
    ("_types_client_features", """
        CreateMessageRequestParams CreateMessageResult ListRootsRequestParams
        ListRootsResult ModelHint ModelPreferences Root RootsListChangedNotificationParams
        SamplingMessage ToolChoice
    """),
    ("_types_envelopes", """
        CallToolRequest CancelledNotification ClientNotification ClientRequest ClientResult
        CompleteRequest CreateMessageRequest GetPromptRequest InitializeRequest
        InitializedNotification ListPromptsRequest ListResourceTemplatesRequest
        ListResourcesRequest ListRootsRequest ListToolsRequest LoggingMessageNotification
        NOTIFICATION_TYPES PingRequest ProgressNotification PromptListChangedNotification
        REQUEST_TYPES ReadResourceRequest ResourceListChangedNotification
        ResourceUpdatedNotification RootsListChangedNotification ServerNotification
        ServerRequest ServerResult SetLevelRequest SubscribeRequest
        ToolListChangedNotification UnsubscribeRequest
    """),
) for name in names.split()}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_load(module), name)
    globals()[name] = value
    return value


def _load(module: str) -> ModuleType:
    # Imports written out, not computed: the test of the I/O-free core follows them.
    if module == "_types_resources":
        from .protocol import _types_resources
        return _types_resources
    if module == "_types_prompts":
        from .protocol import _types_prompts
        return _types_prompts
    if module == "_types_completion":
        from .protocol import _types_completion
        return _types_completion
    if module == "_types_client_features":
        from .protocol import _types_client_features
        return _types_client_features
    from .protocol import _types_envelopes
    return _types_envelopes


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
