"""The client side of HTTP: the Streamable HTTP client transport on requests.

Owns the transport a Client uses for an ``http(s)://`` URL: its core, the I/O of POSTs
and streams, the listening GET stream, the POST adapter, cancellation, and the legacy
HTTP+SSE client; and the OAuth client that authorizes its requests (``_oauth*``:
discovery, the grants, the redirect catcher, token stores), public in
:mod:`mcp_sync.auth`. It must never import server/ code. The public entry point is
:mod:`mcp_sync.transports.http_client`.
"""
