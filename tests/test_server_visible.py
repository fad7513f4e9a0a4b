"""What a server author sees: decorators that cannot be misused, failures in the log."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mcp_sync import Server, types
from mcp_sync.errors import InternalError
from mcp_sync.testing import open_client

pytestmark = pytest.mark.timeout(30)


def test_bare_tool_and_prompt_decorators_register_the_function() -> None:
    """TOOLS-3, PROMPTS-1: ``@server.tool`` without parentheses registers the tool, as
    ``@server.tool()`` does, and leaves the function as it was."""
    server = Server("bare")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.prompt
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello, {name}"

    assert add(1, 2) == 3
    assert greet("Ada") == "Hello, Ada"
    with open_client(server) as client:
        tools = client.list_tools()
        assert [tool.name for tool in tools] == ["add"]
        assert tools[0].description == "Add two integers."
        assert client.call_tool("add", {"a": 2, "b": 40}).content == [
            types.TextContent(text="42")]
        prompt = client.get_prompt("greet", {"name": "Ada"})
        assert prompt.messages[0].content == types.TextContent(text="Hello, Ada")


def test_bare_resource_decorator_raises_and_says_how_to_write_it() -> None:
    """A resource needs a URI: ``@server.resource`` alone fails at decoration time, with
    the way to write it, and registers nothing."""
    server = Server("bare")
    with pytest.raises(TypeError, match=r'needs its URI.*@server.resource\("scheme://path"\)'):
        @server.resource  # type: ignore[arg-type]
        def config() -> str:
            return "x"
    assert server.resources == [] and server.resource_templates == []
    assert server.capabilities().resources is None


@pytest.mark.parametrize("kind", ["tool", "prompt"])
def test_a_name_that_is_not_a_string_is_refused_at_decoration_time(kind: str) -> None:
    server = Server("bad")
    with pytest.raises(TypeError, match=rf"{kind}'s name must be a string.*@server.{kind}"):
        getattr(server, kind)(42)


def _failing_server() -> Server:
    server = Server("failing")

    @server.tool
    def explode(depth: int) -> str:
        """Always fails."""
        raise ValueError(f"bad depth {depth}")

    @server.resource("data://broken")
    def broken() -> str:
        raise KeyError("missing-key")

    @server.prompt
    def sour() -> str:
        raise RuntimeError("prompt trouble")

    return server


def _errors_from_server_logger(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.name == "mcp_sync.server"
            and record.levelno >= logging.ERROR]


def test_tool_failure_is_logged_at_error_with_its_traceback(
        caplog: pytest.LogCaptureFixture, wire: Any) -> None:
    """TOOLS-6: the client gets an isError result with only the message; the server's
    log has the failure at ERROR with the traceback, visible under default logging."""
    caplog.set_level(logging.WARNING)  # the level Python's default logging shows
    with open_client(_failing_server()) as client:
        result = client.call_tool("explode", {"depth": 3})
    assert result.is_error is True
    assert result.content == [types.TextContent(text="Error: bad depth 3")]
    assert "Traceback" not in repr(wire.sent)
    [record] = _errors_from_server_logger(caplog)
    assert "explode" in record.getMessage()
    assert record.exc_info is not None and isinstance(record.exc_info[1], ValueError)
    assert "raise ValueError" in caplog.text  # the traceback itself


def test_resource_and_prompt_failures_are_logged_at_error(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    with open_client(_failing_server()) as client:
        with pytest.raises(InternalError) as read_error:
            client.read_resource("data://broken")
        with pytest.raises(InternalError) as prompt_error:
            client.get_prompt("sour")
    assert "missing-key" not in str(read_error.value)
    assert "prompt trouble" not in str(prompt_error.value)
    records = _errors_from_server_logger(caplog)
    assert [type(record.exc_info[1]) for record in records if record.exc_info] == [
        KeyError, RuntimeError]
