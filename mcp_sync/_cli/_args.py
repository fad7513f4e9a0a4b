"""The command line: its parser, and turning ``key=value`` words into arguments."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from typing import Any

from .._version import __version__
from ..types import LOGGING_LEVELS

__all__ = ["UsageError", "parse", "parse_arguments", "split_server"]

#: Exit statuses: distinct, so that scripts can tell the failures apart.
EXIT_OK = 0
EXIT_SERVER_ERROR = 1  # the server answered with an error (or the tool failed)
EXIT_USAGE = 2
EXIT_CONNECTION = 3  # the server could not be reached, or went away
EXIT_TIMEOUT = 4
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """The command line cannot be used as given."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:
        raise UsageError(message)


def _common(parser: argparse.ArgumentParser, *, defaults: bool) -> None:
    def given(value: Any) -> dict[str, Any]:
        return {"default": value} if defaults else {}

    parser.add_argument("--json", action="store_true", help="print JSON instead of text",
                        **given(False))
    parser.add_argument("--timeout", type=float, metavar="S",
                        help="seconds to wait for each answer (default 60)", **given(60.0))
    parser.add_argument("--url", help="the MCP endpoint of a Streamable HTTP server",
                        **given(None))
    parser.add_argument("--header", action="append", metavar="K:V",
                        help="an HTTP header for --url, e.g. 'Authorization: Bearer T' "
                             "(repeatable)", **given([]))
    parser.add_argument("--oauth", action="store_true",
                        help="authorize with the server's authorization server (OAuth 2.1, "
                             "in the browser), keeping tokens in --token-file",
                        **given(False))
    parser.add_argument("--token-file", metavar="PATH",
                        help="where --oauth keeps its tokens (default: mcp-sync/tokens.json "
                             "in the user's config folder)", **given(None))


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="mcp-sync",
        usage="mcp-sync [--json] [--timeout S] COMMAND ARGS "
              "(-- SERVER COMMAND... | --url URL [--header K:V] [--oauth])",
        description="Talk to an MCP server from a shell. Give the server's command after "
                    "'--' (it is started over stdio), or --url for a Streamable HTTP server.",
        epilog="Exit status: 0 ok, 1 the server answered with an error, 2 bad usage, "
               "3 no connection, 4 timeout, 130 interrupted.")
    parser.add_argument("--version", action="version", version=f"mcp-sync {__version__}")
    _common(parser, defaults=True)
    shared = _Parser(add_help=False, argument_default=argparse.SUPPRESS)
    _common(shared, defaults=False)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, **options: Any) -> argparse.ArgumentParser:
        # The common options may come after the command too: mcp-sync tools --json ...
        made: argparse.ArgumentParser = commands.add_parser(
            name, parents=[shared], prog=f"mcp-sync {name}",
            epilog="Then the server: -- SERVER COMMAND... or --url URL.", **options)
        return made

    add("info", help="the server's name, version, protocol and capabilities")
    add("tools", help="list the tools")
    add("resources", help="list the resources")
    add("templates", help="list the resource templates")
    add("prompts", help="list the prompts")
    add("ping", help="check that the server answers")
    call = add("call", help="call a tool")
    call.add_argument("tool", help="the tool's name")
    call.add_argument("arguments", nargs="*", metavar="key=value | JSON",
                      help="arguments as key=value words (values are JSON when they parse "
                           "as JSON, else strings) or one JSON object")
    read = add("read", help="read a resource")
    read.add_argument("uri")
    prompt = add("prompt", help="get a prompt")
    prompt.add_argument("name")
    prompt.add_argument("arguments", nargs="*", metavar="key=value")
    complete = add(
        "complete", help="complete an argument of a prompt or a resource template")
    complete.add_argument("ref", help="a prompt's name, or a resource template (or URI) "
                                      "containing '://'")
    complete.add_argument("argument", help="the argument to complete")
    complete.add_argument("value", nargs="?", default="", help="what is typed so far")
    complete.add_argument("context", nargs="*", metavar="key=value",
                          help="the other arguments already chosen")
    logs = add("logs", help="print log messages until Ctrl-C or the "
                                            "server ends")
    logs.add_argument("--level", default="debug", choices=LOGGING_LEVELS,
                      help="the least severe level to receive (default debug)")
    bridge = add(
        "bridge", help="serve a stdio server over Streamable HTTP (--port), or an HTTP "
                       "server over stdio (--stdio)")
    bridge.add_argument("--port", type=int, help="serve at http://HOST:PORT/mcp")
    bridge.add_argument("--host", default="127.0.0.1", help="the address to listen on")
    bridge.add_argument("--stdio", action="store_true",
                        help="serve on this process's stdin/stdout")
    return parser


