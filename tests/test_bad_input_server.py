"""Bad input thrown at a server, over the in-memory transport and over stdio.

Every case is followed by a ping whose answer proves the connection still serves
(the ``Barrier``). The table (``bad_input_support.server_cases``) says what each frame
must be answered with; the property tests check random frames against the oracle
``expect_for``. One stdio server process serves the whole table and every example.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_sync import Client
from mcp_sync.transports.memory import memory_pair
from tests.bad_input_support import (
    HERE,
    INITIALIZE,
    INITIALIZED,
    LARGE_TEXT,
    NOTHING,
    Barrier,
    Case,
    Expect,
    Reply,
    StdioPeer,
    error,
    expect_for,
    make_server,
    request,
    result,
    same_id,
    server_cases,
    text_of,
)
from tests.helpers import RawPeer
from tests.strategies import almost_valid_messages, json_values, line_bytes, strict_json

pytestmark = pytest.mark.timeout(60)

#: The stdio server refuses lines beyond this; the limit cases send more.
STDIO_LIMIT = 1024 * 1024
PROPERTY = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _handshake(peer: Any) -> None:
    peer.send(INITIALIZE)
    answer = peer.receive()
    assert answer["id"] == "init" and "result" in answer, answer
    peer.send(INITIALIZED)


@pytest.fixture(scope="module")
def stdio_server() -> Iterator[StdioPeer]:
    """One initialized server process for the module (each spawn costs ~150 ms)."""
    peer = StdioPeer("server", str(STDIO_LIMIT))
    try:
        _handshake(peer)
        yield peer
    finally:
        assert peer.close() == 0  # it served to the end and left on EOF (SHUTDOWN-1)


@contextmanager
def memory_server(initialized: bool = True) -> Iterator[RawPeer]:
    """A server of ``make_server`` on the in-memory transport, with a raw peer."""
    peer = RawPeer()
    connection = make_server().connect(peer.transport)
    try:
        if initialized:
            _handshake(peer)
        yield peer
    finally:
        peer.close()
        connection.close()


@pytest.fixture(params=["memory", "stdio"])
def peer(request: pytest.FixtureRequest, stdio_server: StdioPeer) -> Iterator[Any]:
    if request.param == "stdio":
        yield stdio_server
        return
    with memory_server() as memory_peer:
        yield memory_peer


# --- the table ------------------------------------------------------------------------------


def _params(cases: list[Case]) -> list[Any]:
    return [pytest.param(case, id=f"{case.name}[{case.ids.replace(' ', ',')}]")
            for case in cases]


@pytest.mark.parametrize("case", _params(server_cases()))
def test_bad_input_gets_the_spec_answer_and_serving_goes_on(
        peer: Any, request: pytest.FixtureRequest, case: Case, wire: Any) -> None:
    """JSONRPC-1…14, BATCH-1/3/4/5, AMBIG-3/5/6, CAPS-7, PAGINATION-5, RESOURCES-9/11,
    TOOLS-7, PROMPTS-3/6, COMPLETION-5, LOGGING-6, STDIO-8 (the case id names which):
    the frame gets exactly the error (code and id) the digest asks for, or nothing, and
    the next ping is answered."""
    if isinstance(peer, StdioPeer) and not case.stdio:
        pytest.skip("a blank line is skipped on stdio (STDIO-8)")
    frame = case.frame if isinstance(case.frame, bytes) else json.dumps(case.frame).encode()
    with wire.allow_invalid():
        Barrier(f"{request.node.name}").exchange(peer, frame, case.expect)


# --- ids in use, limits, lifecycle -----------------------------------------------------------


@pytest.mark.timeout(30)
def test_request_id_reused_while_in_flight_and_after_jsonrpc_4_jsonrpc_13(
        peer: Any, request: pytest.FixtureRequest) -> None:
    """JSONRPC-4/13, AMBIG-6: a request reusing the id of one still running is refused
    with -32600 under that id and never runs; the first still gets its own answer; once
    answered, the id may be used again (JSONRPC-4 binds the sender only)."""
    key = request.node.name
    barrier = Barrier(key)
    peer.send(_tool("dup", "block", {"key": key}))
    barrier.exchange(peer, _tool("dup", "echo", {"text": "second"}), error(-32600, "dup"))
    peer.send(_tool("rel", "release", {"key": key}))
    answers = {frame["id"]: frame for frame in (peer.receive(), peer.receive())}
    assert set(answers) == {"dup", "rel"}
    assert answers["dup"]["result"]["content"][0]["text"] == "released"
    barrier.exchange(peer, _tool("dup", "echo", {"text": "third"}),
                     Expect((Reply("dup", result=True, deferred=True),)))


def _tool(request_id: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return request(request_id, "tools/call", {"name": name, "arguments": arguments})


@pytest.mark.timeout(30)
def test_oversized_line_is_refused_clearly_and_serving_goes_on_stdio_8(
        stdio_server: StdioPeer) -> None:
    """STDIO-8, AMBIG-3: a line over ``max_message_size`` gets one -32600 (null id) that
    names the limit; the next request is served; so is a line just under it."""
    huge = json.dumps(_tool(1, "echo", {"text": "x" * (2 * STDIO_LIMIT)})).encode()
    stdio_server.send(huge)
    refused = stdio_server.receive()
    assert refused["id"] is None and refused["error"]["code"] == -32600, refused
    assert f"limit of {STDIO_LIMIT}" in refused["error"]["message"]
    text = "y" * (STDIO_LIMIT - 200)
    Barrier("under-limit").exchange(stdio_server, _tool(2, "echo", {"text": text}),
                                    result(2, deferred=True))


@pytest.mark.timeout(60)
def test_twenty_mebibytes_round_trip_intact_over_stdio_stdio_2() -> None:
    """STDIO-2, GEN: with the limit raised, a 20 MiB argument and its 20 MiB answer cross
    both pipes byte for byte (non-ASCII, escapes and all)."""
    limit = 64 * 1024 * 1024
    with Client.stdio([sys.executable, HERE, "server", str(limit)], max_message_size=limit,
                      timeout=50) as client:
        answer = client.call_tool("echo", {"text": LARGE_TEXT})
        assert text_of(answer) == LARGE_TEXT
        client.ping()


@pytest.mark.timeout(30)
@pytest.mark.parametrize("transport", ["memory", "stdio"])
def test_requests_before_initialization_lifecycle_1_lifecycle_5_ambig_6(
        transport: str, wire: Any) -> None:
    """LIFECYCLE-1, AMBIG-6, PING-2, VERSION: before ``initialize`` only ping is served,
    a known request is -32600, an unknown one -32601; malformed ``initialize`` params are
    -32602 and leave the session new; ``initialize`` in a batch (AMBIG-5) or with a null id
    does not initialize; a valid one then succeeds and a second one is -32600."""
    peer: Any
    with (memory_server(initialized=False) if transport == "memory"
          else _stdio_uninitialized()) as peer:
        barrier = Barrier(f"lifecycle-{transport}")
        client_info = {"name": "x", "version": "0"}
        cases: list[tuple[Any, Expect]] = [
            (request(1, "ping"), result(1)),
            (request(2, "tools/list"), error(-32600, 2)),
            (request(3, "tools/call", {"name": "echo", "arguments": {"text": "x"}}),
             error(-32600, 3)),
            (request(4, "resources/read", {"uri": "config://app"}), error(-32600, 4)),
            (request(5, "server/discover"), error(-32601, 5)),
            (INITIALIZED, NOTHING),
            (request(6, "initialize"), error(-32602, 6)),
            (request(7, "initialize", {}), error(-32602, 7)),
            (request(8, "initialize", {"protocolVersion": 5, "capabilities": {},
                                       "clientInfo": client_info}), error(-32602, 8)),
            (request(9, "initialize", {"protocolVersion": "2025-03-26", "capabilities": "x",
                                       "clientInfo": client_info}), error(-32602, 9)),
            (request(10, "initialize", {"protocolVersion": "2025-03-26", "capabilities": {},
                                        "clientInfo": {"name": 1, "version": "0"}}),
             error(-32602, 10)),
            (request(11, "initialize", {"protocolVersion": "2025-03-26",
                                        "capabilities": {}}), error(-32602, 11)),
            (request(12, "initialize", []), error({-32600, -32602}, 12)),
            ([INITIALIZE], Expect((Reply("init", frozenset({-32600})),), batch=True)),
            ({**INITIALIZE, "id": None}, error(-32600)),
            (request(13, "tools/list"), error(-32600, 13)),
        ]
        with wire.allow_invalid():
            for frame, expect in cases:
                barrier.exchange(peer, json.dumps(frame).encode(), expect)
        barrier.exchange(peer, json.dumps(INITIALIZE).encode(), result("init"))
        # AMBIG-6: served between the initialize result and notifications/initialized.
        barrier.exchange(peer, json.dumps(request(14, "tools/list")).encode(),
                         result(14, deferred=True))
        peer.send(INITIALIZED)
        barrier.exchange(peer, json.dumps(INITIALIZE).encode(), error(-32600, "init"))


@contextmanager
def _stdio_uninitialized() -> Iterator[StdioPeer]:
    peer = StdioPeer("server", str(STDIO_LIMIT))
    try:
        yield peer
    finally:
        assert peer.close() == 0


# --- properties -----------------------------------------------------------------------------


@pytest.mark.timeout(60)
def test_any_json_value_gets_what_the_oracle_says_jsonrpc_1_jsonrpc_2_batch_5(
        peer: Any, wire: Any) -> None:
    """JSONRPC-1/2/3/7/10/12/14, BATCH-3/5, AMBIG-3: any JSON value is answered exactly as
    ``expect_for`` says (error code and id, or nothing) and the ping after it works."""
    barrier = Barrier(f"json-{type(peer).__name__}")

    @PROPERTY
    @given(value=json_values() | st.lists(json_values(4), max_size=3))
    def check(value: Any) -> None:
        barrier.exchange(peer, json.dumps(value).encode(), expect_for(value))

    with wire.allow_invalid():
        check()


@pytest.mark.timeout(60)
def test_almost_valid_requests_get_what_the_oracle_says_jsonrpc_12_jsonrpc_14(
        peer: Any, wire: Any) -> None:
    """JSONRPC-1/2/6/12/14, TOOLS-7, RESOURCES-9, PROMPTS-3, COMPLETION-5, LOGGING-6: a
    valid request with one field changed or removed is served or refused with -32600,
    -32601, -32602 or -32002 as the oracle says, never -32603, and serving goes on."""
    barrier = Barrier(f"almost-{type(peer).__name__}")
    counter = iter(range(10**9))

    @PROPERTY
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        message = data.draw(almost_valid_messages(f"m{next(counter)}"))
        barrier.exchange(peer, json.dumps(message).encode(), expect_for(message))

    with wire.allow_invalid():
        check()


@pytest.mark.timeout(60)
def test_any_bytes_get_a_parse_error_or_what_the_oracle_says_jsonrpc_12_stdio_8(
        peer: Any, wire: Any) -> None:
    """JSONRPC-12, STDIO-8, AMBIG-3: arbitrary bytes (one line of them on stdio) that are
    not UTF-8 JSON get -32700 with a null id; blank lines on stdio get nothing; JSON gets
    what ``expect_for`` says; serving goes on."""
    stdio = isinstance(peer, StdioPeer)
    barrier = Barrier(f"bytes-{type(peer).__name__}")

    @PROPERTY
    @given(data=line_bytes())
    def check(data: bytes) -> None:
        if stdio and not data.strip():
            expect = NOTHING
        else:
            parsed, value = strict_json(data)
            expect = expect_for(value) if parsed else error(-32700)
        barrier.exchange(peer, data, expect)

    with wire.allow_invalid():
        check()


def test_ids_keep_their_json_type_jsonrpc_6(peer: Any) -> None:
    """JSONRPC-6: ``"1"`` is answered as ``"1"`` and ``1`` as ``1``, even in one batch."""
    peer.send([request("1", "ping"), request(1, "ping")])
    answers = peer.receive()
    assert isinstance(answers, list) and len(answers) == 2
    assert sorted((type(a["id"]).__name__, a["id"]) for a in answers) == [
        ("int", 1), ("str", "1")]
    assert all(same_id(a["id"], a["id"]) and a["result"] == {} for a in answers)
    Barrier("types").exchange(peer, json.dumps(request(2, "ping")).encode(), result(2))


def test_memory_transport_survives_a_closed_peer_mid_case_shutdown_5() -> None:
    """SHUTDOWN-5: a peer that sends junk and goes away ends the connection cleanly."""
    end, other = memory_pair()
    connection = make_server().connect(other)
    end.write_frame(b"{junk")
    assert json.loads(end.read_frame(timeout=5) or b"null")["error"]["code"] == -32700
    end.close()
    assert connection.wait_closed(5)
    connection.close()


@pytest.mark.timeout(30)
def test_last_line_without_newline_is_still_served_stdio_8_shutdown_1() -> None:
    """STDIO-8, SHUTDOWN-1: a request on a last line that the client ends without a
    newline (then closes stdin) is answered, and the server exits with 0."""
    peer = StdioPeer("server", str(STDIO_LIMIT))
    try:
        _handshake(peer)
        peer.stdin.write(json.dumps(request("last", "ping")).encode())
        peer.stdin.flush()
    finally:
        assert peer.close() == 0
    assert json.loads(peer.lines.get(timeout=5)) == {"jsonrpc": "2.0", "id": "last",
                                                     "result": {}}
