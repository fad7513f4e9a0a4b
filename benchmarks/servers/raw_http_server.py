"""A plain WSGI app with no MCP that echoes JSON: the floor for anything over HTTP.

POST a ``{"id", "method", "params"}`` body, get the answer ``raw_pipe_server`` would give,
as ``application/json``. ``--wsgi`` picks werkzeug's threaded server, gunicorn (gthread)
or waitress, sized like the MCP servers.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from _wsgi import serve_gunicorn, serve_waitress
from raw_pipe_server import answer
from werkzeug.wrappers import Request, Response


@Request.application
def app(request: Request) -> Response:
    body = json.dumps(answer(json.loads(request.get_data())))
    return Response(body, content_type="application/json")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--http", type=int, metavar="PORT", required=True)
    parser.add_argument("--wsgi", choices=["werkzeug", "gunicorn", "waitress"],
                        default="werkzeug")
    args = parser.parse_args()
    wsgi: Any = app
    if args.wsgi == "werkzeug":
        from werkzeug.serving import WSGIRequestHandler, run_simple

        WSGIRequestHandler.protocol_version = "HTTP/1.1"  # keep-alive, as the MCP servers
        WSGIRequestHandler.log_request = lambda *a, **k: None  # type: ignore[method-assign]
        run_simple("127.0.0.1", args.http, wsgi, threaded=True)
    elif args.wsgi == "gunicorn":
        serve_gunicorn(wsgi, args.http)
    else:
        serve_waitress(wsgi, args.http)


if __name__ == "__main__":
    main()
