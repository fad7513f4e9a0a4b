"""Blocking peers: mcp_sync's Client, and the raw baselines that speak no MCP.

The raw peers send ``{"id", "method", "params"}`` lines (or POST bodies) to the children in
``servers/raw_*`` and read back the result shape an MCP tool call has, so they pay for the
same JSON work without any protocol on top.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import threading
import time
from concurrent.futures import Future
from typing import IO, Any

import requests
from _cases import OUR_VERSIONS
from _proc import PYTHON, ROOT, serving_process
from _workloads import MESSAGE, Budget

# Imported here, not in the constructors, so that connect_ms never counts the client's
# own import (the SDK driver imports the SDK at module level too).
from mcp_sync import Client

CALL_TIMEOUT = 60.0


class OursPeer:
    """mcp_sync's Client over stdio or HTTP; one Client shared by every caller thread."""

    def __init__(self, client: Any, script: str, pid_root: int) -> None:
        self._client = client
        self._script = script
        self._pid_root = pid_root

    @classmethod
    def stdio(cls, script: str, log: IO[bytes], era: str) -> OursPeer:
        client = Client.stdio([PYTHON, script], cwd=str(ROOT), stderr=log, timeout=CALL_TIMEOUT,
                              supported_versions=OUR_VERSIONS[era])
        return cls(client, script, os.getpid()).checked(era)

    @classmethod
    def http(cls, url: str, script: str, server_pid: int, era: str) -> OursPeer:
        client = Client.http(url, timeout=CALL_TIMEOUT, supported_versions=OUR_VERSIONS[era])
        return cls(client, script, server_pid).checked(era)

    def echo(self, message: str) -> str:
        text: str = self._client.call_tool("echo", {"message": message}).content[0].text
        return text

    def checked(self, era: str) -> OursPeer:
        """This peer, once its connection is known to speak ``era``."""
        if self._client.protocol_version not in OUR_VERSIONS[era]:
            self.close()
            raise AssertionError(f"the {era} case speaks {self._client.protocol_version}")
        return self

    def items(self, n: int) -> int:
        return len(self._client.call_tool("many_items", {"n": n}).content)

    def server_pid(self) -> int | None:
        return serving_process(self._pid_root, self._script)

    def close(self) -> None:
        self._client.close()


def _request(request_id: int, method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method,
                       "params": params}).encode() + b"\n"


def _text(answer: dict[str, Any]) -> str:
    text: str = answer["result"]["content"][0]["text"]
    return text


class RawPipePeer:
    """One request, then wait for its line: no threads, no ids to match."""

    def __init__(self, script: str, log: IO[bytes]) -> None:
        self.process = subprocess.Popen([PYTHON, script], cwd=str(ROOT), stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=log)
        assert self.process.stdin is not None and self.process.stdout is not None
        self._stdin = self.process.stdin
        self._stdout = self.process.stdout
        self._ids = itertools.count(1)

    def _call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._stdin.write(_request(next(self._ids), method, params))
        self._stdin.flush()
        answer: dict[str, Any] = json.loads(self._stdout.readline())
        return answer

    def echo(self, message: str) -> str:
        return _text(self._call("echo", {"message": message}))

    def items(self, n: int) -> int:
        return len(self._call("many_items", {"n": n})["result"]["content"])

    def server_pid(self) -> int | None:
        return self.process.pid

    def close(self) -> None:
        self._stdin.close()
        try:
            self.process.wait(5.0)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._stdout.close()

    def pipelined(self, budget: Budget) -> tuple[int, float]:
        """Keep ``budget.threads`` requests in flight from this one thread."""
        depth = budget.threads
        started = time.perf_counter()
        deadline = started + budget.conc_seconds
        sent = done = 0
        for _ in range(min(depth, budget.conc_calls)):
            self._stdin.write(_request(next(self._ids), "echo", {"message": MESSAGE}))
            sent += 1
        self._stdin.flush()
        stop = False
        while done < sent:
            if _text(json.loads(self._stdout.readline())) != MESSAGE:
                raise AssertionError("wrong answer")
            done += 1
            stop = stop or time.perf_counter() >= deadline
            if not stop and sent < budget.conc_calls:
                self._stdin.write(_request(next(self._ids), "echo", {"message": MESSAGE}))
                self._stdin.flush()
                sent += 1
        return done, time.perf_counter() - started


class RawThreadsPeer(RawPipePeer):
    """The shape of mcp_sync's engine with no MCP: a reader thread completes futures."""

    def __init__(self, script: str, log: IO[bytes]) -> None:
        super().__init__(script, log)
        self._pending: dict[int, Future[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, name="bench-raw-reader", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self._stdout:
            answer = json.loads(line)
            with self._lock:
                future = self._pending.pop(answer["id"])
            future.set_result(answer)
        with self._lock:
            pending, self._pending = self._pending, {}
        for future in pending.values():
            future.set_exception(ConnectionError("the child closed its output"))

    def _call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        future: Future[dict[str, Any]] = Future()
        request_id = next(self._ids)
        with self._lock:
            self._pending[request_id] = future
        line = _request(request_id, method, params)
        with self._write_lock:
            self._stdin.write(line)
            self._stdin.flush()
        return future.result(CALL_TIMEOUT)

    def close(self) -> None:
        self._stdin.close()
        self._reader.join(5.0)
        super().close()


class RawHttpPeer:
    """A plain JSON POST per call with requests; one Session per calling thread."""

    def __init__(self, url: str, server_pid: int, script: str) -> None:
        self._url = url
        self._pid_root = server_pid
        self._script = script
        self._local = threading.local()
        self._sessions: list[requests.Session] = []
        self._sessions_lock = threading.Lock()
        self._ids = itertools.count(1)

    def _session(self) -> requests.Session:
        session: requests.Session | None = getattr(self._local, "session", None)
        if session is None:
            session = requests.Session()
            self._local.session = session
            with self._sessions_lock:
                self._sessions.append(session)
        return session

    def _call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        response = self._session().post(
            self._url, data=_request(next(self._ids), method, params),
            headers={"Content-Type": "application/json"}, timeout=CALL_TIMEOUT)
        response.raise_for_status()
        answer: dict[str, Any] = response.json()
        return answer

    def echo(self, message: str) -> str:
        return _text(self._call("echo", {"message": message}))

    def items(self, n: int) -> int:
        return len(self._call("many_items", {"n": n})["result"]["content"])

    def server_pid(self) -> int | None:
        return serving_process(self._pid_root, self._script)

    def close(self) -> None:
        for session in self._sessions:
            session.close()
