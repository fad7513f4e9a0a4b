"""Threads over one transport: the engine that both ends of a connection run.

Owns the reader thread, the pending table of ids to futures, the incoming request type
and the handler pool, and deadlines turned into cancellation. It knows ids, futures and
threads but no MCP feature: it must never import server/ or client/ code, nor anything
about HTTP.
"""
