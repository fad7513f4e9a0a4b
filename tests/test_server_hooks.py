"""Call hooks: code a server runs before and after every handled request, on its thread."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_sync import Context, Server
from mcp_sync.errors import InternalError, ResourceNotFound
from mcp_sync.testing import open_client
from mcp_sync.transports.http_server import make_wsgi_app
from tests.helpers import LEGACY_ERA
from tests.http_server_helpers import WsgiPeer, call

pytestmark = pytest.mark.timeout(30)


class Recorder:
    """A hook that notes what it enclosed, and on which thread."""

    def __init__(self, name: str, events: list[Any]) -> None:
        self.name = name
        self.events = events
        self.lock = threading.Lock()

    @contextlib.contextmanager
    def __call__(self, ctx: Context) -> Iterator[None]:
        with self.lock:
            self.events.append((self.name, "before", ctx.method, threading.get_ident()))
        try:
            yield
        except BaseException as exc:
            with self.lock:
                self.events.append((self.name, "raised", type(exc).__name__, None))
            raise
        finally:
            with self.lock:
                self.events.append((self.name, "after", ctx.method, threading.get_ident()))


def make_server(events: list[Any]) -> Server:
    server = Server("hooked")

    @server.tool()
    def where() -> str:
        """Note the thread the tool runs on."""
        events.append(("tool", "ran", "tools/call", threading.get_ident()))
        return "ok"

    @server.tool()
    def fail() -> str:
        """A tool that fails."""
        raise RuntimeError("broken")

    @server.resource("memo://known")
    def known() -> str:
        return "known"

    @server.resource("memo://{name}")
    def missing(name: str) -> str:
        raise ResourceNotFound(f"no memo {name}")

    @server.prompt()
    def greet(who: str) -> str:
        """Say hello."""
        return f"Hello, {who}"

    return server


def test_hook_encloses_each_call_on_the_handlers_thread() -> None:
    events: list[Any] = []
    server = make_server(events)
    server.add_call_hook(Recorder("hook", events))
    with open_client(server, **LEGACY_ERA) as client:
        assert client.call_tool("where").content[0].text == "ok"
    before, ran, after = events
    assert before[:3] == ("hook", "before", "tools/call")
    assert ran[:2] == ("tool", "ran")
    assert after[:3] == ("hook", "after", "tools/call")
    assert before[3] == ran[3] == after[3]  # one thread: the handler's
    assert ran[3] != threading.get_ident()


def test_hooks_wrap_resources_prompts_and_lists() -> None:
    events: list[Any] = []
    server = make_server(events)
    server.add_call_hook(Recorder("hook", events))
    with open_client(server, **LEGACY_ERA) as client:
        client.list_tools()
        client.read_resource("memo://known")
        client.get_prompt("greet", {"who": "Ada"})
    befores = [method for name, stage, method, _ in events if stage == "before"]
    afters = [method for name, stage, method, _ in events if stage == "after"]
    assert befores == afters == ["tools/list", "resources/read", "prompts/get"]


def test_hooks_nest_first_added_outermost() -> None:
    events: list[Any] = []
    server = make_server(events)
    assert server.add_call_hook(Recorder("outer", events)) is not None
    server.add_call_hook(Recorder("inner", events))
    with open_client(server, **LEGACY_ERA) as client:
        client.call_tool("where")
    assert [(name, stage) for name, stage, *_ in events] == [
        ("outer", "before"), ("inner", "before"), ("tool", "ran"),
        ("inner", "after"), ("outer", "after")]


def test_after_runs_when_the_call_fails() -> None:
    events: list[Any] = []
    server = make_server(events)
    server.add_call_hook(Recorder("hook", events))
    with open_client(server, **LEGACY_ERA) as client:
        # A failing tool is a result (TOOLS-6): the hook sees the call end normally.
        assert client.call_tool("fail").is_error
        # An error the handler raises passes through the hook, which sees it.
        with pytest.raises(ResourceNotFound):
            client.read_resource("memo://absent")
    stages = [(stage, method) for name, stage, method, _ in events]
    assert stages == [
        ("before", "tools/call"), ("after", "tools/call"),
        ("before", "resources/read"), ("raised", "ResourceNotFound"),
        ("after", "resources/read")]


def test_a_failing_hook_fails_only_that_request() -> None:
    events: list[Any] = []
    server = make_server(events)
    refuse = threading.Event()
    refuse.set()

    @server.add_call_hook
    @contextlib.contextmanager
    def guard(ctx: Context) -> Iterator[None]:
        if refuse.is_set() and ctx.method == "tools/call":
            raise RuntimeError("the database is down")
        yield

    with open_client(server) as client:
        with pytest.raises(InternalError) as caught:
            client.call_tool("where")
        assert caught.value.code == -32603
        assert "database" not in caught.value.message  # the traceback stays in our log
        assert not events  # the tool never ran
        refuse.clear()
        assert client.call_tool("where").content[0].text == "ok"


@pytest.mark.parametrize("json_response", [False, True])
def test_hooks_enclose_calls_served_over_streamable_http(json_response: bool) -> None:
    """Over HTTP a request may be served on the WSGI thread that received it: the hook
    still runs on whichever thread runs the tool."""
    events: list[Any] = []
    server = make_server(events)
    server.add_call_hook(Recorder("hook", events))
    with make_wsgi_app(server, json_response=json_response) as app:
        peer = WsgiPeer(app)
        peer.initialize()
        result = peer.result(call(2, "tools/call", {"name": "where", "arguments": {}}))
    assert result["content"] == [{"type": "text", "text": "ok"}]
    assert [event[:2] for event in events] == [
        ("hook", "before"), ("tool", "ran"), ("hook", "after")]
    assert len({event[3] for event in events}) == 1
