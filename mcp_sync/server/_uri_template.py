"""RFC 6570 URI templates, as far as resource templates need them.

Supported: simple expansion ``{name}`` (level 1) and reserved expansion ``{+name}``
(level 2). A server only ever has to *match* a concrete URI against a template, so each
template compiles to one anchored regular expression:

* ``{name}`` matches one or more characters other than ``/``, ``?`` and ``#``, so it never
  crosses a path segment, and the match is percent-decoded (``a%20b`` gives ``a b``);
* ``{+name}`` matches one or more of any character, slashes included, also decoded.

A decoded value with a ``..`` path segment (or a NUL) never matches, whichever operator
produced it (``%2F..%2F`` included): resource templates are a common way to expose
files, and walking out of the intended directory must not be one template away
(RESOURCES-11).

Other operators (``#``, ``.``, ``/``, ``;``, ``?``, ``&``), several variables in one
expression, modifiers (``*``, ``:3``) and two expressions with no literal text between
them are refused when the template is built: they would make matching ambiguous or
need more than a regular expression.
"""

from __future__ import annotations

import re
import urllib.parse

__all__ = ["UriTemplate", "is_template"]

_EXPRESSION = re.compile(r"\{([^{}]*)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_UNSUPPORTED_OPERATORS = "#./;?&=,!@|"
# What simple expansion leaves unencoded: RFC 3986 "unreserved" characters.
_SIMPLE_SAFE = "-._~"
# Reserved expansion also keeps the reserved characters.
_RESERVED_SAFE = "-._~:/?#[]@!$&'()*+,;="


def is_template(uri: str) -> bool:
    """True if ``uri`` contains a template expression (``{...}``)."""
    return _EXPRESSION.search(uri) is not None


class UriTemplate:
    """A parsed URI template that matches concrete URIs and expands values into them.

    Args:
        template: the template text, e.g. ``users://{user_id}/profile``.

    Raises:
        ValueError: the template uses syntax outside the supported subset, repeats a
            variable, or has unbalanced braces.
    """

    __slots__ = ("_parts", "_pattern", "reserved", "template", "variables")

    def __init__(self, template: str) -> None:
        self.template = template
        pattern: list[str] = []
        parts: list[tuple[str, bool] | str] = []
        variables: list[str] = []
        reserved: set[str] = set()
        position = 0
        previous_was_expression = False
        for expression in _EXPRESSION.finditer(template):
            literal = template[position:expression.start()]
            _check_literal(template, literal)
            if literal:
                pattern.append(re.escape(literal))
                parts.append(literal)
            elif previous_was_expression:
                raise ValueError(f"URI template {template!r}: two expressions need literal "
                                 "text between them, or matching is ambiguous")
            body = expression.group(1)
            plus = body.startswith("+")
            name = body[1:] if plus else body
            if name[:1] and name[0] in _UNSUPPORTED_OPERATORS:
                raise ValueError(f"URI template {template!r}: the operator {name[0]!r} is not "
                                 "supported (only {name} and {+name} are)")
            if not _NAME.fullmatch(name):
                raise ValueError(f"URI template {template!r}: {body!r} is not a variable name "
                                 "usable as a Python parameter")
            if name in variables:
                raise ValueError(f"URI template {template!r}: variable {name!r} appears twice")
            variables.append(name)
            if plus:
                reserved.add(name)
            pattern.append(f"(?P<{name}>.+)" if plus else f"(?P<{name}>[^/?#]+)")
            parts.append((name, plus))
            position = expression.end()
            previous_was_expression = True
        tail = template[position:]
        _check_literal(template, tail)
        if tail:
            pattern.append(re.escape(tail))
            parts.append(tail)
        self.variables: tuple[str, ...] = tuple(variables)
        self.reserved = frozenset(reserved)
        self._parts = tuple(parts)
        self._pattern = re.compile("".join(pattern), re.DOTALL)

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"

    def match(self, uri: str) -> dict[str, str] | None:
        """The decoded variable values if ``uri`` fits the template, else None."""
        found = self._pattern.fullmatch(uri)
        if found is None:
            return None
        values = {name: urllib.parse.unquote(value) for name, value in found.groupdict().items()}
        if any(_escapes(value) for value in values.values()):
            return None
        return values

    def expand(self, **values: str) -> str:
        """The URI for the given variable values (each one percent-encoded as RFC 6570 says).

        Raises:
            KeyError: a variable of the template has no value.
        """
        pieces: list[str] = []
        for part in self._parts:
            if isinstance(part, str):
                pieces.append(part)
                continue
            name, plus = part
            pieces.append(urllib.parse.quote(str(values[name]),
                                             safe=_RESERVED_SAFE if plus else _SIMPLE_SAFE))
        return "".join(pieces)


def _escapes(value: str) -> bool:
    return "\x00" in value or ".." in re.split(r"[/\\]", value)


def _check_literal(template: str, literal: str) -> None:
    if "{" in literal or "}" in literal:
        raise ValueError(f"URI template {template!r} has an unbalanced brace")
