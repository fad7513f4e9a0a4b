"""The modules below the engine do no I/O, start no threads and never wait (STYLE habit 1).

The core is the whole ``protocol/`` folder, with the public modules it speaks through
(errors, types, jsonrpc) and the server's sans-IO helpers (schema from hints, results to
content). Each module is parsed, not imported, so a forbidden import is found even inside
a function body or an ``if TYPE_CHECKING`` block. The check follows the core's imports of
other mcp_sync modules, so a helper module a core module relies on is held to the same
rule, and importing the engine, a transport, the server or the client from the core is
caught as well.
"""

from __future__ import annotations

import pytest

from .helpers import (
    DYNAMIC,
    OUTSIDE,
    imports_in,
    imports_of,
    module_names,
    package_dir,
    source_of,
)

PROTOCOL = module_names("protocol")

CORE = (*PROTOCOL, "mcp_sync.errors", "mcp_sync.types", "mcp_sync.jsonrpc",
        "mcp_sync.server._schema", "mcp_sync.server._content", "mcp_sync.server._docstrings")

FORBIDDEN = frozenset({
    "threading", "_thread", "socket", "subprocess", "time", "select", "selectors", "os",
    "requests", "werkzeug", "queue", "concurrent", "asyncio", "multiprocessing", "signal",
})

ABOVE = ("mcp_sync.engine", "mcp_sync.transports", "mcp_sync.server", "mcp_sync.client",
         "mcp_sync.testing", "mcp_sync.cli", "mcp_sync.django", "mcp_sync.gui")


def _core_closure() -> list[str]:
    """The core modules and every mcp_sync module they import, directly or not."""
    found: set[str] = set()
    todo = list(CORE)
    while todo:
        name = todo.pop()
        if source_of(name) is None or name in found:
            continue
        found.add(name)
        todo += [imported for _, imported in imports_of(name)]
    return sorted(found)


CLOSURE = _core_closure()


def test_every_core_module_exists() -> None:
    """STYLE habit 1: a renamed core module must not silently drop out of the check."""
    assert len(PROTOCOL) > 15
    assert set(CORE) <= set(CLOSURE)


@pytest.mark.parametrize("module", CLOSURE)
def test_core_module_imports_nothing_that_does_io(module: str) -> None:
    """STYLE habit 1, GEN-3: no threads, sockets, processes, clocks, queues or HTTP in
    the core or in anything it imports from mcp_sync, and no import hidden from this
    check (dynamic, or reaching outside the package by a relative path)."""
    offending = [f"line {line}: {name}" for line, name in imports_of(module)
                 if name.split(".")[0] in FORBIDDEN or name in DYNAMIC or name == OUTSIDE]
    assert offending == [], f"{module} imports {offending}"


@pytest.mark.parametrize("module", list(PROTOCOL))
def test_protocol_imports_nothing_above_it(module: str) -> None:
    """DESIGN "Layout": dependencies point down; the protocol never reaches up into the
    engine, a transport, the server or the client."""
    offending = [f"line {line}: {name}" for line, name in imports_of(module)
                 if name.startswith(ABOVE)]
    assert offending == [], f"{module} imports {offending}"


def test_engine_and_transports_stay_out_of_the_core() -> None:
    """STYLE habit 1: the engine, threads, transports and the public Client/Server sit
    above the core, never below it."""
    reached = [name for name in CLOSURE if name.startswith(ABOVE)]
    assert reached == ["mcp_sync.server._content", "mcp_sync.server._docstrings",
                       "mcp_sync.server._schema"]


def test_the_checker_sees_what_it_must() -> None:
    """STYLE habit 1: the parser catches plain, dotted, nested, relative and dynamic
    imports, and finds modules and packages of mcp_sync by name."""
    source = (
        "import os.path\n"
        "from concurrent.futures import Future\n"
        "def f():\n"
        "    import threading\n"
        "from .. import engine, types\n"
        "from .. import Server\n"
        "from ..transports.stdio import StdioClientTransport\n"
        "from ... import elsewhere\n"
        "__import__('socket')\n"
        "importlib.import_module('time')\n"
    )
    assert sorted(name for _, name in imports_in(source, "mcp_sync.protocol._x")) == sorted([
        "os.path", "concurrent.futures", "mcp_sync.engine", "mcp_sync.types",
        "mcp_sync", "mcp_sync.transports.stdio", OUTSIDE, "threading", *DYNAMIC])
    package = package_dir()
    assert source_of("mcp_sync.engine._engine") == package / "engine" / "_engine.py"
    assert source_of("mcp_sync.transports") == package / "transports" / "__init__.py"
    assert source_of("mcp_sync.transports.stdio") == package / "transports" / "stdio.py"
    assert source_of("mcp_sync.no_such_module") is None
    assert source_of("mcp_sync") is None and source_of("attrs") is None
