"""A live progress bar on stderr while a call reports progress.

tqdm draws it when installed (``pip install "mcp-sync[cli]"``); otherwise a plain bar of
our own on one line. Drawn only when stderr is a terminal, so pipes and logs stay clean.
"""

from __future__ import annotations

import shutil
import sys
import threading
from typing import IO, Any

__all__ = ["ProgressBar"]


class ProgressBar:
    """Receives ``on_progress(progress, total, message)`` and draws it; :meth:`close` clears it."""

    def __init__(self, stream: IO[str] | None = None, *, force: bool = False) -> None:
        self._stream = sys.stderr if stream is None else stream
        self._enabled = force or self._stream.isatty()
        self._lock = threading.Lock()
        self._tqdm: Any = None
        self._drawn = False
        self._closed = False

    def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        if not self._enabled:
            return
        with self._lock:
            if self._closed:
                return
            try:
                self._draw(progress, total, message)
            except (OSError, ValueError):
                self._enabled = False  # the terminal went away: the call goes on

    def _draw(self, progress: float, total: float | None, message: str | None) -> None:
        try:
            from tqdm import tqdm  # type: ignore[import-untyped,unused-ignore]
        except ImportError:
            tqdm = None
        if tqdm is not None:
            if self._tqdm is None:
                self._tqdm = tqdm(total=total, file=self._stream, leave=False,
                                  dynamic_ncols=True)
            if total is not None and self._tqdm.total != total:
                self._tqdm.total = _number(total)
            self._tqdm.n = _number(progress)
            if message:
                self._tqdm.set_description_str(message, refresh=False)
            self._tqdm.refresh()
            return
        self._stream.write("\r" + _plain_line(progress, total, message) + "\x1b[K")
        self._stream.flush()
        self._drawn = True

    def close(self) -> None:
        """Take the bar off the terminal; idempotent."""
        with self._lock:
            self._closed = True
            try:
                if self._tqdm is not None:
                    self._tqdm.close()
                elif self._drawn:
                    self._stream.write("\r\x1b[K")
                    self._stream.flush()
            except (OSError, ValueError):
                pass


def _number(value: float) -> float:
    """``3`` rather than ``3.0``: progress is mostly counted in whole steps."""
    return int(value) if float(value).is_integer() else value


def _plain_line(progress: float, total: float | None, message: str | None) -> str:
    width = shutil.get_terminal_size((80, 24)).columns
    count = f"{progress:g}/{total:g}" if total else f"{progress:g}"
    text = f" {count} {message}" if message else f" {count}"
    if total:
        done = max(0.0, min(1.0, progress / total))
        cells = 30
        filled = round(done * cells)
        text = f"[{'#' * filled}{'.' * (cells - filled)}] {done:4.0%}" + text
    return text[:max(width - 1, 10)]
