"""The base of the library's many small frozen attrs classes.

attrs writes and compiles ``__repr__``, ``__eq__`` and ``__hash__`` for every class it
builds, and with over a hundred message classes that compiling was most of the time it
takes to import the package (a server's start-up, a client's connect). The classes are
declared with ``repr=False, eq=False`` and inherit these three generic methods instead,
which behave as attrs' own: fields compared and shown in order, ``repr=False``/``eq=False``
fields left out, instances of different classes never equal.

attrs' frozen ``__init__`` sets each member through ``object.__setattr__`` bound afresh for
every instance. :func:`use_fast_inits` gives each class, on its first construction, a
faster way with the same signature, compiled then (on first use, to keep it out of the
import): a ``__new__`` that fills an instance of the class's mutable twin (see
:func:`mutable_twin`) by plain stores and turns it into the class, with
``object.__init__`` after it; or, for a class with no twin, an ``__init__`` that sets the
slots through their descriptors. A tool returning 10,000 items builds them all.

A class built on one that has the compiled ``__new__`` gets a ``__new__`` of its own that
makes a bare instance (:meth:`Model.__init_subclass__`), so that its ``__init__``, attrs'
or the base's, fills it as ever.

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

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__new__" in vars(cls):
            return
        for base in cls.__mro__[1:]:
            base_init = vars(base).get(_BUILT_BY_NEW)
            if base_init is not None:
                # Set before attrs decorates the class, which then keeps it; attrs' own
                # __init__ is written as ever, none being in the class yet.
                cls.__new__ = staticmethod(_bare_new(base_init))  # type: ignore[method-assign]
                return

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


def _bare_new(base_init: Callable[..., None]) -> Callable[..., Any]:
    """The ``__new__`` of a class built on one whose instances a compiled ``__new__``
    makes, and whose ``__init__`` is therefore ``object.__init__``."""

    def __new__(cls: type[Any], *args: Any, **kwargs: Any) -> Any:
        obj = object.__new__(cls)
        if cls.__init__ is object.__init__:  # a plain subclass, with no __init__ to fill it
            base_init(obj, *args, **kwargs)
        return obj

    return __new__


_INSTALLED = "__mcp_sync_fast_init__"
# In a class whose instances its compiled __new__ makes: attrs' own __init__.
_BUILT_BY_NEW = "__mcp_sync_attrs_init__"
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
        # A race between threads only compiles it twice; the mark, set first, keeps a
        # second thread from taking the __new__ it finds for a class's own.
        if _BUILT_BY_NEW not in vars(cls):
            new = _compiled_new(cls, attrs_init)
            if new is None:
                cls.__init__ = _compiled_init(cls, attrs_init) or attrs_init
            else:
                setattr(cls, _BUILT_BY_NEW, attrs_init)
                cls.__new__ = staticmethod(new)
                cls.__init__ = object.__init__
        attrs_init(self, *args, **kwargs)

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


def _parameters(cls: type[Any], names: dict[str, Any], first: str) -> str | None:
    """The parameter list of attrs' ``__init__`` of ``cls`` after ``first``, with each default
    put in ``names``; None if attrs' ``__init__`` does more than set each member from its
    argument or its plain default."""
    positional: list[str] = []
    keyword: list[str] = []
    for index, field in enumerate(attrs.fields(cls)):
        if not field.init or isinstance(field.default, attrs.Factory):  # type: ignore[arg-type]
            return None
        parameter = field.alias
        if field.default is not attrs.NOTHING:
            names[f"_d{index}"] = field.default
            parameter += f"=_d{index}"
        (keyword if field.kw_only else positional).append(parameter)
    return ", ".join([first, *positional, *(["*", *keyword] if keyword else [])])


def _compiled_new(cls: type[Any], attrs_init: Callable[..., None]) -> Callable[..., Any] | None:
    """``cls``'s ``__new__`` filling its mutable twin, or None if it has none.

    Not for a class that already has subclasses: they would inherit it, and with it a
    signature that may not be theirs.
    """
    twin = mutable_twin(cls)
    if twin is None or cls.__subclasses__() or "__new__" in vars(cls):
        return None
    namespace: dict[str, Any] = {"_twin": twin, "_cls": cls,
                                 "_for_subclass": _bare_new(attrs_init)}
    parameters = _parameters(cls, namespace, "_klass")
    if parameters is None:
        return None
    fields = attrs.fields(cls)
    passed = ", ".join(f"{field.alias}={field.alias}" for field in fields)
    source = "\n".join([
        f"def __new__({parameters}):",
        # Reached only by a subclass with a __new__ of its own that calls this one: it is
        # made as __init_subclass__ would have had it made.
        "    if _klass is not _cls:",
        f"        return _for_subclass(_klass, {passed})",
        "    _obj = _twin()",
        *(f"    _obj.{field.name} = {field.alias}" for field in fields),
        "    _obj.__class__ = _cls",
        "    return _obj"])
    exec(compile(source, f"<mcp_sync new {cls.__qualname__}>", "exec"), namespace)
    new: Callable[..., Any] = namespace["__new__"]
    # A call with a wrong argument is reported as a call of the class, as attrs' is.
    new.__qualname__ = cls.__qualname__
    new.__module__ = cls.__module__
    new.__annotations__ = {name: annotation for name, annotation
                           in getattr(attrs_init, "__annotations__", {}).items()
                           if name != "return"}
    return new


def _compiled_init(cls: type[Any], attrs_init: Callable[..., None]) -> Callable[..., None] | None:
    """``cls``'s ``__init__`` setting slots through their descriptors, or None if attrs'
    own does more than set each member from its argument or its plain default."""
    if not fills_slots_directly(cls):
        return None
    namespace: dict[str, Any] = {}
    parameters = _parameters(cls, namespace, "self")
    if parameters is None:
        return None
    body: list[str] = []
    for index, field in enumerate(attrs.fields(cls)):
        namespace[f"_s{index}"] = getattr(cls, field.name).__set__
        body.append(f"    _s{index}(self, {field.alias})")
    source = "\n".join([f"def __init__({parameters}):", *body, "    pass"])
    exec(compile(source, f"<mcp_sync init {cls.__qualname__}>", "exec"), namespace)
    init: Callable[..., None] = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__annotations__ = dict(getattr(attrs_init, "__annotations__", {}))
    return init
