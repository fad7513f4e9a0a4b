"""Bad input thrown at a Client by a fake server: over the in-memory transport (a raw
peer the test thread drives by hand) and over stdio (a script that writes junk lines).

After every case the fake server pings the client (its answer proves the client still
serves and marks the point by which the client's own replies have been written), a call
that was in flight before the junk still gets its proper answer, and ``client.ping()``
still works.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_sync import Client, types
from mcp_sync.errors import RpcError
from mcp_sync.protocol._sse import SseParser, format_event
from tests.bad_input_support import (
    CLIENT_SERVED,
    HERE,
    NOTHING,
    Expect,
    Reply,
    batch,
    check_frames,
    error,
    expect_for,
    request,
    text_of,
)
from tests.helpers import RawPeer
from tests.strategies import json_values

pytestmark = pytest.mark.timeout(30)

INIT_RESULT = {
    "protocolVersion": "2025-03-26",
    "capabilities": {"tools": {}, "logging": {}, "resources": {"subscribe": True}},
    "serverInfo": {"name": "fake", "version": "0"},
}
TOOL_RESULT = {"content": [{"type": "text", "text": "proper answer"}]}
PROPERTY = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


class FakeServer:
    """A Client on one end of the memory transport; this test thread is its server."""

    def __init__(self) -> None:
        self.peer = RawPeer()
        self.sampled: list[Any] = []
        self.logs: list[Any] = []
        self.updated: list[str] = []
        self.progress: list[Any] = []
        self.count = 0
        handshake = threading.Thread(target=self._handshake, name="test:fake-handshake")
        handshake.start()
        try:
            self.client = Client(
                self.peer.transport, timeout=10, sampling_handler=self._sample,
                roots=["file:///tmp/project"], on_log=self.logs.append,
                on_resource_updated=self.updated.append)
        finally:
            handshake.join(10)

    def _handshake(self) -> None:
        initialize = self.peer.receive()
        self.peer.send({"jsonrpc": "2.0", "id": initialize["id"], "result": INIT_RESULT})
        assert self.peer.receive()["method"] == "notifications/initialized"

    def _sample(self, params: types.CreateMessageRequestParams) -> dict[str, Any]:
        self.sampled.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "hi"},
                "model": "fake"}

    def start_call(self) -> tuple[Future[dict[str, Any]], dict[str, Any]]:
        """A tools/call in flight (with progress), and its request as the server saw it."""
        future = self.client.send_request_async(
            "tools/call", {"name": "slow", "arguments": {}},
            on_progress=lambda *args: self.progress.append(args))
        frame = self.peer.receive()
        assert frame["method"] == "tools/call", frame
        return future, frame

    def exchange(self, frame: Any, expect: Expect) -> None:
        """Send ``frame`` and a ping to the client; check the client's answers."""
        self.count += 1
        barrier_id = f"server-ping-{self.count}"
        self.peer.send(frame)
        self.peer.send(request(barrier_id, "ping"))
        frames: list[Any] = []
        pinged = False
        while not pinged or (expect.deferred and len(frames) < expect.frames):
            found = self.peer.receive()
            if isinstance(found, dict) and found.get("id") == barrier_id:
                assert found == {"jsonrpc": "2.0", "id": barrier_id, "result": {}}, found
                pinged = True
            else:
                frames.append(found)
        check_frames(frames, expect, frame)

    def still_works(self) -> None:
        """``client.ping()`` (PING-2) goes out and its answer gets back."""
        future = self.client.send_request_async("ping")
        frame = self.peer.receive()
        assert frame["method"] == "ping", frame
        self.peer.send({"jsonrpc": "2.0", "id": frame["id"], "result": {}})
        assert future.result(5) == {}

    def close(self) -> None:
        self.client.close()
        self.peer.close()


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    server = FakeServer()
    try:
        yield server
    finally:
        server.close()


