"""The request context a tool, resource or prompt function may ask for.

The public home of :class:`Context`; it lives with the server in :mod:`mcp_sync.server`.
"""

from .server._context import Context as Context

__all__ = ["Context"]
