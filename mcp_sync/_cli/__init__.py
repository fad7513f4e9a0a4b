"""The ``mcp-sync`` command's parts: arguments, output, progress and the bridge.

The public entry is :func:`mcp_sync.cli.main`; nothing here is public API.
"""
