"""The layout keeps its rooms (DESIGN "Layout"): dependencies point down only.

Modules are parsed, not imported, so an import inside a function counts as much as one at
the top; only imports under ``if TYPE_CHECKING:`` are left aside, as they never run.
"""

from __future__ import annotations

from .helpers import imports_of, module_names, package_dir

MODULES = module_names()

#: The documented public entry points for HTTP, kept under transports/ for the import
#: path alone: each re-exports the public names of server/http or client/http.
PUBLIC_REEXPORTS = {
    "mcp_sync.transports.http_server": "mcp_sync.server.http._entry",
    "mcp_sync.transports.http_client": "mcp_sync.client.http._transport",
}


def _graph() -> dict[str, set[str]]:
    """Each module of mcp_sync and the modules of mcp_sync it imports when run."""
    return {name: {imported for _, imported in imports_of(name, type_checking=False)
                   if imported in MODULES and imported != name}
            for name in MODULES}


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle in ``graph``, as the modules along it, or [] if there is none."""
    state: dict[str, int] = {}  # 1 while on the path, 2 when done
    path: list[str] = []

    def visit(name: str) -> list[str]:
        state[name] = 1
        path.append(name)
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                return [*path[path.index(target):], target]
            if target not in state and (found := visit(target)):
                return found
        path.pop()
        state[name] = 2
        return []

    for name in sorted(graph):
        if name not in state and (found := visit(name)):
            return found
    return []


def test_no_import_cycle_between_modules() -> None:
    """DESIGN "Layout": no module imports, directly or not, a module that imports it."""
    cycle = _cycle(_graph())
    assert cycle == [], " -> ".join(cycle)


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) == []


def test_transports_import_no_server_or_client_code() -> None:
    """DESIGN "Layout": a transport moves whole messages and knows no MCP feature."""
    offending = []
    for name in MODULES:
        if not name.startswith("mcp_sync.transports") or name in PUBLIC_REEXPORTS:
            continue
        offending += [f"{name} line {line}: {imported}"
                      for line, imported in imports_of(name)
                      if imported.startswith(("mcp_sync.server", "mcp_sync.client"))]
    assert offending == []


def test_the_public_http_entry_points_only_reexport() -> None:
    """The two documented HTTP entry points under transports/ hold nothing but the
    imports of the module they stand for."""
    for name, implementation in PUBLIC_REEXPORTS.items():
        imported = {target for _, target in imports_of(name)}
        assert imported == {implementation}, name


def test_the_top_level_stays_small() -> None:
    """DESIGN "Layout": the public face at the top, the rest in subpackages."""
    top = [path.name for path in package_dir().glob("*.py")]
    assert len(top) <= 14, sorted(top)


def test_no_module_is_over_600_lines() -> None:
    long = {name: count for name, path in MODULES.items()
            if (count := len(path.read_text(encoding="utf-8").splitlines())) > 600}
    assert long == {}
