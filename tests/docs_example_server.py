"""The server the documentation's client examples talk to (tests/test_docs_examples.py).

It offers exactly what those examples name: the tools ``add``, ``totals``, ``index``,
``forecast``, ``search`` and ``delete_file``, the resources ``db://big-table`` and
``file:///project/notes.txt``, the template ``users://{user_id}/profile``, and the prompt
``review`` with completions for its ``language``. Over stdio when run as a script; over
Streamable HTTP with ``--http`` (it prints its URL and serves until stdin closes).
"""

from __future__ import annotations

import sys
from typing import TypedDict

from mcp_sync import Context, Server

server = Server("docs-example", version="1.0.0")
LANGUAGES = ["go", "javascript", "python", "rust"]


class Totals(TypedDict):
    sum: int
    product: int


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def totals(a: int, b: int) -> Totals:
    """The sum and the product of two integers."""
    return {"sum": a + b, "product": a * b}


@server.tool()
def index(path: str, ctx: Context) -> str:
    """Index a folder, reporting progress."""
    for done in range(1, 6):
        if ctx.cancelled:
            return "cancelled"
        ctx.report_progress(done, 5, f"indexed {done} of 5")
    return f"indexed {path}"


@server.tool()
def forecast(city: str) -> str:
    """Forecast for a city."""
    return f"Sunny in {city}"


@server.tool()
def search(query: str) -> list[str]:
    """Search for a word."""
    return [f"{query} found"]


@server.tool()
def delete_file(path: str) -> str:
    """Pretend to delete a file."""
    return f"deleted {path}"


@server.resource("file:///project/notes.txt", mime_type="text/plain")
def notes() -> str:
    return "notes"


@server.resource("db://big-table", mime_type="text/csv")
def big_table(ctx: Context) -> str:
    ctx.report_progress(1, 1)
    return "id,name\n1,one\n"


@server.resource("users://{user_id}/profile", mime_type="text/plain")
def profile(user_id: str) -> str:
    return f"user {user_id}"


@server.prompt(complete={"language": LANGUAGES})
def review(code: str, language: str) -> str:
    """Review some code."""
    return f"Review this {language} code:\n{code}"


def main(argv: list[str]) -> None:
    if argv[:1] == ["--http"]:
        from mcp_sync.transports.http_server import serve_http

        with serve_http(server) as handle:
            print(handle.url, flush=True)
            sys.stdin.read()            # serve until the test closes our stdin
        return
    server.run_stdio()


if __name__ == "__main__":
    main(sys.argv[1:])
