"""Instances of mcp_sync.types (and the JSON-RPC envelopes) survive pickle, copy and
deepcopy: equal, of the same class, and sharing the one empty ``extra`` again."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import pytest

from mcp_sync import jsonrpc, types
from mcp_sync.protocol._convert import from_wire
from mcp_sync.protocol._model import NO_EXTRA

SAMPLES: list[Any] = [
    types.TextContent(text="plain"),
    types.CallToolResult(
        content=[types.TextContent(text="a", annotations=types.Annotations(priority=0.5)),
                 types.EmbeddedResource(resource=types.TextResourceContents(
                     uri="file:///a.txt", text="inside"))],
        is_error=True, meta={"trace": [1, 2]}),
    # Members this revision does not define, kept in ``extra`` at every level.
    from_wire({"content": [{"type": "text", "text": "t", "title": "new"}],
               "structuredContent": {"n": 1}}, types.CallToolResult),
    types.Prompt(name="greet", arguments=[types.PromptArgument(name="who", required=True)]),
    types.CreateMessageRequest(params=types.CreateMessageRequestParams(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(text="hi"))],
        max_tokens=5)),
    jsonrpc.Request(7, "tools/call", {"name": "echo"}),
]

COPIES: dict[str, Callable[[Any], Any]] = {
    "pickle": lambda value: pickle.loads(pickle.dumps(value)),
    "pickle protocol 0": lambda value: pickle.loads(pickle.dumps(value, protocol=0)),
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
}


def _extras(value: Any) -> list[Any]:
    """The ``extra`` of ``value`` and of every instance inside it, in order."""
    found: list[Any] = []
    if hasattr(value, "__attrs_attrs__"):
        for field in value.__attrs_attrs__:
            member = getattr(value, field.name)
            if field.name == "extra":
                found.append(member)
            else:
                found += _extras(member)
    elif isinstance(value, (list, tuple)):
        for item in value:
            found += _extras(item)
    return found


@pytest.mark.parametrize("how", list(COPIES))
@pytest.mark.parametrize("value", SAMPLES, ids=lambda value: type(value).__name__)
def test_a_copy_is_equal_and_keeps_the_shared_empty_extra(value: Any, how: str) -> None:
    copied = COPIES[how](value)
    assert copied == value
    assert copied is not value
    assert type(copied) is type(value)
    for original, kept in zip(_extras(value), _extras(copied), strict=True):
        assert (kept is NO_EXTRA) == (original is NO_EXTRA)
        assert kept == original


def test_a_deep_copy_shares_no_mutable_member() -> None:
    value = from_wire({"content": [], "structuredContent": {"n": [1]}, "vendor": {"n": [1]}},
                      types.CallToolResult)
    copied = copy.deepcopy(value)
    assert copied.extra == {"vendor": {"n": [1]}}
    assert copied.extra is not value.extra
    assert copied.extra["vendor"] is not value.extra["vendor"]
    assert copied.structured == {"n": [1]}
    assert copied.structured_content is not value.structured_content


def test_instances_of_hashable_members_hash_by_value() -> None:
    """Frozen, so hashable when every member is: equal instances hash alike, whether their
    empty ``extra`` is the shared one or a dict of their own; a list member or extra
    members make an instance unhashable, as a list is."""
    shared = types.TextContent(text="a", annotations=types.Annotations(priority=0.5))
    own_empty = types.TextContent(text="a", annotations=types.Annotations(priority=0.5),
                                  extra={})
    decoded = from_wire({"type": "text", "text": "a", "annotations": {"priority": 0.5}},
                        types.TextContent)
    assert shared == own_empty == decoded
    assert hash(shared) == hash(own_empty) == hash(decoded)
    assert len({shared, own_empty, decoded, types.TextContent(text="b")}) == 2
    assert hash(jsonrpc.Notification("ping")) == hash(jsonrpc.Notification("ping"))
    with pytest.raises(TypeError):
        hash(types.CallToolResult(content=[]))
    with pytest.raises(TypeError):
        hash(from_wire({"type": "text", "text": "a", "title": "new"}, types.TextContent))
