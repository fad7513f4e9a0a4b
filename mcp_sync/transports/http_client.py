"""The Streamable HTTP client transport.

The public entry point; the implementation lives in :mod:`mcp_sync.client.http`.
"""

from ..client.http._transport import HttpClientTransport as HttpClientTransport
from ..client.http._transport import HttpError as HttpError

__all__ = [
    "HttpClientTransport",
    "HttpError",
]
