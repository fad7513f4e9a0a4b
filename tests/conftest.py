"""Shared fixtures: every test is checked for leaks and for what it sends on the wire.

* ``_no_leaks`` (autouse): after each test, no thread, file descriptor or child process
  that the test started may be left. Threads are given a bounded join, never a sleep.
* ``_validate_sent`` (autouse): every message mcp_sync encodes during a test is checked
  against the official 2025-03-26 JSON Schema (the envelope, and the method's own
  definition for requests and notifications). A failure fails the test that sent it.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import mcp_sync.protocol._jsonrpc as jsonrpc_module
from tests.helpers import ScriptedServer, closing_all

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
EXAMPLES = ROOT / "examples"


def _find_spec_dir() -> Path:
    # The protocol's schema files are copied into tests/spec (see its README); the
    # environment variable MCP_SYNC_SPEC_DIR may name another folder holding them.
    override = os.environ.get("MCP_SYNC_SPEC_DIR")
    found = Path(override) if override else HERE / "spec"
    if not (found / "schema-2025-03-26.json").is_file():
        raise RuntimeError(f"schema-2025-03-26.json not found in {found}"
                           + (" (named by MCP_SYNC_SPEC_DIR)" if override else ""))
    return found


SPEC_DIR = _find_spec_dir()
SCHEMA = json.loads((SPEC_DIR / "schema-2025-03-26.json").read_text())

# Requests and notifications by method, to validate each against its own definition.
METHOD_DEFINITIONS: dict[str, str] = {}
for _name, _definition in SCHEMA["definitions"].items():
    _method = _definition.get("properties", {}).get("method", {}).get("const")
    if _method:
        METHOD_DEFINITIONS[_method] = _name

_validators: dict[str, jsonschema.Draft7Validator] = {}


def validator(definition: str) -> jsonschema.Draft7Validator:
    """A validator for one definition of the 2025-03-26 schema."""
    found = _validators.get(definition)
    if found is None:
        found = jsonschema.Draft7Validator(
            {"$ref": f"#/definitions/{definition}", "definitions": SCHEMA["definitions"]})
        _validators[definition] = found
    return found


def schema_errors(message: Any) -> list[str]:
    """Why ``message`` (a wire dict or batch list) breaks the schema; empty if it does not."""
    def null_id_error(item: Any) -> bool:
        # AMBIG-3: JSON-RPC's null-id error is knowingly outside the MCP schema.
        return isinstance(item, dict) and "error" in item and item.get("id") is None

    if null_id_error(message):
        return []
    if isinstance(message, list) and any(null_id_error(item) for item in message):
        message = [item for item in message if not null_id_error(item)]
        if not message:
            return []
    errors = [e.message for e in validator("JSONRPCMessage").iter_errors(message)]
    items = message if isinstance(message, list) else [message]
    for item in items:
        if isinstance(item, dict) and "method" in item:
            definition = METHOD_DEFINITIONS.get(item["method"])
            if definition is not None:
                errors += [f"{definition}: {e.message}"
                           for e in validator(definition).iter_errors(item)]
    return errors


class WireLog:
    """What was encoded during one test, and what broke the schema."""

    def __init__(self) -> None:
        self.sent: list[Any] = []
        self.invalid: list[tuple[Any, list[str]]] = []
        self.lock = threading.Lock()
        self._allowed = 0

    def record(self, message: Any) -> None:
        errors = schema_errors(message)
        with self.lock:
            self.sent.append(message)
            if errors and not self._allowed:
                self.invalid.append((message, errors))

    @contextlib.contextmanager
    def allow_invalid(self) -> Iterator[None]:
        """For tests that send malformed messages on purpose."""
        with self.lock:
            self._allowed += 1
        try:
            yield
        finally:
            with self.lock:
                self._allowed -= 1


@pytest.fixture(autouse=True)
def wire(monkeypatch: pytest.MonkeyPatch) -> Iterator[WireLog]:
    """Validates every message encoded in this process while the test runs."""
    log = WireLog()
    real_to_wire = jsonrpc_module.to_wire
    depth = threading.local()

    def checked_to_wire(message: Any) -> Any:
        level = getattr(depth, "level", 0)
        depth.level = level + 1
        try:
            value = real_to_wire(message)
        finally:
            depth.level = level
        if level == 0:
            log.record(value)
        return value

    monkeypatch.setattr(jsonrpc_module, "to_wire", checked_to_wire)
    yield log
    if log.invalid:
        message, errors = log.invalid[0]
        pytest.fail(f"sent a message that breaks the schema: {message!r}: {errors}")


def _open_fds() -> set[int]:
    try:
        return {int(fd) for fd in os.listdir("/proc/self/fd")}
    except FileNotFoundError:  # not Linux: the check is skipped
        return set()


def _children() -> set[int]:
    found: set[int] = set()
    try:
        for task in os.listdir("/proc/self/task"):
            text = Path(f"/proc/self/task/{task}/children").read_text()
            found.update(int(pid) for pid in text.split())
    except (FileNotFoundError, PermissionError):
        pass
    return found


@pytest.fixture(autouse=True)
def _no_leaks(request: pytest.FixtureRequest) -> Iterator[None]:
    threads_before = set(threading.enumerate())
    fds_before = _open_fds()
    children_before = _children()
    yield
    # The garbage collector belongs to the application: the library never turns it off.
    assert gc.isenabled(), "the garbage collector was left disabled"
    if request.node.get_closest_marker("allow_leaks"):
        return
    new_threads = [t for t in threading.enumerate() if t not in threads_before]
    for thread in new_threads:
        thread.join(5.0)
    alive = [t.name for t in new_threads if t.is_alive()]
    assert not alive, f"threads left running: {alive}"
    leaked_fds = _open_fds() - fds_before
    if leaked_fds:  # an object awaiting collection may still hold one
        gc.collect()
        leaked_fds = _open_fds() - fds_before
    details = {fd: _describe_fd(fd) for fd in leaked_fds}
    details = {fd: what for fd, what in details.items() if what is not None}
    assert not details, f"file descriptors left open: {details}"
    children = _children() - children_before
    assert not children, f"child processes left: {children}"


def _describe_fd(fd: int) -> str | None:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None  # closed between the listing and now


def python_command(*args: str) -> list[str]:
    """A command line running this interpreter (the one with mcp_sync installed)."""
    return [sys.executable, *args]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "allow_leaks: skip the leak check for this test")


def schema_valid(definition: str, value: dict[str, Any]) -> dict[str, Any]:
    """``value``, after checking it against one definition of the schema (a fake peer's
    answer must itself be realistic)."""
    errors = [e.message for e in validator(definition).iter_errors(value)]
    assert not errors, f"{definition}: {errors}"
    return value


@pytest.fixture
def scripted() -> Iterator[Callable[..., ScriptedServer]]:
    """Starts fake servers that answer from a script; each is stopped after the test."""
    yield from closing_all(ScriptedServer)
