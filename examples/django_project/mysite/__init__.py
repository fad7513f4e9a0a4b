"""A minimal Django project that serves MCP at /mcp beside its own views."""
