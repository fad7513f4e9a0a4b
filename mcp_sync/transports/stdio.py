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
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

from ..engine._threads import ThreadGroup
from ..errors import ConnectionClosed, ConnectionLost, InvalidRequest, RequestTimeout
from ..protocol._jsonrpc import Incoming, Invalid, Message, RequestId, encode
from ._decode import decode_frame
from .base import DEFAULT_MAX_MESSAGE_SIZE, Transport

if TYPE_CHECKING:
    from ._child_exit import StderrTail

__all__ = ["LineReader", "StdioClientTransport", "StdioServerTransport"]

log = logging.getLogger("mcp_sync.stdio")
stderr_log = logging.getLogger("mcp_sync.stdio.stderr")

_CHUNK = 256 * 1024
_HAS_READV = hasattr(os, "readv")  # not on Windows
_PIPE_SIZE = 1024 * 1024
#: How long a server's close waits for a write under way to finish.
_CLOSE_WRITE_WAIT = 5.0


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
        # Reads land in one reused buffer: asking os.read for a large chunk would map and
        # unmap fresh memory for every message.
        self._scratch = bytearray(_CHUNK)
        self._scratch_view = memoryview(self._scratch)
        self._start = 0
        self._scanned = 0
        self._closed = False
        self._lock = threading.Lock()  # held across each wait+read, so close waits for it
        self._close_lock = threading.Lock()
        self._poll: Any = None
        self._wake_r = self._wake_w = -1
        if hasattr(select, "poll"):
            self._wake_r, self._wake_w = os.pipe()
            self._poll = select.poll()
            self._poll.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
            self._poll.register(self._wake_r, select.POLLIN)

    def read_line(self) -> bytes | _Oversized | None:
        """The next non-blank line without its terminator; None at EOF or after close."""
        if self._start == len(self._buffer):
            # Nothing left over, as before every read one call at a time: a read that
            # brings exactly one line returns it from the scratch buffer, copied once,
            # without going through the line buffer and searching it again.
            count = self._read_chunk()
            if count is None:
                return None
            self._buffer.clear()
            self._start = self._scanned = 0
            if not count:
                return None
            if count - 1 > self._max_size or self._scratch.find(b"\n", 0, count) != count - 1:
                self._buffer += self._scratch_view[:count]
            else:
                line = bytes(self._scratch_view[:count - 1])
                if line.endswith(b"\r"):
                    line = line[:-1]
                if line.strip():
                    return line
        discarded = 0
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end >= 0:
                size = discarded + end - self._start
                line = b"" if size > self._max_size else self._take(end)
                self._start = self._scanned = end + 1
                self._compact()
                if size > self._max_size:
                    return _Oversized(size)
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
            count = self._read_chunk()
            if count is None:
                return None
            if not count:
                rest = bytes(self._buffer[self._start:]).strip()
                self._buffer.clear()
                self._start = self._scanned = 0
                if discarded or len(rest) > self._max_size:
                    return _Oversized(discarded + len(rest))
                return rest or None
            self._buffer += self._scratch_view[:count]

    def _take(self, end: int) -> bytes:
        # Through a view, so that a large line is copied once rather than twice.
        with memoryview(self._buffer) as view:
            return bytes(view[self._start:end])

    def _compact(self) -> None:
        if self._start > _CHUNK and self._start * 2 > len(self._buffer):
            del self._buffer[:self._start]
            self._scanned -= self._start
            self._start = 0

    def _read_chunk(self) -> int | None:
        """Read into the scratch buffer: the byte count, 0 at the end, None after close."""
        with self._lock:
            if self._closed:
                return None
            if self._poll is not None:
                for fd, _ in self._poll.poll():
                    if fd == self._wake_r:
                        return None
            try:
                if _HAS_READV:
                    return os.readv(self._fd, (self._scratch,))
                data = os.read(self._fd, _CHUNK)
                self._scratch[:len(data)] = data
                return len(data)
            except OSError as exc:
                raise ConnectionLost(f"reading failed: {exc}") from exc

    def close(self) -> None:
        """Stop reading; a blocked :meth:`read_line` returns None. Does not close ``fd``.

        Returns once no read is under way any more, so the caller may then close ``fd``.
        """
        with self._close_lock:
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
    return decode_frame(line)


