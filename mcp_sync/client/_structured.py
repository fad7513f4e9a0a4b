"""The output schemas a server listed for its tools, and the check of each tool result.

``tools/list`` tells the client each tool's ``outputSchema`` (2025-06-18); the client
keeps the latest one per tool name and checks every result of that tool against it
(V0618-20, DES-10): ``structuredContent`` must conform, and must be there unless the
result is an error, as the official TypeScript client also requires. A tool never listed
is not checked.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from .. import types
from ..errors import ToolOutputError
from ..protocol._schema_check import SchemaCheck, UnsupportedDialect

__all__ = ["OutputSchemas"]


class OutputSchemas:
    """The output schemas of the tools listed so far, by name; safe from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._checks: dict[str, SchemaCheck] = {}

    def remember(self, tools: Iterable[types.Tool]) -> None:
        """Keep the output schema of each listed tool (forget it when it has none)."""
        with self._lock:
            for tool in tools:
                schema = tool.output_schema
                if schema is None:
                    self._checks.pop(tool.name, None)
                else:
                    known = self._checks.get(tool.name)
                    if known is None or known.schema != schema:
                        self._checks[tool.name] = SchemaCheck(schema)

    def check(self, name: str, result: types.CallToolResult) -> types.CallToolResult:
        """Return ``result`` if it fits the tool's listed output schema.

        Raises:
            ToolOutputError: it does not, or its structured content is missing.
        """
        with self._lock:
            check = self._checks.get(name)
        if check is None or result.is_error:
            return result
        data = result.structured_content
        if data is None:
            raise ToolOutputError(name, ["the tool declares an output schema but its result "
                                         "has no structuredContent"], result)
        try:
            problems = check.problems(data)
        except UnsupportedDialect as exc:  # V1125-3: say so rather than guess
            raise ToolOutputError(name, [f"cannot check the result: {exc}"], result) from None
        if problems:
            raise ToolOutputError(name, problems, result)
        return result
