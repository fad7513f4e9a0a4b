"""Helpers for the scale-out tests: a round-robin HTTP proxy without affinity, and a
Redis server of the test's own.

:class:`RoundRobinProxy` sends each HTTP request to the next backend in turn (a request
refused by a dead backend goes to the next one, as a load balancer's health check would
have it) and records which backend served which request of which session: that is how a
test sees that one session was served by several processes.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import selectors
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests

from mcp_sync import Server
from mcp_sync.transports.http_server import HttpServerHandle, RedisSessionStore, serve_http

__all__ = ["Gunicorn", "RedisServer", "RoundRobinProxy", "free_port", "redis_server", "serve_proxy"]

_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "te",
               "trailer", "upgrade", "proxy-connection"}


class RoundRobinProxy:
    """A WSGI application forwarding each request to the next of ``backends`` (base URLs)."""

    def __init__(self, backends: list[str]) -> None:
        self.backends = backends
        self._turn = itertools.count()
        self._lock = threading.Lock()
        #: (backend index, HTTP method, session id) of every request forwarded.
        self.served: list[tuple[int, str, str | None]] = []

    def session_ids(self) -> set[str]:
        """Every session id seen in a request or an answer."""
        with self._lock:
            return {session for _, _, session in self.served if session is not None}

    def backends_of(self, session_id: str) -> set[int]:
        """The backends that served requests of ``session_id``."""
        with self._lock:
            return {index for index, _, session in self.served if session == session_id}

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        method = environ["REQUEST_METHOD"]
        headers = {key[5:].replace("_", "-").title(): value for key, value in environ.items()
                   if key.startswith("HTTP_") and key[5:].lower() not in _HOP_BY_HOP}
        if environ.get("CONTENT_TYPE"):
            headers["Content-Type"] = environ["CONTENT_TYPE"]
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        first = next(self._turn)
        for attempt in range(len(self.backends)):
            index = (first + attempt) % len(self.backends)
            try:
                upstream = requests.request(
                    method, self.backends[index] + environ.get("PATH_INFO", ""),
                    headers=headers, data=body, stream=True, timeout=(5, 60))
            except requests.ConnectionError:
                continue  # a dead backend: the next one serves
            session = headers.get("Mcp-Session-Id") or upstream.headers.get("Mcp-Session-Id")
            with self._lock:
                self.served.append((index, method, session))
            start_response(f"{upstream.status_code} {upstream.reason}",
                           [(key, value) for key, value in upstream.headers.items()
                            if key.lower() not in _HOP_BY_HOP])
            return _Relayed(upstream)
        start_response("502 Bad Gateway", [("Content-Type", "text/plain")])
        return [b"no backend answered"]


class _Relayed:
    def __init__(self, upstream: requests.Response) -> None:
        self.upstream = upstream

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self.upstream.iter_content(chunk_size=None)
        except requests.RequestException:
            return  # the backend went away mid-stream: the client sees the stream end

    def close(self) -> None:
        self.upstream.close()


def serve_proxy(proxy: RoundRobinProxy) -> HttpServerHandle:
    """Serve ``proxy`` on a free loopback port (``handle.url`` ends with ``/mcp``)."""
    return serve_http(Server("proxy"), max_threads=32, max_get_streams=1,
                      wrap=lambda _app: proxy)


def two_servers_behind_a_proxy(stack: contextlib.ExitStack, make_server: Callable[[], Server],
                                redis_url: str) -> tuple[RoundRobinProxy, str]:
    """Two embedded servers sharing the Redis at ``redis_url``, behind a round-robin proxy
    with no affinity; returns the proxy and its URL. ``stack`` closes them all."""
    handles = []
    for _ in range(2):
        store = RedisSessionStore.from_url(redis_url)
        stack.callback(store.close)
        handles.append(stack.enter_context(serve_http(make_server(), session_store=store)))
    proxy = RoundRobinProxy([handle.url.removesuffix("/mcp") for handle in handles])
    url = stack.enter_context(serve_proxy(proxy)).url
    for handle in handles:
        stack.callback(handle.close)
    return proxy, url


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class RedisServer:
    """A ``redis-server`` on a free loopback port, persistence off."""

    def __init__(self) -> None:
        executable = shutil.which("redis-server")
        if executable is None:
            pytest.skip("redis-server is not installed (Debian: apt-get install redis-server)")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = subprocess.Popen(
            [executable, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--loglevel", "notice"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self) -> None:
        import redis

        # It says when it listens; the rest of its log is silenced, since nobody reads it.
        assert self.process.stdout is not None
        deadline = time.monotonic() + 20
        seen = b""
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            while b"Ready to accept connections" not in seen:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not selector.select(remaining):
                    raise RuntimeError(f"redis-server did not start: {seen[-500:]!r}")
                chunk = os.read(self.process.stdout.fileno(), 65536)
                if not chunk:
                    raise RuntimeError(f"redis-server exited at start: {seen[-500:]!r}")
                seen += chunk
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5,
                             socket_connect_timeout=5)
        try:
            assert client.ping()
            client.config_set("loglevel", "warning")
        finally:
            client.close()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
        if self.process.stdout is not None:
            self.process.stdout.close()


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    """A Redis server of the test's own, stopped at its end."""
    server = RedisServer()
    try:
        yield server
    finally:
        server.stop()


class Gunicorn:
    """An example's WSGI ``app`` (``examples/everything_server.py``'s by default) under
    gunicorn (``workers`` processes, threaded), keeping its sessions in the Redis at
    ``store_url``, with ``env`` added to its environment (and loaded before the fork with
    ``preload``); in a process group of its own so that :meth:`kill` takes its workers
    with it."""

    def __init__(self, store_url: str, workers: int = 2, app: str = "everything_server:app",
                 env: dict[str, str] | None = None, preload: bool = False) -> None:
        import sys

        from tests.helpers import EXAMPLES

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "--chdir", str(EXAMPLES), "-b",
             f"127.0.0.1:{self.port}", "-w", str(workers), "-k", "gthread", "--threads", "8",
             "--graceful-timeout", "2", "--timeout", "60", *(["--preload"] if preload else []),
             app],
            env={**os.environ, **(env or {}), "MCP_SYNC_STORE": store_url},
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        self.log: list[str] = []
        self._listening = threading.Event()
        self._reader = threading.Thread(target=self._read_log, name="gunicorn-log")
        self._reader.start()
        if not self._listening.wait(30):
            self.kill()
            raise RuntimeError("gunicorn did not start:\n" + "".join(self.log))

    def _read_log(self) -> None:
        assert self.process.stderr is not None
        for line in iter(self.process.stderr.readline, b""):
            self.log.append(line.decode(errors="replace"))
            if b"Listening at:" in line:
                self._listening.set()
        self._listening.set()  # it ended: whoever waits learns it at once

    def kill(self) -> None:
        """End the master and its workers at once (a crashed host) and reap them."""
        import signal

        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self._reap()

    def stop(self) -> None:
        """Stop gracefully (SIGTERM), killing what is left after a few seconds."""
        self.process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(15)
        self.kill()

    def _reap(self) -> None:
        self.process.wait(15)
        self._reader.join(15)
        if self.process.stderr is not None:
            self.process.stderr.close()
