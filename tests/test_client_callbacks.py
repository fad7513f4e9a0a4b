"""callback_executor: every client callback runs there, never on the client's threads.

A GUI application gives the client an executor bound to its UI thread; here a
one-thread pool named ``app-ui`` stands in for it, so each test can see on which thread
each callback ran.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from mcp_sync import Context, RequestTimeout, Server, types
from mcp_sync.testing import open_client
from tests.helpers import LEGACY_ERA

pytestmark = pytest.mark.timeout(30)

ANSWER = types.CreateMessageResult(role="assistant", content=types.TextContent(text="hi"),
                                   model="test-model")


@pytest.fixture
def ui() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="app-ui") as executor:
        yield executor


def make_server() -> Server:
    server = Server("reports")

    @server.tool()
    def work(steps: int, ctx: Context) -> str:
        """Report progress and log at each step."""
        for step in range(1, steps + 1):
            ctx.info(f"step {step}")
            ctx.report_progress(step, steps, f"step {step}")
        return "done"

    @server.tool()
    def ask(ctx: Context, timeout: float = 10.0) -> str:
        """Ask the client's model."""
        try:
            reply = ctx.sample("Say hi", max_tokens=10, timeout=timeout)
        except RequestTimeout:
            return "no answer"
        assert isinstance(reply.content, types.TextContent)
        return reply.content.text

    return server


class Seen:
    """What each callback received, and the name of the thread it ran on."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any, str]] = []
        self.lock = threading.Lock()

    def add(self, kind: str, value: Any) -> None:
        with self.lock:
            self.events.append((kind, value, threading.current_thread().name))

    def threads(self) -> set[str]:
        return {thread.rsplit("_", 1)[0] for _, _, thread in self.events}


def test_progress_logs_notifications_and_results_run_on_the_executor(
        ui: ThreadPoolExecutor) -> None:
    seen = Seen()
    finished = threading.Event()
    server = make_server()
    with open_client(server, callback_executor=ui,
                     on_log=lambda params: seen.add("log", params.data),
                     on_notification=lambda method, params: seen.add("notification", method),
                     **LEGACY_ERA) as client:
        client.set_logging_level("info")
        future = client.call_tool_async(
            "work", {"steps": 3},
            on_progress=lambda progress, total, message: seen.add("progress", progress))
        future.add_done_callback(lambda f: (seen.add("result", f.result().content[0].text),
                                            finished.set()))
        assert finished.wait(10)
    assert seen.threads() == {"app-ui"}
    progress = [value for kind, value, _ in seen.events if kind == "progress"]
    logs = [value for kind, value, _ in seen.events if kind == "log"]
    assert progress == [1, 2, 3]
    assert logs == ["step 1", "step 2", "step 3"]
    # In the order the server sent them, the result after all its progress (PROGRESS-6).
    assert seen.events[-1][:2] == ("result", "done")
    kinds = [kind for kind, _, _ in seen.events if kind in ("log", "notification")]
    assert kinds == ["log", "notification"] * 3


def test_a_blocking_call_gets_its_progress_on_the_executor(ui: ThreadPoolExecutor) -> None:
    seen = Seen()
    with open_client(make_server(), callback_executor=ui) as client:
        result = client.call_tool("work", {"steps": 2},
                                  on_progress=lambda p, total, message: seen.add("progress", p))
        assert result.content[0].text == "done"
        ui.submit(lambda: None).result(5)  # what was handed over before has run
    assert seen.threads() == {"app-ui"}
    assert [value for _, value, _ in seen.events] == [1, 2]


def test_the_sampling_handler_runs_on_the_executor(ui: ThreadPoolExecutor) -> None:
    seen = Seen()

    def sample(params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        seen.add("sample", params.max_tokens)
        return ANSWER

    with open_client(make_server(), callback_executor=ui, sampling_handler=sample,
                     **LEGACY_ERA) as client:
        assert client.call_tool("ask").content[0].text == "hi"
    assert seen.events == [("sample", 10, seen.events[0][2])]
    assert seen.threads() == {"app-ui"}


def test_a_busy_executor_never_holds_a_sampling_request_forever(
        ui: ThreadPoolExecutor) -> None:
    """The server gives up (CANCEL-1) while the UI thread is busy: the client's worker
    stops waiting, and the handler, not yet started, never runs."""
    busy = threading.Event()
    release = threading.Event()
    ran = threading.Event()
    ui.submit(lambda: (busy.set(), release.wait(10)))
    assert busy.wait(5)

    def sample(params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        ran.set()
        return ANSWER

    try:
        with open_client(make_server(), callback_executor=ui, sampling_handler=sample,
                         **LEGACY_ERA) as client:
            assert client.call_tool("ask", {"timeout": 0.3}).content[0].text == "no answer"
            assert client.ping() is None  # the client still serves
    finally:
        release.set()
    ui.submit(lambda: None).result(5)
    assert not ran.is_set()


def test_a_failing_callback_on_the_executor_is_logged_and_the_rest_go_on(
        ui: ThreadPoolExecutor, caplog: pytest.LogCaptureFixture) -> None:
    seen = Seen()

    def progress(value: float, total: float | None, message: str | None) -> None:
        seen.add("progress", value)
        if value == 1:
            raise ValueError("the progress bar broke")

    with open_client(make_server(), callback_executor=ui) as client:
        assert client.call_tool("work", {"steps": 2}, on_progress=progress).content[0].text
        ui.submit(lambda: None).result(5)
    assert [value for _, value, _ in seen.events] == [1, 2]
    assert "the on_progress callback failed" in caplog.text
