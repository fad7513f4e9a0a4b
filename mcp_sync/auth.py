"""OAuth 2.1 for MCP over HTTP: protecting a server, and authorizing a client.

See docs/auth.md. A server is protected with ``wsgi_app(auth=ResourceServer(...))``; the
resource-server names need nothing beyond the core install, the ready verifiers need PyJWT,
imported when first used. A client is authorized with ``Client.http(url, auth=OAuth())``;
its objects are ``requests`` auth objects, so they work in any ``requests.Session`` too,
and Authlib does the OAuth mechanics. Install both with ``pip install "mcp_sync[oauth]"``.
"""

from .client.http._oauth import BearerToken as BearerToken
from .client.http._oauth import ClientCredentials as ClientCredentials
from .client.http._oauth import OAuth as OAuth
from .client.http._oauth_redirect import LoopbackRedirect as LoopbackRedirect
from .client.http._oauth_store import FileTokenStore as FileTokenStore
from .client.http._oauth_store import KeyringTokenStore as KeyringTokenStore
from .client.http._oauth_store import MemoryTokenStore as MemoryTokenStore
from .client.http._oauth_store import TokenStore as TokenStore
from .errors import AuthorizationError as AuthorizationError
from .server.http._auth import AccessToken as AccessToken
from .server.http._auth import InvalidToken as InvalidToken
from .server.http._auth import ResourceServer as ResourceServer
from .server.http._auth import TokenVerifier as TokenVerifier
from .server.http._auth_introspection import IntrospectionVerifier as IntrospectionVerifier
from .server.http._auth_jwt import JWTVerifier as JWTVerifier

__all__ = [
    "AccessToken",
    "AuthorizationError",
    "BearerToken",
    "ClientCredentials",
    "FileTokenStore",
    "IntrospectionVerifier",
    "InvalidToken",
    "JWTVerifier",
    "KeyringTokenStore",
    "LoopbackRedirect",
    "MemoryTokenStore",
    "OAuth",
    "ResourceServer",
    "TokenStore",
    "TokenVerifier",
]