def _answer(call: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": call["id"], "result": TOOL_RESULT}


# --- the table ------------------------------------------------------------------------------

_BAD = frozenset({-32602})
_INVALID = frozenset({-32600})

#: (name, digest ids, frame, what the client must answer). In a frame, ``"{rid-int}"``
#: becomes the id of the call in flight, ``"{rid}"`` its string twin and
#: ``"{rid-float}"`` its float twin (neither of which may answer it, JSONRPC-6).
CASES: list[tuple[str, str, Any, Expect]] = [
    ("invalid-json", "JSONRPC-12 AMBIG-3", b"{not json", error(-32700)),
    ("invalid-utf8", "JSONRPC-12", b'{"jsonrpc":"2.0","id":"\xff","result":{}}', error(-32700)),
    ("number", "JSONRPC-1", 42, error(-32600)),
    ("string", "JSONRPC-1", "hello", error(-32600)),
    ("null", "JSONRPC-1", None, error(-32600)),
    ("empty-batch", "BATCH-5", [], error(-32600)),
    ("batch-of-junk", "BATCH-5", [1, None],
     batch(Reply(None, _INVALID), Reply(None, _INVALID))),
    ("batch-requests-and-responses", "BATCH-3",
     [request("m1", "ping"), {"jsonrpc": "2.0", "id": 99, "result": {}}], error(-32600)),
    ("wrong-jsonrpc", "JSONRPC-1", {"jsonrpc": "1.0", "id": "s1", "method": "ping"},
     error(-32600, "s1")),
    ("response-unknown-id", "JSONRPC-13 AMBIG-3",
     {"jsonrpc": "2.0", "id": 987654, "result": {}}, NOTHING),
    ("response-unknown-string-id", "JSONRPC-6 JSONRPC-13",
     {"jsonrpc": "2.0", "id": "{rid}", "result": TOOL_RESULT}, NOTHING),
    ("error-unknown-id", "JSONRPC-13",
     {"jsonrpc": "2.0", "id": 987654, "error": {"code": -32603, "message": "x"}}, NOTHING),
    ("error-null-id", "AMBIG-3",
     {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
     NOTHING),
    ("result-and-error-for-call", "JSONRPC-7",
     {"jsonrpc": "2.0", "id": "{rid-int}", "result": {}, "error": {"code": 1, "message": "x"}},
     NOTHING),
    ("neither-result-nor-error-for-call", "JSONRPC-7", {"jsonrpc": "2.0", "id": "{rid-int}"},
     NOTHING),
    ("result-not-object-for-call", "JSONRPC-8",
     {"jsonrpc": "2.0", "id": "{rid-int}", "result": "done"}, NOTHING),
    ("result-for-call-bool-id", "JSONRPC-2 JSONRPC-6",
     {"jsonrpc": "2.0", "id": True, "result": TOOL_RESULT}, NOTHING),
    ("result-for-call-float-id", "JSONRPC-2 JSONRPC-6",
     {"jsonrpc": "2.0", "id": "{rid-float}", "result": TOOL_RESULT}, NOTHING),
    ("error-for-call-float-id", "JSONRPC-2 JSONRPC-6",
     {"jsonrpc": "2.0", "id": "{rid-float}", "error": {"code": 1, "message": "x"}}, NOTHING),
    ("unknown-method", "JSONRPC-12 CAPS-7", request("s2", "bogus/method"),
     error(-32601, "s2")),
    ("server-method-to-client", "JSONRPC-12 CAPS-7", request("s3", "tools/list"),
     error(-32601, "s3")),
    ("initialize-to-client", "JSONRPC-12 CAPS-7", request("s4", "initialize", {}),
     error(-32601, "s4")),
    ("request-null-id", "JSONRPC-3 AMBIG-3", request(None, "ping"), error(-32600)),
    ("request-object-id", "JSONRPC-2 AMBIG-3", request({"a": 1}, "ping"), error(-32600)),
    ("ping-params-array", "JSONRPC-14", request("s5", "ping", [1]), error(_BAD, "s5")),
    ("roots-list-params-string", "JSONRPC-14 ROOTS-2", request("s6", "roots/list", "x"),
     error(_BAD, "s6")),
    ("roots-list-extra-params", "ROOTS-2", request("s7", "roots/list", {"junk": [1]}),
     Expect((Reply("s7", result=True, deferred=True),))),
    ("sampling-params-array", "JSONRPC-14 SAMPLING-2",
     request("s8", "sampling/createMessage", [1, 2]), error(_BAD, "s8")),
    ("sampling-empty", "SAMPLING-2", request("s9", "sampling/createMessage", {}),
     Expect((Reply("s9", _BAD, deferred=True),))),
    ("sampling-messages-string", "SAMPLING-2",
     request("s10", "sampling/createMessage", {"messages": "hi", "maxTokens": 5}),
     Expect((Reply("s10", _BAD, deferred=True),))),
    ("sampling-max-tokens-string", "SAMPLING-2",
     request("s11", "sampling/createMessage", {"messages": [], "maxTokens": "ten"}),
     Expect((Reply("s11", _BAD, deferred=True),))),
    ("sampling-max-tokens-missing", "SAMPLING-2",
     request("s12", "sampling/createMessage", {"messages": []}),
     Expect((Reply("s12", _BAD, deferred=True),))),
    ("sampling-bad-role", "SAMPLING-3",
     request("s13", "sampling/createMessage", {"maxTokens": 5, "messages": [
         {"role": "robot", "content": {"type": "text", "text": "x"}}]}),
     Expect((Reply("s13", _BAD, deferred=True),))),
    ("sampling-resource-content", "SAMPLING-3",
     request("s14", "sampling/createMessage", {"maxTokens": 5, "messages": [
         {"role": "user", "content": {"type": "resource", "resource": {
             "uri": "file:///x", "text": "x"}}}]}),
     Expect((Reply("s14", _BAD, deferred=True),))),
    ("sampling-text-not-string", "SAMPLING-3",
     request("s15", "sampling/createMessage", {"maxTokens": 5, "messages": [
         {"role": "user", "content": {"type": "text", "text": 5}}]}),
     Expect((Reply("s15", _BAD, deferred=True),))),
    ("sampling-include-context", "SAMPLING-2",
     request("s16", "sampling/createMessage", {"maxTokens": 5, "messages": [],
                                                "includeContext": "everything"}),
     Expect((Reply("s16", _BAD, deferred=True),))),
    ("unknown-notification", "JSONRPC-10",
     {"jsonrpc": "2.0", "method": "notifications/bogus", "params": {"x": 1}}, NOTHING),
    ("log-bad-level", "JSONRPC-10 LOGGING-4",
     {"jsonrpc": "2.0", "method": "notifications/message",
      "params": {"level": "verbose", "data": "x"}}, NOTHING),
    ("log-no-data", "JSONRPC-10 LOGGING-4",
     {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}},
     NOTHING),
    ("log-params-array", "JSONRPC-10 JSONRPC-14",
     {"jsonrpc": "2.0", "method": "notifications/message", "params": ["info"]}, NOTHING),
    ("updated-uri-number", "JSONRPC-10 RESOURCES-8",
     {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": 5}},
     NOTHING),
    ("progress-junk", "JSONRPC-10 PROGRESS",
     {"jsonrpc": "2.0", "method": "notifications/progress",
      "params": {"progressToken": "{rid-int}", "progress": "half"}}, NOTHING),
    ("progress-bool", "JSONRPC-10 PROGRESS",
     {"jsonrpc": "2.0", "method": "notifications/progress",
      "params": {"progressToken": "{rid-int}", "progress": True}}, NOTHING),
    ("progress-unknown-token", "JSONRPC-10 PROGRESS",
     {"jsonrpc": "2.0", "method": "notifications/progress",
      "params": {"progressToken": "never", "progress": 1}}, NOTHING),
    ("cancel-junk", "JSONRPC-10 CANCEL",
     {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": []}},
     NOTHING),
    ("list-changed-junk", "JSONRPC-10",
     {"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"x": 1}},
     NOTHING),
]


def _with_rid(value: Any, rid: int) -> Any:
    twins = {"{rid-int}": rid, "{rid}": str(rid), "{rid-float}": float(rid)}
    if isinstance(value, str) and value in twins:
        return twins[value]
    if isinstance(value, dict):
        return {key: _with_rid(item, rid) for key, item in value.items()}
    if isinstance(value, list):
        return [_with_rid(item, rid) for item in value]
    return value


@pytest.mark.parametrize(("name", "ids", "frame", "expect"), [
    pytest.param(*case, id=f"{case[0]}[{case[1].replace(' ', ',')}]") for case in CASES])
def test_client_answers_bad_input_and_its_calls_go_on(
        fake: FakeServer, wire: Any, name: str, ids: str, frame: Any, expect: Expect) -> None:
    """The digest ids of the case, JSONRPC-13, PING-2: the client answers the junk as the
    spec says (or not at all), its call in flight is untouched (answered neither by a
    broken response nor by one whose id has another JSON type), no handler or callback
    sees bad params, and both directions still work."""
    future, call = fake.start_call()
    assert isinstance(call["id"], int)
    frame = _with_rid(frame, call["id"])
    raw = frame if isinstance(frame, bytes) else json.dumps(frame).encode()
    with wire.allow_invalid():
        fake.exchange(raw, expect)
    assert not future.done(), future
    assert fake.sampled == [] and fake.logs == [] and fake.updated == []
    assert fake.progress == []
    fake.peer.send(_answer(call))
    assert future.result(5) == TOOL_RESULT
    fake.still_works()


def test_result_and_error_for_the_call_in_one_batch_jsonrpc_7_batch_6(
        fake: FakeServer) -> None:
    """BATCH-6, JSONRPC-7: a batch answering the call in flight completes it; a broken
    element beside it (both result and error) changes nothing."""
    future, call = fake.start_call()
    fake.exchange(json.dumps([
        {"jsonrpc": "2.0", "id": 424242, "result": {}, "error": {"code": 1, "message": "x"}},
        _answer(call)]).encode(), NOTHING)
    assert future.result(5) == TOOL_RESULT
    fake.still_works()


@pytest.mark.parametrize(("error", "code"), [
    ("boom", -32603), ({"code": "x", "message": "bad"}, -32603),
    ({"code": 1.5, "message": "bad"}, -32603), ({"code": True, "message": "bad"}, -32603),
    ({"message": "no code"}, -32603), ({"code": -32000}, -32000),
    ({"code": 2**70, "message": "huge"}, 2**70), ({"code": -1, "message": 5}, -1),
    ([], -32603), (None, -32603),
])
def test_error_of_the_wrong_shape_fails_the_call_with_a_typed_error_jsonrpc_8(
        fake: FakeServer, error: Any, code: int) -> None:
    """JSONRPC-8, AMBIG-19: an error answer for the call in flight whose ``error`` member
    is malformed still ends the call, with an RpcError carrying an int code (the one
    sent when it is an int, else -32603) and a str message; the client goes on."""
    future, call = fake.start_call()
    fake.exchange(json.dumps({"jsonrpc": "2.0", "id": call["id"], "error": error}).encode(),
                  NOTHING)
    with pytest.raises(RpcError) as raised:
        future.result(5)
    assert int(raised.value.code) == code
    assert isinstance(raised.value.message, str)
    fake.still_works()


def test_progress_with_junk_values_is_dropped_progress(fake: FakeServer) -> None:
    """PROGRESS, JSONRPC-10, AMBIG-9: progress notifications for the call in flight with
    values of the wrong type never reach the callback; a valid one does."""
    future, call = fake.start_call()
    token = call["params"]["_meta"]["progressToken"]
    for progress in ("1", None, [1], {"a": 1}, True):
        fake.exchange(json.dumps({"jsonrpc": "2.0", "method": "notifications/progress",
                                  "params": {"progressToken": token,
                                             "progress": progress}}).encode(), NOTHING)
    fake.exchange(json.dumps({"jsonrpc": "2.0", "method": "notifications/progress",
                              "params": {"progressToken": token, "progress": 1,
                                         "total": "ten", "message": 5}}).encode(), NOTHING)
    fake.peer.send(_answer(call))
    assert future.result(5) == TOOL_RESULT
    assert fake.progress == [(1, None, None)]


def test_server_reusing_a_request_id_while_in_flight_jsonrpc_4(fake: FakeServer) -> None:
    """JSONRPC-4, AMBIG-6: a server request reusing the id of one the client is still
    serving is refused with -32600 and never runs; the first is answered once."""
    gate = threading.Event()
    entered = threading.Event()

    def slow_sample(params: Any) -> dict[str, Any]:
        entered.set()
        gate.wait(10)
        return {"role": "assistant", "content": {"type": "text", "text": "hi"},
                "model": "fake"}

    fake.client._handlers.sampling_handler = slow_sample
    params = {"maxTokens": 5, "messages": [
        {"role": "user", "content": {"type": "text", "text": "x"}}]}
    fake.peer.send(request("dup", "sampling/createMessage", params))
    assert entered.wait(5)
    fake.exchange(json.dumps(request("dup", "sampling/createMessage", params)).encode(),
                  error(-32600, "dup"))
    gate.set()
    answer = fake.peer.receive()
    assert answer["id"] == "dup" and answer["result"]["model"] == "fake"
    fake.still_works()


def test_any_json_value_from_the_server_gets_what_the_oracle_says(
        fake: FakeServer, wire: Any) -> None:
    """JSONRPC-1/2/3/7/10/12/14, BATCH-3/5, AMBIG-3: any JSON value the server sends is
    answered by the client as ``expect_for`` says; the call in flight is untouched."""
    future, call = fake.start_call()

    @PROPERTY
    @given(value=json_values() | st.lists(json_values(4), max_size=3))
    def check(value: Any) -> None:
        fake.exchange(json.dumps(value).encode(),
                      expect_for(value, CLIENT_SERVED, server=False))

    with wire.allow_invalid():
        check()
    assert not future.done()
    fake.peer.send(_answer(call))
    assert future.result(5) == TOOL_RESULT
    fake.still_works()


# --- stdio: a server writing junk lines ----------------------------------------------------------


@pytest.mark.timeout(30)
def test_junk_lines_from_a_stdio_server_stdio_8_jsonrpc_12(wire: Any) -> None:
    """STDIO-8, JSONRPC-10/12/13, AMBIG-3: a server that writes invalid JSON, invalid
    UTF-8, non-objects, empty batches, answers to ids never sent, requests the client
    does not serve and lines over the client's ``max_message_size`` (64 KiB here)
    before each real answer: every call still gets its answer and ping works."""
    junk = [
        "{not json", "\udcff\udcfe", "42", "[]", "[1,2]", "null",
        '{"jsonrpc":"2.0","id":99999,"result":{}}',
        '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}',
        '{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}',
        '{"jsonrpc":"2.0","id":"s1","method":"bogus/method"}',
        '{"jsonrpc":"2.0","id":"s2","method":"sampling/createMessage","params":{}}',
        '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":1}}',
        "   ", "\r",
    ]
    logs: list[Any] = []
    # The client's answers to junk carry null ids (AMBIG-3), knowingly outside the schema.
    command = [sys.executable, HERE, "junk"]
    with wire.allow_invalid(), Client.stdio(command, max_message_size=64 * 1024, timeout=10,
                                            on_log=logs.append) as client:
        for round_ in range(3):
            answer = client.call_tool("emit", {"frames": junk, "oversize": 100_000})
            assert text_of(answer) == "done", round_
            client.ping()
        big = client.call_tool("emit", {"frames": ["x" * 60_000]})
        assert text_of(big) == "done"
    assert logs == []


# --- the SSE reader with large events ------------------------------------------------------


@pytest.mark.timeout(30)
def test_sse_parser_reads_a_large_event_in_linear_time_http_10_http_11() -> None:
    """HTTP-10/11 (large legitimate messages): a 4 MiB event fed in 1 KiB pieces (as a
    slow network delivers a large answer) arrives whole, and the parser never searches
    the same bytes twice: every piece without a line break only extends what it has
    already searched (rebuilding and rescanning the line on each piece is quadratic).
    """
    data = format_event("x" * (4 * 1024 * 1024))
    parser = SseParser()
    events = []
    searched = 0
    for start in range(0, len(data), 1024):
        piece = data[start:start + 1024]
        events += parser.feed(piece)
        if b"\n" not in piece:
            assert parser._scanned == searched + len(piece)
        searched = parser._scanned
    assert len(events) == 1 and len(events[0].data) == 4 * 1024 * 1024


def test_second_answer_to_the_same_call_is_ignored_jsonrpc_13(fake: FakeServer) -> None:
    """JSONRPC-13: a call is completed by its first answer; a second one for the same id
    (a result or an error) is ignored and answered with nothing."""
    future, call = fake.start_call()
    fake.peer.send(_answer(call))
    assert future.result(5) == TOOL_RESULT
    fake.exchange(json.dumps({"jsonrpc": "2.0", "id": call["id"],
                              "result": {"content": []}}).encode(), NOTHING)
    fake.exchange(json.dumps({"jsonrpc": "2.0", "id": call["id"],
                              "error": {"code": -32603, "message": "late"}}).encode(), NOTHING)
    assert future.result(0) == TOOL_RESULT
    fake.still_works()
