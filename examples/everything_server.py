"""An MCP server that offers every feature of the protocol, for demos and tests.

Over stdio (the default), let a client spawn it:
``Client.stdio([sys.executable, "examples/everything_server.py"])``.
Over Streamable HTTP, at ``http://HOST:PORT/mcp``::

    python examples/everything_server.py --http --host 127.0.0.1 --port 8000
    python examples/everything_server.py --http --stateless --json-response

It offers:

* tools ``echo``, ``add``, ``long_running`` (progress, stops when cancelled), ``sample``
  (asks the client's model), ``roots`` (the client's roots as JSON), ``fail`` (a result
  with ``isError``), ``log`` (a log message at a chosen level), ``image`` (a PNG),
  ``structured`` (structured output: ``sum`` and ``product`` of two integers, with an
  output schema and the same data as JSON text), ``link`` (a resource link to
  ``static://hello``) and ``ask`` (asks the user's name); each has a ``title``.
  ``sample``, ``roots`` and ``ask`` work in both eras: a request to the client in a
  legacy session, an input-required result in a modern request;
* resources ``static://hello`` (text), ``static://binary`` (a blob) and the template
  ``greeting://{name}``;
* the prompt ``greet``, whose ``name`` argument (like the template's) completes from
  a fixed list of names.

A stateless HTTP server keeps no session, so a client's ``logging/setLevel`` is
forgotten as soon as it is answered; that server sends ``warning`` and above to everyone.
"""

from __future__ import annotations

import argparse
import os
import struct
import zlib
from collections.abc import Sequence
from typing import Any, TypedDict

from mcp_sync import Context, Server, types
from mcp_sync.content import Image, resource_link

NAMES = ["Alice", "Bob", "Carol", "Dave", "Eve", "Frank", "Grace", "Heidi", "Ivan",
         "Judy", "Mallory", "Niaj", "Olivia", "Peggy", "Rupert", "Sybil", "Trent",
         "Victor", "Walter"]

BINARY = bytes(range(256))

#: The least severe level sent when no session can remember a client's choice.
STATELESS_LOG_LEVEL: types.LoggingLevel = "warning"


def make_png(width: int = 4, height: int = 4, rgb: tuple[int, int, int] = (200, 30, 60),
             ) -> bytes:
    """A valid PNG of one colour (8-bit RGB, no interlacing).

    Args:
        width: pixels across.
        height: pixels down.
        rgb: the colour, each channel 0 to 255.

    Returns:
        The PNG file's bytes.
    """
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data)))

    # Each scanline starts with its filter type; 0 means the bytes are stored as they are.
    scanlines = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(scanlines)) + chunk(b"IEND", b""))


PNG = make_png()


class SumAndProduct(TypedDict):
    """What the ``structured`` tool returns: its output schema comes from this class."""

    sum: int
    product: int


