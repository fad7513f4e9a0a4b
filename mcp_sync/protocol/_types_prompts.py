"""Wire types of prompts: listing them and getting one rendered."""

from collections.abc import Mapping
from typing import Any

import attrs

from ._model import NO_EXTRA, Model, publish
from ._types_common import Content, Icon, Role, _Meta
from ._types_messages import _MetadataOnly, _Paginated


@attrs.frozen(kw_only=True, repr=False, eq=False)
class PromptArgument(Model):
    """One argument a prompt template accepts."""
    name: str
    title: str | None = None
    description: str | None = None
    required: bool | None = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Prompt(Model):
    """A prompt or prompt template offered by the server."""
    name: str
    title: str | None = None
    description: str | None = None
    arguments: list[PromptArgument] | None = None
    icons: list[Icon] | None = None
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class PromptMessage(Model):
    """One message of a prompt; unlike sampling it may embed resources."""
    role: Role
    content: Content
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
class PromptListChangedNotificationParams(_MetadataOnly):
    """Parameters of ``notifications/prompts/list_changed`` (only metadata)."""


publish(globals())
