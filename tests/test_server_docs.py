"""Every Python example in docs/server.md runs and its checks hold."""

from __future__ import annotations

import logging
import re

import pytest

from tests.conftest import ROOT

DOC = ROOT / "docs" / "server.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL)


def test_the_page_has_examples() -> None:
    assert len(BLOCKS) >= 10


@pytest.mark.timeout(30)
@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_docs_example_runs(index: int) -> None:
    """Each example, run as a script would be; one that would serve stdio only defines."""
    source = BLOCKS[index]
    serves_stdio = "server.run_stdio()" in source
    namespace = {"__name__": "docs_example" if serves_stdio else "__main__"}
    handlers = {name: list(logging.getLogger(name).handlers) for name in ("myapp",)}
    try:
        exec(compile(source, f"{DOC}:example-{index}", "exec"), namespace)
    finally:
        for name, before in handlers.items():
            logger = logging.getLogger(name)
            for handler in list(logger.handlers):
                if handler not in before:
                    logger.removeHandler(handler)
    assert "server" in namespace, "every example builds a server"
