"""Wire types of resources: listing, templates, reading, subscriptions, updates."""

from collections.abc import Mapping
from typing import Any

import attrs

from ._model import NO_EXTRA, Model, publish
from ._types_common import Annotations, Icon, ResourceContents, _Meta
from ._types_messages import _MetadataOnly, _Paginated


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Resource(Model):
    """A resource the server can read (``size`` is the raw byte count, if known)."""
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: Annotations | None = None
    # AMBIG-22: the schema files disagree (integer vs number); any number is accepted.
    size: float | None = None
    icons: list[Icon] | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ResourceTemplate(Model):
    """An RFC 6570 URI template describing a family of readable resources."""
    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: Annotations | None = None
    icons: list[Icon] | None = None
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
class ResourceListChangedNotificationParams(_MetadataOnly):
    """Parameters of ``notifications/resources/list_changed`` (only metadata)."""


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ResourceUpdatedNotificationParams(Model):
    """Parameters of ``notifications/resources/updated``: the URI that changed."""
    uri: str
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


publish(globals())
