"""What keeps a long-lived :class:`~mcp_sync.Client` sound: reconnecting, forks, exit.

* **Reconnecting.** A client made with ``reconnect=True`` that lost its server connects
  again when it is next used: a new transport from its factory (a new child process, a
  new HTTP session), a new ``initialize``, then the log level and subscriptions of the
  old session. Calls in flight at the loss have failed with ``ConnectionLost``; they are
  never repeated. Attempts are spaced by :class:`Backoff`, and a call waits for the next
  attempt only when it falls within the call's own timeout.
* **Forks.** After ``os.fork()`` the child holds a copy of every client, but none of its
  threads, and shares its pipes and sockets with the parent: a call there could only
  hang, or take the parent's answers. :func:`_after_fork_in_child` marks every open client
  as inherited, so that a call fails at once (or, with ``reconnect=True``, connects
  afresh from the child) and closing never touches what belongs to the parent.
* **Exit.** Every open client is held, weakly, until it is closed; at interpreter exit
  the ones the application forgot are closed, which reaps a stdio server and DELETEs an
  HTTP session.
"""

from __future__ import annotations

import atexit
import logging
import os
import random
import threading
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from ..engine._threads import ThreadGroup, WorkerPool
from ..errors import ConnectionClosed, ConnectionLost, McpError

if TYPE_CHECKING:
    from .. import types
    from ..engine._engine import Engine
    from ..transports.base import Transport
    from ._session_state import SessionState

__all__ = ["Backoff", "Lifeline", "track", "untrack"]

log = logging.getLogger("mcp_sync.client")


class Backoff:
    """When the next reconnection attempt may start.

    The first attempt after a loss is made at once. After ``n`` failed attempts in a row
    the next waits ``min(max_delay, first_delay * 2 ** (n - 1))``, shortened by a random
    part of up to a half (jitter, so that many processes that lost one server do not
    all come back at the same instant). A success starts the schedule over.
    """

    def __init__(self, first_delay: float, max_delay: float, *,
                 clock: Callable[[], float] = time.monotonic,
                 jitter: Callable[[], float] = random.random) -> None:
        if first_delay < 0 or max_delay < first_delay:
            raise ValueError("reconnect delays must satisfy 0 <= reconnect_delay <= "
                             "max_reconnect_delay")
        self.first_delay = first_delay
        self.max_delay = max_delay
        self._clock = clock
        self._jitter = jitter
        self.failures = 0
        self._not_before = 0.0

    def delay_after(self, failures: int) -> float:
        """The full delay after ``failures`` failed attempts, before jitter."""
        if failures <= 0:
            return 0.0
        return min(self.max_delay, self.first_delay * 2.0 ** min(failures - 1, 64))

    def remaining(self) -> float:
        """Seconds until the next attempt may start (0 when it may start now)."""
        return max(0.0, self._not_before - self._clock())

    def failed(self) -> float:
        """Count a failed attempt; returns the wait before the next one."""
        self.failures += 1
        wait = self.delay_after(self.failures) * (1.0 - 0.5 * self._jitter())
        self._not_before = self._clock() + wait
        return wait

    def succeeded(self) -> None:
        self.failures = 0
        self._not_before = 0.0


