"""Server-sent events framing, both ways, without I/O.

:func:`format_event` turns one message into the bytes of one event (and
:func:`format_data_event` one already encoded); :class:`SseParser` turns bytes, fed in
whatever pieces they arrive, back into :class:`SseEvent` objects, following the WHATWG
event-stream rules: ``data`` lines joined with newlines, comments (lines starting with
``:``) ignored, ``id`` kept across events until changed, ``retry`` as a reconnection
delay, CRLF, CR and LF all ending a line, a leading BOM dropped.
"""

from __future__ import annotations

import attrs

__all__ = ["SseEvent", "SseParser", "format_comment", "format_data_event", "format_event",
           "format_priming", "format_retry"]


@attrs.frozen
class SseEvent:
    """One dispatched event. ``id`` is the stream's last event id when it was dispatched."""

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


def _head(event: str | None, event_id: str | None, retry: int | None) -> str:
    """The field lines of an event that come before its data, each ending its line."""
    head = ""
    if event_id is not None:
        if "\n" in event_id or "\r" in event_id or "\0" in event_id:
            raise ValueError("an event id may not contain a newline or NUL")
        head += f"id: {event_id}\n"
    if event is not None:
        head += f"event: {event}\n"
    if retry is not None:
        head += f"retry: {int(retry)}\n"
    return head


def format_event(data: str, *, event: str | None = "message", event_id: str | None = None,
                 retry: int | None = None) -> bytes:
    """The bytes of one event; multi-line ``data`` becomes several ``data:`` lines."""
    lines = data.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return (_head(event, event_id, retry) + "\n".join(f"data: {line}" for line in lines)
            + "\n\n").encode("utf-8")


def format_data_event(data: bytes, *, event: str | None = "message",
                      event_id: str | None = None) -> bytes:
    """:func:`format_event` for data already encoded as UTF-8, such as a JSON message.

    Compact JSON holds no line break (JSON escapes them inside strings), so the message
    goes on one ``data:`` line as it is, without being decoded, split, joined and encoded
    again.
    """
    if b"\n" in data or b"\r" in data:
        return format_event(data.decode("utf-8"), event=event, event_id=event_id)
    return b"".join((_head(event, event_id, None).encode("utf-8"), b"data: ", data, b"\n\n"))


def format_priming(event_id: str, retry: int | None = None) -> bytes:
    """An event of an id and empty data: it gives the client a ``Last-Event-ID`` to
    resume from before any message went out (V1125-12); clients skip its empty data.
    ``retry`` tells at once how long to wait before reconnecting, should the stream end."""
    return _head(None, event_id, retry).encode("utf-8") + b"data: \n\n"


def format_retry(milliseconds: int) -> bytes:
    """A lone ``retry:`` field: how long the client should wait before reconnecting
    (V1125-14). It dispatches no event."""
    return f"retry: {max(0, int(milliseconds))}\n\n".encode()


def format_comment(text: str = "") -> bytes:
    """A comment line: ignored by parsers, useful to keep a connection alive."""
    return f": {text}\n\n".encode()


class SseParser:
    """Incremental event-stream parser: :meth:`feed` bytes, get complete events.

    Args:
        max_event_size: the most bytes one event may collect before :meth:`feed` raises
            ``ValueError``, so a peer cannot make us buffer without bound.
    """

    def __init__(self, max_event_size: int = 128 * 1024 * 1024) -> None:
        self.max_event_size = max_event_size
        self.last_event_id: str | None = None
        self.retry: int | None = None
        self._pending = b""  # the first bytes, until we know whether they are a BOM
        self._buffer = bytearray()  # an incomplete line
        self._scanned = 0  # how much of _buffer is known to hold no line break
        self._started = False
        self._data: list[str] = []
        self._data_size = 0
        self._event = ""
        self._saw_cr = False

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """Parse ``chunk``; returns the events it completed (possibly none).

        Each byte is searched once however the stream is cut, so a large event arriving
        in many small chunks costs time in proportion to its size.
        """
        if not self._started and chunk:
            head = self._pending + chunk
            if len(head) < 3 and b"\xef\xbb\xbf".startswith(head):
                self._pending = head
                return []
            self._started = True
            self._pending = b""
            chunk = head[3:] if head.startswith(b"\xef\xbb\xbf") else head
        if self._saw_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]  # the LF of a CRLF split across two chunks
        self._saw_cr = False
        buffer = self._buffer
        buffer += chunk
        events: list[SseEvent] = []
        start = 0
        search = self._scanned
        length = len(buffer)
        # The next CR and LF at or after `search`; -1 stays true for the rest of the buffer.
        cr = buffer.find(b"\r", search)
        lf = buffer.find(b"\n", search)
        while start < length:
            if cr != -1 and cr < search:
                cr = buffer.find(b"\r", search)
            if lf != -1 and lf < search:
                lf = buffer.find(b"\n", search)
            if cr == -1 and lf == -1:
                break
            if cr == -1 or (lf != -1 and lf < cr):
                end, next_start = lf, lf + 1
            else:
                end = cr
                if cr + 1 < length:
                    next_start = cr + 2 if buffer[cr + 1] == 0x0A else cr + 1
                else:
                    next_start = cr + 1
                    self._saw_cr = True
            if buffer.startswith(b"data:", start, end):
                # A message is nearly all one data line, so its value is taken from the
                # buffer without the field name: sliced and decoded, not also split at
                # the colon and cut again (each a copy of a possibly large line).
                value = start + 6 if start + 5 < end and buffer[start + 5] == 0x20 else start + 5
                self._add_data(buffer[value:end].decode("utf-8", "replace"))
            else:
                event = self._line(buffer[start:end].decode("utf-8", "replace"))
                if event is not None:
                    events.append(event)
            start = search = next_start
        if start:
            del buffer[:start]
        self._scanned = len(buffer)
        if len(buffer) + self._data_size > self.max_event_size:
            raise ValueError(f"an event exceeds {self.max_event_size} bytes")
        return events

    def _add_data(self, value: str) -> None:
        self._data.append(value)
        self._data_size += len(value) + 1
        if self._data_size > self.max_event_size:
            raise ValueError(f"an event exceeds {self.max_event_size} bytes")

    def _line(self, line: str) -> SseEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._add_data(value)
        elif field == "event":
            self._event = value
        elif field == "id":
            if "\0" not in value:
                self.last_event_id = value
        elif field == "retry" and value.isdigit():
            self.retry = int(value)
        return None

    def _dispatch(self) -> SseEvent | None:
        data, event = self._data, self._event
        self._data, self._data_size, self._event = [], 0, ""
        if not data:
            return None
        return SseEvent(data="\n".join(data), event=event or "message",
                        id=self.last_event_id, retry=self.retry)
