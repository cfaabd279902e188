"""Progress of a long run-set call, and what a cancellation leaves: the engine's one bar, named for a run set.

Rule kept: every call that works through a set (running it, saving it, checking, ranking or
localizing its runs) reports how far it got, how long it took and about how long is left, where
the caller can see it (:mod:`footprint_lab.base.progress`: an ipywidgets bar with a plain-text
line inside a kernel, one line rewritten on a terminal's stderr, or a function ``(done, total)``).
The call stays cancellable: a notebook's Stop (KeyboardInterrupt), ``task.cancel()``, or an
exception raised by the progress function stops the outstanding work (local tasks cancelled,
cluster futures cancelled), the bar says ``stopped after N of M`` with what was done, and the
interruption reaches the caller as :class:`~footprint_lab.base.progress.Stopped` where the
call keeps what finished, else unchanged.

``progress`` is ``None`` (the default: a bar in a kernel, a line on a terminal, nothing when
stderr is not a terminal), ``True`` (a bar in a kernel, else a line on stderr), ``False``
(nothing) or a function.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, cast

from footprint_lab.base.progress import PROGRESS_FIX, Progress, Wanted, progress_problem
from footprint_lab.batch.refusals import BatchConfigError

if TYPE_CHECKING:
    import pandas as pd

#: where a stopped run-set call's partial result is kept (one store for every layer: ``base.progress``)
KEPT_AT = "footprint_lab.batch.last_stopped()"
#: what a save stopped before its swap says, and one stopped in it (the swap finished: the set saved whole)
NOT_SAVED = "none of it kept: the folder is as it was before the save (a folder the save made is removed)"
SAVED_WHOLE = "the set was saved whole before the stop: RunSet.load(folder) reads it"


def check_progress(function: str, progress: Any) -> Wanted:
    """``progress`` when usable; refused before anything runs otherwise."""
    problem = progress_problem(progress)
    if problem is not None:
        raise BatchConfigError(function, "progress", problem, PROGRESS_FIX)
    return cast("Wanted", progress)


class Bar(Progress):
    """The bar of one run-set call, titled by the call its label stands for (``checked``: ``RunSet.integrity``)."""

    __slots__ = ()

    _CALLS: ClassVar[dict[str, tuple[str, str]]] = {
        "runs": ("RunSet.run", "runs"), "saved": ("RunSet.save", "runs saved"),
        "checked": ("RunSet.integrity", "runs checked"), "ranked": ("RunSet.suspects", "runs ranked"),
        "localized": ("RunSet.localize", "runs localized"), "loaded": ("RunSet.load", "runs read"),
    }

    def __init__(self, total: int, label: str, wanted: Wanted) -> None:
        title, unit = self._CALLS.get(label, ("RunSet", label))
        super().__init__(total, title, wanted, unit=unit)


def partial_rows(frame: pd.DataFrame, bar: Bar) -> pd.DataFrame:
    """The rows a stopped call made, marked: ``attrs`` ``partial`` and ``runs`` (how many runs they cover)."""
    frame.attrs.update(runs=bar.done, partial=True)
    return frame


def rows_kept(label: str) -> str:
    """How a stopped call's one line says where its rows are (``{done}`` filled in by ``Stopped``)."""
    return f"the rows of the {{done}} {label}: {KEPT_AT}"
