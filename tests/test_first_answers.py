"""A connection's first answers build only the code for what they hold, and a client
builds what it needs to read the ``initialize`` answer while it waits for it.

The decoding and encoding of each wire class is compiled when first needed. A one-item tool
result must not compile the code for the other kinds of content, nor the one-loop form of
a whole content list (``_convert.INLINE_FROM``): that compiling was most of the time of a
connection's first call, which a script that connects, calls once and exits waits for.
What is compiled, not how long it takes, is checked here, in a fresh interpreter each
time, as the converter keeps what it compiled.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mcp_sync import _convert

ROOT = Path(__file__).resolve().parent.parent

SESSION = """
import builtins, json, sys
from mcp_sync import Server, types
from mcp_sync.testing import open_client

server = Server("first")

@server.tool()
def items(n: int) -> list[types.TextContent]:
    return [types.TextContent(text=f"item {i}") for i in range(n)]

compiled = []
real_compile = builtins.compile

def recording_compile(source, filename, *args, **kwargs):
    compiled.append(str(filename))
    return real_compile(source, filename, *args, **kwargs)

with open_client(server) as client:
    builtins.compile = recording_compile
    try:
        for n in sys.argv[1:]:
            assert len(client.call_tool("items", {"n": int(n)}).content) == int(n)
    finally:
        builtins.compile = real_compile
print(json.dumps(compiled))
"""


def _compiled_by_calls(*counts: int) -> list[str]:
    done = subprocess.run([sys.executable, "-c", SESSION, *map(str, counts)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=True)
    labels: list[str] = json.loads(done.stdout)
    return labels


def _for_other_kinds_or_whole_lists(labels: list[str]) -> list[str]:
    return [label for label in labels
            if "list" in label or any(kind in label for kind in (
                "ImageContent", "AudioContent", "EmbeddedResource", "ResourceContents"))]


def test_a_first_short_answer_compiles_only_its_own_classes() -> None:
    labels = _compiled_by_calls(1, 2)
    # The recording sees what the call compiles: the text item's own decoding.
    assert "<mcp_sync fast structure TextContent>" in labels
    assert _for_other_kinds_or_whole_lists(labels) == []


def test_a_long_list_compiles_its_one_loop_forms() -> None:
    labels = _compiled_by_calls(1, _convert.INLINE_FROM)
    found = _for_other_kinds_or_whole_lists(labels)
    # Written by the server, used up by the client: each whole list's form, once.
    assert [label for label in found if "list" in label] == [
        "<mcp_sync list text TextContent|ImageContent|AudioContent|EmbeddedResource|"
        "UnknownContent>",
        "<mcp_sync fast structure consuming list of TextContent|ImageContent|AudioContent|"
        "EmbeddedResource>",
    ]


WAITING_CLIENT = """
import builtins, json, sys, threading
import mcp_sync.client
from mcp_sync import Client
from mcp_sync.transports.memory import memory_pair

prepared = threading.Event()
answered = threading.Event()
compiled = []
compiled_after_answer = []
real_compile = builtins.compile
real_prepare = mcp_sync.client.prepare_decoding

def watching_compile(source, filename, *args, **kwargs):
    code = real_compile(source, filename, *args, **kwargs)
    compiled.append(str(filename))
    if answered.is_set():
        compiled_after_answer.append(str(filename))
    return code

# Done when the whole preparation is: the classes of the answer's members are compiled
# after the answer's own, and an answer sent between the two would count them as late.
def watching_prepare(cls):
    real_prepare(cls)
    if "<mcp_sync fast structure InitializeResult>" in compiled:
        prepared.set()

builtins.compile = watching_compile
mcp_sync.client.prepare_decoding = watching_prepare
client_end, server_end = memory_pair()
connected = []
connecting = threading.Thread(target=lambda: connected.append(Client(client_end, timeout=30)))
connecting.start()
request = json.loads(server_end.read_frame(timeout=30))
# The client prepares its decoding of the answer before the answer exists.
ready_early = prepared.wait(10)
answered.set()
server_end.write_frame(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {
    "protocolVersion": request["params"]["protocolVersion"], "capabilities": {"tools": {}},
    "serverInfo": {"name": "slow", "version": "1"}}}).encode())
assert json.loads(server_end.read_frame(timeout=30))["method"] == "notifications/initialized"
connecting.join(30)
late = [label for label in compiled_after_answer if "fast structure" in label]
print(json.dumps([ready_early, connected[0].server_info.name, late]))
connected[0].close()
server_end.close()
"""


def test_a_client_prepares_to_read_the_initialize_answer_while_it_waits_lifecycle_2() -> None:
    done = subprocess.run([sys.executable, "-c", WAITING_CLIENT], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=True)
    # Its members' classes too: reading the answer compiled no decoding.
    assert json.loads(done.stdout) == [True, "slow", []]
