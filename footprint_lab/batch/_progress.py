"""Progress of a long run-set call, in a notebook or a terminal, and what a cancellation leaves.

Rule kept: every call that works through a set (running it, saving it, checking, ranking or
localizing its runs) reports how far it got, where the caller can see it: an ipywidgets bar
inside a notebook kernel, one line rewritten on a terminal's stderr, or a function
``(done, total)`` the caller hands in. The call stays cancellable: a notebook's Stop
(KeyboardInterrupt), ``task.cancel()``, or an exception raised by the progress function stops
the outstanding work (local tasks cancelled, cluster futures cancelled), the bar says
``cancelled`` with what was done, and the interruption reaches the caller unchanged.

``progress`` is ``None`` (the default: a bar in a kernel, a line on a terminal, nothing when
stderr is not a terminal), ``True`` (a bar in a kernel, else a line on stderr), ``False``
(nothing) or a function.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from footprint_lab.batch._refusals import BatchConfigError
from footprint_lab.engine._display import in_kernel
from footprint_lab.engine._refusal import call_problem, describe_shape

Wanted = bool | Callable[[int, int], Any] | None

#: the shortest time between two redraws of a terminal line
_REDRAW = 0.1


def check_progress(function: str, progress: Any) -> Wanted:
    """``progress`` when usable; refused before anything runs otherwise."""
    if progress is None or isinstance(progress, bool):
        return progress
    problem = call_problem(progress, 2)
    if problem is not None:
        raise BatchConfigError(function, "progress", problem if callable(progress) else describe_shape(progress),
                               "is True, False, None (a bar in a notebook, a line on a terminal) or a function "
                               "(done, total)")
    return progress


class Bar:
    """One bar for one call: ``advance`` as work finishes, then ``finish`` or ``cancel``."""

    __slots__ = ("_drawn", "_label", "_stream", "_tell", "_widget", "done", "total")

    def __init__(self, total: int, label: str, wanted: Wanted) -> None:
        self.total = total
        self.done = 0
        self._label = label
        self._tell: Callable[[int, int], Any] | None = None
        self._widget: Any = None
        self._stream: Any = None
        self._drawn = 0.0
        if callable(wanted) and not isinstance(wanted, bool):
            self._tell = wanted
            wanted(0, total)
        elif wanted is False or total == 0:
            return
        elif in_kernel():
            self._widget = _widget(total, label)
        elif wanted is True or sys.stderr.isatty():
            self._stream = sys.stderr
            self._draw(force=True)

    def advance(self, count: int = 1) -> None:
        """``count`` more items are done; a progress function that raises cancels the call."""
        self.done += count
        if self._tell is not None:
            self._tell(self.done, self.total)
        if self._widget is not None:
            bar, text = self._widget.children
            bar.value = self.done
            text.value = f"{self.done} / {self.total}"
        if self._stream is not None:
            self._draw()

    def finish(self) -> None:
        if self._widget is not None:
            self._widget.children[0].bar_style = "success"
        if self._stream is not None:
            if self.done < self.total:  # the last advance drew the full bar already
                self._draw(force=True)
            self._stream.write("\n")

    def cancel(self) -> None:
        """The call was cancelled: the bar keeps what was done and says so."""
        if self._widget is not None:
            bar, text = self._widget.children
            bar.bar_style = "danger"
            text.value = f"cancelled: {self.done} / {self.total} done"
        if self._stream is not None:
            self._draw(force=True, note=" cancelled")
            self._stream.write("\n")

    def _draw(self, *, force: bool = False, note: str = "") -> None:
        now = time.monotonic()
        if not force and now - self._drawn < _REDRAW and self.done < self.total:
            return
        self._drawn = now
        width = 30
        filled = width * self.done // max(self.total, 1)
        self._stream.write(f"\r{self._label} [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total}{note}")
        self._stream.flush()


def _widget(total: int, label: str) -> Any:
    try:
        import ipywidgets
        from IPython.display import display
    except ImportError:
        return None
    box = ipywidgets.HBox([ipywidgets.IntProgress(value=0, min=0, max=total, description=label),
                           ipywidgets.Label(f"0 / {total}")])
    display(box)
    return box

