"""The base of the library's many small frozen attrs classes.

attrs writes and compiles ``__repr__``, ``__eq__`` and ``__hash__`` for every class it
builds, and with over a hundred message classes that compiling was most of the time it
takes to import the package (a server's start-up, a client's connect). The classes are
declared with ``repr=False, eq=False`` and inherit these three generic methods instead,
which behave as attrs' own: fields compared and shown in order, ``repr=False``/``eq=False``
fields left out, instances of different classes never equal. Each class keeps attrs' own
``__init__``.

Every class keeps the wire members this revision does not define in ``extra``, which is
nearly always empty. All of them share one read-only empty mapping as the default rather
than a fresh dict per instance: a 10,000-item result would otherwise hold 10,000 more
objects for the garbage collector to track.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import attrs

__all__ = ["NO_EXTRA", "Model", "publish"]

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
        # An empty ``extra`` is left out: NO_EXTRA, a read-only view, has no hash, and
        # equal instances have equal extras, so they still hash alike.
        return hash((self.__class__, *(getattr(self, field.name)
                                       for field in self.__attrs_attrs__
                                       if (field.eq if field.hash is None else field.hash)
                                       and not (field.name == "extra" and not self.extra))))

    def __reduce__(self) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        # NO_EXTRA, a read-only view, can be neither pickled nor deep-copied: an instance
        # goes as its class and its members, leaving out an ``extra`` that is NO_EXTRA.
        members = {field.alias: getattr(self, field.name) for field in self.__attrs_attrs__
                   if not (field.name == "extra" and self.extra is NO_EXTRA)}
        return _rebuild, (self.__class__, members)

    __attrs_attrs__: Any
    extra: Mapping[str, Any]


def _rebuild(cls: type[Model], members: dict[str, Any]) -> Model:
    return cls(**members)


_PUBLIC_MODULE = "mcp_sync.types"


def publish(namespace: Mapping[str, Any]) -> None:
    """Make the public classes a private types module defines classes of mcp_sync.types.

    They belong to that module: their reprs, pickles and documentation name it, and the
    content conversion recognises wire types by it. Called at the end of every private
    types module, so that a class is published however its module came to be imported.
    """
    defined_here = namespace["__name__"]
    for name, value in namespace.items():
        if (not name.startswith("_") and isinstance(value, type) and attrs.has(value)
                and value.__module__ == defined_here):
            value.__module__ = _PUBLIC_MODULE
