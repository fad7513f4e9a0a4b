"""Sphinx configuration: MyST Markdown pages, the furo theme, the API from docstrings.

Build with ``python -m sphinx -W -b html docs OUT`` after ``pip install -e ".[docs]"``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcp_sync import __version__  # noqa: E402  (the path above makes a clone importable)

project = "mcp_sync"
author = "the mcp_sync authors"
copyright = "the mcp_sync authors"
release = __version__
version = ".".join(__version__.split(".")[:2])

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]

# Headings down to h3 get anchors, so pages can link to each other's sections
# (`client.md#eras-modern-and-legacy`).
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "deflist"]

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"members": True, "show-inheritance": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = False

# The content classes have an attribute named ``type``, so the builtin ``type`` in a
# signature (``type[Model]``) matches several targets; it is the builtin either way.
suppress_warnings = ["ref.python"]

html_theme = "furo"
html_title = f"mcp_sync {release}"
