"""How a server process we started ended, told in the ConnectionLost its client raises.

A server that fails to start (a syntax error, a missing module or file, an early
``sys.exit``) explains itself on its stderr and in its exit status. The stdio transport
keeps the last lines of that stderr in a :class:`StderrTail` and, when the server's
stdout ends without our closing it, :func:`exit_error` waits briefly for the process to
exit and puts both in the error.
"""

from __future__ import annotations

import collections
import shlex
import signal
import subprocess
import threading
from collections.abc import Sequence

from ..errors import ConnectionLost

__all__ = ["MAX_TAIL_CHARS", "MAX_TAIL_LINES", "StderrTail", "exit_error"]

#: The most lines, and characters, of a server's stderr a ConnectionLost carries.
MAX_TAIL_LINES = 20
MAX_TAIL_CHARS = 4096
#: How long a client whose server closed its stdout waits for it to exit, and then for
#: the rest of its stderr: a server that crashed is exiting already.
EXIT_WAIT = 1.0
_MAX_COMMAND_CHARS = 200


class StderrTail:
    """The last lines a server wrote to its stderr, bounded in lines and characters."""

    def __init__(self, max_lines: int = MAX_TAIL_LINES, max_chars: int = MAX_TAIL_CHARS) -> None:
        self._lines: collections.deque[str] = collections.deque(maxlen=max_lines)
        self._max_chars = max_chars
        self._lock = threading.Lock()

    def add(self, line: str) -> None:
        with self._lock:
            self._lines.append(line[-self._max_chars:])

    def text(self) -> str:
        """The lines kept, joined; cut at the front to the character bound."""
        with self._lock:
            text = "\n".join(self._lines)
        return text[-self._max_chars:]


def _describe_status(code: int) -> str:
    if code >= 0:
        return f"exited with status {code}"
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    return f"was killed by {name}"


def exit_error(command: Sequence[str], process: subprocess.Popen[bytes],
               tail: StderrTail | None, drained: threading.Thread | None,
               wait: float = EXIT_WAIT) -> ConnectionLost:
    """The ConnectionLost for a server whose stdout ended (or stdin broke) unasked.

    Waits up to ``wait`` seconds for the process to exit, and as long again for the
    thread reading its stderr (``drained``) to reach the end, so that the last lines,
    usually a traceback, are in.
    """
    shown = shlex.join(command)
    if len(shown) > _MAX_COMMAND_CHARS:
        shown = shown[:_MAX_COMMAND_CHARS - 3] + "..."
    try:
        code: int | None = process.wait(wait)
    except subprocess.TimeoutExpired:
        code = None
    if drained is not None and code is not None:
        drained.join(wait)
    stderr_tail = tail.text() if tail is not None else None
    if code is None:
        message = f"the server ({shown}, pid {process.pid}) closed its stdout"
    else:
        message = f"the server ({shown}) {_describe_status(code)}"
    if stderr_tail:
        message += "; the last lines of its stderr:\n" + stderr_tail
    elif tail is not None:
        message += "; it wrote nothing to stderr"
    return ConnectionLost(message, exit_code=code, stderr_tail=stderr_tail)
