"""The public surface: what the package exports, and that it stays small and typed."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import mcp_sync

PACKAGE = Path(mcp_sync.__file__).resolve().parent

EXPECTED = [
    "CapabilityError", "Client", "ConnectionClosed", "ConnectionLost", "Context", "McpError",
    "ProtocolVersionError", "RequestCancelled", "RequestTimeout", "RpcError",
    "SamplingRejected", "Server", "SessionExpired", "ToolCallDenied",
    "__version__", "errors", "types", "Audio", "Image", "McpLogHandler", "ServerConnection",
    "content", "ElicitationRequest", "ElicitationResult", "UrlElicitationRequired",
]


def test_exports_snapshot() -> None:
    """A change to the public names is a deliberate act: update this list with it."""
    assert sorted(mcp_sync.__all__) == sorted(EXPECTED)
    for name in mcp_sync.__all__:
        assert hasattr(mcp_sync, name), name


def test_package_is_typed() -> None:
    assert (PACKAGE / "py.typed").is_file()


def test_public_modules_document_their_public_names() -> None:
    """Every name a public module exports has a docstring (classes and functions)."""
    for module_name in ("client", "server", "context", "errors", "testing", "types", "content",
                        "django", "gui"):
        module = __import__(f"mcp_sync.{module_name}", fromlist=["__all__"])
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isclass(value) or inspect.isfunction(value):
                doc = getattr(value, "__doc__", None)
                assert doc and doc.strip(), f"mcp_sync.{module_name}.{name} has no docstring"


def test_modules_stay_small() -> None:
    """STYLE habit 11: one responsibility a module, about 600 lines at most."""
    too_long = {}
    for path in PACKAGE.rglob("*.py"):
        lines = len(path.read_text().splitlines())
        if lines > 1000:
            too_long[str(path.relative_to(PACKAGE))] = lines
    assert not too_long


def test_library_never_prints() -> None:
    """STDIO-4: no print() to stdout in the library, outside the command line (cli.py,
    __main__.py and its modules in _cli/)."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path.name in ("cli.py", "__main__.py") or path.parent.name == "_cli":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "print"
                    and not any(k.arg == "file" for k in node.keywords)):
                offenders.append(f"{path.name}:{node.lineno}")
    assert not offenders
