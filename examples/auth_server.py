"""The everything server behind OAuth, with its own authorization server at the same origin.

For local use and tests: a client that speaks MCP authorization (ours, the official SDK's,
an inspector) finds out from the first 401 where to get a token, registers, sends the
user to the consent page and comes back with a token for ``/mcp``::

    python examples/auth_server.py --http --host 127.0.0.1 --port 8000
    python examples/auth_server.py --http --port 8000 --auto-approve   # no consent page

One WSGI application answers at one origin (``http://HOST:PORT``, or ``--public-url``):

* ``/mcp``: ``examples/everything_server.py``'s server, a resource server that accepts
  only this authorization server's JWTs issued for ``<origin>/mcp``; its protected
  resource metadata is at ``/.well-known/oauth-protected-resource/mcp``;
* ``/.well-known/oauth-authorization-server``, ``/authorize``, ``/token``,
  ``/register``, ``/jwks.json``: the authorization server of
  ``examples/_authorization_server.py`` (in memory, one user, tokens lost on restart).

``app`` is the same application for gunicorn and the like (``auth_server:app``, run from
``examples/``); its origin comes from ``MCP_SYNC_PUBLIC_URL`` (default
``http://127.0.0.1:8000``) and ``MCP_SYNC_AUTO_APPROVE=1`` skips the consent page. See
docs/auth.md, "A local authorization server".
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from _authorization_server import AuthorizationServerApp
from everything_server import server

from mcp_sync.auth import JWTVerifier, ResourceServer

WsgiApp = Callable[[dict[str, Any], Any], Iterable[bytes]]

#: The origin the module-level ``app`` serves when ``MCP_SYNC_PUBLIC_URL`` is not set.
DEFAULT_PUBLIC_URL = "http://127.0.0.1:8000"


def authorization_server(origin: str, *, auto_approve: bool = False,
                         ) -> AuthorizationServerApp:
    """The authorization server at ``origin``, issuing tokens for ``<origin>/mcp``.

    Args:
        origin: scheme, host and port the clients use, without a path.
        auto_approve: grant every valid request without the consent page.
    """
    origin = origin.rstrip("/")
    return AuthorizationServerApp(origin, [f"{origin}/mcp"], auto_approve=auto_approve)


def resource_server(issuer: AuthorizationServerApp) -> ResourceServer:
    """How ``/mcp`` checks tokens: JWTs signed by ``issuer``, for ``/mcp`` alone."""
    resource = issuer.resources[0]
    verifier = JWTVerifier(jwks_uri=f"{issuer.issuer}/jwks.json", issuer=issuer.issuer,
                           audience=resource)
    return ResourceServer(resource=resource, authorization_servers=[issuer.issuer],
                          verifier=verifier, scopes_supported=list(issuer.scopes_supported),
                          resource_name="everything (local)")


def at_one_origin(issuer: AuthorizationServerApp, mcp: WsgiApp) -> WsgiApp:
    """One application: the authorization server's paths go to it, the rest to ``mcp``."""
    paths = frozenset(issuer.paths())

    def application(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        if environ.get("PATH_INFO", "") in paths:
            return issuer(environ, start_response)
        return mcp(environ, start_response)

    return application


def make_app(origin: str, *, auto_approve: bool = False) -> WsgiApp:
    """The whole WSGI application at ``origin`` (loopback ``Host`` headers only)."""
    from mcp_sync.transports.http_server import LOOPBACK_HOSTS

    issuer = authorization_server(origin, auto_approve=auto_approve)
    return at_one_origin(issuer, server.wsgi_app(allowed_hosts=LOOPBACK_HOSTS,
                                                 auth=resource_server(issuer)))


def __getattr__(name: str) -> Any:
    # ``app`` is made when first asked for, like everything_server's.
    if name == "app":
        application = make_app(os.environ.get("MCP_SYNC_PUBLIC_URL", DEFAULT_PUBLIC_URL),
                               auto_approve=os.environ.get("MCP_SYNC_AUTO_APPROVE") == "1")
        globals()["app"] = application
        return application
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: Sequence[str] | None = None) -> None:
    """Serve over Streamable HTTP, with the authorization server beside ``/mcp``.

    Args:
        argv: the command-line arguments; ``sys.argv[1:]`` if None.
    """
    parser = argparse.ArgumentParser(
        description="The everything server behind OAuth, with a local authorization server.")
    parser.add_argument("--http", action="store_true",
                        help="serve Streamable HTTP (authorization is for HTTP only)")
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on")
    parser.add_argument("--port", type=int, default=8000, help="the port to listen on")
    parser.add_argument("--public-url", default=os.environ.get("MCP_SYNC_PUBLIC_URL"),
                        help="the origin clients use (default http://HOST:PORT)")
    parser.add_argument("--auto-approve", action="store_true",
                        help="grant every valid authorization request without asking")
    options = parser.parse_args(argv)
    if not options.http:
        parser.error("authorization applies to HTTP; over stdio run everything_server.py")
    origin = options.public_url or f"http://{options.host}:{options.port}"
    issuer = authorization_server(origin, auto_approve=options.auto_approve)
    server.run_http(host=options.host, port=options.port, auth=resource_server(issuer),
                    wrap=lambda mcp: at_one_origin(issuer, mcp))


if __name__ == "__main__":
    main()
