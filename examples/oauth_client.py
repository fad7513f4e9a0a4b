"""Connect to an MCP server that asks for OAuth, list its tools and call one.

    python examples/oauth_client.py --url http://127.0.0.1:8000/mcp
    python examples/oauth_client.py --url https://mcp.example.com/mcp \\
        --token-file ~/.config/demo/tokens.json --call add '{"a": 1, "b": 2}'

The first run opens the browser at the authorization server's login page and waits for
the redirect back on 127.0.0.1; with ``--token-file`` the tokens are kept (in a file only
you can read) and later runs need no browser until the refresh token runs out.
``--headless`` skips the browser and follows the authorization URL itself, which only an
authorization server that approves at once accepts (examples/auth_server.py
``--auto-approve``). ``--client-id`` (and ``--client-secret``) use a client registered
beforehand instead of registering dynamically.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

import requests

from mcp_sync import Client, McpError
from mcp_sync.auth import FileTokenStore, LoopbackRedirect, MemoryTokenStore, OAuth, TokenStore

DEFAULT_URL = "http://127.0.0.1:8000/mcp"


def follow(authorization_url: str) -> str:
    """The browser step without a browser: the callback URL an approving server redirects
    to, taken from its Location header."""
    response = requests.get(authorization_url, allow_redirects=False, timeout=30)
    with response:
        location = response.headers.get("Location")
    if response.status_code not in (301, 302, 303, 307, 308) or not location:
        raise RuntimeError(f"the authorization server asks for a login (HTTP "
                           f"{response.status_code}); run without --headless")
    return location


def build_auth(args: argparse.Namespace) -> OAuth:
    """The OAuth object the command line asks for."""
    storage: TokenStore = FileTokenStore(args.token_file) if args.token_file \
        else MemoryTokenStore()
    options = {"client_name": "mcp_sync example", "client_id": args.client_id,
               "client_secret": args.client_secret, "storage": storage}
    if args.headless:
        return OAuth(redirect_uri="http://127.0.0.1:8765/callback", authorize=follow,
                     **options)
    return OAuth(redirect=LoopbackRedirect(timeout=args.login_timeout), **options)


def main(argv: Sequence[str] | None = None) -> int:
    """Authorize, list the tools, and call one if asked; 0 on success, 1 on failure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=DEFAULT_URL, help="the MCP endpoint")
    parser.add_argument("--token-file", help="keep tokens in this file (created 0600)")
    parser.add_argument("--client-id", help="a client registered beforehand")
    parser.add_argument("--client-secret", help="its secret")
    parser.add_argument("--headless", action="store_true",
                        help="follow the authorization URL without a browser")
    parser.add_argument("--login-timeout", type=float, default=300.0,
                        help="seconds to wait for the browser to come back")
    parser.add_argument("--call", nargs=2, metavar=("TOOL", "JSON_ARGUMENTS"),
                        help="call this tool with these arguments")
    args = parser.parse_args(argv)
    auth = build_auth(args)
    try:
        # Authorize first: the user's time in the browser is not part of any call.
        auth.login(args.url)
        with Client.http(args.url, auth=auth, timeout=30) as client:
            print(f"connected to {client.server_info.name}")
            for tool in client.list_tools():
                print(f"  {tool.name}: {tool.description or ''}")
            if args.call:
                name, arguments = args.call[0], json.loads(args.call[1])
                for item in client.call_tool(name, arguments).content:
                    print(getattr(item, "text", item))
    except McpError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
