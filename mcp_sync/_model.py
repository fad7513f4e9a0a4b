"""The base of the library's many small frozen attrs classes.

attrs writes and compiles ``__repr__``, ``__eq__`` and ``__hash__`` for every class it
builds, and with over a hundred message classes that compiling was most of the time it
takes to import the package (a server's start-up, a client's connect). The classes are
declared with ``repr=False, eq=False`` and inherit these three generic methods instead,
which behave as attrs' own: fields compared and shown in order, ``repr=False``/``eq=False``
fields left out, instances of different classes never equal.

attrs' frozen ``__init__`` sets each member through ``object.__setattr__`` bound afresh for
every instance; :func:`use_fast_inits` gives each class, on its first construction, an
``__init__`` with the same signature that sets the slots through their descriptors,
about 16% faster (0.41 against 0.345 µs for a ``TextContent``: a tool returning 10,000
items builds them all). Compiling it on first use keeps it out of the import.

Every class keeps the wire members this revision does not define in ``extra``, which is
nearly always empty. All of them share one read-only empty mapping as the default: a fresh
dict per instance made a 10,000-item result allocate 10,000 more objects for the garbage
collector to track and scan, for nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType, MemberDescriptorType
from typing import Any

import attrs

__all__ = ["NO_EXTRA", "Model", "fills_slots_directly", "mutable_twin", "publish",
           "use_fast_inits"]

#: The ``extra`` of an instance that has no undefined wire members.
NO_EXTRA: Mapping[str, Any] = MappingProxyType({})


class Model:
    """Equality, hashing and repr from the attrs fields of the subclass."""

    # Here rather than in each subclass (attrs then adds none of its own), so that a
    # subclass's slots follow the weakref one and a class with the same slots has the
    # same layout: see mutable_twin.
    __slots__ = ("__weakref__",)

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


_INSTALLED = "__mcp_sync_fast_init__"
_PUBLIC_MODULE = "mcp_sync.types"


def publish(namespace: Mapping[str, Any]) -> None:
    """Make the public classes a private types module defines classes of mcp_sync.types.

    They belong to that module: their reprs, pickles and documentation name it, and the
    content conversion recognises wire types by it. Each also gets the fast ``__init__``
    (a tool may build thousands of content items). Called at the end of every private
    types module, so that a class is published however its module came to be imported.
    """
    defined_here = namespace["__name__"]
    for name, value in namespace.items():
        if (not name.startswith("_") and isinstance(value, type) and attrs.has(value)
                and value.__module__ == defined_here):
            value.__module__ = _PUBLIC_MODULE
    use_fast_inits()


def use_fast_inits() -> None:
    """Give every attrs class built on :class:`Model` so far the fast ``__init__``."""
    pending: list[type[Any]] = [Model]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        # attrs replaces a slotted class with a new one; the first stays a subclass.
        if "__attrs_attrs__" in vars(cls) and _INSTALLED not in vars(cls):
            _install_lazy_init(cls)


def _install_lazy_init(cls: type[Any]) -> None:
    attrs_init: Callable[..., None] = vars(cls)["__init__"]

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        fast = _compiled_init(cls, attrs_init) or attrs_init
        cls.__init__ = fast  # a race between threads only compiles it twice
        fast(self, *args, **kwargs)

    __init__.__wrapped__ = attrs_init  # type: ignore[attr-defined] # inspect.signature
    __init__.__qualname__ = attrs_init.__qualname__
    cls.__init__ = __init__
    setattr(cls, _INSTALLED, True)


def fills_slots_directly(cls: type[Any]) -> bool:
    """Whether an instance may be built by setting its slots, without attrs' ``__init__``:
    no hooks around it, no validators or converters, every member a slot."""
    if hasattr(cls, "__attrs_post_init__") or hasattr(cls, "__attrs_pre_init__"):
        return False
    return all(field.validator is None and field.converter is None
               and isinstance(getattr(cls, field.name, None), MemberDescriptorType)
               for field in attrs.fields(cls))


def mutable_twin(cls: type[Any]) -> type[Any] | None:
    """A class of the same layout as ``cls`` with nothing of its own but the slots, or
    None if ``cls`` has none such.

    A frozen class refuses attribute stores, so its instances are filled through each
    slot's descriptor, a call per member. An instance of the twin takes plain stores,
    several times cheaper, and then becomes a ``cls`` by ``__class__`` assignment, which
    CPython allows between classes of one layout: made, filled and turned, a
    ``TextContent`` costs about two thirds of what it costs filled by descriptors.
    """
    twin = _twins.get(cls)
    if twin is None and cls not in _twins:  # a race between threads only makes it twice
        twin = _twins[cls] = _make_twin(cls)
    return twin


_twins: dict[type[Any], type[Any] | None] = {}


def _make_twin(cls: type[Any]) -> type[Any] | None:
    if cls.__bases__ != (Model,) or not fills_slots_directly(cls):
        return None
    twin = type(cls.__name__, (Model,), {"__slots__": tuple(
        field.name for field in attrs.fields(cls))})
    probe: Any = object.__new__(twin)
    try:
        probe.__class__ = cls
    except TypeError:  # a layout CPython does not take as the same
        return None
    return twin


def _compiled_init(cls: type[Any], attrs_init: Callable[..., None]) -> Callable[..., None] | None:
    """``cls``'s ``__init__`` setting slots through their descriptors, or None if attrs'
    own does more than set each member from its argument or its plain default."""
    if not fills_slots_directly(cls):
        return None
    namespace: dict[str, Any] = {}
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    for index, field in enumerate(attrs.fields(cls)):
        if not field.init or isinstance(field.default, attrs.Factory):  # type: ignore[arg-type]
            return None
        parameter = field.alias
        if field.default is not attrs.NOTHING:
            namespace[f"_d{index}"] = field.default
            parameter += f"=_d{index}"
        (keyword if field.kw_only else positional).append(parameter)
        namespace[f"_s{index}"] = getattr(cls, field.name).__set__
        body.append(f"    _s{index}(self, {field.alias})")
    parameters = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    source = "\n".join([f"def __init__({parameters}):", *body, "    pass"])
    exec(compile(source, f"<mcp_sync init {cls.__qualname__}>", "exec"), namespace)
    init: Callable[..., None] = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__annotations__ = dict(getattr(attrs_init, "__annotations__", {}))
    return init
