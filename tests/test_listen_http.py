"""``subscriptions/listen`` (MCP 2026-07-28) over Streamable HTTP: a listen stream is the
per-request event stream of its POST (werkzeug's test client, streamed unbuffered).

The acknowledgement, the changes and the end ride the listen request's own response
stream; closing that stream is the client's cancel (the spec's "Subscriptions" page,
"Cancellation"); the server ending it ends the stream with the request's result. Every
message is checked against schema-2026-07-28.json (DES-19).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from werkzeug.test import Client as WerkzeugClient
from werkzeug.test import TestResponse

from mcp_sync import Server
from mcp_sync.transports.http_server import StreamableHttpApp, make_wsgi_app
from tests.conftest import HERE
from tests.helpers import load_module
from tests.http_server_helpers import parse_sse
from tests.server_support import MODERN, modern_request
from tests.wire_schema import message_errors

changing = load_module(HERE / "servers" / "changing_server.py")

SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"


def headers_for(message: dict[str, Any]) -> dict[str, str]:
    headers = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json", "MCP-Protocol-Version": MODERN,
               "Mcp-Method": message["method"]}
    name = (message.get("params") or {}).get("name")
    if message["method"] == "tools/call" and isinstance(name, str):
        headers["Mcp-Name"] = name
    return headers


def post(app: StreamableHttpApp, message: dict[str, Any], *,
         buffered: bool = True) -> TestResponse:
    return WerkzeugClient(app).post("/mcp", data=json.dumps(message),
                                    headers=headers_for(message), buffered=buffered)


class Stream:
    """An open listen stream: its response read chunk by chunk as the server sends it."""

    def __init__(self, app: StreamableHttpApp, request_id: Any, **notifications: Any) -> None:
        self.message = modern_request("subscriptions/listen",
                                      {"notifications": notifications}, request_id=request_id)
        self.response = post(app, self.message, buffered=False)
        assert self.response.status_code == 200
        assert self.response.content_type.startswith("text/event-stream")
        self._chunks = iter(self.response.response)
        self._data = b""
        self.ended = False

    def messages(self, count: int, within: float = 10.0) -> list[dict[str, Any]]:
        """The first ``count`` messages of the stream, waiting up to ``within`` seconds."""
        deadline = time.monotonic() + within
        while True:
            events = [json.loads(event.data) for event in parse_sse(self._data) if event.data]
            if len(events) >= count or self.ended:
                for event in events:
                    errors = message_errors(event, MODERN, answers="subscriptions/listen")
                    assert not errors, (event, errors)
                return events[:count]
            assert time.monotonic() < deadline, f"{len(events)} of {count} messages came"
            try:
                self._data += next(self._chunks)
            except StopIteration:
                self.ended = True

    def close(self) -> None:
        """What a WSGI server does when the client goes away."""
        self.response.close()


@pytest.fixture
def server() -> Server:
    return changing.make_server(max_listen_streams=1)


@pytest.fixture
def app(server: Server) -> Iterator[StreamableHttpApp]:
    with make_wsgi_app(server, keepalive_interval=0.05) as app:
        yield app


def test_ack_and_changes_ride_the_listen_requests_own_stream(
        app: StreamableHttpApp) -> None:
    """SEP-2575 over HTTP: the acknowledgement first, then the changes a tool call makes
    (on another POST), each tagged with the subscription id, on the listen POST's
    stream; the tool call's own answer is plain JSON on its own POST."""
    stream = Stream(app, "l1", toolsListChanged=True)
    try:
        [ack] = stream.messages(1)
        assert ack["method"] == ACKNOWLEDGED
        assert ack["params"] == {"notifications": {"toolsListChanged": True},
                                 "_meta": {SUBSCRIPTION_ID: "l1"}}
        grow = modern_request("tools/call", {"name": "grow", "arguments": {"name": "sprout"}},
                              request_id=2)
        answer = post(app, grow)
        assert answer.content_type == "application/json"
        assert json.loads(answer.get_data())["result"]["content"][0]["text"] == "grew sprout"
        change = stream.messages(2)[1]
        assert change == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                          "params": {"_meta": {SUBSCRIPTION_ID: "l1"}}}
    finally:
        stream.close()


def test_closing_the_stream_ends_the_subscription_and_frees_its_place(
        server: Server, app: StreamableHttpApp) -> None:
    """"Cancellation": over HTTP the client closes the response stream; the server
    stops sending to it, and the stream no longer counts against max_listen_streams."""
    first = Stream(app, 1, resourceSubscriptions=["notes://a"])
    first.messages(1)
    refused = post(app, modern_request("subscriptions/listen",
                                       {"notifications": {"toolsListChanged": True}},
                                       request_id=2))
    assert json.loads(refused.get_data())["error"]["code"] == -32603
    first.close()
    assert server.notify_resource_updated("notes://a") == 0
    second = Stream(app, 3, toolsListChanged=True)
    try:
        assert second.messages(1)[0]["method"] == ACKNOWLEDGED
    finally:
        second.close()


def test_the_server_ending_a_stream_ends_the_response_with_the_result(
        server: Server, app: StreamableHttpApp) -> None:
    """"Cancellation": the server tearing a subscription down closes its HTTP stream,
    after notifications/cancelled naming it and the SubscriptionsListenResult."""
    stream = Stream(app, "s", toolsListChanged=True)
    try:
        stream.messages(1)
        assert server.end_listen_streams() == 1
        messages = stream.messages(3)
        assert stream.messages(4) == messages and stream.ended
        assert messages[1]["method"] == "notifications/cancelled"
        assert messages[1]["params"]["requestId"] == "s"
        assert messages[2]["id"] == "s"
        assert messages[2]["result"]["_meta"][SUBSCRIPTION_ID] == "s"
    finally:
        stream.close()
