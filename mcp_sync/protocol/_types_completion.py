"""Wire types of argument completion (``completion/complete``)."""

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from ._model import NO_EXTRA, Model, publish
from ._types_common import _Meta


@attrs.frozen(kw_only=True, repr=False, eq=False)
class PromptReference(Model):
    """Points at a prompt by name (for completion)."""
    type: Literal["ref/prompt"] = "ref/prompt"
    name: str
    title: str | None = None
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


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CompleteResult(Model):
    """The server's completion suggestions."""
    completion: Completion
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CompleteRequestParams(Model):
    """Parameters of ``completion/complete``: what is completed and the partial value."""
    ref: Reference
    argument: CompletionArgument
    meta: _Meta = None
    extra: Mapping[str, Any] = NO_EXTRA


publish(globals())
