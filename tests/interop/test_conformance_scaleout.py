"""The official conformance suite's server scenarios through a load balancer without
affinity (issue 28): two gunicorn instances (two gthread workers each) serving
examples/conformance_server.py's ``app``, sharing one Redis (``MCP_SYNC_STORE``) and one
``MCP_SYNC_REQUEST_STATE_KEY``, behind a round-robin proxy; ``.ci/conformance server DIR
--url URL`` runs the scenarios of 2025-11-25 and of 2026-07-28 against the proxy.

Every scenario must come out as it does against a single process
(tests/test_conformance.py): the same lists, the same expected failures (the tasks
extension is not built). No scenario is excused for the proxy: the 2025-11-25 sessions
are served by any process through the session store (their GET streams, resumption,
requests to the client and their answers, subscriptions), and the 2026-07-28 requests
need nothing shared but the ``requestState`` key; a list change made in one process is
announced to the listen streams of the others.

One setup serves both requirement sets: everything is started, the suite runs, and
everything is stopped before the first test reads the results.
"""

from __future__ import annotations

import secrets
import tempfile
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import _children
from tests.scaleout_helpers import Gunicorn, RedisServer, RoundRobinProxy, serve_proxy
from tests.test_conformance import (
    EXPECTED_FAILURES,
    MODERN,
    MODERN_EXPECTED_FAILURES,
    MODERN_SERVER_SCENARIOS,
    NODE,
    SERVER_SCENARIOS,
    SUITE,
    Outcome,
    SuiteRun,
    _read_results,
    run_script,
)

RUN_TIMEOUT = 420.0  # both requirement sets through the proxy, on a loaded machine

pytestmark = pytest.mark.timeout(RUN_TIMEOUT + 120)

#: Scenarios that cannot pass through a proxy without affinity, each with the reason
#: the spec gives. None: every scenario passes as it does against one process.
THROUGH_A_PROXY_FAILURES: dict[str, str] = {}


class ProxiedRun(SuiteRun):
    """The suite's outcomes, and which backend served which request."""

    def __init__(self, outcomes: dict[str, Outcome], output: str,
                 served: list[tuple[int, str, str | None]]) -> None:
        super().__init__(outcomes, output)
        self.served = served


def _run_suite(url: str, results: Path) -> str:
    return run_script(["server", str(results), "--url", url], RUN_TIMEOUT)


@pytest.fixture(scope="module")
def proxied_run() -> Iterator[ProxiedRun]:
    """Starts Redis, the two instances and the proxy, runs the suite through it, stops
    them all (checking that nothing is left running), then hands over the results."""
    if not (NODE.is_file() and SUITE.is_file()):
        pytest.skip("Node 22 and the MCP conformance suite are not installed: run "
                    "`bash .ci/conformance install` (.ci/run does)")
    threads_before = set(threading.enumerate())
    children_before = _children()
    with tempfile.TemporaryDirectory(prefix="mcp-sync-conformance-proxy-") as folder:
        with ExitStack() as stack:
            redis = RedisServer()
            stack.callback(redis.stop)
            env = {"MCP_SYNC_REQUEST_STATE_KEY": secrets.token_hex(32)}
            instances = []
            for _ in range(2):
                instance = Gunicorn(redis.url, app="conformance_server:app", env=env)
                stack.callback(instance.stop)
                instances.append(instance)
            proxy = RoundRobinProxy([instance.url for instance in instances])
            url = stack.enter_context(serve_proxy(proxy)).url
            for instance in instances:  # before the proxy: that ends the relayed streams
                stack.callback(instance.stop)
            output = _run_suite(url, Path(folder))
            served = list(proxy.served)
        run = ProxiedRun(_read_results(Path(folder)), output, served)
    for thread in set(threading.enumerate()) - threads_before:
        thread.join(5.0)
    assert [thread.name for thread in set(threading.enumerate()) - threads_before
            if thread.is_alive()] == []
    assert _children() - children_before == set()
    yield run


def _marks(name: str, failures: dict[str, str]) -> list[pytest.MarkDecorator]:
    reason = failures.get(name) or THROUGH_A_PROXY_FAILURES.get(name)
    if reason is None:
        return []
    return [pytest.mark.xfail(reason=reason, strict=True, raises=AssertionError)]


def _params(names: tuple[str, ...], failures: dict[str, str], prefix: str = "") -> list[Any]:
    return [pytest.param(prefix + name, marks=_marks(prefix + name, failures), id=name)
            for name in names]


def test_every_server_scenario_ran_through_the_proxy(proxied_run: ProxiedRun) -> None:
    modern = {f"{MODERN}/{name}" for name in MODERN_SERVER_SCENARIOS}
    assert set(proxied_run.outcomes) == set(SERVER_SCENARIOS) | modern, \
        proxied_run.output[-4000:]


def test_the_proxy_spread_the_requests_and_sessions_over_both_instances(
        proxied_run: ProxiedRun) -> None:
    """Without affinity: both instances served requests, and legacy sessions were
    served by both (the round robin sends a session's next request to the other)."""
    assert {index for index, _, _ in proxied_run.served} == {0, 1}
    sessions = {session for _, _, session in proxied_run.served if session is not None}
    spread = [session for session in sessions
              if {index for index, _, named in proxied_run.served if named == session}
              == {0, 1}]
    assert len(spread) >= len(sessions) // 2 > 0


def test_known_failures_name_known_scenarios() -> None:
    modern = {f"{MODERN}/{name}" for name in MODERN_SERVER_SCENARIOS}
    assert set(THROUGH_A_PROXY_FAILURES) <= set(SERVER_SCENARIOS) | modern


@pytest.mark.parametrize("name", _params(SERVER_SCENARIOS, EXPECTED_FAILURES))
def test_server_scenario_through_the_proxy(proxied_run: ProxiedRun, name: str) -> None:
    """A 2025-11-25 server scenario, its session served by any process."""
    outcome = proxied_run.outcome(name)
    assert outcome.passed, outcome.problems


@pytest.mark.parametrize("name", _params(
    MODERN_SERVER_SCENARIOS, {f"{MODERN}/{name}": reason
                              for name, reason in MODERN_EXPECTED_FAILURES.items()},
    prefix=f"{MODERN}/"))
def test_modern_server_scenario_through_the_proxy(proxied_run: ProxiedRun,
                                                  name: str) -> None:
    """A 2026-07-28 server scenario (SEP-2575 stateless requests, listen streams,
    SEP-2322 input-required results whose signed requestState comes back to another
    process), through the proxy."""
    outcome = proxied_run.outcome(name)
    assert outcome.passed, outcome.problems
