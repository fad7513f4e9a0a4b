"""The quick start's command lines (docs/quickstart.md) run as written, against the
page's own server.py: the ``mcp-sync`` lines a newcomer types first."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parent.parent / "docs" / "quickstart.md"
TEXT = PAGE.read_text(encoding="utf-8")
SERVER = next(block for block in re.findall(r"```python\n(.*?)```", TEXT, re.S)
              if block.startswith("# file: server.py"))
LINES = [line for block in re.findall(r"```sh\n(.*?)```", TEXT, re.S)
         for line in block.splitlines() if line.startswith("mcp-sync ")]
EXPECTED = {"call add a=2 b=40": "42", "call shout text=hello times=3": "HELLO HELLO HELLO"}


def test_the_page_has_command_lines() -> None:
    assert len(LINES) >= 4


@pytest.mark.parametrize("line", LINES)
def test_a_quick_start_command_line_works(line: str, tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text(SERVER, encoding="utf-8")
    words = shlex.split(line)[1:]
    words = [sys.executable if word == "python" else word for word in words]
    done = subprocess.run([sys.executable, "-m", "mcp_sync", *words], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    for start, output in EXPECTED.items():
        if line.startswith(f"mcp-sync {start} "):
            assert done.stdout.strip() == output
    if "--json" in words:
        assert '"structuredContent"' in done.stdout
