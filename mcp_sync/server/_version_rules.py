"""Server rules that a newer protocol revision added: tool names and argument errors.

* Tool names (V1125-31): 1 to 128 characters of ASCII letters, digits, ``_``, ``-`` and
  ``.``. Other names still work with every client we know, so registering one warns.
* Argument errors (V1125-32, NAMBIG-7, DES-9): from 2025-11-25, arguments that do not fit
  the tool's input schema are answered with an ``isError`` result whose text says what is
  wrong, so that the model can correct its call; older sessions get -32602. An unknown
  tool, or ``arguments`` that is not an object, is -32602 in every version.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

from ..errors import InvalidParams
from ..protocol._versions import VersionProfile

__all__ = ["argument_error_result", "check_tool_name", "errors_as_results"]

_TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}")


def check_tool_name(name: str) -> None:
    """Warn (``UserWarning``) when ``name`` breaks the 2025-11-25 naming rules."""
    if not _TOOL_NAME.fullmatch(name):
        warnings.warn(
            f"tool name {name!r} should be 1 to 128 characters of ASCII letters, digits, "
            "'_', '-' and '.' (MCP 2025-11-25); some clients may refuse it",
            UserWarning, stacklevel=4)


def errors_as_results(profile: VersionProfile | None) -> bool:
    """Whether argument errors are answered as ``isError`` results in this session."""
    return profile is not None and profile.argument_errors_as_results


def argument_error_result(name: str, error: InvalidParams) -> dict[str, Any]:
    """The ``tools/call`` result (wire shape) for arguments that do not fit the schema."""
    return {"content": [{"type": "text",
                         "text": f"Invalid arguments for tool {name!r}: {error.message}"}],
            "isError": True}

