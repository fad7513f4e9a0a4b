"""Plain records for the library's own bookkeeping, built without attrs.

attrs builds a class by writing its methods as source and compiling them, many times the
cost of a plain class, and every class built at import is paid for again at every server
start-up. The wire types
need what attrs gives them (the fields the converter reads). Records that never reach the
wire (a registered tool, a request in flight, a compiled type hint) are plain classes on
:class:`Record` instead: their slots, an ``__init__`` written out, and a repr made from
the slots. They compare by identity, as nothing compares them otherwise.
"""

from __future__ import annotations

__all__ = ["Record"]


class _Unset:
    def __repr__(self) -> str:
        return "<unset>"


_UNSET = _Unset()


class Record:
    """The base of an internal record: a repr that shows its slots."""

    __slots__ = ()

    def __repr__(self) -> str:
        names = [name for cls in reversed(type(self).__mro__)
                 for name in vars(cls).get("__slots__", ())]
        shown = ", ".join(f"{name}={getattr(self, name, _UNSET)!r}" for name in names)
        return f"{type(self).__qualname__}({shown})"
