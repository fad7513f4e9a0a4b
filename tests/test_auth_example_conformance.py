"""The official conformance suite's authorization-server scenarios against the
authorization server of examples/auth_server.py (``--auto-approve``, a child process).

``conformance authorization`` checks the RFC 8414 metadata document
(``authorization-server-metadata-endpoint``) and runs an authorization code grant with
PKCE S256 and the resource indicator (``authorization-code-grant``): it prints the
authorization URL for a browser and waits for the redirect on its own callback server;
here the "browser" is a GET that follows the redirect. Needs the suite installed by
``.ci/conformance install``; skipped without it.
"""

from __future__ import annotations

import queue
import re
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.auth_example_helpers import HTTP_TIMEOUT, AuthExample, running_auth_example
from tests.helpers import wait_until_listening
from tests.scaleout_helpers import free_port
from tests.test_conformance import NODE, SUITE

pytestmark = [
    pytest.mark.timeout(150),
    pytest.mark.skipif(not (NODE.exists() and SUITE.exists()),
                       reason="the conformance suite is not installed (.ci/conformance install)"),
]

SCENARIOS = ("authorization-server-metadata-endpoint", "authorization-code-grant")
LINE_BOUND = 60.0


@pytest.fixture
def example(tmp_path: Path) -> Iterator[AuthExample]:
    with running_auth_example(tmp_path / "auth_server.log", auto_approve=True) as running:
        yield running


class SuiteRun:
    """The suite in a child process; its output read line by line on a thread."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True, encoding="utf-8", errors="replace")
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        self._reader = threading.Thread(target=self._read, name="conformance-output")
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def wait_for(self, pattern: str) -> re.Match[str]:
        """The first line (from here on) matching ``pattern``."""
        while True:
            line = self.lines.get(timeout=LINE_BOUND)
            if line is None:
                raise AssertionError(f"the suite ended before {pattern!r}:\n"
                                     + "".join(self.seen))
            self.seen.append(line)
            found = re.search(pattern, line)
            if found is not None:
                return found

    def finish(self) -> str:
        """Everything the suite printed, once it has exited."""
        try:
            self.process.wait(LINE_BOUND)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait(10)
            self._reader.join(10)
            assert self.process.stdout is not None
            self.process.stdout.close()
        while not self.lines.empty():
            line = self.lines.get_nowait()
            if line is not None:
                self.seen.append(line)
        return "".join(self.seen)


def test_authorization_server_conformance_scenarios(example: AuthExample,
                                                    tmp_path: Path) -> None:
    """AUTH-4, AUTH-9, V0618-39, RFC 9207 (as the suite scores them): both
    authorization-server scenarios pass against the example's authorization server."""
    callback_port = free_port()
    registered = example.register(
        redirect_uris=[f"http://127.0.0.1:{callback_port}/callback"],
        token_endpoint_auth_method="none", client_name="conformance")
    assert registered.status_code == 201, registered.text
    suite = SuiteRun([
        str(NODE), str(SUITE), "authorization", "--url", example.origin,
        "--client-id", registered.json()["client_id"], "--resource", example.mcp_url,
        "--port", str(callback_port), "--spec-version", "2026-07-28",
        "--output-dir", str(tmp_path / "results")])
    try:
        authorization_url = suite.wait_for(r"^(http://\S+/authorize\?\S+)$").group(1)
        suite.wait_for(r"Waiting up to")
        wait_until_listening(callback_port, suite.process, 30.0, "the suite")
        # The browser's part: /authorize approves at once and redirects to the callback.
        answer = requests.get(authorization_url, timeout=HTTP_TIMEOUT)
        assert answer.status_code == 200, answer.text
    finally:
        output = suite.finish()
    for scenario in SCENARIOS:
        assert re.search(rf"✓ {re.escape(scenario)}: \d+ passed, 0 failed", output), output
    assert suite.process.returncode == 0, output
