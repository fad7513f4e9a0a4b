"""An mcp_sync server over stdio with every server feature, for the official SDK's client
(tests/test_server_sdk_interop.py)."""

from __future__ import annotations

import logging

from mcp_sync import Context, Server
from mcp_sync.content import Image

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8

server = Server("features", version="1.0.0")
logging.getLogger("features").addHandler(server.logging_handler())
logging.getLogger("features").setLevel(logging.DEBUG)


@server.tool()
def ask(question: str, ctx: Context) -> str:
    """Ask the client's model, after logging and checking the client's roots."""
    logging.getLogger("features").warning("asking %s", question)
    roots = [root.uri for root in ctx.list_roots()]
    answer = ctx.sample(question, max_tokens=20)
    text = getattr(answer.content, "text", "")
    return f"{answer.model}: {text} (roots: {', '.join(roots)})"


@server.tool()
def touch(uri: str, ctx: Context) -> str:
    """Tell subscribers a resource changed."""
    ctx.server.notify_resource_updated(uri)
    return "touched"


@server.resource("config://app", description="App settings.")
def config() -> dict[str, bool]:
    return {"debug": False}


@server.resource("users://{user_id}/profile",
                 complete={"user_id": ["1", "12", "123", "2"]})
def profile(user_id: int) -> dict[str, int]:
    """A user's profile."""
    return {"id": user_id}


@server.resource("img://logo")
def logo() -> Image:
    return Image(PNG)


@server.prompt(complete={"language": ["python", "perl", "rust"]})
def review(code: str, language: str = "python") -> list[tuple[str, str]]:
    """Review some code.

    Args:
        code: the code.
        language: its language.
    """
    return [("user", f"Review this {language}:\n{code}"), ("assistant", "Looking.")]


if __name__ == "__main__":
    server.run_stdio()
