"""Legacy sessions across processes and hosts (issue 28, point 4): two gunicorn
instances of the everything server, two workers each, sharing one Redis
(``MCP_SYNC_STORE``), behind a round-robin proxy without affinity.

Which instance served which request of a session is read from the proxy's own record.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest
import requests

from mcp_sync import Client, types
from tests.helpers import LEGACY_ERA
from tests.http_server_helpers import HEADERS, INITIALIZE, INITIALIZED, call, parse_sse
from tests.scaleout_helpers import Gunicorn, RedisServer, RoundRobinProxy, serve_proxy
from tests.scaleout_helpers import redis_server as redis_server  # the fixture

pytestmark = pytest.mark.timeout(180)


class Hosts:
    def __init__(self, stack: ExitStack, redis: RedisServer) -> None:
        self.instances: list[Gunicorn] = []
        for _ in range(2):
            instance = Gunicorn(redis.url)
            stack.callback(instance.stop)
            self.instances.append(instance)
        self.proxy = RoundRobinProxy([instance.url for instance in self.instances])
        self.url = stack.enter_context(serve_proxy(self.proxy)).url
        for instance in self.instances:  # before the proxy: that ends the relayed streams
            stack.callback(instance.stop)


@pytest.fixture
def hosts(redis_server: RedisServer) -> Iterator[Hosts]:
    with ExitStack() as stack:
        yield Hosts(stack, redis_server)


def _post(url: str, session_id: str | None, message: dict[str, Any],
          **headers: str) -> requests.Response:
    all_headers = {**HEADERS, **headers}
    if session_id is not None:
        all_headers["Mcp-Session-Id"] = session_id
    return requests.post(url + "/mcp", json=message, headers=all_headers, timeout=30)


def _messages(response: requests.Response) -> list[Any]:
    return [json.loads(event.data) for event in parse_sse(response.content) if event.data]


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def test_delete_on_one_host_ends_the_session_on_both(hosts: Hosts) -> None:
    first, second = (instance.url for instance in hosts.instances)
    started = _post(first, None, INITIALIZE)
    session_id = started.headers["Mcp-Session-Id"]
    assert _post(first, session_id, INITIALIZED).status_code == 202
    assert _messages(_post(second, session_id, call(2, "ping")))[0]["result"] == {}
    deleted = requests.delete(second + "/mcp", headers={"Mcp-Session-Id": session_id},
                              timeout=30)
    assert deleted.status_code == 204
    for url in (first, second):
        assert _post(url, session_id, call(3, "ping")).status_code == 404


def test_a_resumed_stream_replays_on_the_other_host_http_26(hosts: Hosts) -> None:
    first, second = (instance.url for instance in hosts.instances)
    session_id = _post(first, None, INITIALIZE).headers["Mcp-Session-Id"]
    _post(first, session_id, INITIALIZED)
    answer = _post(first, session_id, call(2, "tools/call", {
        "name": "long_running", "arguments": {"steps": 3}, "_meta": {"progressToken": 1}}))
    events = [event for event in parse_sse(answer.content) if event.data]
    assert len(events) == 4 and events[0].id  # three progress notifications, the result
    replayed = requests.get(second + "/mcp", timeout=30, headers={
        "Accept": "text/event-stream", "Mcp-Session-Id": session_id,
        "Last-Event-ID": events[1].id or ""})
    assert [e.data for e in parse_sse(replayed.content) if e.data] == [
        e.data for e in events[2:]]


def test_one_session_served_by_two_hosts_survives_losing_its_creator(hosts: Hosts) -> None:
    logs: list[Any] = []

    def answer(request: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Ada"}}

    with Client.http(hosts.url, elicitation_handler=answer, on_log=logs.append,
                     read_timeout=60, **LEGACY_ERA) as client:
        assert [_text(client.call_tool("add", {"a": a, "b": 1})) for a in range(6)] == [
            str(a + 1) for a in range(6)]
        (session_id,) = hosts.proxy.session_ids()
        assert hosts.proxy.backends_of(session_id) == {0, 1}
        for _ in range(3):  # the answer to the elicitation lands on either host
            assert _text(client.call_tool("ask")) == "Hello, Ada!"
        client.call_tool("log", {"level": "error", "message": "from a tool"})
        creator = next(index for index, _, session in hosts.proxy.served
                       if session == session_id)
        hosts.instances[creator].kill()
        served = len(hosts.proxy.served)
        assert [_text(client.call_tool("add", {"a": a, "b": 2})) for a in range(4)] == [
            str(a + 2) for a in range(4)]
        assert _text(client.call_tool("ask")) == "Hello, Ada!"
        assert {index for index, _, _ in hosts.proxy.served[served:]} == {1 - creator}
    assert [entry.data for entry in logs] == ["from a tool"]


# --- the modern era (2026-07-28) through the same hosts ------------------------------------


def _modern_add(url: str, a: int, request_id: int) -> requests.Response:
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {
        "name": "add", "arguments": {"a": a, "b": 1},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}}
    return _post(url, None, message, **{"MCP-Protocol-Version": "2026-07-28",
                                        "Mcp-Method": "tools/call", "Mcp-Name": "add"})


def test_modern_requests_are_answered_by_any_host_with_nothing_shared(hosts: Hosts) -> None:
    """Scale-out of the modern era: requests alternate between the hosts without a
    session, next to a legacy session of the same endpoint, and go on when the host
    that answered first is killed."""
    base = hosts.url.removesuffix("/mcp")
    answered = [_modern_add(base, a, a) for a in range(4)]
    assert [r.status_code for r in answered] == [200] * 4
    assert [r.json()["result"]["structuredContent"] for r in answered] == [
        {"result": a + 1} for a in range(4)]
    assert all("Mcp-Session-Id" not in r.headers for r in answered)
    assert {index for index, _, _ in hosts.proxy.served} == {0, 1}
    assert hosts.proxy.session_ids() == set()

    legacy = _post(base, None, INITIALIZE)
    assert legacy.status_code == 200 and "Mcp-Session-Id" in legacy.headers

    first = hosts.proxy.served[0][0]
    hosts.instances[first].kill()
    after = [_modern_add(base, a, 10 + a) for a in range(3)]
    assert [r.json()["result"]["structuredContent"] for r in after] == [
        {"result": a + 1} for a in range(3)]


# --- an application loaded before gunicorn forks (--preload) -----------------------------------


def test_workers_forked_from_one_application_answer_each_other_preload(
        redis_server: RedisServer) -> None:
    """gunicorn --preload makes the application (and its session store) once, then
    forks the workers: each must still be a process of its own in the store, so that
    an elicitation's answer POSTed to the other worker reaches the one whose tool waits
    for it, as between hosts."""

    def answer(request: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Ada"}}

    with ExitStack() as stack:
        instance = Gunicorn(redis_server.url, preload=True)
        stack.callback(instance.stop)
        proxy = RoundRobinProxy([instance.url])
        url = stack.enter_context(serve_proxy(proxy)).url
        stack.callback(instance.stop)
        # gunicorn hands each connection to either worker; the client opens several.
        with Client.http(url, elicitation_handler=answer, read_timeout=20) as client:
            for _ in range(6):
                assert _text(client.call_tool("ask")) == "Hello, Ada!"
