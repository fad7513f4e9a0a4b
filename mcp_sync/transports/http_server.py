"""The Streamable HTTP server: serve a Server over HTTP, or mount it as a WSGI application.

The public entry point; the implementation lives in :mod:`mcp_sync.server.http`.
"""

from ..server.http._entry import DEFAULT_ALLOWED_ORIGINS as DEFAULT_ALLOWED_ORIGINS
from ..server.http._entry import LOOPBACK_HOSTS as LOOPBACK_HOSTS
from ..server.http._entry import EventStore as EventStore
from ..server.http._entry import HttpServerHandle as HttpServerHandle
from ..server.http._entry import MemoryEventStore as MemoryEventStore
from ..server.http._entry import MemorySessionStore as MemorySessionStore
from ..server.http._entry import RedisEventStore as RedisEventStore
from ..server.http._entry import RedisSessionStore as RedisSessionStore
from ..server.http._entry import SessionRecord as SessionRecord
from ..server.http._entry import SessionStore as SessionStore
from ..server.http._entry import SessionStoreError as SessionStoreError
from ..server.http._entry import StoredEvent as StoredEvent
from ..server.http._entry import StreamableHttpApp as StreamableHttpApp
from ..server.http._entry import TokenVerifier as TokenVerifier
from ..server.http._entry import make_wsgi_app as make_wsgi_app
from ..server.http._entry import run_http as run_http
from ..server.http._entry import serve_http as serve_http
from ..server.http._entry import session_store_from_env as session_store_from_env

__all__ = [
    "DEFAULT_ALLOWED_ORIGINS",
    "LOOPBACK_HOSTS",
    "EventStore",
    "HttpServerHandle",
    "MemoryEventStore",
    "MemorySessionStore",
    "RedisEventStore",
    "RedisSessionStore",
    "SessionRecord",
    "SessionStore",
    "SessionStoreError",
    "StoredEvent",
    "StreamableHttpApp",
    "TokenVerifier",
    "make_wsgi_app",
    "run_http",
    "serve_http",
    "session_store_from_env",
]
