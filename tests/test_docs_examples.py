"""Every ```python block of every page in docs/ runs, as a script would, and its checks hold.

The convention, also described in docs/development.md:

* Each block runs as ``python block.py`` in a fresh interpreter (its stdin one empty
  line, as if the user pressed Enter; under a timeout), in a scratch folder shared by
  the blocks of one page, in page order.
* A block whose first line is ``# file: NAME`` is also saved as ``NAME`` in that folder
  before it runs, so later blocks of the page can start it (``python server.py``) or
  import it. A server script run on its own reads that line, then end-of-file, and exits.
* The folder starts with ``server.py``, the first server of docs/quickstart.md, for
  blocks that connect to "your server" without defining one.
* A fragment that continues the page's story (``client.list_tools()``) is preceded by the
  HTML comment ``<!-- run with: FIXTURE -->`` (invisible on the site), and runs after that
  fixture's lines (``PRELUDES`` below):

  - ``client``: ``client``, connected over stdio to tests/docs_example_server.py (the
    server the client pages talk about), ``cmd``, that server's command, and the names
    ``sys``, ``base64``, ``Client``, ``Context``, ``Server``, ``types``,
    ``RequestCancelled`` and ``RequestTimeout``;
  - ``http``: the same server over Streamable HTTP, whose URL replaces
    ``http://127.0.0.1:8000/mcp`` in the block;
  - ``server``: ``server``, an empty ``Server``, with ``Context`` and ``Server``;
  - ``web``: ``server`` as above, ``app``, a Flask application, and ``auth``, a
    ``ResourceServer`` (nothing is fetched until a token arrives), with the names of
    ``mcp_sync.auth`` and ``os``.
* A block that cannot run at all (it serves until interrupted, or needs an identity
  provider on the internet) is preceded by ``<!-- not run: REASON -->``; the reason is
  required, and the test below keeps such blocks few.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import ROOT

DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
FENCE = re.compile(
    r"^(?P<before>(?:<!--[^\n]*-->\n)?)```python[^\n]*\n(?P<code>.*?)^```\s*$",
    re.MULTILINE | re.DOTALL)
NOT_RUN = re.compile(r"<!-- not run: (?P<reason>\S[^\n]*?) -->")
RUN_WITH = re.compile(r"<!-- run with: (?P<fixture>[\w-]+) -->")
FILE_LINE = re.compile(r"#\s*file:\s*(?P<name>[\w./-]+)\s*$")
TIMEOUT = 30
EXAMPLE_SERVER = ROOT / "tests" / "docs_example_server.py"
DOCS_URL = "http://127.0.0.1:8000/mcp"

_IMPORTS = """\
import base64, os, sys
from mcp_sync import Client, Context, RequestCancelled, RequestTimeout, Server, types
"""
_CLOSE_CLIENTS = """
for _docs_client in (globals().get("client"), _docs_first_client):
    if _docs_client is not None:
        _docs_client.close()
"""
PRELUDES: dict[str, tuple[str, str]] = {
    "client": (_IMPORTS + f"cmd = [sys.executable, {str(EXAMPLE_SERVER)!r}]\n"
               "client = _docs_first_client = Client.stdio(cmd, timeout=30)\n",
               _CLOSE_CLIENTS),
    "http": (_IMPORTS + "_docs_first_client = None\n", _CLOSE_CLIENTS),
    "server": ("from mcp_sync import Context, Server\nserver = Server('example')\n", ""),
    "web": ("""\
import os
from flask import Flask
from mcp_sync import Context, Server
from mcp_sync.auth import *
server = Server("example")
app = Flask(__name__)
auth = ResourceServer(
    resource="https://mcp.example.com/mcp",
    authorization_servers=["https://idp.example.com/realms/demo"],
    verifier=JWTVerifier(jwks_uri="https://idp.example.com/realms/demo/certs",
                         issuer="https://idp.example.com/realms/demo"))
