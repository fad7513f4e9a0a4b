"""Parsing a received frame; a large one with the cyclic garbage collector paused.

Parsing a result of 10,000 content items allocates 10,000 dicts. They are never tracked
(they hold only strings), but CPython counts every allocation towards its next
young-generation pass: about 13 passes in one parse. Each promotes whatever young
objects are still alive, such as the items of the previous result a caller still holds,
so they are scanned again by the middle generation's passes and, once promoted to the
oldest, by full passes over every object of the process. A client keeping its last
result spent 4-7 ms of each such call collecting (12.7 young, 1.2 middle and 0.11 full
passes a call); with collection paused for the parse, 2-3 ms (0.9, 0.08 and 0.01). One
that drops each result before the next call pays a little more, 0.5-0.7 ms a call
against 0.4, for the one larger young pass after the parse. A server has its start-up
objects frozen instead (see ``_process``); a client lives in its user's process, where
that is not its decision.

A pause ends with the parse and leaves the collector as it found it: paused while any
thread parses a large frame, enabled again by the last one to finish, and only if it was
enabled when the first began.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ..jsonrpc import Incoming, decode

__all__ = ["LARGE_FRAME", "decode_frame", "gc_paused"]

#: Frames this long (bytes or characters) hold thousands of objects, or one long string.
LARGE_FRAME = 64 * 1024

_lock = threading.Lock()
_holders = 0
_enable_after = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause automatic collection for the block (not ``gc.collect()``)."""
    global _holders, _enable_after
    with _lock:
        if _holders == 0:
            _enable_after = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _enable_after:
                gc.enable()


def decode_frame(frame: bytes | str) -> Incoming:
    """:func:`mcp_sync.jsonrpc.decode`, pausing collection while a large frame is parsed."""
    if len(frame) < LARGE_FRAME:
        return decode(frame)
    with gc_paused():
        return decode(frame)
