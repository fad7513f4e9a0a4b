"""Wire types shared across :mod:`mcp_sync.types`: aliases, content items, capabilities."""

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from ._model import NO_EXTRA, Model, publish

_Meta = dict[str, Any] | None


# --- Primitive aliases -------------------------------------------------------------------

RequestId = str | int
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


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Annotations(Model):
    """Hints for the client about who a piece of data is for and how much it matters.

    ``last_modified`` (2025-06-18, V0618-25) is an ISO 8601 timestamp, such as
    ``"2025-01-12T15:00:58Z"``.
    """
    audience: list[Role] | None = None
    priority: float | None = None
    last_modified: str | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Icon(Model):
    """An icon a user interface may show (2025-11-25, V1125-7).

    ``src`` is an ``https:`` URL or a ``data:`` URI (see ``is_safe_icon_src``); ``sizes``
    holds strings such as ``"48x48"`` or ``"any"``; ``theme`` is ``"light"`` or ``"dark"``.
    """
    src: str
    mime_type: str | None = None
    sizes: list[str] | None = None
    theme: Literal["light", "dark"] | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Implementation(Model):
    """The name and version of a client or server program.

    ``title``, ``description``, ``website_url`` and ``icons`` are optional and newer
    (``title`` from 2025-06-18, the others from 2025-11-25, V1125-6); they are left out of
    the wire when unset.
    """
    name: str
    version: str
    title: str | None = None
    description: str | None = None
    website_url: str | None = None
    icons: list[Icon] | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class TextResourceContents(Model):
    """The contents of a resource that can be represented as text."""
    uri: str
    text: str
    mime_type: str | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class BlobResourceContents(Model):
    """The contents of a binary resource, base64-encoded."""
    uri: str
    blob: str
    mime_type: str | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


ResourceContents = TextResourceContents | BlobResourceContents


@attrs.frozen(kw_only=True, repr=False, eq=False, init=False)
class TextContent(Model):
    """A text item given to or produced by a model."""
    type: Literal["text"] = "text"
    text: str
    annotations: Annotations | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA

    def __init__(self, *, type: Literal["text"] = "text", text: str,
                 annotations: Annotations | None = None, meta: _Meta = None,
                 extra: Mapping[str, Any] = NO_EXTRA) -> None:
        # The same instance attrs' __init__ makes, filled through the slots' own setters:
        # a tool result may hold thousands of text items, and attrs' frozen __init__
        # goes through a bound object.__setattr__ per member, about a quarter slower.
        _set_text_type(self, type)
        _set_text_text(self, text)
        _set_text_annotations(self, annotations)
        _set_text_meta(self, meta)
        _set_text_extra(self, extra)


def _slot_setter(name: str) -> Any:
    return getattr(TextContent, name).__set__


_set_text_type = _slot_setter("type")
_set_text_text = _slot_setter("text")
_set_text_annotations = _slot_setter("annotations")
_set_text_meta = _slot_setter("meta")
_set_text_extra = _slot_setter("extra")


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ImageContent(Model):
    """An image (base64 data plus its MIME type) given to or produced by a model."""
    type: Literal["image"] = "image"
    data: str
    mime_type: str
    annotations: Annotations | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class AudioContent(Model):
    """An audio clip (base64 data plus its MIME type) given to or produced by a model."""
    type: Literal["audio"] = "audio"
    data: str
    mime_type: str
    annotations: Annotations | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class EmbeddedResource(Model):
    """A resource's contents placed inline in a prompt or a tool result."""
    type: Literal["resource"] = "resource"
    resource: ResourceContents
    annotations: Annotations | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ResourceLink(Model):
    """A link to a resource, in a tool result or a prompt message (2025-06-18, V0618-22).

    The client may read it with ``read_resource(link.uri)``; the resource need not be
    in the server's ``resources/list``. ``size`` is the raw byte count, if known.
    """
    type: Literal["resource_link"] = "resource_link"
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    # AMBIG-22, as on Resource: any number is accepted.
    size: float | None = None
    annotations: Annotations | None = None
    icons: list[Icon] | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class UnknownContent(Model):
    """A content item of a type unknown to this revision; its other members are in ``extra``."""
    type: str
    extra: Mapping[str, Any] = NO_EXTRA


Content = (TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource
           | UnknownContent)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ToolUseContent(Model):
    """A model's call of a tool, in a sampling result (2025-11-25, V1125-48)."""
    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any]
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ToolResultContent(Model):
    """What a tool the model called returned, in a sampling request (2025-11-25)."""
    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: list[Content]
    structured_content: dict[str, Any] | None = None
    is_error: bool | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


SamplingContent = TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent


# --- Capabilities ------------------------------------------------------------------------


@attrs.frozen(kw_only=True, repr=False, eq=False)
class RootsCapability(Model):
    """The client can list its roots."""
    list_changed: bool | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ClientCapabilities(Model):
    """What a client supports; unknown capabilities are kept in ``extra``."""
    experimental: dict[str, dict[str, Any]] | None = None
    roots: RootsCapability | None = None
    sampling: dict[str, Any] | None = None
    #: 2025-06-18; from 2025-11-25 its members name the modes (``form``, ``url``), and
    #: ``{}`` means form only.
    elicitation: dict[str, Any] | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class PromptsCapability(Model):
    """The server offers prompts."""
    list_changed: bool | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ResourcesCapability(Model):
    """The server offers resources, optionally with subscriptions and list updates."""
    subscribe: bool | None = None
    list_changed: bool | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ToolsCapability(Model):
    """The server offers tools."""
    list_changed: bool | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ServerCapabilities(Model):
    """What a server supports; unknown capabilities are kept in ``extra``."""
    experimental: dict[str, dict[str, Any]] | None = None
    logging: dict[str, Any] | None = None
    completions: dict[str, Any] | None = None
    prompts: PromptsCapability | None = None
    resources: ResourcesCapability | None = None
    tools: ToolsCapability | None = None
    extra: Mapping[str, Any] = NO_EXTRA


def display_name(item: Any) -> str:
    """The name to show people for a tool, resource, template, prompt, argument or
    implementation (V0618-16): its ``title``; for a tool then ``annotations.title``;
    then its ``name``."""
    title = getattr(item, "title", None)
    if title:
        return str(title)
    annotations = getattr(item, "annotations", None)
    annotation_title = getattr(annotations, "title", None)
    if annotation_title:
        return str(annotation_title)
    return str(item.name)


publish(globals())
