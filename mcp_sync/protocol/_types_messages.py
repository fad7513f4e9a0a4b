"""Parameters of the requests and notifications every session may exchange: the
lifecycle, ping, tools, cancellation, progress and logging; and their shared bases."""

from collections.abc import Mapping
from typing import Any

import attrs

from ._model import NO_EXTRA, Model, publish
from ._types_common import ClientCapabilities, Implementation, LoggingLevel, RequestId, _Meta

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


publish(globals())
