"""The MCP client: Client, its typed requests, and handlers for what servers ask.

Owns :class:`Client`, the typed request methods, its life (connect, reconnect, close),
the futures of asynchronous calls, and the handlers for sampling, roots and elicitation;
``client/http`` holds the Streamable HTTP client transport. It must never import
server/ code.
"""

from ._client import Client as Client
from ._client import SamplingRejected as SamplingRejected
from ._client import ToolCallDenied as ToolCallDenied
from ._elicitation import ElicitationRequest as ElicitationRequest

__all__ = ["Client", "ElicitationRequest", "SamplingRejected", "ToolCallDenied"]
