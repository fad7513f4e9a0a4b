"""Shared parts of the bad-input suite: the server under test, an oracle that says what a
frame must be answered with, raw peers over memory and stdio, and the table of cases.

Run as a script, this module is a server or a fake server for stdio tests (it imports
nothing from ``tests``):

* ``bad_input_support.py server MAX``: the server of :func:`make_server` on stdin/stdout,
  refusing lines longer than MAX bytes.
* ``bad_input_support.py junk``: a hand-written fake MCP server (no mcp_sync) whose tool
  ``emit`` writes the frames it is given, verbatim, before its answer.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterable
from typing import Any

import attrs

from mcp_sync import Server
from mcp_sync.errors import ResourceNotFound

HERE = os.path.abspath(__file__)

# --- the server under test -----------------------------------------------------------------

_gates: dict[str, threading.Event] = {}
_gates_lock = threading.Lock()


def _gate(key: str) -> threading.Event:
    with _gates_lock:
        return _gates.setdefault(key, threading.Event())


def make_server() -> Server:
    """Tools, a resource, two templates, a prompt with a completer, logging.

    ``block(key)`` holds its request in flight until ``release(key)`` is called (both
    work across processes, for the id-reuse cases over stdio). Pages hold 2 items, so
    every list has a cursor to tamper with.
    """
    server = Server("bad-input", version="1", page_size=2)

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def echo(text: str) -> str:
        """Return the text."""
        return text

    @server.tool()
    def block(key: str) -> str:
        """Wait (at most 10 s) until release(key)."""
        released = _gate(key).wait(10)
        return "released" if released else "timed out"

    @server.tool()
    def release(key: str) -> str:
        """Let block(key) return."""
        _gate(key).set()
        return "ok"

    @server.resource("config://app")
    def config() -> dict[str, Any]:
        return {"debug": False}

    @server.resource("users://{user_id}/profile")
    def profile(user_id: int) -> dict[str, Any]:
        if user_id > 1000:
            raise ResourceNotFound(f"no user {user_id}", {"uri": f"users://{user_id}/profile"})
        return {"id": user_id}

    @server.resource("files:///{+path}")
    def files(path: str) -> str:
        return f"contents of {path}"

    @server.prompt(complete={"code": lambda value: [c for c in ("print", "pass") if
                                                      c.startswith(value)]})
    def review(code: str) -> str:
        """Review code."""
        return f"Review: {code}"

    return server


#: Every request method the server of :func:`make_server` answers after initialization.
SERVED = frozenset({
    "tools/list", "tools/call", "resources/list", "resources/templates/list",
    "resources/read", "resources/subscribe", "resources/unsubscribe", "prompts/list",
    "prompts/get", "completion/complete", "logging/setLevel",
})

INITIALIZE = {
    "jsonrpc": "2.0", "id": "init", "method": "initialize",
    "params": {"protocolVersion": "2025-03-26", "capabilities": {},
               "clientInfo": {"name": "bad-input", "version": "0"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def text_of(result: Any) -> str:
    """The text of a tool result's first content item."""
    return str(result.content[0].text)


