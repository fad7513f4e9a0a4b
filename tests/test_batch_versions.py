"""Batches by version (V0618-1..4, DES-6): sent only in 2025-03-26 sessions, received
leniently in every version."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_sync import Client, Server
from mcp_sync.errors import InvalidParams, LocalProtocolError
from mcp_sync.transports.http_client import HttpClientTransport
from mcp_sync.transports.http_server import serve_http
from mcp_sync.transports.memory import memory_pair
from tests.helpers import RawPeer
from tests.wire_schema import Conversation, RecordingTransport


def adder() -> Server:
    server = Server("batch")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    return server


@contextlib.contextmanager
def connected(over: str, version: str, conversation: Conversation) -> Iterator[Client]:
    server = adder()
    if over == "memory":
        client_end, server_end = memory_pair()
        connection = server.connect(server_end)
        try:
            with Client(RecordingTransport(client_end, conversation),
                        protocol_version=version, timeout=10) as client:
                yield client
        finally:
            connection.close()
    else:
        with serve_http(server) as handle, Client(
                RecordingTransport(HttpClientTransport(handle.url), conversation),
                protocol_version=version, timeout=10) as client:
            yield client


@pytest.mark.parametrize("over", ["memory", "http"])
def test_a_2025_03_26_client_sends_a_batch_batch_1(over: str) -> None:
    conversation = Conversation()
    with connected(over, "2025-03-26", conversation) as client:
        futures = client.send_batch([
            ("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}),
            ("ping", None),
            ("tools/call", {"name": "nope"}),
        ])
        assert futures[0].result(10)["content"][0]["text"] == "3"
        assert futures[1].result(10) == {}
        with pytest.raises(InvalidParams):
            futures[2].result(10)
    batches = [m for who, m in conversation.messages if who == "client" and isinstance(m, list)]
    assert [[item["method"] for item in batch] for batch in batches] == [
        ["tools/call", "ping", "tools/call"]]
    conversation.assert_valid()


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25"])
@pytest.mark.parametrize("over", ["memory", "http"])
def test_no_batch_is_sent_where_the_version_has_none_v0618_1(over: str, version: str) -> None:
    conversation = Conversation()
    with connected(over, version, conversation) as client:
        before = len(conversation.messages)
        with pytest.raises(LocalProtocolError, match="batches do not exist"):
            client.send_batch([("ping", None), ("ping", None)])
        assert len(conversation.messages) == before  # nothing was sent
        client.ping()  # and the session goes on
    assert not [m for _, m in conversation.messages if isinstance(m, list)]
    conversation.assert_valid()


def test_an_empty_batch_is_refused() -> None:
    with connected("memory", "2025-03-26", Conversation()) as client, \
            pytest.raises(ValueError, match="at least one"):
        client.send_batch([])


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_a_batch_received_in_a_newer_session_is_still_served_v0618_4(version: str) -> None:
    """Receiving stays lenient (DES-6): the array is answered as BATCH-5 says."""
    peer = RawPeer()
    connection = adder().connect(peer.transport)
    try:
        answer: Any = peer.call({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}})
        assert answer["result"]["protocolVersion"] == version
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        peer.send([{"jsonrpc": "2.0", "id": 1, "method": "ping"},
                   {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                    "params": {"name": "add", "arguments": {"a": 2, "b": 2}}}])
        reply = peer.receive()
        assert isinstance(reply, list)
        assert sorted(item["id"] for item in reply) == [1, 2]
    finally:
        connection.close()
        peer.close()