def split_server(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """The command's own words, and the server's command after the first ``--``."""
    words = list(argv)
    if "--" not in words:
        return words, []
    at = words.index("--")
    return words[:at], words[at + 1:]


def parse(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    """The options and the server command; raises UsageError."""
    ours, server = split_server(argv)
    options = _parser().parse_args(ours)
    options.headers = _headers(options.header)
    if len(server) == 1 and server[0].startswith(("http://", "https://")) and options.url is None:
        options.url, server = server[0], []  # the URL after '--' is taken as --url
    if options.command == "bridge":
        if (options.port is None) == (not options.stdio):
            raise UsageError("bridge needs either --port N or --stdio")
        if options.stdio and (options.url is None or server):
            raise UsageError("bridge --stdio serves an HTTP server: give --url, not '--'")
        if options.port is not None and (options.url is not None or not server):
            raise UsageError("bridge --port serves a stdio server: give its command "
                             "after '--'")
    if options.url is None and not server:
        raise UsageError("give the server's command after '--', or --url URL")
    if options.url is not None and server:
        raise UsageError("give either --url or a command after '--', not both")
    if (options.headers or options.oauth) and options.url is None:
        raise UsageError("--header and --oauth are for --url")
    if options.token_file is not None and not options.oauth:
        raise UsageError("--token-file goes with --oauth")
    if options.timeout <= 0:
        raise UsageError("--timeout must be positive")
    return options, server


def _headers(given: Sequence[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for item in given:
        name, colon, value = item.partition(":")
        if not colon or not name.strip():
            raise UsageError(f"--header {item!r} is not NAME:VALUE")
        headers[name.strip()] = value.strip()
    return headers


#: JSON Schema types whose values are taken as given, never parsed as JSON.
_STRING_TYPES = frozenset({"string"})


def parse_arguments(words: Sequence[str], schema: Mapping[str, Any] | None = None, *,
                    strings: bool = False) -> dict[str, Any]:
    """``key=value`` words (or one JSON object) as a dict of arguments.

    A value is JSON when it parses as JSON (``3``, ``true``, ``{"a": 1}``) and a string
    otherwise; a property the ``schema`` types as a string stays a string (``007``), and
    one typed otherwise must parse. ``strings``: every value stays a string (prompts).

    Raises:
        UsageError: a word is neither ``key=value`` nor a JSON object.
    """
    if len(words) == 1 and words[0].lstrip().startswith("{"):
        try:
            value = json.loads(words[0])
        except ValueError as exc:
            raise UsageError(f"the arguments are not valid JSON: {exc}") from None
        if not isinstance(value, dict):
            raise UsageError("the arguments must be a JSON object")
        if strings and not all(isinstance(item, str) for item in value.values()):
            raise UsageError("prompt arguments must be strings")
        return value
    properties = (schema or {}).get("properties") or {}
    arguments: dict[str, Any] = {}
    for word in words:
        key, equals, text = word.partition("=")
        if not equals or not key:
            raise UsageError(f"argument {word!r} is not key=value (or give one JSON object)")
        arguments[key] = text if strings else _value(key, text, properties.get(key))
    return arguments


def _value(key: str, text: str, declared: Any) -> Any:
    kind = declared.get("type") if isinstance(declared, Mapping) else None
    kinds = set(kind) if isinstance(kind, list) else {kind} if isinstance(kind, str) else set()
    if kinds and kinds <= _STRING_TYPES:
        return text
    try:
        return json.loads(text)
    except ValueError:
        if kinds and "string" not in kinds:
            raise UsageError(f"{key}={text!r}: expected {' or '.join(sorted(kinds))} "
                             "(as JSON)") from None
        return text