def request(request_id: Any, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


#: 20 MiB of text with non-ASCII characters, escapes and U+2028 spread through it.
LARGE_TEXT = ("0123456789abcdef" * 64 + "é✓\n\"\\\t\u2028\x00") * (20 * 1024 * 1024 // 1041)

# --- the oracle -----------------------------------------------------------------------------


@attrs.frozen
class Reply:
    """One answer the peer owes: its id, the error codes allowed, whether a result is.

    ``deferred`` answers come from a worker, so they may arrive after a later ping's.
    """

    id: Any
    codes: frozenset[int] = frozenset()
    result: bool = False
    deferred: bool = False


@attrs.frozen
class Expect:
    """What one frame must be answered with: nothing, one reply, or one array of them."""

    replies: tuple[Reply, ...] = ()
    batch: bool = False

    @property
    def deferred(self) -> bool:
        return any(reply.deferred for reply in self.replies)

    @property
    def frames(self) -> int:
        return 1 if self.batch else len(self.replies)


NOTHING = Expect()


def error(code: int | Iterable[int], request_id: Any = None) -> Expect:
    codes = frozenset([code] if isinstance(code, int) else code)
    return Expect((Reply(request_id, codes),))


def result(request_id: Any, *, deferred: bool = False) -> Expect:
    return Expect((Reply(request_id, result=True, deferred=deferred),))


def batch(*replies: Reply) -> Expect:
    return Expect(tuple(replies), batch=True)


def is_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def answer_like(value: Any) -> bool:
    if not isinstance(value, dict) or value.get("jsonrpc") != "2.0" or "method" in value:
        return False
    if "error" in value:
        return "result" not in value
    return ("result" in value and isinstance(value["result"], dict)
            and is_id(value.get("id")))


def call_like(value: Any) -> bool:
    return (isinstance(value, dict) and value.get("jsonrpc") == "2.0"
            and isinstance(value.get("method"), str) and "result" not in value
            and "error" not in value and ("id" not in value or is_id(value["id"]))
            and (value.get("params") is None or isinstance(value["params"], dict)))


#: The requests a client with roots and a sampling handler serves.
CLIENT_SERVED = frozenset({"roots/list", "sampling/createMessage"})


def expect_for(value: Any, served: frozenset[str] = SERVED, *,
               server: bool = True) -> Expect:
    """What an initialized peer serving ``served`` must answer ``value`` with: by
    default a server of :func:`make_server`, with ``server=False`` a client.

    The rules: JSONRPC-1…14, BATCH-3/5, AMBIG-3 (an id that cannot be read is answered
    as null), JSONRPC-10 (nothing that lacks an id is ever answered), LIFECYCLE/AMBIG-6
    (a second initialize is -32600 at a server; a client serves no initialize),
    CAPS-7 (unknown methods -32601).
    """
    if isinstance(value, list):
        if not value:
            return error(-32600)
        if any(call_like(v) for v in value) and any(answer_like(v) for v in value):
            return error(-32600)
        replies = tuple(reply for item in value for reply in _element(item, served, server))
        return Expect(replies, batch=bool(replies))
    return Expect(tuple(_element(value, served, server)))


def _element(value: Any, served: frozenset[str], server: bool) -> list[Reply]:
    invalid = frozenset({-32600})
    if not isinstance(value, dict):
        return [Reply(None, invalid)]
    has_id = "id" in value
    raw_id = value.get("id")
    reply_id = raw_id if is_id(raw_id) else None
    if value.get("jsonrpc") != "2.0":
        if "method" in value:
            return [Reply(reply_id, invalid)] if has_id else []
        if has_id or "result" in value or "error" in value:
            return []  # a broken answer: answering it could start an endless exchange
        return [Reply(None, invalid)]
    if "method" not in value:
        if has_id or "result" in value or "error" in value:
            return []
        return [Reply(None, invalid)]
    if not has_id:
        return []
    method = value["method"]
    if not isinstance(method, str) or "result" in value or "error" in value:
        return [Reply(reply_id, invalid)]
    if not is_id(raw_id):
        return [Reply(None, invalid)]
    params = value.get("params")
    if params is not None and not isinstance(params, dict):
        return [Reply(raw_id, frozenset({-32600, -32602}))]
    if method == "ping":
        return [Reply(raw_id, result=True)]
    if method == "initialize" and server:
        return [Reply(raw_id, invalid)]
    if method not in served:
        return [Reply(raw_id, frozenset({-32601}))]
    return [Reply(raw_id, frozenset({-32602, -32002}), result=True, deferred=True)]


# --- checking what came back ----------------------------------------------------------------


def same_id(found: Any, wanted: Any) -> bool:
    """JSONRPC-6: the same value and the same JSON type."""
    return found == wanted and type(found) is type(wanted)


def _fits(frame: Any, reply: Reply) -> bool:
    if not isinstance(frame, dict) or frame.get("jsonrpc") != "2.0":
        return False
    if not same_id(frame.get("id"), reply.id):
        return False
    if ("result" in frame) == ("error" in frame):  # JSONRPC-7
        return False
    if "result" in frame:
        return reply.result and isinstance(frame["result"], dict)
    problem = frame["error"]
    return (isinstance(problem, dict) and type(problem.get("code")) is int
            and isinstance(problem.get("message"), str) and problem["code"] in reply.codes)


def check_frames(frames: list[Any], expect: Expect, what: Any) -> None:
    """Assert that ``frames`` (everything answered to ``what``) is what ``expect`` says."""
    assert len(frames) == expect.frames, (
        f"{what!r:.300}: expected {expect.frames} frame(s), got {frames!r:.600}")
    if not frames:
        return
    if expect.batch:
        items = frames[0]
        assert isinstance(items, list), f"{what!r:.300}: expected an array, got {items!r:.300}"
    else:
        items = frames
    assert len(items) == len(expect.replies), f"{what!r:.300}: {items!r:.600}"
    left = list(expect.replies)
    for item in items:
        match = next((reply for reply in left if _fits(item, reply)), None)
        assert match is not None, f"{what!r:.300}: unexpected {item!r:.300}; wanted {left}"
        left.remove(match)


# --- raw peers --------------------------------------------------------------------------------


class StdioPeer:
    """A child process spoken to with raw lines: the wire as it is."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, HERE, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin = self.process.stdin
        self.stdout = self.process.stdout
        self.lines: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self._reader = threading.Thread(target=self._read, name="test:stdio-peer:stdout")
        self._reader.start()

    def _read(self) -> None:
        for line in self.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def send(self, message: Any) -> None:
        """A JSON value, or bytes sent as they are; a newline ends the line."""
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.stdin.write(data + b"\n")
        self.stdin.flush()

    def receive(self, timeout: float = 10.0) -> Any:
        line = self.lines.get(timeout=timeout)
        if not line:
            raise EOFError("the server closed its stdout")
        return json.loads(line)

    def close(self) -> int:
        """Close stdin and wait: a server that kept serving exits with 0 (SHUTDOWN-1)."""
        self.stdin.close()
        try:
            code = self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait(10)
        self._reader.join(10)
        self.stdout.close()
        return code


class Barrier:
    """Pings after each case: their answers prove the peer still serves, and mark the
    point by which every answer the reader writes itself has been written."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.count = 0

    def exchange(self, peer: Any, frame: Any, expect: Expect, timeout: float = 10.0) -> None:
        """Send ``frame`` and a ping; check the answers against ``expect``."""
        self.count += 1
        barrier_id = f"{self.name}-barrier-{self.count}"
        peer.send(frame)
        peer.send(request(barrier_id, "ping"))
        frames: list[Any] = []
        pinged = False
        while not pinged or (expect.deferred and len(frames) < expect.frames):
            found = peer.receive(timeout)
            if isinstance(found, dict) and found.get("id") == barrier_id:
                assert found == {"jsonrpc": "2.0", "id": barrier_id, "result": {}}, found
                pinged = True
            else:
                frames.append(found)
        check_frames(frames, expect, frame)


# --- the table of cases -------------------------------------------------------------------------


@attrs.frozen
class Case:
    """One bad input for an initialized server: what to send, which requirement it checks
    (digest ids), the answer over memory and stdio, and the HTTP status of its POST."""

    name: str
    ids: str
    frame: Any
    expect: Expect
    http: int
    stdio: bool = True


def _ping(request_id: Any, **extra: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "ping", **extra}


def _call(request_id: Any, method: str, params: Any) -> dict[str, Any]:
    return request(request_id, method, params)


def _tool(request_id: Any, params: Any) -> dict[str, Any]:
    return _call(request_id, "tools/call", params)


BAD_PARAMS = frozenset({-32602})


def server_cases() -> list[Case]:
    """Everything a server must answer (or ignore) and go on serving after."""
    cases = [
        # JSONRPC-12, STDIO-8: not JSON at all
        Case("invalid-json", "JSONRPC-12 STDIO-8 AMBIG-3", b"{bad json", error(-32700), 400),
        Case("truncated-json", "JSONRPC-12", b'{"jsonrpc":"2.0","id":1,"method":"ping"',
             error(-32700), 400),
        Case("invalid-utf8", "JSONRPC-12", b'{"jsonrpc":"2.0","id":1,"method":"p\xffng"}',
             error(-32700), 400),
        Case("overlong-utf8", "JSONRPC-12", b'{"jsonrpc":"2.0","id":1,"method":"\xc0\xafping"}',
             error(-32700), 400),
        Case("nan", "JSONRPC-12", b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}',
             error(-32700), 400),
        Case("huge-number", "JSONRPC-12", b'{"jsonrpc":"2.0","id":1e999,"method":"ping"}',
             error(-32700), 400),
        Case("deep-nesting", "JSONRPC-12", b"[" * 100_000 + b"]" * 100_000,
             error(-32700), 400),
        Case("whitespace-only", "JSONRPC-12", b"  \t ", error(-32700), 400, stdio=False),
        Case("nul-bytes", "JSONRPC-12", b"\x00\x00", error(-32700), 400),
        # JSONRPC-1: not an object
        Case("number", "JSONRPC-1 AMBIG-3", 42, error(-32600), 400),
        Case("string", "JSONRPC-1 AMBIG-3", "ping", error(-32600), 400),
        Case("null", "JSONRPC-1 AMBIG-3", None, error(-32600), 400),
        Case("true", "JSONRPC-1 AMBIG-3", True, error(-32600), 400),
        Case("float", "JSONRPC-1 AMBIG-3", 1.5, error(-32600), 400),
        # BATCH-5: arrays of junk, empty batch
        Case("empty-batch", "BATCH-5", [], error(-32600), 400),
        Case("batch-of-junk", "BATCH-5 JSONRPC-1", [1, "x", None],
             batch(*[Reply(None, frozenset({-32600}))] * 3), 200),
        Case("batch-of-empty-batch", "BATCH-5", [[]], batch(Reply(None, frozenset({-32600}))),
             200),
        Case("mixed-batch", "BATCH-5 BATCH-1", [_ping("b1"), 7, _ping(2)],
             batch(Reply("b1", result=True), Reply(None, frozenset({-32600})),
                   Reply(2, result=True)), 200),
        Case("batch-of-notifications", "BATCH-5 JSONRPC-10",
             [{"jsonrpc": "2.0", "method": "notifications/bogus"},
              {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}],
             NOTHING, 202),
        Case("batch-requests-and-responses", "BATCH-3",
             [_ping("b3"), {"jsonrpc": "2.0", "id": 5, "result": {}}], error(-32600), 400),
        Case("batch-with-initialize", "BATCH-4 AMBIG-5", [INITIALIZE, _ping("b4")],
             batch(Reply("init", frozenset({-32600})), Reply("b4", result=True)), 200),
        Case("batch-with-bad-request", "BATCH-5 JSONRPC-12",
             [_call("b5", "tools/call", {"name": 5}), _call("b6", "bogus/method", {})],
             batch(Reply("b5", BAD_PARAMS, deferred=True), Reply("b6", frozenset({-32601}))),
             200),
        # JSONRPC-1: the jsonrpc member
        Case("jsonrpc-missing", "JSONRPC-1", {"id": 1, "method": "ping"}, error(-32600, 1), 400),
        Case("jsonrpc-1.0", "JSONRPC-1", _ping(1, jsonrpc="1.0"), error(-32600, 1), 400),
        Case("jsonrpc-number", "JSONRPC-1", _ping("n", jsonrpc=2.0), error(-32600, "n"), 400),
        Case("jsonrpc-null", "JSONRPC-1", _ping(3, jsonrpc=None), error(-32600, 3), 400),
        Case("jsonrpc-wrong-notification", "JSONRPC-1 JSONRPC-10",
             {"jsonrpc": "1.0", "method": "notifications/bogus"}, NOTHING, 400),
        # JSONRPC-2/3: ids
        Case("id-null", "JSONRPC-3 AMBIG-3", _ping(None), error(-32600), 400),
        Case("id-true", "JSONRPC-2 AMBIG-3", _ping(True), error(-32600), 400),
        Case("id-false", "JSONRPC-2 AMBIG-3", _ping(False), error(-32600), 400),
        Case("id-float", "JSONRPC-2 AMBIG-3", _ping(1.5), error(-32600), 400),
        Case("id-integral-float", "JSONRPC-2 AMBIG-3", _ping(2.0), error(-32600), 400),
        Case("id-object", "JSONRPC-2 AMBIG-3", _ping({"a": 1}), error(-32600), 400),
        Case("id-array", "JSONRPC-2 AMBIG-3", _ping([1]), error(-32600), 400),
        Case("id-string", "JSONRPC-2 JSONRPC-6", _ping("1"), result("1"), 200),
        Case("id-empty-string", "JSONRPC-2 JSONRPC-6", _ping(""), result(""), 200),
        Case("id-zero", "JSONRPC-2 JSONRPC-6", _ping(0), result(0), 200),
        Case("id-negative", "JSONRPC-2 JSONRPC-6", _ping(-7), result(-7), 200),
        Case("id-huge", "JSONRPC-2 JSONRPC-6", _ping(2**64 + 1), result(2**64 + 1), 200),
        # envelopes of the wrong shape
        Case("empty-object", "JSONRPC-1", {}, error(-32600), 400),
        Case("only-jsonrpc", "JSONRPC-1", {"jsonrpc": "2.0"}, error(-32600), 400),
        Case("method-number", "JSONRPC-1", {"jsonrpc": "2.0", "id": 4, "method": 5},
             error(-32600, 4), 400),
        Case("method-null", "JSONRPC-1", {"jsonrpc": "2.0", "id": 4, "method": None},
             error(-32600, 4), 400),
        Case("request-with-result", "JSONRPC-7", _ping(6, result={}), error(-32600, 6), 400),
        Case("id-without-method", "JSONRPC-7 AMBIG-3", {"jsonrpc": "2.0", "id": 8},
             NOTHING, 400),
        # JSONRPC-12, CAPS-7: unknown methods
        Case("unknown-method", "JSONRPC-12 CAPS-7", _call(9, "bogus/method", {}),
             error(-32601, 9), 200),
        Case("unknown-method-server-discover", "JSONRPC-12", _call(10, "server/discover", None),
             error(-32601, 10), 200),
        Case("client-method-to-server", "JSONRPC-12 CAPS-7", _call(11, "roots/list", None),
             error(-32601, 11), 200),
        Case("empty-method", "JSONRPC-12", _call(12, "", None), error(-32601, 12), 200),
        # JSONRPC-10: notifications are never answered
        Case("unknown-notification", "JSONRPC-10",
             {"jsonrpc": "2.0", "method": "notifications/bogus"}, NOTHING, 202),
        Case("notification-array-params", "JSONRPC-10 JSONRPC-14",
             {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": [1]},
             NOTHING, 400),
        Case("cancel-bad-params", "JSONRPC-10 CANCEL-7",
             {"jsonrpc": "2.0", "method": "notifications/cancelled",
              "params": {"requestId": {"x": 1}}}, NOTHING, 202),
        Case("cancel-unknown-id", "JSONRPC-10",
             {"jsonrpc": "2.0", "method": "notifications/cancelled",
              "params": {"requestId": "never-sent"}}, NOTHING, 202),
        Case("progress-bad-params", "JSONRPC-10",
             {"jsonrpc": "2.0", "method": "notifications/progress",
              "params": {"progressToken": None, "progress": "half"}}, NOTHING, 202),
        Case("initialized-again", "JSONRPC-10 LIFECYCLE-4",
             {"jsonrpc": "2.0", "method": "notifications/initialized", "params": {"x": []}},
             NOTHING, 202),
        Case("roots-changed-junk", "JSONRPC-10",
             {"jsonrpc": "2.0", "method": "notifications/roots/list_changed", "params": {
                 "junk": 1}}, NOTHING, 202),
        # JSONRPC-13, AMBIG-3: answers to requests never sent are ignored
        Case("response-unknown-id", "JSONRPC-13 AMBIG-3",
             {"jsonrpc": "2.0", "id": 99, "result": {}}, NOTHING, 202),
        Case("error-unknown-id", "JSONRPC-13 AMBIG-3",
             {"jsonrpc": "2.0", "id": "x", "error": {"code": -32600, "message": "no"}},
             NOTHING, 202),
        Case("error-null-id", "AMBIG-3",
             {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse"}},
             NOTHING, 202),
        Case("response-result-and-error", "JSONRPC-7",
             {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "x"}},
             NOTHING, 400),
        Case("response-result-not-object", "JSONRPC-8",
             {"jsonrpc": "2.0", "id": 1, "result": [1]}, NOTHING, 400),
        Case("error-wrong-shape", "JSONRPC-8",
             {"jsonrpc": "2.0", "id": 1, "error": "boom"}, NOTHING, 202),
        # JSONRPC-14: params of the wrong type
        Case("ping-params-array", "JSONRPC-14", _ping(13, params=[]), error(BAD_PARAMS, 13), 400),
        Case("ping-params-string", "JSONRPC-14", _ping(14, params="x"),
             error(BAD_PARAMS, 14), 400),
        Case("ping-params-number", "JSONRPC-14", _ping(15, params=1), error(BAD_PARAMS, 15), 400),
        Case("ping-params-extra", "JSONRPC-14 PING-2", _ping(16, params={"x": 1}), result(16),
             200),
        Case("tools-call-params-array", "JSONRPC-14", _tool(17, ["add", {}]),
             error(BAD_PARAMS, 17), 400),
        Case("unknown-method-params-string", "JSONRPC-14", _call(18, "bogus", "x"),
             error({-32601, -32602}, 18), 400),
        Case("initialize-again", "LIFECYCLE-1 AMBIG-6", INITIALIZE, error(-32600, "init"), 200),
        Case("initialize-again-bad-params", "LIFECYCLE-1 AMBIG-6",
             _call("init2", "initialize", {"protocolVersion": 5}), error(-32600, "init2"), 200),
    ]
    deferred_bad = [
        ("tools-call-no-params", "TOOLS-7", "tools/call", None),
        ("tools-call-empty", "TOOLS-7", "tools/call", {}),
        ("tools-call-name-number", "TOOLS-7", "tools/call", {"name": 5}),
        ("tools-call-name-null", "TOOLS-7", "tools/call", {"name": None}),
        ("tools-call-unknown-tool", "TOOLS-7", "tools/call", {"name": "nope"}),
        ("tools-call-arguments-string", "TOOLS-7 TOOLS-11", "tools/call",
         {"name": "add", "arguments": "a=1"}),
        ("tools-call-arguments-array", "TOOLS-7 TOOLS-11", "tools/call",
         {"name": "add", "arguments": [1, 2]}),
        ("tools-call-argument-type", "TOOLS-7 TOOLS-11", "tools/call",
         {"name": "add", "arguments": {"a": "one", "b": 2}}),
        ("tools-call-argument-bool", "TOOLS-7 TOOLS-11", "tools/call",
         {"name": "add", "arguments": {"a": True, "b": 2}}),
        ("tools-call-argument-missing", "TOOLS-7 TOOLS-11", "tools/call",
         {"name": "add", "arguments": {"a": 1}}),
        ("tools-call-argument-unknown", "TOOLS-7 TOOLS-11", "tools/call",
         {"name": "echo", "arguments": {"text": "x", "extra": 1}}),
        ("resources-read-no-params", "RESOURCES-3", "resources/read", None),
        ("resources-read-uri-number", "RESOURCES-3", "resources/read", {"uri": 5}),
        ("resources-read-uri-object", "RESOURCES-3", "resources/read", {"uri": {"a": 1}}),
        ("prompts-get-empty", "PROMPTS-6", "prompts/get", {}),
        ("prompts-get-name-number", "PROMPTS-6", "prompts/get", {"name": 1}),
        ("prompts-get-unknown", "PROMPTS-6", "prompts/get", {"name": "nope"}),
        ("prompts-get-arguments-string", "PROMPTS-3", "prompts/get",
         {"name": "review", "arguments": "code"}),
        ("prompts-get-argument-number", "PROMPTS-3", "prompts/get",
         {"name": "review", "arguments": {"code": 5}}),
        ("prompts-get-argument-missing", "PROMPTS-6", "prompts/get",
         {"name": "review", "arguments": {}}),
        ("prompts-get-argument-unknown", "PROMPTS-6", "prompts/get",
         {"name": "review", "arguments": {"code": "x", "other": "y"}}),
        ("complete-empty", "COMPLETION-5", "completion/complete", {}),
        ("complete-ref-type", "COMPLETION-5", "completion/complete",
         {"ref": {"type": "ref/bogus", "name": "review"}, "argument": {"name": "code",
                                                                      "value": ""}}),
        ("complete-ref-string", "COMPLETION-5", "completion/complete",
         {"ref": "review", "argument": {"name": "code", "value": ""}}),
        ("complete-unknown-prompt", "COMPLETION-5", "completion/complete",
         {"ref": {"type": "ref/prompt", "name": "nope"},
          "argument": {"name": "code", "value": ""}}),
        ("complete-unknown-template", "COMPLETION-5", "completion/complete",
         {"ref": {"type": "ref/resource", "uri": "nope://{x}"},
          "argument": {"name": "x", "value": ""}}),
        ("complete-argument-missing", "COMPLETION-5", "completion/complete",
         {"ref": {"type": "ref/prompt", "name": "review"}}),
        ("complete-value-number", "COMPLETION-5", "completion/complete",
         {"ref": {"type": "ref/prompt", "name": "review"},
          "argument": {"name": "code", "value": 5}}),
        ("set-level-empty", "LOGGING-6", "logging/setLevel", {}),
        ("set-level-unknown", "LOGGING-6", "logging/setLevel", {"level": "verbose"}),
        ("set-level-number", "LOGGING-6", "logging/setLevel", {"level": 3}),
        ("set-level-array", "LOGGING-6", "logging/setLevel", {"level": ["info"]}),
        ("set-level-case", "LOGGING-6", "logging/setLevel", {"level": "INFO"}),
        ("tools-list-cursor-garbage", "PAGINATION-5", "tools/list", {"cursor": "garbage"}),
        ("tools-list-cursor-number", "PAGINATION-5", "tools/list", {"cursor": 5}),
        ("tools-list-cursor-empty", "PAGINATION-5", "tools/list", {"cursor": ""}),
        ("tools-list-cursor-non-ascii", "PAGINATION-5", "tools/list", {"cursor": "é✓"}),
        ("tools-list-cursor-far", "PAGINATION-5", "tools/list", {"cursor": "dG9vbHM6OTk5"}),
        ("tools-list-cursor-other-list", "PAGINATION-5", "tools/list",
         {"cursor": "cHJvbXB0czoy"}),
        ("resources-list-cursor", "PAGINATION-5", "resources/list", {"cursor": "x"}),
        ("templates-list-cursor", "PAGINATION-5", "resources/templates/list",
         {"cursor": "dG9vbHM6Mg=="}),
        ("prompts-list-cursor", "PAGINATION-5", "prompts/list", {"cursor": ["x"]}),
        ("subscribe-uri-number", "RESOURCES-7", "resources/subscribe", {"uri": 5}),
    ]
    for number, (name, ids, method, params) in enumerate(deferred_bad):
        request_id = f"bad-{number}"
        cases.append(Case(name, f"JSONRPC-12 {ids}", _call(request_id, method, params),
                          Expect((Reply(request_id, BAD_PARAMS, deferred=True),)), 200))
    # RESOURCES-9: unknown is -32002; a URI that is no URI at all may also be -32602.
    unknown, malformed = frozenset({-32002}), frozenset({-32002, -32602})
    not_found = [
        ("resources-read-unknown", "nope://x", unknown),
        ("resources-read-empty", "", malformed),
        ("resources-read-malformed", "not a uri at all", malformed),
        ("resources-read-bracket", "http://[::1", malformed),
        ("resources-read-nul", "config://app\x00", malformed),
        ("resources-read-template-bad-param", "users://abc/profile", unknown),
        ("resources-read-template-missing-param", "users:///profile", unknown),
        ("resources-read-template-extra-segment", "users://1/2/profile", unknown),
        ("resources-read-template-traversal", "files:///../etc/passwd", unknown),
        ("resources-read-template-not-found", "users://5000/profile", unknown),
        ("resources-read-template-itself", "users://{user_id}/profile", unknown),
    ]
    for number, (name, uri, codes) in enumerate(not_found):
        read_id = 1000 + number
        cases.append(Case(name, "RESOURCES-9 RESOURCES-11", _call(
            read_id, "resources/read", {"uri": uri}),
            Expect((Reply(read_id, codes, deferred=True),)), 200))
    return cases


# --- the stdio scripts ----------------------------------------------------------------------------


def _serve_stdio(max_size: int) -> None:
    from mcp_sync.transports.stdio import StdioServerTransport

    connection = make_server().connect(StdioServerTransport(max_message_size=max_size))
    try:
        connection.wait_closed()
    finally:
        connection.close()


def _junk_server() -> None:
    """A fake server: ``emit`` writes its ``frames`` (and an ``oversize`` line) verbatim."""
    def send(data: bytes) -> None:
        os.write(1, data + b"\n")

    def answer(request_id: Any, result: dict[str, Any]) -> None:
        send(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode())

    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or "method" not in message or "id" not in message:
            continue  # notifications, and the client's answers to what we emitted
        method = message["method"]
        params = message.get("params") or {}
        if method == "initialize":
            answer(message["id"], {
                "protocolVersion": "2025-03-26", "capabilities": {"tools": {}},
                "serverInfo": {"name": "junk", "version": "0"}})
        elif method == "ping":
            answer(message["id"], {})
        elif method == "tools/call":
            arguments = params.get("arguments") or {}
            for frame in arguments.get("frames", []):
                send(frame.encode("utf-8", "surrogateescape"))
            if arguments.get("oversize"):
                send(b'{"jsonrpc":"2.0","id":' + json.dumps(message["id"]).encode()
                     + b',"result":{"x":"' + b"x" * int(arguments["oversize"]) + b'"}}')
            answer(message["id"], {"content": [{"type": "text", "text": "done"}]})


if __name__ == "__main__":
    if sys.argv[1] == "server":
        _serve_stdio(int(sys.argv[2]))
    else:
        _junk_server()
