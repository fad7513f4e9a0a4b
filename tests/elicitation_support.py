"""Checks against the 2025-06-18 and 2025-11-25 schemas for the elicitation tests."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import jsonschema

SPEC = Path(__file__).resolve().parent / "spec"


@functools.cache
def _validator(version: str, definition: str) -> Any:
    schema = json.loads((SPEC / f"schema-{version}.json").read_text(encoding="utf-8"))
    if "$defs" in schema:
        return jsonschema.Draft202012Validator(
            {"$ref": f"#/$defs/{definition}", "$defs": schema["$defs"]})
    return jsonschema.Draft7Validator(
        {"$ref": f"#/definitions/{definition}", "definitions": schema["definitions"]})


def check_version(value: Any, definition: str, version: str) -> Any:
    """Assert ``value`` fits ``definition`` of ``version``'s schema; return it."""
    errors = [error.message for error in _validator(version, definition).iter_errors(value)]
    assert not errors, f"{version} {definition}: {errors} in {value!r}"
    return value
