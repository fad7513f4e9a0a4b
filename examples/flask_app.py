"""A Flask application with an MCP endpoint mounted beside its own routes.

Run it with ``python examples/flask_app.py`` and point an MCP client at
``http://127.0.0.1:5000/mcp``; ``/`` and ``/health`` stay ordinary Flask routes. Under a
production server, serve ``create_app()`` (``gunicorn -k gthread --threads 16
'flask_app:create_app()'``); see docs/http.md for sizing the threads.
"""

from __future__ import annotations

from flask import Flask, jsonify
from werkzeug.middleware.dispatcher import DispatcherMiddleware

from mcp_sync import Server
from mcp_sync.transports.http_server import LOOPBACK_HOSTS

server = Server("flask-demo", version="1.0.0", instructions="Tools of the Flask demo app.")


@server.tool(annotations={"readOnlyHint": True})
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def greet(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"


def create_app(**mcp_options: object) -> Flask:
    """The Flask app, with MCP served under ``/mcp``.

    ``mcp_options`` go to ``server.wsgi_app`` (``allowed_hosts``, ``max_get_streams``,
    ``auth``...). The MCP application is kept in ``app.extensions["mcp"]``:
    call its ``close()`` when the process stops serving.
    """
    app = Flask(__name__)

    @app.get("/")
    def index() -> str:
        return "The Flask app's own home page."

    @app.get("/health")
    def health() -> object:
        return jsonify(status="ok")

    # The MCP app sees paths below the mount point, so its endpoint is "" (that is, /mcp
    # itself). legacy_sse also serves old HTTP+SSE clients at /mcp/sse.
    options: dict[str, object] = {"legacy_sse": True, **mcp_options}
    mcp_app = server.wsgi_app(path="", **options)
    app.extensions["mcp"] = mcp_app
    # Wrapping app.wsgi_app (not app) keeps `app` a Flask object for `flask run`, tests
    # and extensions; requests under /mcp never reach Flask's routing.
    mounts: dict[str, object] = {"/mcp": mcp_app}
    if mcp_app.auth is not None:
        # Behind OAuth (auth=ResourceServer(...)), the protected-resource metadata lives
        # at the root of the origin, outside /mcp: route it to the resource server.
        mounts.update(mcp_app.auth.well_known_mounts())
    app.wsgi_app = DispatcherMiddleware(app.wsgi_app, mounts)  # type: ignore[method-assign,arg-type]
    return app


if __name__ == "__main__":
    # Only this machine's names may reach a server on loopback (DNS rebinding, HTTP-2).
    # werkzeug's development server starts a thread per connection, so many GET streams
    # may stay open without starving the other routes.
    flask_app = create_app(allowed_hosts=LOOPBACK_HOSTS, max_get_streams=32)
    try:
        flask_app.run(host="127.0.0.1", port=5000, threaded=True)
    finally:
        flask_app.extensions["mcp"].close()
