"""The plain script and the Flask app of examples/, run as their users would run them."""

from __future__ import annotations

import atexit
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from types import ModuleType

import pytest
import requests
from werkzeug.serving import make_server

from tests.conftest import EXAMPLES, _children
from tests.helpers import load_module

pytestmark = pytest.mark.timeout(60)


# --- examples/batch_script.py ------------------------------------------------------------


def test_the_batch_script_prints_every_answer_in_order() -> None:
    """TOOLS-4 (tools/call), V0618-20 (structured output), RESOURCES-3: four threads
    share one client; the answers come out in the order of the pairs given."""
    completed = subprocess.run(
        [sys.executable, str(EXAMPLES / "batch_script.py"), "--", "6x7", "100x0", "-5x5",
         "2x3", "1x1"], capture_output=True, text=True, timeout=50)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines() == [
        "connected to everything 1.0.0 (protocol 2026-07-28)",
        "6 x 7: sum 13, product 42",
        "100 x 0: sum 100, product 0",
        "-5 x 5: sum 0, product -25",
        "2 x 3: sum 5, product 6",
        "1 x 1: sum 2, product 1",
        "static://hello says: Hello, world!",
        "fail answered is_error=True: this tool always fails",
    ]


def test_the_batch_script_refuses_a_bad_pair() -> None:
    completed = subprocess.run(
        [sys.executable, str(EXAMPLES / "batch_script.py"), "6x"], capture_output=True,
        text=True, timeout=50)
    assert completed.returncode == 2
    assert "invalid pair value: '6x'" in completed.stderr
    assert completed.stdout == ""


def test_the_batch_script_reports_a_dead_server_in_one_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A server that exits at once: exit status 1 and one line on stderr, no traceback."""
    script = load_module(EXAMPLES / "batch_script.py", "batch_script_example")
    status = script.main([], server=[sys.executable, "-c", "import sys; sys.exit(3)"])
    assert status == 1
    err = capsys.readouterr().err
    assert err.startswith("batch_script: ConnectionLost: ")
    assert err.count("\n") == 1


# --- examples/flask_client.py ------------------------------------------------------------


@pytest.fixture
def flask_example() -> Iterator[ModuleType]:
    """examples/flask_client.py freshly loaded; its client is closed after the test, as
    at the application's exit."""
    example = load_module(EXAMPLES / "flask_client.py", "flask_client_example")
    atexit.unregister(example.close_mcp_client)
    try:
        yield example
    finally:
        example.close_mcp_client()


def test_the_flask_views_call_the_server(flask_example: ModuleType) -> None:
    """TOOLS-2 (tools/list), TOOLS-4 (tools/call) from Flask views, through the test
    client."""
    web = flask_example.create_app().test_client()
    assert web.get("/add?a=2&b=40").text == "42\n"
    assert web.get("/echo?message=hello").text == "hello\n"
    missing = web.get("/echo")
    assert missing.status_code == 400
    tools = web.get("/tools").get_json()
    assert [tool["name"] for tool in tools] == ["add", "echo", "countdown"]
    assert tools[0]["description"] == "Add two integers."


def test_one_client_serves_every_request_thread_and_closes_with_the_app(
        flask_example: ModuleType) -> None:
    """A real threaded server on 127.0.0.1: 40 requests from 8 threads at once are all
    answered by one client, over one server process; closing the client at the app's
    end stops that process, and later requests get a 503 rather than a new server."""
    before = _children()
    http = make_server("127.0.0.1", 0, flask_example.create_app(), threaded=True)
    serving = threading.Thread(target=http.serve_forever, name="flask-example")
    serving.start()
    base = f"http://127.0.0.1:{http.server_port}"
    try:
        with requests.Session() as session:
            def add(n: int) -> str:
                response = session.get(f"{base}/add", params={"a": n, "b": 1000}, timeout=20)
                return f"{response.status_code} {response.text}"

            with ThreadPoolExecutor(max_workers=8) as pool:
                answers = list(pool.map(add, range(40)))
            assert answers == [f"200 {n + 1000}\n" for n in range(40)]
            assert len(_children() - before) == 1  # one server process for them all

            flask_example.close_mcp_client()
            assert _children() - before == set()
            refused = session.get(f"{base}/add?a=1&b=2", timeout=20)
            assert refused.status_code == 503
            assert "shutting down" in refused.text
            assert _children() - before == set()
    finally:
        http.shutdown()
        serving.join(10)
        http.server_close()
