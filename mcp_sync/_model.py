"""The base of the library's many small frozen attrs classes.

attrs writes and compiles ``__repr__``, ``__eq__`` and ``__hash__`` for every class it
builds, and with over a hundred message classes that compiling was most of the time it
takes to import the package (a server's start-up, a client's connect). The classes are
declared with ``repr=False, eq=False`` and inherit these three generic methods instead,
which behave as attrs' own: fields compared and shown in order, ``repr=False``/``eq=False``
fields left out, instances of different classes never equal.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Model"]


class Model:
    """Equality, hashing and repr from the attrs fields of the subclass."""

    __slots__ = ()

    def __repr__(self) -> str:
        shown = ", ".join(f"{field.name}={getattr(self, field.name)!r}"
                          for field in self.__attrs_attrs__ if field.repr)
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
