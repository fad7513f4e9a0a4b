"""Interop: the official MCP SDK's client, in the legacy era, through a round-robin
proxy without affinity to two servers sharing their sessions in Redis (issue 28,
point 4). The servers run in this process, so what they send is schema-checked."""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

import anyio
import mcp.types as sdk
import pytest
from mcp.client import Client as SdkClient
from mcp.client.streamable_http import streamable_http_client

from tests.helpers import EXAMPLES, load_module
from tests.scaleout_helpers import RedisServer, two_servers_behind_a_proxy
from tests.scaleout_helpers import redis_server as redis_server  # the fixture

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60)]

everything = load_module(EXAMPLES / "everything_server.py", "everything_for_sdk_scaleout")


async def _drive(url: str) -> dict[str, Any]:
    seen: dict[str, Any] = {"asked": []}

    async def elicit(context: Any, params: Any) -> sdk.ElicitResult:
        seen["asked"].append(params.message)
        return sdk.ElicitResult(action="accept", content={"name": "SDK"})

    with anyio.fail_after(40):
        async with SdkClient(streamable_http_client(url), mode="legacy",
                             elicitation_callback=elicit) as client:
            seen["version"] = client.protocol_version
            seen["sums"] = [(await client.call_tool("add", {"a": a, "b": 1})).content[0]
                            for a in range(4)]
            seen["asks"] = [(await client.call_tool("ask", {})).content[0] for _ in range(2)]
    return seen


def test_sdk_client_through_a_proxy_without_affinity(redis_server: RedisServer) -> None:
    with ExitStack() as stack:
        proxy, url = two_servers_behind_a_proxy(stack, everything.make_server, redis_server.url)
        seen = anyio.run(_drive, url)
        (session_id,) = proxy.session_ids()
        assert proxy.backends_of(session_id) == {0, 1}
    assert seen["version"] == "2025-11-25"
    assert [block.text for block in seen["sums"]] == ["1", "2", "3", "4"]
    assert [block.text for block in seen["asks"]] == ["Hello, SDK!"] * 2
    assert seen["asked"] == ["What is your name?"] * 2
