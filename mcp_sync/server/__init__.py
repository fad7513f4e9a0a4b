"""The MCP server: Server, its registry of features, and the connections that serve them.

Owns :class:`Server`, the registry of tools, resources, templates and prompts it holds,
:class:`ServerConnection`, the method handlers, :class:`~mcp_sync.Context`, logging to
the client, results turned into content, and schemas from type hints; ``server/http``
holds the Streamable HTTP application. It knows MCP features but never touches a socket,
a pipe or a thread directly outside ``http/`` and the serving entry points, and must
never import client/ code.
"""

from ._param_header import Header as Header
from ._server import CallHook as CallHook
from ._server import McpLogHandler as McpLogHandler
from ._server import Server as Server
from ._server import ServerConnection as ServerConnection

__all__ = ["CallHook", "Header", "McpLogHandler", "Server", "ServerConnection"]
