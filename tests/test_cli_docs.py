"""Every ```console block of docs/cli.md runs, and prints what the page shows.

A block is a sequence of ``$ mcp-sync ...`` lines, each followed by its output (stdout and
stderr together). ``mcp-sync`` runs as ``python -m mcp_sync`` and ``python`` as this
interpreter, from the repository's root.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import pytest

from tests.conftest import ROOT

PAGE = ROOT / "docs" / "cli.md"
BLOCK = re.compile(r"^```console\n(?P<body>.*?)^```\s*$", re.MULTILINE | re.DOTALL)


def _examples() -> list[tuple[str, str]]:
    examples: list[tuple[str, str]] = []
    for block in BLOCK.finditer(PAGE.read_text(encoding="utf-8")):
        for chunk in re.split(r"^\$ ", block["body"], flags=re.MULTILINE)[1:]:
            command, _, output = chunk.partition("\n")
            examples.append((command, output))
    return examples


EXAMPLES = _examples()


def test_the_page_has_examples() -> None:
    assert len(EXAMPLES) >= 10


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("command", "output"), EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_example_prints_what_the_page_shows(command: str, output: str) -> None:
    words = shlex.split(command)
    assert words[0] == "mcp-sync"
    argv = [sys.executable, "-m", "mcp_sync",
            *[sys.executable if word == "python" else word for word in words[1:]]]
    completed = subprocess.run(argv, cwd=ROOT, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=50)
    assert completed.stdout == output
    assert (completed.returncode == 0) == ("mcp-sync:" not in output)
