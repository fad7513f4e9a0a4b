"""The client side of HTTP: the Streamable HTTP client transport on requests.

Owns the transport a Client uses for an ``http(s)://`` URL: its core, the I/O of POSTs
and streams, the listening GET stream, the POST adapter, cancellation, and the legacy
HTTP+SSE client. It must never import server/ code. The public entry point is
:mod:`mcp_sync.transports.http_client`.
"""
