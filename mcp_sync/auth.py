"""OAuth 2.1 for MCP over HTTP: protecting a server, and authorizing a client.

See docs/auth.md. The resource-server names need nothing beyond the core install; the
ready verifiers need PyJWT (``pip install "mcp_sync[oauth]"``), imported when first used.
"""

# --- resource server ---
from .server.http._auth import AccessToken as AccessToken
from .server.http._auth import InvalidToken as InvalidToken
from .server.http._auth import ResourceServer as ResourceServer
from .server.http._auth import TokenVerifier as TokenVerifier
from .server.http._auth_introspection import IntrospectionVerifier as IntrospectionVerifier
from .server.http._auth_jwt import JWTVerifier as JWTVerifier

__all__ = [
    # --- resource server ---
    "AccessToken",
    "IntrospectionVerifier",
    "InvalidToken",
    "JWTVerifier",
    "ResourceServer",
    "TokenVerifier",
]
