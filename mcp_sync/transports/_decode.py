"""Parsing a received frame: the one function every transport parses through."""

from __future__ import annotations

from ..protocol._jsonrpc import Incoming, decode

__all__ = ["decode_frame"]


def decode_frame(frame: bytes | str) -> Incoming:
    """One frame (a line, a POST body, an event's data) as messages: :func:`jsonrpc.decode`."""
    return decode(frame)
