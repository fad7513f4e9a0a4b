"""Running a registered function for a request, and reading a resource by its URI.

Both the ``resources/read`` handler and :meth:`Context.read_resource
<mcp_sync.Context.read_resource>` read through :func:`read_contents`; it is given the
request's Context rather than making one, so that this module never imports the Context
and the Context never imports the handlers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import types
from ..errors import InternalError, ResourceNotFound, RpcError
from ._content import guess_mime_type, to_resource_contents
from ._logging import run_serving

if TYPE_CHECKING:
    from ._context import Context
    from ._registry import Registry

__all__ = ["read_contents", "run_with_context"]

log = logging.getLogger("mcp_sync.server")


def run_with_context(context: Context, fn: Callable[..., Any], kwargs: dict[str, Any],
                     context_parameter: str | None) -> Any:
    """Call ``fn(**kwargs)`` for the request of ``context``, handing it the Context if it
    takes one, with Python logging from it routed to that request's client."""
    if context_parameter is not None:
        kwargs[context_parameter] = context
    return run_serving(context, fn, **kwargs)


def read_contents(registry: Registry, context: Context, uri: str, *,
                  internal: bool = False) -> list[types.ResourceContents]:
    """Read ``uri``: the exact resource first, then the templates in registration order.

    With ``internal`` (a function reading our own resource) the function's exceptions
    pass unchanged; otherwise they become -32603.

    Raises:
        ResourceNotFound: nothing matches (RESOURCES-9).
    """
    resource = registry.resource(uri)
    if resource is not None:
        fn, signature, kwargs = resource.fn, resource.signature, {}
        mime_type = resource.resource.mime_type
    else:
        for template in registry.templates():
            bound = template.bind(uri)
            if bound is not None:
                break
        else:
            raise ResourceNotFound(f"Resource not found: {uri}", {"uri": uri})
        fn, signature, kwargs = template.fn, template.signature, bound
        mime_type = template.template.mime_type or guess_mime_type(uri)
    try:
        value = run_with_context(context, fn, kwargs, signature.context_parameter)
        return to_resource_contents(value, uri, mime_type)
    except RpcError:
        raise
    except Exception:
        if internal:
            raise
        log.exception("reading resource %r failed", uri)
        raise InternalError("Internal error while reading the resource", {"uri": uri}) from None
