"""The server side of HTTP: the Streamable HTTP WSGI application and its serving.

Owns the WSGI application, its request checks, sessions and their store, the event store
for resumption, the legacy HTTP+SSE server, and serving on the embedded WSGI server. It
reaches the server through a small protocol (connect, served methods), and must never
import client/ code. The public entry point is :mod:`mcp_sync.transports.http_server`.
"""
