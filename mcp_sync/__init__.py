"""mcp_sync: the Model Context Protocol for synchronous Python.

A blocking, thread-based MCP client and server over stdio and Streamable HTTP (and the
older HTTP+SSE transport), for programs that do not run an event loop.
"""

from typing import TYPE_CHECKING, Any

from . import content, errors, types
from ._version import __version__ as __version__
from .content import Audio as Audio
from .content import Image as Image
from .context import Context as Context
from .errors import CapabilityError as CapabilityError
from .errors import ConnectionClosed as ConnectionClosed
from .errors import ConnectionLost as ConnectionLost
from .errors import McpError as McpError
from .errors import ProtocolVersionError as ProtocolVersionError
from .errors import RequestCancelled as RequestCancelled
from .errors import RequestTimeout as RequestTimeout
from .errors import RpcError as RpcError
from .errors import SamplingRejected as SamplingRejected
from .errors import SessionExpired as SessionExpired
from .errors import ToolCallDenied as ToolCallDenied
from .errors import UrlElicitationRequired as UrlElicitationRequired
from .server import McpLogHandler as McpLogHandler
from .server import Server as Server
from .server import ServerConnection as ServerConnection

if TYPE_CHECKING:
    from .client._client import Client as Client
    from .client._elicitation import ElicitationRequest as ElicitationRequest
    from .protocol._elicitation import ElicitationResult as ElicitationResult


def __getattr__(name: str) -> Any:
    # The client is imported on first use, so that a server process does not pay for it
    # at start-up (a client waits for that start-up when it connects).
    if name == "Client":
        from .client._client import Client

        return Client
    if name == "ElicitationRequest":
        from .client._elicitation import ElicitationRequest

        return ElicitationRequest
    if name == "ElicitationResult":  # built at first use, as the wire types are
        from .protocol._elicitation import ElicitationResult

        return ElicitationResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "Audio",
    "CapabilityError",
    "Client",
    "ConnectionClosed",
    "ConnectionLost",
    "Context",
    "ElicitationRequest",
    "ElicitationResult",
    "Image",
    "McpError",
    "McpLogHandler",
    "ProtocolVersionError",
    "RequestCancelled",
    "RequestTimeout",
    "RpcError",
    "SamplingRejected",
    "Server",
    "ServerConnection",
    "SessionExpired",
    "ToolCallDenied",
    "UrlElicitationRequired",
    "__version__",
    "content",
    "errors",
    "types",
]
