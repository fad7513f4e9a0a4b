"""mcp_sync.types builds the types of optional features on first use, and nothing else
about them changes: every name is there, listed, published under mcp_sync.types, and the
same object whichever thread asked first."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from mcp_sync import types
from mcp_sync.protocol._convert import from_wire, to_wire


def _run_fresh(code: str) -> object:
    """Run ``code`` in a new interpreter; what it printed last, as JSON."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _defined_in(module_name: str) -> set[str]:
    """The public classes and aliases a types module defines (not those it imports)."""
    path = Path(importlib.import_module(f"mcp_sync.protocol.{module_name}").__file__ or "")
    defined: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defined |= {t.id for t in targets if isinstance(t, ast.Name)}
    return {name for name in defined if not name.startswith("_")}


def test_every_lazy_name_comes_from_the_module_that_defines_it() -> None:
    for module_name in set(types._LAZY.values()):
        mapped = {name for name, where in types._LAZY.items() if where == module_name}
        assert mapped == _defined_in(module_name), module_name
    eager = ("_types_common", "_types_features", "_types_messages")
    assert set(types._LAZY).isdisjoint(set().union(*map(_defined_in, eager)))
    assert set(types._LAZY) <= set(types.__all__)
    for name in types.__all__:
        assert getattr(types, name) is not None, name


def test_a_fresh_import_builds_only_the_types_every_session_uses() -> None:
    found = _run_fresh(
        "import json, sys\n"
        "from mcp_sync import types\n"
        "before = sorted(m for m in sys.modules if m.startswith('mcp_sync.protocol._types'))\n"
        "listed = 'Resource' in dir(types) and 'Resource' not in vars(types)\n"
        "resource = types.Resource(uri='file:///a', name='a')\n"
        "after = sorted(m for m in sys.modules if m.startswith('mcp_sync.protocol._types'))\n"
        "print(json.dumps([before, listed, after, type(resource).__module__,\n"
        "                  'Resource' in vars(types)]))\n")
    assert found == [
        [f"mcp_sync.protocol._types_{area}" for area in ("common", "features", "messages")],
        True,
        [f"mcp_sync.protocol._types_{area}"
         for area in ("common", "features", "messages", "resources")],
        "mcp_sync.types",
        True,
    ]


def test_threads_asking_at_once_get_the_same_classes() -> None:
    found = _run_fresh(
        "import json, threading\n"
        "from mcp_sync import types\n"
        "names = sorted(types._LAZY)\n"
        "start = threading.Barrier(8, timeout=30)\n"
        "seen = []\n"
        "def look():\n"
        "    start.wait()\n"
        "    seen.append([id(getattr(types, name)) for name in names])\n"
        "threads = [threading.Thread(target=look) for _ in range(8)]\n"
        "[t.start() for t in threads]\n"
        "[t.join(30) for t in threads]\n"
        "final = [id(getattr(types, name)) for name in names]\n"
        "print(json.dumps([len(seen), all(ids == final for ids in seen)]))\n")
    assert found == [8, True]


def test_a_lazily_built_class_behaves_like_the_others() -> None:
    prompt = types.Prompt(name="greet", arguments=[types.PromptArgument(name="who")])
    assert type(prompt).__module__ == "mcp_sync.types"
    assert repr(prompt).startswith("Prompt(name='greet'")
    assert from_wire(to_wire(prompt), types.Prompt) == prompt
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        prompt.name = "other"  # type: ignore[misc]


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchType'"):
        types.NoSuchType  # noqa: B018
    assert not hasattr(types, "resource")


def test_error_messages_name_unions_of_types_not_built_at_import() -> None:
    found = _run_fresh(
        "import json\n"
        "from mcp_sync import types\n"
        "from mcp_sync.protocol._convert import from_wire\n"
        "from mcp_sync.errors import InvalidParams\n"
        "try:\n"
        "    from_wire({'method': 'x'}, types.ClientRequest)\n"
        "except InvalidParams as exc:\n"
        "    print(json.dumps(str(exc)))\n")
    assert isinstance(found, str)
    assert found.startswith("invalid ClientRequest: expected one of 'initialize'")
