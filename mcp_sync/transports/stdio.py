"""The stdio transport: newline-delimited JSON over a child's pipes, or over our own.

* :class:`StdioClientTransport` spawns the server, drains its stderr, and on close shuts it
  down in the spec's order: close its stdin, wait, SIGTERM, wait, SIGKILL (SHUTDOWN-2).
* :class:`StdioServerTransport` serves on our stdin/stdout. While it runs, file
  descriptor 1 points at stderr, so a stray ``print()`` (even from C code or a child
  process) can never corrupt the message stream (STDIO-4).

Reads go through :class:`LineReader`, which a close from another thread interrupts even
while it is blocked, and which refuses lines beyond a size limit without buffering them.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import select
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import IO, Any

from .._threads import ThreadGroup
from ..errors import ConnectionClosed, ConnectionLost, InvalidRequest
from ..jsonrpc import Incoming, Invalid, Message, decode, encode
from .base import DEFAULT_MAX_MESSAGE_SIZE, Transport

__all__ = ["LineReader", "StdioClientTransport", "StdioServerTransport"]

log = logging.getLogger("mcp_sync.stdio")
stderr_log = logging.getLogger("mcp_sync.stdio.stderr")

_CHUNK = 256 * 1024


class _Oversized:
    def __init__(self, size: int) -> None:
        self.size = size


class LineReader:
    """Reads newline-terminated lines from a file descriptor; :meth:`close` interrupts it.

    Blank lines are skipped and a trailing ``\\r`` is dropped (STDIO-8). A line longer
    than ``max_size`` is discarded as it streams in and reported as oversized.
    """

    def __init__(self, fd: int, max_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        self._fd = fd
        self._max_size = max_size
        self._buffer = bytearray()
        self._start = 0
        self._scanned = 0
        self._closed = False
        self._lock = threading.Lock()  # held across each wait+read, so close waits for it
        self._poll: Any = None
        self._wake_r = self._wake_w = -1
        if hasattr(select, "poll"):
            self._wake_r, self._wake_w = os.pipe()
            self._poll = select.poll()
            self._poll.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
            self._poll.register(self._wake_r, select.POLLIN)

    def read_line(self) -> bytes | _Oversized | None:
        """The next non-blank line without its terminator; None at EOF or after close."""
        discarded = 0
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end >= 0:
                line = bytes(self._buffer[self._start:end])
                self._start = self._scanned = end + 1
                self._compact()
                if discarded:
                    return _Oversized(discarded + len(line))
                if line.endswith(b"\r"):
                    line = line[:-1]
                if line.strip():
                    return line
                continue
            if len(self._buffer) - self._start > self._max_size:
                discarded += len(self._buffer) - self._start
                del self._buffer[:]
                self._start = self._scanned = 0
            else:
                self._scanned = len(self._buffer)
            chunk = self._read_chunk()
            if not chunk:
                rest = bytes(self._buffer[self._start:]).strip()
                self._buffer.clear()
                self._start = self._scanned = 0
                if discarded:
                    return _Oversized(discarded + len(rest))
                return rest or None
            self._buffer += chunk

    def _compact(self) -> None:
        if self._start > _CHUNK and self._start * 2 > len(self._buffer):
            del self._buffer[:self._start]
            self._scanned -= self._start
            self._start = 0

    def _read_chunk(self) -> bytes:
        with self._lock:
            if self._closed:
                return b""
            if self._poll is not None:
                ready = self._poll.poll()
                if any(fd == self._wake_r for fd, _ in ready):
                    return b""  # close() woke us
            try:
                return os.read(self._fd, _CHUNK)
            except OSError as exc:
                raise ConnectionLost(f"reading failed: {exc}") from exc

    def close(self) -> None:
        """Stop reading; a blocked :meth:`read_line` returns None. Does not close ``fd``."""
        if self._closed:
            return
        self._closed = True
        if self._poll is None:
            return  # without poll a blocked read ends only when the peer closes the pipe
        os.write(self._wake_w, b"x")
        with self._lock:  # wait until no read is under way
            os.close(self._wake_r)
            os.close(self._wake_w)
            self._wake_r = self._wake_w = -1


def _frame(line: bytes | _Oversized | None, max_size: int) -> Incoming | None:
    if line is None:
        return None
    if isinstance(line, _Oversized):
        return Invalid(None, InvalidRequest(
            f"Invalid Request: message of {line.size} bytes exceeds the limit of {max_size}"))
    return decode(line)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class StdioClientTransport(Transport):
    """Spawns an MCP server and talks to it over its stdin and stdout.

    Args:
        command: the program and its arguments.
        env: variables for the child, laid over our own environment (or replacing it
            entirely with ``inherit_env=False``). Credentials go here (STDIO-7).
        cwd: the child's working directory.
        stderr: where the child's stderr goes: None (default) logs each line to the
            ``mcp_sync.stdio.stderr`` logger at INFO; a file object with a file descriptor
            receives it directly; any other writable text stream gets each decoded line;
            ``subprocess.DEVNULL`` discards it.
        close_timeout: seconds to wait for the child to exit after its stdin is closed,
            and again after SIGTERM, before escalating.
        max_message_size: the longest line accepted from the child, in bytes.
    """

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        inherit_env: bool = True,
        cwd: str | os.PathLike[str] | None = None,
        stderr: IO[Any] | int | None = None,
        close_timeout: float = 2.0,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    ) -> None:
        if isinstance(command, str) or not command:
            raise ValueError("command must be a non-empty sequence of program and arguments")
        child_env = dict(os.environ) if inherit_env else {}
        child_env.update(env or {})
        self._stderr_target = stderr
        stderr_arg: Any = subprocess.PIPE
        if stderr == subprocess.DEVNULL or _has_fileno(stderr):
            stderr_arg = stderr
        try:
            self.process = subprocess.Popen(
                list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr_arg,
                env=child_env, cwd=cwd, bufsize=0, close_fds=True)
        except OSError as exc:
            raise ConnectionLost(f"could not start {command[0]!r}: {exc}") from exc
        assert self.process.stdin is not None and self.process.stdout is not None
        self._stdin = self.process.stdin
        self._stdout = self.process.stdout
        self._close_timeout = close_timeout
        self._max_message_size = max_message_size
        self._reader = LineReader(self._stdout.fileno(), max_message_size)
        self._closed = False
        self._close_lock = threading.Lock()
        self._threads = ThreadGroup(f"stdio-{self.process.pid}")
        if stderr_arg is subprocess.PIPE:
            assert self.process.stderr is not None
            self._threads.start("stderr", self._drain_stderr, self.process.stderr)

    def _drain_stderr(self, pipe: IO[bytes]) -> None:
        target = self._stderr_target
        try:
            for raw in iter(pipe.readline, b""):
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if target is None:
                    stderr_log.info("[server %d] %s", self.process.pid, line)
                else:
                    try:
                        target.write(line + "\n")  # type: ignore[union-attr]
                    except (OSError, ValueError):
                        target = None
        except (OSError, ValueError):
            pass
        finally:
            pipe.close()

    def read(self) -> Incoming | None:
        return _frame(self._reader.read_line(), self._max_message_size)

    def write(self, message: Message | Sequence[Message]) -> None:
        data = encode(message) + b"\n"
        if self._closed:
            raise ConnectionClosed("the transport is closed")
        try:
            _write_all(self._stdin.fileno(), data)
        except (OSError, ValueError) as exc:
            raise ConnectionLost(f"the server's stdin is closed: {exc}") from exc

    def close(self) -> None:
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        self._reader.close()
        with contextlib.suppress(OSError):
            self._stdin.close()
        self._stop_process()
        self._stdout.close()
        self._threads.join(self._close_timeout)

    def _stop_process(self) -> None:
        process = self.process
        try:
            process.wait(self._close_timeout)
            return
        except subprocess.TimeoutExpired:
            log.warning("server %d did not exit after its stdin closed; sending SIGTERM",
                        process.pid)
        process.terminate()
        try:
            process.wait(self._close_timeout)
            return
        except subprocess.TimeoutExpired:
            log.warning("server %d ignored SIGTERM; sending SIGKILL", process.pid)
        process.kill()
        process.wait()


def _has_fileno(stream: object) -> bool:
    if stream is None or isinstance(stream, int):
        return False
    try:
        stream.fileno()  # type: ignore[attr-defined]
    except (AttributeError, OSError, io.UnsupportedOperation):
        return False
    return True


class StdioServerTransport(Transport):
    """Serves on our own stdin and stdout (or on the descriptors given).

    With ``guard_stdout`` (the default when serving on fd 1), fd 1 is pointed at stderr
    for as long as the transport is open and restored on close, so that nothing but
    messages reaches the client.
    """

    def __init__(self, stdin_fd: int = 0, stdout_fd: int = 1, *, guard_stdout: bool | None = None,
                 max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        if guard_stdout is None:
            guard_stdout = stdout_fd == 1
        self._saved_stdout = -1
        if guard_stdout:
            with contextlib.suppress(OSError, ValueError):
                sys.stdout.flush()
            self._saved_stdout = os.dup(stdout_fd)
            self._out = os.dup(stdout_fd)
            os.dup2(2, stdout_fd)
            self._guarded_fd = stdout_fd
        else:
            self._out = stdout_fd
        self._owns_out = guard_stdout
        self._max_message_size = max_message_size
        self._reader = LineReader(stdin_fd, max_message_size)
        self._closed = False

    def read(self) -> Incoming | None:
        return _frame(self._reader.read_line(), self._max_message_size)

    def write(self, message: Message | Sequence[Message]) -> None:
        data = encode(message) + b"\n"
        if self._closed:
            raise ConnectionClosed("the transport is closed")
        try:
            _write_all(self._out, data)
        except OSError as exc:
            raise ConnectionLost(f"stdout is closed: {exc}") from exc

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._reader.close()
        if self._owns_out:
            with contextlib.suppress(OSError, ValueError):
                sys.stdout.flush()
            os.dup2(self._saved_stdout, self._guarded_fd)
            os.close(self._saved_stdout)
            os.close(self._out)
