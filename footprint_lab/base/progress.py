"""Progress of a long call, and what a stopped one kept: one bar and one ``Stopped`` for every layer.

Rule kept: a call that makes many items (runs of a set, reruns of a proof, recordings saved,
read or imported) says, while it works, how many of how many are done, how long it has taken,
about how long is left (from the pace so far, once one item is done) and what it is doing now
("screening", "confirming piece 'fact:refund-policy'"), wherever the caller can see it:

- in a notebook kernel, an ipywidgets bar whose output also carries a ``text/plain`` line, so a
  notebook executed headless or read without widgets shows ``localize: 12 of 40 reruns, 00:31
  elapsed, about 01:10 left``, never the widget's repr (without ipywidgets: that line alone,
  rewritten in place);
- on a terminal, one line rewritten on stderr (when not in a kernel and stderr is a terminal;
  ``progress=True`` asks for it anywhere, ``False`` turns every form off);
- in a function ``(done, total)`` the caller hands in (the Lab draws its own bar with it); one
  that also has a ``doing`` method (:class:`Listener`) hears what the call is doing too.

A call whose work may be short (reading a notebook's recordings, importing spans) passes
``after=``: by default its bar appears only once the work has lasted that long with items still
to do, so a quick call (one item, a small file) shows nothing; ``progress=True`` shows it at once.

``total`` is what the call plans to do now, not its ceiling: a proof that stops well inside its
budget counts toward the reruns it plans, and :meth:`Progress.plan` moves the total when the
plan changes. Redraws are at most ten a second, so the bar costs microseconds per item.

A call the analyst stops (an interrupt, a cancelled task) raises :class:`Stopped`: one line,
"stopped after N of M ...", and what finished (the runs made, the verdicts reached, marked
partial) kept on it and for :func:`last_stopped`. It is an ``asyncio.CancelledError``, so
whatever awaited the call is cancelled as before; IPython shows its one line, no traceback.

Role: base layer, so every room above (explain, batch, otel, notebook) shares this one bar.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from footprint_lab.base.display import in_kernel
from footprint_lab.base.refusal import call_problem, describe_shape

#: ``progress=``: ``None`` (a bar in a kernel, a line on a terminal), ``True``, ``False`` or a function (done, total)
Wanted = bool | Callable[[int, int], Any] | None

#: what a ``progress=`` setting may be, for a refusal's fix
PROGRESS_FIX = ("is True, False, None (a bar in a notebook, a line on a terminal) or a function (done, total) "
                "called as work finishes")

#: the shortest time between two redraws
REDRAW = 0.1
#: ``after=`` of a call whose work is often quick (reading a notebook's recordings, importing spans): its default
#: bar shows once it has worked this long, so a few items never flash a bar
SHOW_AFTER = 0.5


def progress_problem(progress: Any) -> str | None:
    """What is wrong with a ``progress=`` setting, by shape (``None`` when it is usable)."""
    if progress is None or isinstance(progress, bool):
        return None
    problem = call_problem(progress, 2)
    if problem is None:
        return None
    return problem if callable(progress) else describe_shape(progress)


def clock(seconds: float) -> str:
    """``mm:ss``, or ``h:mm:ss`` from an hour on."""
    whole = max(int(seconds + 0.5), 0)
    hours, rest = divmod(whole, 3600)
    minutes, seconds_left = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds_left:02d}" if hours else f"{minutes:02d}:{seconds_left:02d}"


def progress_line(title: str, unit: str, done: int, total: int, elapsed: float, what: str = "",
                  state: str = "running") -> str:
    """The bar as one line of text: ``localize: 12 of 40 reruns, 00:31 elapsed, about 01:10 left; screening``.

    ``state`` is ``running``, ``done`` or ``stopped``; the time left is the pace so far carried over
    what is left, shown once an item is done.
    """
    count = f"{done} of {total}" + (f" {unit}" if unit else "")
    if state == "stopped":
        return f"{title}: stopped after {count}, {clock(elapsed)} elapsed"
    if state == "done":
        return f"{title}: {count}, {clock(elapsed)} elapsed, done"
    left = f", about {clock(elapsed / done * (total - done))} left" if 0 < done < total else ""
    return f"{title}: {count}, {clock(elapsed)} elapsed{left}" + (f"; {what}" if what else "")


def terminal_line(title: str, unit: str, done: int, total: int, elapsed: float, what: str = "",
                  state: str = "running", width: int = 30) -> str:
    """The bar on a terminal: ``localize: reruns [#####.........] 12/40, 00:31 elapsed, about 01:10 left; screening``
    (``done`` or ``cancelled`` at its end)."""
    filled = width * min(done, total) // max(total, 1)
    named = f"{title}: {unit} " if unit else f"{title}: "
    head = f"{named}[{'#' * filled}{'.' * (width - filled)}] {done}/{total}, {clock(elapsed)} elapsed"
    if state != "running":
        return f"{head}, {'done' if state == 'done' else 'cancelled'}"
    left = f", about {clock(elapsed / done * (total - done))} left" if 0 < done < total else ""
    return head + left + (f"; {what}" if what else "")


class Listener:
    """A ``progress=`` function that also hears the phase: ``(done, total)`` as work finishes, :meth:`doing`
    with what the call is doing now ("screening", "confirming 'vip-override'"), as the bar shows after its count.

    Subclass it, or hand any callable with a ``doing(what)`` method: the bar calls that method when it has one.
    """

    def __call__(self, done: int, total: int) -> Any:
        """``done`` of ``total`` items are done."""

    def doing(self, what: str) -> Any:
        """The call is doing ``what`` now (empty once it has no phase to name)."""


class Progress:
    """One bar for one call: :meth:`advance` as items finish, :meth:`doing` and :meth:`plan` as the work
    changes, then :meth:`finish` or :meth:`cancel`.

    ``after`` (seconds) holds back the default bar (``wanted`` ``None``) until the work has lasted that
    long with items still to do: a quick call shows nothing.
    """

    __slots__ = ("_after", "_clock", "_drawn", "_handle", "_hear", "_later", "_stream", "_tell", "_wide", "_widget",
                 "done", "started", "state", "title", "total", "unit", "what")

    def __init__(self, total: int, title: str, wanted: Wanted, *, unit: str = "", stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic, after: float = 0.0) -> None:
        self.total = total
        self.title = title
        self.unit = unit
        self.done = 0
        self.what = ""
        self.state = "running"
        self._clock = clock
        self.started = clock()
        self._drawn = -REDRAW
        self._tell: Callable[[int, int], Any] | None = None
        self._widget: Any = None
        self._handle: Any = None
        self._stream: TextIO | None = None
        self._wide = 0
        self._hear: Callable[[str], Any] | None = None
        self._later: Callable[[], None] | None = None
        self._after = after if wanted is None else 0.0
        if callable(wanted) and not isinstance(wanted, bool):
            self._tell = wanted
            hear = getattr(wanted, "doing", None)
            self._hear = hear if callable(hear) else None
            wanted(0, total)
        elif wanted is False or total == 0:
            return
        elif in_kernel():
            self._start(self._show)
        elif stream is not None or wanted is True or sys.stderr.isatty():
            self._start(lambda: self._open(stream if stream is not None else sys.stderr))

    @property
    def elapsed(self) -> float:
        return self._clock() - self.started

    def text(self) -> str:
        """The bar as one line (what a terminal and a notebook without widgets show)."""
        return progress_line(self.title, self.unit, self.done, self.total, self.elapsed, self.what, self.state)

    def advance(self, count: int = 1) -> None:
        """``count`` more items are done; a progress function that raises stops the call."""
        self.done += count
        if self.done > self.total:
            self.total = self.done
        if self._tell is not None:
            self._tell(self.done, self.total)
        self._draw(force=self.done == self.total)

    def step(self, *_: Any) -> None:
        """One more item is done (a callback's form of :meth:`advance`)."""
        self.advance()

    def doing(self, what: str) -> None:
        """What the call is doing now (a phase, a piece, a run), shown after the count."""
        if what != self.what:
            self.what = what
            if self._hear is not None:
                self._hear(what)
            self._draw(force=True)

    def plan(self, total: int) -> None:
        """The call now plans ``total`` items in all (never fewer than are done)."""
        total = max(total, self.done)
        if total != self.total:
            self.total = total
            if self._tell is not None:
                self._tell(self.done, self.total)
            self._draw(force=True)

    def finish(self) -> None:
        """The work is done; a call that ended inside its plan shows the bar full at what it did."""
        self.state = "done"
        self.what = ""
        self.plan(self.done)
        self._draw(force=True, last=True)

    close = finish

    def cancel(self) -> None:
        """The call was stopped: the bar keeps what was done and says so."""
        self.state = "stopped"
        self._draw(force=True, last=True)

    # -- drawing ---------------------------------------------------------------------------------
    def _start(self, show: Callable[[], None]) -> None:
        """Show the bar now, or (``after``) once the work has lasted that long."""
        if self._after > 0:
            self._later = show
        else:
            show()

    def _open(self, stream: TextIO) -> None:
        self._stream = stream
        self._draw(force=True)

    def _show(self) -> None:
        from IPython.display import display

        line = self.text()
        try:
            import ipywidgets
        except ImportError:
            self._handle = display({"text/plain": line}, raw=True, display_id=True)
            return
        bar = ipywidgets.IntProgress(value=0, min=0, max=max(self.total, 1))
        label = ipywidgets.Label(line)
        self._widget = ipywidgets.HBox([bar, label])
        self._handle = display(self._bundle(line), raw=True, display_id=True)

    def _bundle(self, line: str) -> dict[str, Any]:
        """The widget's view, with the line as its plain text (never the widget's repr)."""
        view = self._widget._repr_mimebundle_() or {}
        return {**{mime: data for mime, data in view.items() if mime != "text/plain"}, "text/plain": line}

    def _draw(self, *, force: bool = False, last: bool = False) -> None:
        if self._widget is None and self._handle is None and self._stream is None:
            if self._later is not None and not last and self.done < self.total and self.elapsed >= self._after:
                show, self._later = self._later, None  # the work lasts: the bar shows from now on
                show()
            return
        now = self._clock()
        if not force and now - self._drawn < REDRAW:
            return
        self._drawn = now
        line = self.text()
        if self._widget is not None:
            bar, label = self._widget.children
            bar.max = max(self.total, 1)
            bar.value = self.done
            label.value = line
            if last:
                bar.bar_style = "success" if self.state == "done" else "danger"
                self._handle.update(self._bundle(line), raw=True)  # what a notebook saved headless keeps
        elif self._handle is not None:
            self._handle.update({"text/plain": line}, raw=True)
        if self._stream is not None:
            line = terminal_line(self.title, self.unit, self.done, self.total, self.elapsed, self.what, self.state)
            self._stream.write("\r" + line.ljust(self._wide) + ("\n" if last else ""))
            self._stream.flush()
            self._wide = 0 if last else len(line)


class Stopped(asyncio.CancelledError):
    """A long call the analyst stopped (an interrupt in a notebook, a cancelled task): what finished is kept.

    ``partial`` holds it (the runs made, as a ``RunSet``; the rows localized; a proof's report with
    the verdicts reached, marked partial), and so does :func:`last_stopped`; ``done`` and ``total``
    count the work, ``what`` names its items. It is still a cancellation (an ``asyncio.CancelledError``),
    so whatever awaited the call is cancelled as before; IPython shows its one line, never a traceback.
    """

    def __init__(self, function: str, what: str, done: int, total: int, partial: Any, *,
                 kept: str = "the {done} made: footprint_lab.batch.last_stopped()") -> None:
        super().__init__(f"{function}: stopped after {done} of {total} {what}; "
                         f"{kept.format(done=done) if done else 'nothing finished'}")
        self.function = function
        self.what = what
        self.done = done
        self.total = total
        self.partial = partial
        _LAST[:] = [partial]

    def _render_traceback_(self) -> list[str]:
        """IPython shows this instead of a traceback: one line, what was kept and where."""
        return [str(self)]


#: what the newest stopped call kept (see :func:`last_stopped`)
_LAST: list[Any] = []


def last_stopped() -> Any:
    """What the newest stopped call kept (``Stopped.partial``): the runs made or read, the rows computed, a
    proof's partial report; ``None`` when none was stopped in this process, or the one stopped kept nothing (its
    line says so: "nothing finished", a save stopped before its swap)."""
    return _LAST[0] if _LAST else None


#: what stops a call: a notebook's interrupt in synchronous code, a cancelled task in asynchronous code
INTERRUPTS = (KeyboardInterrupt, asyncio.CancelledError)


@contextmanager
def stopping(bar: Progress, kept: Callable[[], Any], where: str) -> Iterator[Progress]:
    """A loop over ``bar``'s items, stopped cleanly: the bar finished when the loop ends, cancelled when it fails,
    and when an interrupt lands in it, :class:`Stopped` raised in one line with what ``kept()`` returns (what
    finished) and ``where`` (how the line says where it is kept: ``"the {done} read: ...last_stopped()"``).
    """
    try:
        yield bar
    except INTERRUPTS:
        bar.cancel()
        raise Stopped(bar.title, bar.unit, bar.done, bar.total, kept(), kept=where) from None
    except BaseException:
        bar.cancel()
        raise
    bar.finish()
