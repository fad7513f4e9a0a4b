"""Authorization over HTTP: OAuth 2.1 for MCP clients and servers (see docs/auth.md).

The client side authorizes a :class:`~mcp_sync.Client` with an MCP server's authorization
server: ``Client.http(url, auth=OAuth())``. Its objects are ``requests`` auth objects, so
they work in any ``requests.Session`` too. Authlib does the OAuth mechanics: install it
with ``pip install "mcp_sync[oauth]"``.
"""

# --- client ---
from .client.http._oauth import BearerToken as BearerToken
from .client.http._oauth import ClientCredentials as ClientCredentials
from .client.http._oauth import OAuth as OAuth
from .client.http._oauth_redirect import LoopbackRedirect as LoopbackRedirect
from .client.http._oauth_store import FileTokenStore as FileTokenStore
from .client.http._oauth_store import KeyringTokenStore as KeyringTokenStore
from .client.http._oauth_store import MemoryTokenStore as MemoryTokenStore
from .client.http._oauth_store import TokenStore as TokenStore
from .errors import AuthorizationError as AuthorizationError

__all__ = [
    # --- client ---
    "AuthorizationError",
    "BearerToken",
    "ClientCredentials",
    "FileTokenStore",
    "KeyringTokenStore",
    "LoopbackRedirect",
    "MemoryTokenStore",
    "OAuth",
    "TokenStore",
]
