"""The base of the library's many small frozen attrs classes.

attrs writes and compiles ``__repr__``, ``__eq__`` and ``__hash__`` for every class it
builds, and with over a hundred message classes that compiling was most of the time it
takes to import the package (a server's start-up, a client's connect). The classes are
declared with ``repr=False, eq=False`` and inherit these three generic methods instead,
which behave as attrs' own: fields compared and shown in order, ``repr=False``/``eq=False``
fields left out, instances of different classes never equal.

Every class keeps the wire members this revision does not define in ``extra``, which is
nearly always empty. All of them share one read-only empty mapping as the default: a fresh
dict per instance made a 10,000-item result allocate 10,000 more objects for the garbage
collector to track and scan, for nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

__all__ = ["NO_EXTRA", "Model"]

#: The ``extra`` of an instance that has no undefined wire members.
NO_EXTRA: Mapping[str, Any] = MappingProxyType({})


class Model:
    """Equality, hashing and repr from the attrs fields of the subclass."""

    __slots__ = ()

    def __repr__(self) -> str:
        shown = ", ".join(f"{field.name}={getattr(self, field.name)!r}"
                          for field in self.__attrs_attrs__
                          if field.repr and not (field.name == "extra" and not self.extra))
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, field.name) == getattr(other, field.name)
                   for field in self.__attrs_attrs__ if field.eq)

    def __hash__(self) -> int:
        return hash((self.__class__, *(getattr(self, field.name)
                                       for field in self.__attrs_attrs__
                                       if (field.eq if field.hash is None else field.hash))))

    __attrs_attrs__: Any
    extra: Mapping[str, Any]
