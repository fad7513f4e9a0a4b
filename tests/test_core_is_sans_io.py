"""The modules below the engine do no I/O, start no threads and never wait (STYLE habit 1).

Each core module is parsed, not imported, so a forbidden import is found even inside a
function body or an ``if TYPE_CHECKING`` block. The check follows the core's imports of
other mcp_sync modules, so a helper module a core module relies on is held to the same
rule, and importing the engine or a transport from the core is caught as well.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import mcp_sync

PACKAGE = Path(mcp_sync.__file__).resolve().parent

CORE = ("errors", "types", "_model", "_types_common", "_types_features", "_types_messages",
        "_types_resources", "_types_prompts", "_types_completion", "_types_client_features",
        "_types_envelopes", "_convert", "_codec", "_text_items",
        "jsonrpc", "_protocol", "_versions", "_schema", "_content", "_docstrings", "_events")

FORBIDDEN = frozenset({
    "threading", "_thread", "socket", "subprocess", "time", "select", "selectors", "os",
    "requests", "werkzeug", "queue", "concurrent", "asyncio", "multiprocessing", "signal",
})

OUTSIDE = "<outside mcp_sync>"
DYNAMIC = ("__import__", "importlib.import_module")


def _imports_in(source: str) -> list[tuple[int, str]]:
    """(line, absolute dotted name) for every import in ``source``, a module of mcp_sync."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level > 1:
                base = OUTSIDE
            elif node.level == 1:
                base = "mcp_sync" + (f".{node.module}" if node.module else "")
            else:
                base = node.module or ""
            found.append((node.lineno, base))
            # "from . import types" names a module, not an attribute.
            if base == "mcp_sync":
                found += [(node.lineno, f"mcp_sync.{alias.name}") for alias in node.names]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id == "__import__"):
            found.append((node.lineno, DYNAMIC[0]))
        elif isinstance(node, ast.Attribute) and node.attr == "import_module":
            found.append((node.lineno, DYNAMIC[1]))
    return found


def _source_of(name: str) -> Path | None:
    """The file of an mcp_sync module given by its dotted name, if it is one."""
    parts = name.split(".")
    if parts[0] != "mcp_sync" or len(parts) == 1:
        return None  # the package itself runs first whatever is imported; not followed
    module = PACKAGE.joinpath(*parts[1:-1]) / f"{parts[-1]}.py"
    package = PACKAGE.joinpath(*parts[1:]) / "__init__.py"
    return module if module.is_file() else package if package.is_file() else None


def _core_closure() -> dict[str, Path]:
    """The core modules and every mcp_sync module they import, directly or not."""
    found: dict[str, Path] = {}
    todo = [f"mcp_sync.{name}" for name in CORE]
    while todo:
        name = todo.pop()
        path = _source_of(name)
        if path is None or name in found:
            continue
        found[name] = path
        todo += [imported for _, imported in _imports_in(path.read_text(encoding="utf-8"))]
    return dict(sorted(found.items()))


CLOSURE = _core_closure()


def test_every_core_module_exists() -> None:
    """STYLE habit 1: a renamed core module must not silently drop out of the check."""
    assert {f"mcp_sync.{name}" for name in CORE} <= set(CLOSURE)


@pytest.mark.parametrize("module", list(CLOSURE))
def test_core_module_imports_nothing_that_does_io(module: str) -> None:
    """STYLE habit 1, GEN-3: no threads, sockets, processes, clocks, queues or HTTP in
    the core or in anything it imports from mcp_sync, and no import hidden from this
    check (dynamic, or reaching outside the package by a relative path)."""
    source = CLOSURE[module].read_text(encoding="utf-8")
    offending = [f"line {line}: {name}" for line, name in _imports_in(source)
                 if name.split(".")[0] in FORBIDDEN or name in DYNAMIC or name == OUTSIDE]
    assert offending == [], f"{module} imports {offending}"


def test_engine_and_transports_stay_out_of_the_core() -> None:
    """STYLE habit 1: the engine, threads, transports and the public Client/Server sit
    above the core, never below it."""
    above = {"mcp_sync._engine", "mcp_sync._threads", "mcp_sync.client", "mcp_sync.server",
             "mcp_sync.context", "mcp_sync.testing", "mcp_sync.cli"}
    reached = set(CLOSURE)
    assert reached & above == set()
    assert not any(name.startswith("mcp_sync.transports") for name in reached)


def test_the_checker_sees_what_it_must() -> None:
    """STYLE habit 1: the parser catches plain, dotted, nested, relative and dynamic
    imports, and finds modules and packages of mcp_sync by name."""
    source = (
        "import os.path\n"
        "from concurrent.futures import Future\n"
        "def f():\n"
        "    import threading\n"
        "from . import _engine, types\n"
        "from .transports.stdio import StdioClientTransport\n"
        "from .. import elsewhere\n"
        "__import__('socket')\n"
        "importlib.import_module('time')\n"
    )
    assert sorted(name for _, name in _imports_in(source)) == sorted([
        "os.path", "concurrent.futures", "mcp_sync", "mcp_sync._engine", "mcp_sync.types",
        "mcp_sync.transports.stdio", OUTSIDE, "threading", *DYNAMIC])
    assert _source_of("mcp_sync._engine") == PACKAGE / "_engine.py"
    assert _source_of("mcp_sync.transports") == PACKAGE / "transports" / "__init__.py"
    assert _source_of("mcp_sync.transports.stdio") == PACKAGE / "transports" / "stdio.py"
    assert _source_of("mcp_sync.no_such_module") is None
    assert _source_of("mcp_sync") is None and _source_of("attrs") is None
