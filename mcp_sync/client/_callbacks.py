"""Running a client's callbacks on the application's ``callback_executor``.

A GUI toolkit lets only its own thread touch its widgets, so a desktop application gives
the client an executor that runs work on that thread (:mod:`mcp_sync.gui` has them for
Tk and Qt). Everything the client calls back then goes through it: the completion of
``*_async`` futures, progress, log messages and other notifications, and the sampling
handler. Callbacks are handed over in the order they arrived; an executor with one
thread (a GUI's) runs them in that order.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent import futures
from concurrent.futures import Executor
from typing import Any, ParamSpec, TypeVar, overload

from ..errors import InternalError

__all__ = ["call_on", "on_executor"]

log = logging.getLogger("mcp_sync.client")

P = ParamSpec("P")
T = TypeVar("T")

#: How often a handler waiting for the executor looks whether its request was cancelled.
_CANCEL_CHECK = 0.1


@overload
def on_executor(executor: Executor | None, callback: Callable[P, None],
                name: str) -> Callable[P, None]: ...


@overload
def on_executor(executor: Executor | None, callback: Callable[P, None] | None,
                name: str) -> Callable[P, None] | None: ...


def on_executor(executor: Executor | None, callback: Callable[P, None] | None,
                name: str) -> Callable[P, None] | None:
    """``callback`` made to run on ``executor`` (unchanged without one).

    The returned function only queues the call and returns at once. A callback that
    raises is logged, as on the client's own threads. Once the executor is shut down (the
    window closed) calls are dropped: running GUI code on another thread is worse.
    """
    if executor is None or callback is None:
        return callback
    target = callback

    def submit(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            executor.submit(_guarded, name, target, *args, **kwargs)
        except RuntimeError:
            log.debug("dropped a call of %s: the callback executor is shut down", name)

    return submit


def _guarded(name: str, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    try:
        callback(*args, **kwargs)
    except Exception:
        log.exception("the %s callback failed", name)


def call_on(executor: Executor, cancelled: threading.Event, fn: Callable[..., T],
            *args: Any) -> T:
    """``fn(*args)`` run on ``executor``, waited for until it ends or ``cancelled`` is set.

    For handlers whose answer the server waits for: the waiting thread is one of the
    client's workers, never the executor's.

    Raises:
        InternalError: the request was cancelled (or the connection ended) first; the
            call is cancelled too if it has not started.
        RuntimeError: the executor is shut down.
        Exception: whatever ``fn`` raised.
    """
    future = executor.submit(fn, *args)
    while not futures.wait([future], timeout=_CANCEL_CHECK).done:
        if cancelled.is_set():
            future.cancel()
            raise InternalError("Internal error: the request was cancelled")
    return future.result()
