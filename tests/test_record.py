"""Internal records: plain slotted classes with a readable repr; events equal by value."""

from __future__ import annotations

import pytest

from mcp_sync.jsonrpc import Response
from mcp_sync.protocol._events import Ignored, Reply, ResponseReceived
from mcp_sync.protocol._record import Record
from mcp_sync.protocol._versions import PROFILES


class _Base(Record):
    __slots__ = ("first",)

    def __init__(self, first: int) -> None:
        self.first = first


class _Derived(_Base):
    __slots__ = ("second", "third")

    def __init__(self, first: int, second: str) -> None:
        super().__init__(first)
        self.second = second


def test_a_record_shows_its_slots_base_first_and_says_which_are_unset() -> None:
    assert repr(_Derived(1, "two")) == "_Derived(first=1, second='two', third=<unset>)"
    assert repr(PROFILES["2025-03-26"]).startswith(
        "VersionProfile(version='2025-03-26', batching=True, audio_content=True, ")


def test_a_record_holds_only_its_slots() -> None:
    record = _Derived(1, "two")
    with pytest.raises(AttributeError):
        record.other = 3  # type: ignore[attr-defined]
    assert not hasattr(record, "__dict__")


def test_events_are_equal_by_class_and_members() -> None:
    assert Reply(Response(1, {})) == Reply(Response(1, {}))
    assert Reply(Response(1, {})) != Reply(Response(2, {}))
    assert ResponseReceived(1, "ping", result={}) == ResponseReceived(1, "ping", result={})
    assert ResponseReceived(1, "ping", result={}) != ResponseReceived(1, "ping", result=None)
    assert Ignored("late") != Reply(Response(1, {}))
    assert Ignored("late") != "late"


def test_events_are_not_hashable_as_they_may_hold_dicts() -> None:
    with pytest.raises(TypeError):
        hash(ResponseReceived(1, "ping", result={}))
