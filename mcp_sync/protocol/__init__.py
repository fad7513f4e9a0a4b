"""The sans-IO protocol: what MCP messages are and what a session may do with them.

Owns the message model by area (``_types_*`` on ``_model``), the cattrs converter and the
JSON codec, JSON-RPC framing and batches, the session state machine (lifecycle, version
and capability negotiation, ids, progress, cancellation), the versions and their
profiles, and SSE parsing. It decides but never waits: it must never import threading,
socket, subprocess, select, time, os, signal, queue, requests or werkzeug, nor anything
from engine/, transports/, server/ or client/ (tests/test_core_is_sans_io.py checks the
imports).
"""