def _widen_pipe(fd: int) -> None:
    """Let a pipe hold up to 1 MiB (Linux): a large message then crosses in a few writes
    and reads instead of one pair per 64 KiB, each a switch between the two processes."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None) if fcntl is not None else None
    if set_size is None:
        return
    with contextlib.suppress(OSError):  # capped lower by the system; the default then
        fcntl.fcntl(fd, set_size, _PIPE_SIZE)


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
            receives it directly, and so does a file descriptor number; any other writable
            text stream gets each decoded line; ``subprocess.DEVNULL`` discards it. When
            it passes through us (None, or a stream without a descriptor), its last lines
            go into the ConnectionLost raised if the child ends unasked.
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
        # Imported here: a server's start-up (part of every client's connect) never spawns.
        import subprocess

        from ._child_exit import StderrTail

        if isinstance(command, str) or not command:
            raise ValueError("command must be a non-empty sequence of program and arguments")
        if stderr == subprocess.STDOUT:
            raise ValueError("stderr=STDOUT would mix the server's log text into its messages")
        child_env = dict(os.environ) if inherit_env else {}
        child_env.update(env or {})
        stderr_arg: Any = subprocess.PIPE
        self._stderr_target: IO[Any] | None = None
        if isinstance(stderr, int):
            if stderr != subprocess.PIPE:
                stderr_arg = stderr  # DEVNULL, or a descriptor the child writes to itself
        elif _has_fileno(stderr):
            stderr_arg = stderr
        else:
            self._stderr_target = stderr
        try:
            self.process = subprocess.Popen(
                list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr_arg,
                env=child_env, cwd=cwd, bufsize=0, close_fds=True)
        except OSError as exc:
            raise ConnectionLost(f"could not start {command[0]!r}: {exc}") from exc
        assert self.process.stdin is not None and self.process.stdout is not None
        self._stdin = self.process.stdin
        self._stdout = self.process.stdout
        for pipe in (self._stdin, self._stdout):
            _widen_pipe(pipe.fileno())
        # Our end only (the child has its own): a write to a server that stopped reading
        # must be able to give up at its caller's deadline.
        if hasattr(select, "poll"):
            os.set_blocking(self._stdin.fileno(), False)
        self._unsent: memoryview | None = None
        self._close_timeout = close_timeout
        self._max_message_size = max_message_size
        self._reader = LineReader(self._stdout.fileno(), max_message_size)
        self._closed = False
        self._close_lock = threading.Lock()
        self._stopped = threading.Event()
        # Held by each write and by the close of stdin: a descriptor closed under a write
        # could be reused by an unrelated file before the write reaches the kernel.
        self._write_lock = threading.Lock()
        self._threads = ThreadGroup(f"stdio-{self.process.pid}")
        self._command = list(command)
        self._tail: StderrTail | None = None
        self._stderr_thread: threading.Thread | None = None
        if stderr_arg is subprocess.PIPE:
            assert self.process.stderr is not None
            self._tail = StderrTail()
            self._stderr_thread = self._threads.start("stderr", self._drain_stderr,
                                                      self.process.stderr)

    def _drain_stderr(self, pipe: IO[bytes]) -> None:
        # Read in chunks, not lines: a raw pipe's readline() costs one system call per byte.
        target = self._stderr_target
        pending = b""
        try:
            while True:
                chunk = pipe.read(_CHUNK)
                if not chunk:
                    break
                lines = (pending + chunk).split(b"\n")
                pending = lines.pop()
                if len(pending) > _CHUNK:  # a very long line leaves in pieces
                    lines.append(pending)
                    pending = b""
                for raw in lines:
                    target = self._emit_stderr(target, raw)
            if pending:
                self._emit_stderr(target, pending)
        except (OSError, ValueError):
            pass
        finally:
            pipe.close()

    def _emit_stderr(self, target: IO[Any] | None, raw: bytes) -> IO[Any] | None:
        line = raw.decode("utf-8", "replace").rstrip("\r")
        if self._tail is not None:
            self._tail.add(line)
        if target is not None:
            try:
                target.write(line + "\n")
                return target
            except (OSError, ValueError):
                log.warning("the stderr target failed; logging the server's stderr instead")
        stderr_log.info("[server %d] %s", self.process.pid, line)
        return None

    def read(self) -> Incoming | None:
        """The next message; None once closed by us.

        Raises:
            ConnectionLost: the server's stdout ended without our closing it; the error
                says how the process ended and what it last wrote to stderr.
        """
        frame = _frame(self._reader.read_line(), self._max_message_size)
        if frame is None and not self._closed:
            raise self._exit_error()
        return frame

    def _exit_error(self) -> ConnectionLost:
        from ._child_exit import exit_error

        return exit_error(self._command, self.process, self._tail, self._stderr_thread)

    def write(self, message: Message | Sequence[Message], *,
              related_to: RequestId | None = None) -> None:
        self._send(encode(message) + b"\n", None)

    def write_before(self, message: Message | Sequence[Message], deadline: float | None, *,
                     related_to: RequestId | None = None) -> None:
        self._send(encode(message) + b"\n", deadline)

    def _send(self, data: bytes, deadline: float | None) -> None:
        wait = -1.0 if deadline is None else max(0.0, deadline - time.monotonic())
        if not self._write_lock.acquire(timeout=wait):
            raise RequestTimeout("could not send: the server is not reading what it was sent")
        try:
            if self._closed:
                raise ConnectionClosed("the transport is closed")
            try:
                if self._unsent is not None:  # the rest of a message that timed out
                    self._unsent = self._push(self._unsent, deadline)
                    if self._unsent is not None:
                        raise RequestTimeout(
                            "could not send: the server is not reading what it was sent")
                self._unsent = self._push(memoryview(data), deadline, whole=True)
                if self._unsent is not None:
                    raise RequestTimeout("could not send all of the message in time: the "
                                         "server is not reading; the rest goes out first "
                                         "when it does")
            except RequestTimeout:
                raise  # a TimeoutError, and so an OSError, but the pipe is fine
            except (OSError, ValueError) as exc:
                raise self._exit_error() from exc
        finally:
            self._write_lock.release()

    def _push(self, view: memoryview, deadline: float | None,
              whole: bool = False) -> memoryview | None:
        """Write ``view``; what is left when ``deadline`` passes (None once all went out).

        Raises RequestTimeout instead when nothing of a ``whole`` message went out: it
        was never sent. The pipe is non-blocking where ``poll`` exists; elsewhere each
        write blocks until the peer takes it.
        """
        fd = self._stdin.fileno()
        untouched = whole
        while view:
            try:
                written = os.write(fd, view)
            except BlockingIOError:
                written = 0
            if written:
                view = view[written:]
                untouched = False
                continue
            remaining = None if deadline is None else deadline - time.monotonic()
            if (remaining is not None and remaining <= 0) or not self._writable(remaining):
                if untouched:
                    raise RequestTimeout(
                        "could not send: the server is not reading what it was sent")
                return view
        return None

    def _writable(self, timeout: float | None) -> bool:
        poller = select.poll()
        poller.register(self._stdin.fileno(), select.POLLOUT)
        return bool(poller.poll(None if timeout is None else max(1, int(timeout * 1000))))

    def close(self) -> None:
        """Stop the server (SHUTDOWN-2) and release everything.

        A second call, from any thread, returns once the first has finished.
        """
        with self._close_lock:
            first = not self._closed
            self._closed = True
        if not first:
            if not self._stopped.wait(3 * self._close_timeout + 10.0):
                log.warning("server %d is still being stopped", self.process.pid)
            return
        try:
            self._reader.close()
            eof_sent = self._close_stdin()
            self._stop_process(eof_sent)
            if not eof_sent:
                self._close_stdin()
            self._stdout.close()
            self._threads.join(self._close_timeout)
        finally:
            self._stopped.set()

    def after_fork_in_child(self) -> None:
        # Our copies of the pipes would keep the server from seeing EOF when the parent
        # closes its stdin. The server itself is the parent's: not signalled, not waited.
        for pipe in (self._stdin, self._stdout, self.process.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError, ValueError):
                    pipe.close()

    def _close_stdin(self) -> bool:
        if not self._write_lock.acquire(timeout=self._close_timeout):
            # A write is stuck: the server reads nothing, so it will not see EOF either.
            log.warning("a write to server %d is blocked; stopping it", self.process.pid)
            return False
        try:
            with contextlib.suppress(OSError):
                self._stdin.close()
        finally:
            self._write_lock.release()
        return True

    def _stop_process(self, eof_sent: bool) -> None:
        import subprocess

        process = self.process
        if eof_sent:
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
        try:
            process.wait(max(self._close_timeout, 5.0))
        except subprocess.TimeoutExpired:
            log.error("server %d survived SIGKILL", process.pid)


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

    modern_era = True

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
        self._close_lock = threading.Lock()
        self._write_lock = threading.Lock()  # see StdioClientTransport: no close under a write

    def read(self) -> Incoming | None:
        return _frame(self._reader.read_line(), self._max_message_size)

    def write(self, message: Message | Sequence[Message], *,
              related_to: RequestId | None = None) -> None:
        data = encode(message) + b"\n"
        with self._write_lock:
            if self._closed:
                raise ConnectionClosed("the transport is closed")
            try:
                _write_all(self._out, data)
            except OSError as exc:
                raise ConnectionLost(f"stdout is closed: {exc}") from exc

    def close(self) -> None:
        # Locked: the reader (at EOF) and the owner may close at the same moment, and the
        # saved descriptors must be restored and closed exactly once.
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
            self._close()

    def _close(self) -> None:
        self._reader.close()
        if not self._owns_out:
            return
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        os.dup2(self._saved_stdout, self._guarded_fd)
        os.close(self._saved_stdout)
        # A write blocked on a client that stopped reading keeps the descriptor; it is
        # left open rather than closed under the write.
        if self._write_lock.acquire(timeout=_CLOSE_WRITE_WAIT):
            try:
                os.close(self._out)
            finally:
                self._write_lock.release()
        else:
            log.warning("a write to stdout is blocked; leaving its descriptor open")
