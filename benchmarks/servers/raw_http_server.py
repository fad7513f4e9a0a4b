"""A plain WSGI app with no MCP that echoes JSON: the floor for anything over HTTP.

POST a ``{"id", "method", "params"}`` body, get the answer ``raw_pipe_server`` would give,
as ``application/json``. ``--wsgi`` picks gunicorn (gthread) or waitress, sized like the
MCP servers.
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
    parser.add_argument("--wsgi", choices=["gunicorn", "waitress"], default="waitress")
    args = parser.parse_args()
    wsgi: Any = app
    if args.wsgi == "gunicorn":
        serve_gunicorn(wsgi, args.http)
    else:
        serve_waitress(wsgi, args.http)


if __name__ == "__main__":
    main()
