"""Executors that run a client's callbacks on a GUI toolkit's own thread.

Tk and Qt let only their own thread touch widgets, while a :class:`~mcp_sync.Client`
learns of results, progress and log messages on threads of its own. Give it one of
these as ``callback_executor`` and every callback runs on the GUI thread instead, in the
order the server sent what it reports::

    root = tkinter.Tk()
    client = Client.stdio(["python", "server.py"], callback_executor=TkExecutor(root))
    future = client.call_tool_async("index", {"path": "/srv"},
                                    on_progress=lambda done, total, message: bar.set(done))
    future.add_done_callback(lambda f: label.config(text=f.result().content[0].text))

Neither toolkit is imported by :mod:`mcp_sync`; Qt needs PySide6, PyQt6, PySide2 or
PyQt5, whichever is installed. Keep the GUI thread free: a blocking call such as
``client.call_tool()`` made on it holds back every callback until it returns, so use the
``*_async`` methods there.
"""

from __future__ import annotations

import contextlib
import importlib
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from types import ModuleType
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

if TYPE_CHECKING:
    import tkinter

__all__ = ["QtExecutor", "TkExecutor"]

P = ParamSpec("P")
T = TypeVar("T")

_Work = tuple["Future[Any]", Callable[..., Any], tuple[Any, ...], dict[str, Any]]


def _run(work: _Work) -> None:
    future, fn, args, kwargs = work
    if not future.set_running_or_notify_cancel():
        return
    try:
        result = fn(*args, **kwargs)
    except BaseException as exc:
        future.set_exception(exc)
    else:
        future.set_result(result)


class TkExecutor(Executor):
    """Runs submitted calls on the Tk thread of ``widget``'s application.

    Tk may only be called from its own thread, ``widget.after`` included, so other
    threads put their calls in a queue and the Tk thread takes them from it with
    ``after`` every ``interval`` seconds, while its main loop runs. Create the executor
    on the Tk thread.

    Args:
        widget: any widget of the application (its ``Tk`` root, say).
        interval: how often, in seconds, the Tk thread looks for calls.

    When ``widget`` is destroyed (the window closed) the executor shuts down: calls still
    queued are cancelled and later ones refused with ``RuntimeError``.
    """

    def __init__(self, widget: tkinter.Misc, *, interval: float = 0.01) -> None:
        if interval <= 0:
            raise ValueError("interval must be positive")
        self._widget = widget
        self._delay = max(1, round(interval * 1000))
        self._queue: queue.SimpleQueue[_Work] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._shut = False
        self._after_id: str | None = None
        widget.bind("<Destroy>", self._destroyed, add="+")
        self._schedule()

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        """Queue ``fn(*args, **kwargs)`` for the Tk thread; returns its Future.

        Raises:
            RuntimeError: the executor is shut down.
        """
        future: Future[T] = Future()
        with self._lock:
            if self._shut:
                raise RuntimeError("the Tk executor is shut down")
            self._queue.put((future, fn, args, kwargs))
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Refuse new calls and cancel the queued ones; call it on the Tk thread.

        ``wait`` is ignored: only the Tk thread runs the calls, and it is the caller.
        """
        with self._lock:
            self._shut = True
            after_id, self._after_id = self._after_id, None
        if after_id is not None:
            with contextlib.suppress(Exception):  # the application is already destroyed
                self._widget.after_cancel(after_id)
        self._cancel_queued()

    def _destroyed(self, event: tkinter.Event[Any]) -> None:
        # A window's bindings also see its children's <Destroy>: only its own ends us.
        if event.widget is self._widget:
            self.shutdown()

    def _schedule(self) -> None:
        try:
            after_id = self._widget.after(self._delay, self._poll)
        except Exception:  # tkinter.TclError: the application was destroyed
            self.shutdown()
            return
        with self._lock:
            if self._shut:
                return
            self._after_id = after_id

    def _poll(self) -> None:
        while True:
            try:
                work = self._queue.get_nowait()
            except queue.Empty:
                break
            _run(work)
        with self._lock:
            if self._shut:
                return
        self._schedule()

    def _cancel_queued(self) -> None:
        while True:
            try:
                future, *_ = self._queue.get_nowait()
            except queue.Empty:
                return
            future.cancel()


class QtExecutor(Executor):
    """Runs submitted calls on the Qt thread the executor was created on (the GUI's).

    A call is handed over with a queued Qt signal, the toolkit's own thread-safe way,
    and runs when that thread's event loop next turns. Create the executor on the GUI
    thread, after the ``QApplication``.

    Raises:
        ImportError: none of PySide6, PyQt6, PySide2 and PyQt5 is installed.
    """

    def __init__(self) -> None:
        core = _qt_core()
        self._relay = _relay_class(core)()
        queued = getattr(core.Qt, "ConnectionType", core.Qt).QueuedConnection
        self._relay.call.connect(self._relay.run, queued)
        self._lock = threading.Lock()
        self._shut = False

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        """Hand ``fn(*args, **kwargs)`` to the Qt thread; returns its Future.

        Raises:
            RuntimeError: the executor is shut down.
        """
        future: Future[T] = Future()
        with self._lock:
            if self._shut:
                raise RuntimeError("the Qt executor is shut down")
            self._relay.call.emit((future, fn, args, kwargs))
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Refuse new calls; those already handed over still run on the Qt thread."""
        with self._lock:
            self._shut = True


def _qt_core() -> ModuleType:
    for binding in ("PySide6", "PyQt6", "PySide2", "PyQt5"):
        try:
            return importlib.import_module(f"{binding}.QtCore")
        except ImportError:
            continue
    raise ImportError("QtExecutor needs PySide6, PyQt6, PySide2 or PyQt5")


def _relay_class(core: ModuleType) -> Any:
    # Built once Qt is imported; a signal must be declared on a QObject subclass.
    signal = getattr(core, "Signal", None) or core.pyqtSignal
    slot = getattr(core, "Slot", None) or core.pyqtSlot

    class Relay(core.QObject):  # type: ignore[name-defined,misc]
        call = signal(object)

        @slot(object)  # type: ignore[untyped-decorator,misc,unused-ignore]
        def run(self, work: _Work) -> None:
            _run(work)

    return Relay
