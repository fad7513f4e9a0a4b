"""The MCP application embedded in host applications, under real WSGI servers.

* ``examples/flask_app.py`` under werkzeug's threaded server, in this process;
* ``examples/django_project`` under gunicorn (gthread workers) and waitress, each in a
  subprocess on a free port of 127.0.0.1, waited for with bounded connection attempts.

Real MCP clients (``mcp_sync.Client.http``) call tools while the
host application's own routes keep answering. DESIGN "Streams and threads": under
gunicorn with fewer threads than sessions, every call is answered and the host's routes
still answer, because GET streams are bounded (HTTP-18: the others get 405).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import requests
from werkzeug.serving import make_server

from mcp_sync import Client
from tests.conftest import EXAMPLES
from tests.helpers import load_module

DJANGO_PROJECT = EXAMPLES / "django_project"
TIMEOUT = (5, 20)


def load_flask_example() -> ModuleType:
    return load_module(EXAMPLES / "flask_app.py", "flask_app_example")


@contextlib.contextmanager
def flask_served(**mcp_options: Any) -> Iterator[str]:
    """The Flask example on werkzeug's threaded server; yields its base URL."""
    app = load_flask_example().create_app(**mcp_options)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              name="test:flask-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.port}"
    finally:
        server.shutdown()
        thread.join(10)
        app.extensions["mcp"].close()
        server.server_close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_ready(process: subprocess.Popen[bytes], url: str, log: Path,
               attempts: int = 600) -> None:
    """Until ``url`` answers 200; each refused connection waits 50 ms on the process,
    which also notices a server that died."""
    with requests.Session() as http:
        for _ in range(attempts):
            try:
                response = http.get(url, timeout=TIMEOUT)
            except requests.ConnectionError:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=0.05)
                    raise AssertionError(f"the server exited: {log.read_text()}") from None
                continue
            assert response.status_code == 200, response.text
            return
    raise AssertionError(f"{url} never answered: {log.read_text()}")


@contextlib.contextmanager
def django_served(command: list[str], tmp_path: Path, **env: str) -> Iterator[str]:
    """The Django example under ``command`` (its port as ``{port}``); yields the base URL."""
    port = free_port()
    log = tmp_path / "server.log"
    environment = {**os.environ, "PYTHONPATH": str(DJANGO_PROJECT), **env}
    with log.open("wb") as output:
        process = subprocess.Popen([part.format(port=port) for part in command],
                                   cwd=DJANGO_PROJECT, env=environment, stdout=output,
                                   stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(process, base + "/health", log)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def host_routes_answer(base: str, home_text: str) -> None:
    with requests.Session() as http:
        home = http.get(base + "/", timeout=TIMEOUT)
        assert home.status_code == 200 and home_text in home.text
        health = http.get(base + "/health", timeout=TIMEOUT)
        assert health.status_code == 200 and health.json() == {"status": "ok"}


@pytest.mark.timeout(40)
def test_flask_example_serves_mcp_beside_its_routes() -> None:
    """HTTP-1/HTTP-36: Flask keeps / and /health while /mcp serves Streamable HTTP clients
    and /mcp/sse old HTTP+SSE clients, all over one werkzeug threaded server."""
    with flask_served() as base:
        host_routes_answer(base, "Flask app")
        with Client.http(base + "/mcp") as new, \
                Client.http(base + "/mcp/sse") as old:
            assert new.server_info.name == "flask-demo"
            assert {tool.name for tool in new.list_tools()} == {"add", "greet"}
            with ThreadPoolExecutor(4) as pool:
                calls = [pool.submit(client.call_tool, "add", {"a": n, "b": n})
                         for n in range(10) for client in (new, old)]
                host_routes_answer(base, "Flask app")
                results = [future.result(30).content[0].text for future in calls]
            assert results == [str(2 * n) for n in range(10) for _ in (new, old)]
            assert old.call_tool("greet", {"name": "Ada"}).content[0].text == "Hello, Ada!"
            host_routes_answer(base, "Flask app")


def run_sessions(base: str, sessions: int, home_text: str) -> None:
    """Open ``sessions`` MCP sessions at once, call tools from all of them concurrently,
    and check the host's routes while they are open."""
    with contextlib.ExitStack() as stack:
        clients = [stack.enter_context(Client.http(base + "/mcp"))
                   for _ in range(sessions)]
        host_routes_answer(base, home_text)
        progress: list[list[float]] = [[] for _ in clients]

        def work(index: int) -> list[str]:
            client = clients[index]
            texts = [client.call_tool("add", {"a": index, "b": step}).content[0].text
                     for step in range(3)]
            texts.append(client.call_tool(
                "countdown", {"steps": 2},
                on_progress=lambda value, *rest: progress[index].append(value),
            ).content[0].text)
            return texts

        with ThreadPoolExecutor(sessions) as pool:
            futures = [pool.submit(work, index) for index in range(sessions)]
            host_routes_answer(base, home_text)
            answers = [future.result(60) for future in futures]
        assert answers == [[str(i), str(i + 1), str(i + 2), "liftoff"]
                           for i in range(sessions)]
        assert all(seen == [1, 2] for seen in progress), progress
        host_routes_answer(base, home_text)


@pytest.mark.timeout(60)
def test_django_under_gunicorn_gthread_more_sessions_than_threads(tmp_path: Path) -> None:
    """DESIGN "Streams and threads", HTTP-17/18: gunicorn gthread with 4 threads and 8
    sessions, each of whose clients asks for a GET stream: one gets it, the rest get 405
    and take server messages on their POST streams; every call (with progress) is
    answered and Django's own views still answer."""
    command = [sys.executable, "-m", "gunicorn", "--worker-class", "gthread",
               "--workers", "1", "--threads", "4", "--bind", "127.0.0.1:{port}",
               "--graceful-timeout", "5", "--no-control-socket", "--log-level", "warning",
               "mysite.wsgi:application"]
    with django_served(command, tmp_path, MCP_MAX_GET_STREAMS="1") as base:
        run_sessions(base, sessions=8, home_text="Django site")


@pytest.mark.timeout(60)
def test_django_under_waitress(tmp_path: Path) -> None:
    """HTTP-1, HTTP-10..13: the Django example's wsgi.py under waitress (4 threads, 6
    sessions): SSE answers stream through waitress, Django's views answer beside them."""
    command = [sys.executable, "-m", "waitress", "--listen=127.0.0.1:{port}",
               "--threads=4", "mysite.wsgi:application"]
    with django_served(command, tmp_path, MCP_MAX_GET_STREAMS="1") as base:
        run_sessions(base, sessions=6, home_text="Django site")
        with Client.http(base + "/mcp/sse") as old:
            assert old.call_tool("add", {"a": 40, "b": 2}).content[0].text == "42"
