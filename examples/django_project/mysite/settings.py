"""Settings of the example project: no database, no apps, just URLs and views."""

import os

SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "example-only-not-secret")
DEBUG = os.environ.get("DJANGO_DEBUG", "") == "1"
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]"]

INSTALLED_APPS: list[str] = []
MIDDLEWARE = ["django.middleware.common.CommonMiddleware"]
ROOT_URLCONF = "mysite.urls"
# `runserver` serves this too, so /mcp works there exactly as under gunicorn or waitress.
WSGI_APPLICATION = "mysite.wsgi.application"
DATABASES: dict[str, dict[str, str]] = {}
USE_TZ = True

# Options of the MCP application (see docs/http.md). Every open GET stream holds a
# worker thread: keep max_get_streams well below the WSGI server's thread count.
MCP_OPTIONS = {
    "max_get_streams": int(os.environ.get("MCP_MAX_GET_STREAMS", "4")),
    "legacy_sse": True,
}
