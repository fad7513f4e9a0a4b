"""Tool arguments mirrored into HTTP headers (``x-mcp-header``, MCP 2026-07-28, SEP-2243).

Over Streamable HTTP a modern client copies each argument whose input-schema property
carries ``"x-mcp-header": "<Name>"`` into an ``Mcp-Param-<Name>`` request header, so that
a gateway or load balancer can route on it without reading the body; the server refuses
a call whose header and argument differ. A tool marks an argument with
``Annotated[str, Header("Region")]``; a hand-written ``input_schema`` writes the keyword
itself. Either way it is checked when the tool is registered.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import Annotated, Any, Union, get_args, get_origin

from ..protocol._http_headers import X_MCP_HEADER, is_header_token

__all__ = ["Header", "check_header_properties", "header_of", "with_header"]

#: The JSON Schema types an argument mirrored into a header may have.
_TYPES = ("string", "integer", "boolean")


class Header:
    """Mark a tool argument to be mirrored into the ``Mcp-Param-<name>`` HTTP header.

    Written as metadata of the argument's type hint::

        @server.tool()
        def deploy(region: Annotated[str, Header("Region")], image: str) -> str: ...

    The argument's schema gets ``"x-mcp-header": "Region"``; a modern client calling
    the tool over Streamable HTTP sends ``Mcp-Param-Region`` with the argument's value,
    and the server refuses the call (HTTP 400, -32020) when the two differ. Only a
    ``str``, ``int`` or ``bool`` argument that cannot be None may be marked.

    Args:
        name: what follows ``Mcp-Param-``: letters, digits and ``!#$%&'*+-.^_`|~``,
            unique (ignoring case) among the tool's arguments.

    Raises:
        ValueError: ``name`` is not such a token.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        if not is_header_token(name):
            raise ValueError(f"Header({name!r}): the name must be a non-empty HTTP token "
                             "(letters, digits and !#$%&'*+-.^_`|~)")
        self.name = name

    def __repr__(self) -> str:
        return f"Header({self.name!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Header) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("Header", self.name))


def header_of(hint: Any) -> Header | None:
    """The :class:`Header` in a parameter's ``Annotated`` hint (or in a member of its
    union, where it is then refused: such an argument may be None), if any."""
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        found = [header for member in get_args(hint)
                 if (header := header_of(member)) is not None]
        return found[0] if found else None
    if origin is not Annotated:
        return None
    found = [item for item in hint.__metadata__ if isinstance(item, Header)]
    if len(found) > 1:
        raise TypeError(f"more than one Header in {hint!r}")
    return found[0] if found else None


def with_header(schema: Mapping[str, Any], header: Header, where: str) -> dict[str, Any]:
    """``schema`` marked with ``header``.

    Raises:
        TypeError: the argument is not a plain string, integer or boolean.
    """
    if schema.get("type") not in _TYPES:
        raise TypeError(f"{where}: only a str, int or bool argument that cannot be None "
                        f"may be sent as a header ({header!r})")
    return {**schema, X_MCP_HEADER: header.name}


def check_header_properties(schema: Mapping[str, Any], where: str) -> None:
    """Check the ``x-mcp-header`` marks of a tool's input schema: each on a top-level
    property of type string, integer or boolean, each a token, no two alike.

    Raises:
        TypeError: a mark breaks one of those rules.
    """
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return
    seen: dict[str, str] = {}
    for name, prop in properties.items():
        if not isinstance(prop, Mapping) or X_MCP_HEADER not in prop:
            continue
        token = prop[X_MCP_HEADER]
        if not is_header_token(token):
            raise TypeError(f"{where}: property {name!r}: {X_MCP_HEADER} must be an HTTP "
                            f"token, not {token!r}")
        if prop.get("type") not in _TYPES:
            raise TypeError(f"{where}: property {name!r}: {X_MCP_HEADER} needs a \"type\" "
                            "of string, integer or boolean")
        other = seen.get(token.lower())
        if other is not None:
            raise TypeError(f"{where}: properties {other!r} and {name!r} both go to header "
                            f"Mcp-Param-{token}")
        seen[token.lower()] = name
