"""The WSGI entry point: Django for the site, mcp_sync for everything under /mcp.

``gunicorn -k gthread --threads 16 mysite.wsgi:application`` or
``waitress-serve --threads 16 mysite.wsgi:application`` (from this folder), or
``python manage.py runserver``, which serves the same ``application``.

MCP is mounted in front of Django rather than inside a view: its SSE streams go to the
client as they are produced, without passing through Django's middleware, and its POST
bodies need no CSRF exemption.
"""

import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application
from werkzeug.middleware.dispatcher import DispatcherMiddleware

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mysite.settings")

django_app = get_wsgi_application()

from .mcp_tools import server  # noqa: E402 - after Django is set up

# Mounted at /mcp, the MCP app sees the rest of the path: "" is /mcp itself, and the
# legacy endpoints (if enabled) are /mcp/sse and /mcp/messages.
mcp_app = server.wsgi_app(path="", **settings.MCP_OPTIONS)

# Behind OAuth (MCP_OPTIONS["auth"] = ResourceServer(...)), the protected-resource
# metadata lives at the root of the origin, outside /mcp: route it to the resource server.
mounts = {"/mcp": mcp_app, **(mcp_app.auth.well_known_mounts() if mcp_app.auth else {})}

application = DispatcherMiddleware(django_app, mounts)
