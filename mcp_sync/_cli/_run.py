"""Running one command against one server, and turning every failure into one line."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any, TypeVar

from .. import types
from ..client import Client
from ..errors import (
    ConnectionClosed,
    ConnectionLost,
    McpError,
    RequestTimeout,
)
from ..protocol._convert import to_wire
from ._args import (
    EXIT_CONNECTION,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_SERVER_ERROR,
    EXIT_TIMEOUT,
    EXIT_USAGE,
    UsageError,
    parse,
    parse_arguments,
)
from ._common import connect, fail, wait_lost
from ._output import print_json, text_of, write_blob_if_piped
from ._progress import ProgressBar

__all__ = ["run"]

T = TypeVar("T")

#: The protocol version ``logs`` speaks (see _command).
LOG_VERSION = "2025-11-25"


def run(argv: Sequence[str]) -> int:
    """Run the command line ``argv``; returns the exit status, never raises."""
    try:
        options, server = parse(argv)
    except UsageError as exc:
        fail(f"{exc} (see mcp-sync --help)")
        return EXIT_USAGE
    except SystemExit as exc:  # --help, --version: printed already
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    # Failures are printed below, once: the library's own warning of a lost connection
    # would say the same thing a second time. Put back after, for a caller in-process.
    library = logging.getLogger("mcp_sync")
    propagate, library.propagate = library.propagate, False
    silence = logging.NullHandler()
    library.addHandler(silence)
    try:
        return _run(options, server)
    finally:
        library.removeHandler(silence)
        library.propagate = propagate


def _run(options: argparse.Namespace, server: Sequence[str]) -> int:
    try:
        if options.command == "bridge":
            from ._bridge import bridge

            return bridge(options, server)
        return _command(options, server)
    except KeyboardInterrupt:
        fail("interrupted")
        return EXIT_INTERRUPTED
    except UsageError as exc:
        fail(str(exc))
        return EXIT_USAGE
    except RequestTimeout as exc:
        fail(f"timed out: {exc}")
        return EXIT_TIMEOUT
    except (ConnectionLost, ConnectionClosed) as exc:
        fail(f"lost the server: {exc}")
        return EXIT_CONNECTION
    except McpError as exc:  # an error answered, a version refused, a call denied...
        fail(str(exc))
        return EXIT_SERVER_ERROR
    except OSError as exc:  # the server's program is missing, the URL refuses...
        fail(f"cannot reach the server: {exc}")
        return EXIT_CONNECTION
    except Exception as exc:  # a bug must still end in one line, not a traceback
        fail(f"{type(exc).__name__}: {exc}")
        return EXIT_SERVER_ERROR


def _wait(future: Future[T]) -> T:
    # Ctrl-C while waiting cancels the request at the server before it ends the command.
    try:
        return future.result()
    except KeyboardInterrupt:
        future.cancel()
        raise


def _command(options: argparse.Namespace, server: Sequence[str]) -> int:
    command = options.command
    if command == "logs":
        def on_log(params: types.LoggingMessageNotificationParams) -> None:
            _print_log(options.json, params)

        # The modern era sends log messages only with the request they belong to; a
        # session of the newest legacy revision takes the server's every message.
        client = connect(options, server, on_log=on_log, protocol_version=LOG_VERSION)
    else:
        client = connect(options, server)
    with client:
        status = EXIT_OK
        if command == "info":
            wire: Any = {"serverInfo": to_wire(client.server_info),
                         "protocolVersion": client.protocol_version,
                         "capabilities": to_wire(client.server_capabilities),
                         "instructions": client.instructions}
        elif command == "tools":
            wire = [to_wire(tool) for tool in client.list_tools()]
        elif command == "resources":
            wire = [to_wire(item) for item in client.list_resources()]
        elif command == "templates":
            wire = [to_wire(item) for item in client.list_resource_templates()]
        elif command == "prompts":
            wire = [to_wire(item) for item in client.list_prompts()]
        elif command == "ping":
            client.ping()
            wire = {}
        elif command == "call":
            wire = _call(client, options)
            status = EXIT_SERVER_ERROR if wire.get("isError") else EXIT_OK
        elif command == "read":
            wire = to_wire(_wait(client.read_resource_async(options.uri)))
            if not options.json and write_blob_if_piped(wire):
                return EXIT_OK
        elif command == "prompt":
            arguments = parse_arguments(options.arguments, strings=True)
            wire = to_wire(_wait(client.get_prompt_async(options.name, arguments)))
        elif command == "complete":
            context = parse_arguments(options.context, strings=True) or None
            wire = to_wire(client.complete(options.ref, options.argument, options.value,
                                           context=context))
        else:
            return _follow_logs(client, options)
        if options.json:
            print_json(wire)
        elif command == "ping":
            print("ok")
        else:
            print(text_of(command, wire))
        if status != EXIT_OK:
            fail(f"the tool {options.tool!r} reported an error")
        return status


def _call(client: Client, options: argparse.Namespace) -> Any:
    schema: dict[str, Any] | None = None
    if options.arguments and not options.arguments[0].lstrip().startswith("{"):
        # key=value words: the tool's input schema decides which values stay strings.
        for tool in client.list_tools():
            if tool.name == options.tool:
                schema = dict(tool.input_schema)
    arguments = parse_arguments(options.arguments, schema)
    bar = ProgressBar()
    try:
        future = client.call_tool_async(options.tool, arguments, on_progress=bar)
        result = _wait(future)
    finally:
        bar.close()
    return to_wire(result)


def _print_log(as_json: bool, params: types.LoggingMessageNotificationParams) -> None:
    if as_json:
        print(json_line(to_wire(params)), flush=True)
        return
    data = params.data if isinstance(params.data, str) else json_line(params.data)
    source = f" [{params.logger}]" if params.logger else ""
    print(f"{params.level}{source}: {data}", flush=True)


def json_line(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def _follow_logs(client: Client, options: argparse.Namespace) -> int:
    client.set_logging_level(options.level)
    print(f"mcp-sync: following log messages at {options.level} and above; Ctrl-C ends",
          file=sys.stderr, flush=True)
    wait_lost(client)
    fail("the server ended")
    return EXIT_CONNECTION
