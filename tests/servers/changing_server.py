"""A server whose lists change while clients listen; for test_listen and its interop tests.

Run as a script it serves on stdio; ``make_server()`` gives a fresh one in-process.

``grow(name)`` registers a tool called ``name`` (tools list changed), ``add_note(name)``
a prompt (prompts list changed), ``publish(uri)`` a resource (resources list changed),
``touch(uri)`` tells subscribers the resource at ``uri`` changed, and ``end_listening``
ends every listen stream from the server's side. ``notes://a`` is a resource to watch.
"""

from __future__ import annotations

from mcp_sync import Server


def make_server(**options: object) -> Server:
    server = Server("changing", version="1.0.0", **options)  # type: ignore[arg-type]

    @server.tool()
    def grow(name: str) -> str:
        """Register a new tool called ``name``."""
        server.add_tool(lambda: name, name=name, description=f"Grown as {name}.")
        return f"grew {name}"

    @server.tool()
    def add_note(name: str) -> str:
        """Register a prompt called ``name``."""
        server.add_prompt(lambda: f"note {name}", name=name)
        return f"noted {name}"

    @server.tool()
    def publish(uri: str) -> str:
        """Register a resource at ``uri``."""
        server.add_resource(lambda: "new", uri, name=uri)
        return f"published {uri}"

    @server.tool()
    def touch(uri: str) -> int:
        """Tell subscribers the resource at ``uri`` changed; how many were told."""
        return server.notify_resource_updated(uri)

    @server.tool()
    def end_listening() -> int:
        """End every listen stream; how many were open."""
        return server.end_listen_streams()

    @server.resource("notes://a")
    def note_a() -> str:
        return "a"

    @server.prompt()
    def hello() -> str:
        return "hello"

    return server


if __name__ == "__main__":
    make_server().run_stdio()
