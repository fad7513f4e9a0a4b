"""Server-sent events framing (used by the Streamable HTTP and legacy HTTP+SSE transports)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_sync.protocol._sse import (
    SseEvent,
    SseParser,
    format_comment,
    format_data_event,
    format_event,
)


def parse_all(data: bytes, pieces: list[int] | None = None) -> list[SseEvent]:
    parser = SseParser()
    events: list[SseEvent] = []
    if pieces is None:
        return parser.feed(data)
    start = 0
    for size in pieces:
        events += parser.feed(data[start:start + size])
        start += size
    events += parser.feed(data[start:])
    return events


def test_format_event_with_id_and_name_http_24_ambig_13() -> None:
    """HTTP-24, AMBIG-13: `id:` then `event: message` then one `data:` per line."""
    frame = format_event('{"a":1}', event_id="s1:3")
    assert frame == b'id: s1:3\nevent: message\ndata: {"a":1}\n\n'
    assert parse_all(frame) == [SseEvent(data='{"a":1}', id="s1:3")]


@given(text=st.text(max_size=40), event_id=st.none() | st.text(
    st.characters(codec="utf-8", exclude_characters="\r\n\0"), max_size=8))
def test_encoded_data_frames_exactly_as_text_http_24(text: str, event_id: str | None) -> None:
    """HTTP-24: an already encoded message is framed byte for byte as its text would be,
    line breaks and non-ASCII text included (surrogates cannot be encoded, so none)."""
    text = text.encode("utf-8", "replace").decode("utf-8")
    for event in ("message", "endpoint", None):
        assert (format_data_event(text.encode("utf-8"), event=event, event_id=event_id)
                == format_event(text, event=event, event_id=event_id))


def test_encoded_data_refuses_an_id_with_a_newline() -> None:
    with pytest.raises(ValueError):
        format_data_event(b'{"a":1}', event_id="a\rb")


def test_multi_line_data_and_comments_and_retry() -> None:
    text = ": hello\nretry: 2500\nevent: endpoint\ndata: one\ndata:two\ndata:  three\n\n"
    assert parse_all(text.encode()) == [
        SseEvent(data="one\ntwo\n three", event="endpoint", retry=2500)]
    assert format_comment("ping") == b": ping\n\n"
    assert parse_all(format_comment("ping")) == []


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_every_line_ending(newline: bytes) -> None:
    data = newline.join([b"id: 7", b"data: x", b"", b"data: y", b"", b""])
    assert parse_all(data) == [SseEvent(data="x", id="7"), SseEvent(data="y", id="7")]


def test_events_without_data_are_not_dispatched_ambig_13() -> None:
    """AMBIG-13: empty priming events (an id and nothing else) produce no message, but
    their id still counts for resumption."""
    parser = SseParser()
    assert parser.feed(b"id: prime-1\ndata:\n\n") == [SseEvent(data="", id="prime-1")]
    assert parser.feed(b"id: prime-2\n\n") == []
    assert parser.last_event_id == "prime-2"


def test_bom_is_dropped_even_when_split() -> None:
    assert parse_all(b"\xef\xbb\xbfdata: x\n\n", [1, 1, 1]) == [SseEvent(data="x")]


def test_crlf_split_across_chunks() -> None:
    assert parse_all(b"data: a\r\n\r\ndata: b\r\n\r\n", [8, 1, 1, 1]) == [
        SseEvent(data="a"), SseEvent(data="b")]


def test_oversized_event_is_refused() -> None:
    parser = SseParser(max_event_size=100)
    with pytest.raises(ValueError):
        parser.feed(b"data: " + b"x" * 200)
    parser = SseParser(max_event_size=100)
    with pytest.raises(ValueError):
        for _ in range(20):
            parser.feed(b"data: " + b"x" * 10 + b"\n")


def test_event_ids_with_newlines_are_refused() -> None:
    with pytest.raises(ValueError):
        format_event("x", event_id="a\nb")


@given(messages=st.lists(st.dictionaries(st.text(max_size=5), st.text(max_size=20),
                                         max_size=3), max_size=5),
       cuts=st.lists(st.integers(min_value=0, max_value=40), max_size=10))
def test_round_trip_in_any_pieces(messages: list[dict[str, str]], cuts: list[int]) -> None:
    stream = b"".join(format_event(json.dumps(m, ensure_ascii=False), event_id=str(i))
                      for i, m in enumerate(messages))
    events = parse_all(stream, cuts)
    assert [json.loads(e.data) for e in events] == messages
    assert [e.id for e in events] == [str(i) for i in range(len(messages))]
