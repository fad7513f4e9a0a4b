"""A plain script: one client, a batch of calls made several at a time, a clear exit.

    python examples/batch_script.py                # the pairs 2x3 10x-4 7x7
    python examples/batch_script.py 6x7 100x0      # your own pairs
    python examples/batch_script.py -- -5x5        # a pair starting with a minus

It starts examples/everything_server.py over stdio and, for each pair of integers, calls
its ``structured`` tool (the sum and the product, as structured output). The calls run
on four threads at once over the one client, which pipelines them over one connection.
It then reads the resource ``static://hello`` and calls ``fail``, to show the two kinds
of failure: a protocol error raises, a tool's own failure is a result marked
``is_error``.

Exit status: 0 when every call behaved as expected, 1 when the server failed us (the
message is printed on stderr, without a traceback), 2 for a bad command line.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mcp_sync import Client, types
from mcp_sync.errors import McpError

SERVER = [sys.executable, str(Path(__file__).with_name("everything_server.py"))]


def pair(text: str) -> tuple[int, int]:
    """``"6x7"`` as ``(6, 7)``; argparse turns a ValueError into a usage error."""
    a, sep, b = text.partition("x")
    if not sep:
        raise ValueError(text)
    return int(a), int(b)


def text_of(content: Sequence[object]) -> str:
    return " ".join(item.text for item in content
                    if isinstance(item, (types.TextContent, types.TextResourceContents)))


def run(client: Client, pairs: Sequence[tuple[int, int]]) -> None:
    info = client.server_info
    print(f"connected to {info.name} {info.version} (protocol {client.protocol_version})")

    def sum_and_product(numbers: tuple[int, int]) -> str:
        a, b = numbers
        result = client.call_tool("structured", {"a": a, "b": b}, timeout=10)
        assert result.structured is not None  # the tool has an output schema
        return f"{a} x {b}: sum {result.structured['sum']}, product {result.structured['product']}"

    # One client shared by the pool's threads; map() keeps the order of the input.
    with ThreadPoolExecutor(max_workers=4) as pool:
        for line in pool.map(sum_and_product, pairs):
            print(line)

    hello = client.read_resource("static://hello")
    print(f"static://hello says: {text_of(hello.contents)}")

    # A tool that fails while running answers with is_error, for the model to read;
    # only a protocol failure (an unknown tool, bad arguments, a timeout) raises.
    failed = client.call_tool("fail")
    print(f"fail answered is_error={failed.is_error}: {text_of(failed.content)}")


def main(argv: Sequence[str] | None = None, server: Sequence[str] = SERVER) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pairs", nargs="*", type=pair, metavar="AxB",
                        default=[(2, 3), (10, -4), (7, 7)],
                        help="two integers joined by x, e.g. 6x7")
    options = parser.parse_args(argv)
    try:
        with Client.stdio(list(server), timeout=10) as client:
            run(client, options.pairs)
    except McpError as exc:  # the server could not start, went away, or timed out
        print(f"batch_script: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
