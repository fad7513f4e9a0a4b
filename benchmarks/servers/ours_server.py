"""The benchmark's mcp_sync server: tools ``echo`` and ``many_items``.

Serves stdio by default. ``--http PORT`` serves Streamable HTTP at ``/mcp`` on
127.0.0.1 instead, with answers as SSE streams unless ``--json-response``, under
the embedded server (``Server.run_http``), gunicorn (gthread, one worker) or waitress.
"""

from __future__ import annotations

import sys

from _wsgi import WSGI_THREADS, serve_gunicorn, serve_waitress

from mcp_sync import Server, types

server = Server("bench-ours", version="1.0.0")


@server.tool()
def echo(message: str) -> str:
    """Return the message unchanged."""
    return message


@server.tool()
def many_items(n: int) -> list[types.TextContent]:
    """Return n small text items."""
    return [types.TextContent(text=f"item {i}") for i in range(n)]


def main() -> None:
    if len(sys.argv) == 1:
        # Serving stdio takes no options. Importing argparse and parsing none would cost
        # the connect row about 5 ms (it looks up translations and the terminal's size),
        # a cost of this script rather than of the library it measures.
        server.run_stdio()
        return
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--http", type=int, metavar="PORT")
    parser.add_argument("--json-response", action="store_true")
    parser.add_argument("--wsgi", choices=["embedded", "gunicorn", "waitress"],
                        default="embedded")
    args = parser.parse_args()
    if args.http is None:
        server.run_stdio()
        return
    if args.wsgi == "embedded":
        server.run_http("127.0.0.1", args.http, json_response=args.json_response)
        return
    # Outside run_http the application has no thread bound of its own to size from.
    app = server.wsgi_app(json_response=args.json_response,
                          max_get_streams=WSGI_THREADS // 4)
    if args.wsgi == "gunicorn":
        serve_gunicorn(app, args.http)
    else:
        serve_waitress(app, args.http)


if __name__ == "__main__":
    main()