""", ""),
}


class Block:
    def __init__(self, page: Path, index: int, line: int, code: str, skip: str | None,
                 fixture: str | None) -> None:
        self.page, self.index, self.line, self.code = page, index, line, code
        self.skip, self.fixture = skip, fixture

    @property
    def name(self) -> str:
        return f"{self.page.stem}:{self.line}"

    @property
    def file_name(self) -> str | None:
        first = self.code.split("\n", 1)[0]
        found = FILE_LINE.fullmatch(first.strip())
        return found["name"] if found else None


def blocks_of(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for index, match in enumerate(FENCE.finditer(text)):
        not_run = NOT_RUN.search(match["before"] or "")
        run_with = RUN_WITH.search(match["before"] or "")
        line = text.count("\n", 0, match.start("code"))
        found.append(Block(page, index, line, match["code"],
                           not_run["reason"] if not_run else None,
                           run_with["fixture"] if run_with else None))
    return found


BLOCKS = {page.stem: blocks_of(page) for page in PAGES}


def first_server() -> str:
    for block in BLOCKS["quickstart"]:
        if block.file_name == "server.py":
            return block.code
    raise AssertionError("docs/quickstart.md has no block saved as server.py")


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One folder per page, holding server.py from the start."""
    folders = {}
    for page in BLOCKS:
        folder = tmp_path_factory.mktemp(f"docs-{page}")
        (folder / "server.py").write_text(first_server(), encoding="utf-8")
        folders[page] = folder
    return folders


def test_every_page_has_its_examples_and_few_are_not_run() -> None:
    every = [block for blocks in BLOCKS.values() for block in blocks]
    assert len(every) >= 60
    not_run = [block.name for block in every if block.skip]
    # Each is justified in its comment: serving forever, or a provider on the internet.
    assert len(not_run) <= 7, f"too many blocks not run: {not_run}"


def test_fixtures_named_by_the_docs_exist() -> None:
    named = {block.fixture for blocks in BLOCKS.values() for block in blocks}
    assert named - {None} <= set(PRELUDES), named - set(PRELUDES)


@contextmanager
def served_over_http(folder: Path) -> Iterator[str]:
    """tests/docs_example_server.py over Streamable HTTP on a free port; yields its URL."""
    child = subprocess.Popen([sys.executable, str(EXAMPLE_SERVER), "--http"], cwd=folder,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdin is not None and child.stdout is not None
    try:
        url = child.stdout.readline().strip()     # the test's timeout bounds this wait
        assert url.startswith("http://"), "the example server over HTTP did not start"
        yield url
    finally:
        child.stdin.close()
        try:
            child.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        child.stdout.close()


def run_block(block: Block, folder: Path) -> subprocess.CompletedProcess[str]:
    if block.file_name:
        target = folder / block.file_name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block.code, encoding="utf-8")
    prelude, epilogue = PRELUDES[block.fixture] if block.fixture else ("", "")
    script = folder / f"block_{block.index}.py"
    with contextlib.ExitStack() as stack:
        code = block.code
        if block.fixture == "http":
            code = code.replace(DOCS_URL, stack.enter_context(served_over_http(folder)))
        script.write_text(prelude + code + epilogue, encoding="utf-8")
        return _run_script(script, folder)


def _run_script(script: Path, folder: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ,
               PYTHONPATH=os.pathsep.join([str(folder), str(ROOT), str(ROOT / "examples")]),
               PYTHONUNBUFFERED="1")
    return subprocess.run([sys.executable, script.name], cwd=folder, env=env,
                          input="\n", capture_output=True, text=True,
                          timeout=TIMEOUT)


@pytest.mark.timeout(TIMEOUT * 12)
@pytest.mark.parametrize("page", sorted(BLOCKS))
def test_docs_page_examples_run(page: str, scratch: dict[str, Path]) -> None:
    """The page's blocks, in order, each as a script; the first failure fails the page."""
    for block in BLOCKS[page]:
        if block.skip:
            continue
        done = run_block(block, scratch[page])
        assert done.returncode == 0, (
            f"docs/{page}.md, the block at line {block.line} failed "
            f"(exit {done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