def make_server(*, stateless: bool = False) -> Server:
    """Build the server with every tool, resource, template, prompt and completer.

    Args:
        stateless: build it for stateless HTTP, where every request is served without a
            session: log messages of ``warning`` and above are sent (no client can lower
            that, as no ``logging/setLevel`` outlives its own request).

    Returns:
        A new :class:`~mcp_sync.Server` named ``everything``.
    """
    server = Server(
        "everything", version="1.0.0",
        instructions="Every MCP feature: tools, resources, a template, a prompt, "
                     "completion, logging, progress, sampling and roots.",
        log_level=STATELESS_LOG_LEVEL if stateless else "info",
        tools=True, resources=True, prompts=True, completions=True, logging=True,
        # Signs the requestState of modern input-required results (``ask``, ``sample``,
        # ``roots``): set it alike in every process that serves one endpoint.
        request_state_key=os.environ.get("MCP_SYNC_REQUEST_STATE_KEY"))

    @server.tool(title="Echo")
    def echo(message: str) -> str:
        """Return the message unchanged.

        Args:
            message: the text to send back.
        """
        return message

    @server.tool(title="Add", annotations={"readOnlyHint": True})
    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: the first number.
            b: the second number.
        """
        return a + b

    @server.tool(title="Long-running task")
    def long_running(ctx: Context, steps: int = 5, delay: float = 0.01) -> str:
        """Work through some steps, reporting progress after each; stops if cancelled.

        Args:
            steps: how many steps to take.
            delay: seconds to wait between steps.
        """
        for step in range(1, steps + 1):
            if step > 1 and ctx.wait_cancelled(delay):
                return "cancelled"
            ctx.report_progress(step, steps, f"step {step} of {steps}")
        return "done"

    @server.tool(title="Ask the model")
    def sample(prompt: str, ctx: Context) -> str:
        """Ask the client's model to answer a prompt and return what it said.

        Args:
            prompt: what to ask the model.
        """
        reply = ctx.sample(prompt, max_tokens=100)
        if isinstance(reply.content, types.TextContent):
            return reply.content.text
        return f"the model answered with {reply.content.type} content"

    @server.tool(title="Client roots", annotations={"readOnlyHint": True})
    def roots(ctx: Context) -> list[dict[str, str]]:
        """The roots the client offers, as a JSON list of {uri, name}."""
        return [{"uri": root.uri} if root.name is None else {"uri": root.uri, "name": root.name}
                for root in ctx.list_roots()]

    @server.tool(title="Always fails")
    def fail() -> types.CallToolResult:
        """Always fail, as a tool error the model can read."""
        return types.CallToolResult(
            content=[types.TextContent(text="this tool always fails")], is_error=True)

    @server.tool(title="Send a log message")
    def log(level: types.LoggingLevel, message: str, ctx: Context) -> str:
        """Send a log message to the client at the given level.

        Args:
            level: debug, info, notice, warning, error, critical, alert or emergency.
            message: the text of the log message.
        """
        sent = ctx.log(level, message, logger="everything")
        return "sent" if sent else "filtered out by the client's log level"

    @server.tool(title="Image", annotations={"readOnlyHint": True})
    def image() -> Image:
        """A small PNG image."""
        return Image(PNG)

    @server.tool(title="Sum and product", annotations={"readOnlyHint": True})
    def structured(a: int, b: int) -> SumAndProduct:
        """The sum and the product of two integers, as structured output.

        Args:
            a: the first number.
            b: the second number.
        """
        return {"sum": a + b, "product": a * b}

    @server.tool(title="Link to a resource", annotations={"readOnlyHint": True})
    def link() -> types.ResourceLink:
        """A link to the resource static://hello, which the client can then read."""
        return resource_link("static://hello", title="Hello", mime_type="text/plain",
                             description="A plain-text greeting.")

    @server.tool(title="Ask for a name")
    def ask(ctx: Context) -> str:
        """Ask the user for their name (elicitation) and greet them."""
        answer = ctx.elicit("What is your name?", {"name": str})
        if answer.accepted and answer.content is not None:
            return f"Hello, {answer.content['name']}!"
        return "declined" if answer.action == "decline" else "cancelled"

    @server.resource("static://hello", mime_type="text/plain", title="Hello",
                     description="A plain-text greeting.")
    def hello() -> str:
        return "Hello, world!"

    @server.resource("static://binary", mime_type="application/octet-stream",
                     description="Every byte value from 0 to 255, once.")
    def binary() -> bytes:
        return BINARY

    @server.resource("greeting://{name}", mime_type="text/plain",
                     description="A greeting for anyone.", complete={"name": NAMES})
    def greeting(name: str) -> str:
        return f"Hello, {name}!"

    @server.prompt(complete={"name": NAMES})
    def greet(name: str) -> str:
        """Greet someone by name.

        Args:
            name: who to greet.
        """
        return f"Please greet {name} warmly."

    return server


server = make_server()


def __getattr__(name: str) -> Any:
    # ``app``: the WSGI application for gunicorn and the like (``everything_server:app``),
    # endpoint ``/mcp``, loopback Host headers only; ``MCP_SYNC_STORE=redis://HOST:PORT/DB``
    # keeps its sessions in Redis (docs/http.md, "Scaling out"). Made when first asked
    # for, so that serving stdio never loads the HTTP stack.
    if name == "app":
        from mcp_sync.transports.http_server import LOOPBACK_HOSTS, session_store_from_env

        application = server.wsgi_app(allowed_hosts=LOOPBACK_HOSTS,
                                      session_store=session_store_from_env())
        globals()["app"] = application
        return application
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: Sequence[str] | None = None) -> None:
    """Serve over stdio, or over Streamable HTTP with ``--http``.

    Args:
        argv: the command-line arguments; ``sys.argv[1:]`` if None.
    """
    parser = argparse.ArgumentParser(description="An MCP server offering every feature.")
    parser.add_argument("--http", action="store_true",
                        help="serve Streamable HTTP at /mcp instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on")
    parser.add_argument("--port", type=int, default=8000, help="the port to listen on")
    parser.add_argument("--stateless", action="store_true",
                        help="HTTP without sessions (and without sampling or roots)")
    parser.add_argument("--json-response", action="store_true",
                        help="answer HTTP POSTs with JSON rather than an event stream")
    options = parser.parse_args(argv)
    if not options.http:
        server.run_stdio()
        return
    serving = make_server(stateless=True) if options.stateless else server
    serving.run_http(host=options.host, port=options.port, stateless=options.stateless,
                     json_response=options.json_response)


if __name__ == "__main__":
    main()