class Lifeline:
    """The reconnecting and fork handling of :class:`~mcp_sync.Client`, mixed into it.

    The client supplies the connection itself (the methods declared at the top); this
    part decides which engine a call uses, and replaces a lost one.
    """

    timeout: float
    _engine: Engine
    _connect: Callable[[], Transport] | None
    _reconnect: bool
    _backoff: Backoff
    _renew_lock: threading.Lock
    _session_state: SessionState
    _life_lock: threading.Lock
    _closing: bool
    _closed_event: threading.Event
    _inherited: Engine | None
    _generation: int
    _pid: int
    _init_result: types.InitializeResult | None
    _threads: ThreadGroup
    _callbacks: WorkerPool
    _input_pool: WorkerPool | None
    _listen_lock: threading.Lock

    def _new_engine(self, transport: Transport) -> Engine:
        raise NotImplementedError

    def _initialize(self, engine: Engine | None = None, timeout: float | None = None) -> None:
        raise NotImplementedError

    def _restore_session_state(self) -> None:
        raise NotImplementedError

    def _engine_for(self, timeout: float | None) -> Engine:
        """The engine a call should use: the current one, or a new one if it was lost.

        Raises:
            ConnectionClosed: the client is inherited from the parent of a fork and
                does not reconnect.
            ConnectionLost: reconnecting failed, or its next attempt is not due within
                ``timeout``.
        """
        engine = self._engine
        if engine is self._inherited:
            if self._closing:
                raise ConnectionClosed("the client was closed")
            if not self._reconnect:
                raise ConnectionClosed(
                    f"this Client was made in process {self._pid} and cannot be used after "
                    f"os.fork() (this is process {os.getpid()}): its connection belongs to "
                    "the parent. Make the client in the child process, after the fork, or "
                    "pass reconnect=True so that it connects again there")
        elif not self._reconnect or not engine.closed:
            return engine  # one that ended raises its own error when used
        elif self._closing:
            raise ConnectionClosed("the client was closed")
        return self._reconnected(engine, self.timeout if timeout is None else timeout)

    def _reconnected(self, lost: Engine, timeout: float) -> Engine:
        deadline = time.monotonic() + timeout
        if not self._renew_lock.acquire(timeout=timeout):
            raise ConnectionLost("the connection to the server was lost, and another "
                                 "thread is still reconnecting")
        try:
            if self._engine is not lost:
                return self._engine  # another thread has reconnected meanwhile
            wait = self._backoff.remaining()
            if wait > deadline - time.monotonic():
                raise ConnectionLost(
                    "the connection to the server was lost and reconnecting failed; the "
                    f"next attempt is due in {wait:.1f}s, after this call's timeout")
            if self._closed_event.wait(wait):
                raise ConnectionClosed("the client was closed")
            engine = self._connect_again(max(0.0, deadline - time.monotonic()))
        finally:
            self._renew_lock.release()
        self._restore_session_state()
        return engine

    def _connect_again(self, timeout: float) -> Engine:
        # Called with _renew_lock held.
        assert self._connect is not None
        try:
            engine = self._new_engine(self._connect())
            try:
                engine.start()
                self._initialize(engine, timeout)
            except BaseException:
                engine.close()
                raise
        except McpError as exc:
            wait = self._backoff.failed()
            log.warning("could not reconnect to the server (attempt %d): %s; the first "
                        "call made %.1fs from now or later tries again",
                        self._backoff.failures, exc, wait)
            raise ConnectionLost(f"the connection to the server was lost, and "
                                 f"reconnecting failed: {exc}") from exc
        self._backoff.succeeded()
        with self._life_lock:
            closing = self._closing
            if not closing:
                old, self._engine = self._engine, engine
                self._generation += 1
        if closing:
            engine.close()
            raise ConnectionClosed("the client was closed")
        if old is not self._inherited:
            old.close()  # long ended: this joins its threads and reaps a stdio server
        assert self._init_result is not None
        log.info("reconnected to the server %r", self._init_result.server_info.name)
        return engine

    def _connection_lost(self, engine: list[Engine], error: ConnectionLost) -> None:
        # Called by the engine's reader thread when the server went away.
        if not engine or engine[0] is not self._engine:
            return  # a new connection that failed while initializing: its caller says so
        if self._reconnect:
            log.warning("lost the connection to the server: %s; the next call reconnects",
                        error)
        else:
            log.warning("lost the connection to the server: %s; this client is closed "
                        "for good (Client.stdio and Client.http take reconnect=True)", error)

    def _after_fork(self) -> None:
        # In the child of os.fork(): the engine's threads exist only in the parent, and
        # its pipes and sockets are the parent's too. Never use or close it here.
        self._inherited = self._engine
        try:
            self._engine.transport.after_fork_in_child()
        except Exception:
            log.exception("letting go of the parent's connection after a fork failed")
        self._renew_lock = threading.Lock()
        self._session_state.after_fork()
        self._life_lock = threading.Lock()
        self._closed_event = threading.Event()
        if self._closing:
            self._closed_event.set()
        self._backoff.succeeded()
        self._threads = ThreadGroup("client-callbacks")
        self._callbacks = WorkerPool(self._threads, "callbacks", 1)
        self._input_pool = None
        self._listen_lock = threading.Lock()


class _Tracked(Protocol):
    def close(self) -> None: ...

    def _after_fork(self) -> None: ...


_open: weakref.WeakSet[_Tracked] = weakref.WeakSet()
_open_lock = threading.Lock()


def track(client: _Tracked) -> None:
    """Hold ``client`` (weakly) until :func:`untrack`, to close it at exit if forgotten."""
    with _open_lock:
        _open.add(client)


def untrack(client: _Tracked) -> None:
    with _open_lock:
        _open.discard(client)


def _open_clients() -> list[_Tracked]:
    with _open_lock:
        return list(_open)


def _close_forgotten() -> None:
    # Run by atexit, while the library's daemon threads still run: closing works as it
    # does at any other time (the stdio server is stopped and reaped, DELETE is sent).
    for client in _open_clients():
        try:
            client.close()
        except Exception:
            log.exception("closing a client at exit failed")


def _after_fork_in_child() -> None:
    global _open_lock
    # Only the forking thread exists in the child; a lock another thread held at the
    # fork would stay held for good.
    _open_lock = threading.Lock()
    for client in list(_open):
        client._after_fork()


atexit.register(_close_forgotten)
if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork
    os.register_at_fork(after_in_child=_after_fork_in_child)
