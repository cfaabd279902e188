"""``RunSet``: many runs of one system, made, saved, checked and localized together, here or on a Dask cluster.

Rule kept: a set is its runs, in order, and nothing is ever dropped from it: an input whose run
failed is a failed run of the set (status ``failed``, its error's type in ``frame()``), kept like
the others. Every method that works through the set is a loop over the same per-run work
(:mod:`footprint_lab.batch._work`), in this process or sent to a cluster in chunks
(:mod:`footprint_lab.batch._cluster`), so both give the same rows; every argument is judged
before the first run, recording or task (:mod:`footprint_lab.batch.refusals`); every long call
shows its progress and can be cancelled (:mod:`footprint_lab.batch._progress`).

What the set knows of each run without its recording (its summary: ``frame()``, ``where=``,
``compare``) is kept apart from the recording, which a saved set reads only when a run is
touched (:mod:`footprint_lab.batch._folder`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

# each sibling by its own module name, never through the package (whose __init__ imports this module)
import footprint_lab.batch._cluster as _cluster
import footprint_lab.batch._folder as _folder
import footprint_lab.batch._table as _table
import footprint_lab.batch._work as _work
from footprint_lab.base.progress import INTERRUPTS, Stopped, stopping
from footprint_lab.base.refusal import call_problem, describe_shape
from footprint_lab.batch._arms import Comparison, _metric, _pairs, compared, explained
from footprint_lab.batch._checks import (
    _WHERE_FIX,
    LocalizeSettings,
    _check_settings,
    _inputs,
    _localizable,
    _localized,
    _runner_or_factory,
    _whole,
)
from footprint_lab.batch._entries import FRAME_COLUMNS, Entry, RunSummary, load_run
from footprint_lab.batch._progress import KEPT_AT, NOT_SAVED, SAVED_WHOLE, Bar, check_progress, partial_rows, rows_kept
from footprint_lab.batch.refusals import BatchConfigError
from footprint_lab.core.door import normalize_run_input
from footprint_lab.core.run import Run
from footprint_lab.core.runs_given import Runs, runs_given
from footprint_lab.explain import Trials, TrialSettings
from footprint_lab.record.recording import Recording

if TYPE_CHECKING:
    from collections.abc import Mapping

    import pandas as pd
    from distributed import Client

    from footprint_lab.base.progress import Wanted
    from footprint_lab.core.identity import IdentityInput
    from footprint_lab.core.runner import Runner
    from footprint_lab.explain.provenance.influence import InfluenceStrategy
    from footprint_lab.explain.trials.rerun import Rerun, Restore
    from footprint_lab.lab.views.runset import RunTable
    from footprint_lab.otel.inputs import Spans
    from footprint_lab.providers.types import Provider

#: runs of a factory at once in one process, unless ``concurrency=`` says otherwise
DEFAULT_CONCURRENCY = 8
#: what ``where=`` selects runs with: a function of a run's :class:`RunSummary` that is true for those wanted, or
#: their run ids
Where = Callable[[RunSummary], object] | Iterable[str]


class RunSet:
    """Runs of one system over many inputs: ``len(runs)``, ``for run in runs``, ``runs[0]``, ``runs["run-id"]``."""

    __slots__ = ("_culprits", "_entries", "_positions", "partial")

    def __init__(self, entries: Sequence[Entry]) -> None:
        self._entries = list(entries)
        self._positions: dict[str, int] | None = None
        #: what the last ``localize`` confirmed in each run it localized, by run id (the table's culprit column)
        self._culprits: dict[str, str] = {}
        #: a set a stopped call kept (the runs made before the stop): not every input has its run
        self.partial = False

    # -- making a set --------------------------------------------------------------------------
    @classmethod
    async def run(cls, runner: Runner | Callable[[], Runner], inputs: Iterable[str | Mapping[str, Any]], *,
                  client: Client | None = None, concurrency: int | None = None, identity: IdentityInput = None,
                  progress: Wanted = None) -> RunSet:
        """One run per input, in input order; a run that fails is kept as a failed run.

        ``runner`` is a runner (an ``Agent``, an ``LLMCall``, a composition), which answers one
        input at a time, or a factory called with no arguments that builds one, so ``concurrency``
        runs (8 by default) go at once; the same factory can serve ``localize`` as
        ``factory(exclude=[...], seed=...)``. Each input is a message or ``{"message": ...}``;
        ``identity`` is passed to every run. The first input runs alone first: a refusal there (the
        runner cannot take these inputs) is raised, and nothing else runs. With ``client`` (a
        ``dask.distributed.Client``) the other inputs run on the cluster, in chunks, the factory
        shipped with cloudpickle, each run's recording sent back.
        """

        function = "RunSet.run"
        wanted = check_progress(function, progress)
        client = _cluster.check_client(function, client)
        factory = _runner_or_factory(function, runner)
        items = _inputs(function, inputs)
        for position, item in items:
            normalize_run_input(item, f"{function} (input {position})",
                                **({"identity": identity} if identity is not None else {}))
        if factory is None and (concurrency not in (None, 1) or client is not None):
            raise BatchConfigError(
                function, "concurrency" if client is None else "runner", "one runner instance",
                "runs one input at a time on a runner instance (it keeps each turn's conversation): pass a factory "
                "that builds the runner, e.g. RunSet.run(lambda: Agent(...), inputs, concurrency=8)",
            )
        limit = _whole(function, "concurrency", DEFAULT_CONCURRENCY if concurrency is None else concurrency,
                       1, 10_000) if factory is not None else 1
        make: Callable[[], Any] = factory if factory is not None else (lambda: runner)
        payload = _cluster.ship(function, "runner", (factory, identity, limit), client) if client is not None else b""
        runs: list[Any] = [None] * len(items)
        bar = Bar(len(items), "runs", wanted)
        if not items:
            return cls([])
        try:
            runs[0] = await _work.run_one(make, items[0][1], identity, probe=True)
            bar.advance()
            rest = items[1:]
            if client is not None and rest:
                chunks = _cluster.chunked(rest, _cluster.threads(client))
                frames = await _cluster.gather_async(client, _work.run_task, chunks, payload, bar)
                for frame in frames:
                    for position, recording in frame.itertuples(index=False):
                        runs[position] = load_run(recording.encode("utf-8"), function)
                return cls([Entry(run=run) for run in runs])

            def keep(position: int, run: Run) -> None:
                runs[position] = run
                bar.advance()

            await _work.run_inputs(make, rest, identity, limit, keep)
        except INTERRUPTS:
            bar.cancel()
            made = cls([Entry(run=run) for run in runs if run is not None])
            made.partial = True
            raise Stopped(function, "runs", len(made), len(items), made) from None
        except BaseException:
            bar.cancel()
            raise
        bar.finish()
        return cls([Entry(run=run) for run in runs])

    @classmethod
    def from_runs(cls, runs: Runs) -> RunSet:
        """A set of runs already made (``Run`` objects, or their ``Recording``s), in the order given."""
        given = runs_given(runs)  # read as export and to_spans read theirs
        if given is None:
            raise BatchConfigError("RunSet.from_runs", "runs", describe_shape(runs),
                                   "must be a list of runs (what agent.run returns) or of their recordings")
        entries = []
        for run in given:
            if isinstance(run, Recording):
                run = Run.from_recording(run)
            if not isinstance(run, Run):
                raise BatchConfigError("RunSet.from_runs", "runs", f"a list holding {describe_shape(run)}",
                                       "must hold only runs (what agent.run returns) or their recordings")
            entries.append(Entry(run=run))
        return cls(entries)

    @classmethod
    def from_spans(cls, spans: Spans, *, progress: Wanted = None) -> RunSet:
        """A set of the runs in imported OpenTelemetry spans (``footprint_lab.otel.from_spans``): a day of traces.

        ``progress`` is ``from_spans``'s: a bar once the import lasts, and a stop keeps the runs imported."""
        from footprint_lab.otel import from_spans  # the otel extra: an optional dependency, loaded when used

        return cls.from_runs(from_spans(spans, progress=check_progress("RunSet.from_spans", progress)))

    @classmethod
    def load(cls, folder: str | Path) -> RunSet:
        """A set saved by :meth:`save`: its index is read now, each recording when its run is touched."""
        return cls(_folder.read(_folder.folder_path("RunSet.load", folder)))

    def save(self, folder: str | Path, *, overwrite: bool = False, progress: Wanted = None) -> Path:
        """Write the set to ``folder``: a recording file per run, then the index; returns the folder.

        Stopped (an interrupt) before every recording is written, the save leaves the folder as it was
        (an earlier set there untouched, a folder it made removed) and raises ``Stopped`` saying so; stopped
        while the new set is swapped in, it finishes the swap first: the set is saved whole.
        """
        function = "RunSet.save"
        path = _folder.folder_path(function, folder)
        if not isinstance(overwrite, bool):
            raise BatchConfigError(function, "overwrite", describe_shape(overwrite), "is True or False")
        wanted = check_progress(function, progress)
        folders = {os.path.dirname(os.path.dirname(entry.path)) for entry in self._entries if entry.path is not None}
        sources = {Path(folder).resolve() for folder in folders}
        with _folder.claim(path, overwrite=overwrite, sources=sources):
            bar = Bar(len(self), "saved", wanted)
            staged = False
            try:
                _folder.stage(path, self._entries, bar.advance)
                staged = True
                _folder.swap(path)
            except INTERRUPTS:
                bar.cancel()
                if staged:  # every recording was written: the swap is finished, the set saved whole
                    _folder.swap(path)
                    raise Stopped(function, "runs saved", bar.done, len(self), path, kept=SAVED_WHOLE) from None
                _folder.unstage(path)
                raise Stopped(function, "runs saved", bar.done, len(self), None, kept=NOT_SAVED) from None
            except BaseException:
                bar.cancel()
                raise
            bar.finish()
        return path

    # -- the runs ------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[Run]:
        return (entry.run() for entry in self._entries)

    def __getitem__(self, key: int | str) -> Run:
        """A run by its position, or by its run id."""
        if isinstance(key, int) and not isinstance(key, bool):
            if -len(self) <= key < len(self):
                return self._entries[key].run()
            raise BatchConfigError("RunSet[...]", "key", "a position out of range",
                                   f"must be a position from 0 to {len(self) - 1} (or negative from the end)")
        if isinstance(key, str) and key in self._by_id():
            return self._entries[self._by_id()[key]].run()
        raise BatchConfigError("RunSet[...]", "key", "a string that is no run id of this set"
                               if isinstance(key, str) else describe_shape(key),
                               "must be a position or a run id as frame() shows it in run_id")

    def __repr__(self) -> str:
        return f"RunSet({len(self)} runs{', partial: a stopped call kept them' if self.partial else ''})"

    def summaries(self) -> list[RunSummary]:
        """What the set knows of each run without its recording (what ``where=`` and ``compare`` are given)."""
        return [entry.summary for entry in self._entries]

    def select(self, where: Where) -> RunSet:
        """The runs ``where`` selects, as a set (see :meth:`localize` for what ``where`` may be)."""
        chosen = RunSet([self._entries[i] for i in self._selected("RunSet.select", where)])
        chosen._culprits = dict(self._culprits)
        return chosen

    def frame(self, *, cost: bool = False) -> pd.DataFrame:
        """A row per run: run id, input, answer, status, error, tokens, duration_ms, members.

        A saved set's rows are its index's, read without opening a recording; each recording read later
        (a run touched, ``integrity()``, ``suspects()``, ``localize()``, ``save``) is checked against its row
        and refused when they differ, so an index changed by hand is caught when its runs are used.

        ``cost=True`` adds ``cost``: each run's cost in USD at the prices of
        ``footprint_lab.providers.prices``, empty (``NaN``) where a model it used has no known price. The
        index does not hold it (prices change; the cost is worked out from each run's usage by model),
        so a saved set reads each recording not yet read, once.
        """
        import pandas as pd

        if not isinstance(cost, bool):
            raise BatchConfigError("RunSet.frame", "cost", describe_shape(cost), "is True or False")
        width = len(FRAME_COLUMNS)
        rows = [entry.row()[:width] for entry in self._entries]
        frame = pd.DataFrame(rows, columns=FRAME_COLUMNS)
        frame = frame.astype({"tokens": "int64", "duration_ms": "float64", "members": "int64"})
        if cost:
            frame["cost"] = pd.Series([_table.run_cost(entry, read=True)[0] for entry in self._entries],
                                      dtype="float64")
        return frame

    def table(self, *, sort: str = "status", descending: bool | None = None,
              status: str | list[str] | tuple[str, ...] | set[str] | None = None, where: Where | None = None,
              limit: int = _table.DEFAULT_LIMIT, localized: pd.DataFrame | None = None) -> RunTable:
        """The set as a table a notebook draws: a row per run (status, input, answer, tokens, duration, cost,
        and the culprit ``localize`` confirmed), sorted and filtered here, in Python, so the page needs no script.

        ``sort`` is a column: ``status`` (the default: failed runs first, then unfinished, then finished, each in
        the set's order), ``position``, ``input``, ``answer``, ``tokens``, ``duration``, ``cost`` or ``culprit``;
        numbers come largest first unless ``descending=False``, runs without a value last. ``status`` keeps the
        runs of one status or a list of them; ``where`` as for :meth:`select`. At most ``limit`` rows are drawn
        (50; the table says how many more there are). The culprits are the set's last ``localize``'s, or those of
        the ``localized`` frame given (``RunSet.localize``'s). Displaying the set shows ``table()``.
        """
        function = "RunSet.table"
        column, way = _table.check_sort(function, sort, descending)
        statuses = _table.check_statuses(function, status)
        drawn = _whole(function, "limit", limit, 1, 10_000)
        culprits = self._culprits if localized is None else _localized(function, localized)
        kept = [i for i in self._selected(function, where)
                if statuses is None or self._entries[i].summary.status in statuses]
        said = [f"status {' or '.join(statuses)}" if statuses else "", "a where= filter" if where is not None else ""]
        return _table.build(self._entries, kept, sort=column, descending=way, limit=drawn, culprits=culprits,
                            filtered=", ".join(part for part in said if part), partial=self.partial)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """A set displays as its :meth:`table`."""
        return self.table()._repr_mimebundle_(include, exclude)

    # -- explanations over the set ---------------------------------------------------------------
    def integrity(self, *, client: Client | None = None, claims: Mapping[str, Any] | None = None,
                  progress: Wanted = None) -> pd.DataFrame:
        """``explain.integrity`` on every run: a row per run and check (status, findings, steps, what, note)."""
        function = "RunSet.integrity"
        wanted = check_progress(function, progress)
        client = _cluster.check_client(function, client)
        if client is not None:
            return self._on_cluster(function, client, _work.integrity_task, (claims,), "claims", wanted, "checked",
                                    _work.INTEGRITY_COLUMNS)
        import pandas as pd

        rows: list[dict[str, Any]] = []
        self._each(self._entries, "checked", wanted,
                   lambda entry, run: rows.extend(_work.integrity_rows(entry.run_id, run, claims)),
                   kept=lambda: pd.DataFrame(rows, columns=_work.INTEGRITY_COLUMNS))
        return pd.DataFrame(rows, columns=_work.INTEGRITY_COLUMNS)

    def suspects(self, *, client: Client | None = None, strategy: str | InfluenceStrategy = "lexical",
                 embed: Callable[[list[str]], Any] | None = None, top: int | None = None,
                 progress: Wanted = None) -> pd.DataFrame:
        """``run.suspects()`` of every run (its ``top`` rows when given), with the run id on each row."""
        function = "RunSet.suspects"
        wanted = check_progress(function, progress)
        client = _cluster.check_client(function, client)
        if top is not None:
            _whole(function, "top", top, 1, 100_000)
        if client is not None:
            return self._on_cluster(function, client, _work.suspects_task, (strategy, embed, top), "strategy",
                                    wanted, "ranked", None)
        frames: list[pd.DataFrame] = []
        self._each(self._entries, "ranked", wanted,
                   lambda entry, run: frames.append(_work.suspect_frame(entry.run_id, run, strategy, embed, top)),
                   kept=lambda: _work.joined(frames, None))
        return _work.joined(frames, None)

    async def localize(self, *, rerun: Rerun, where: Where | None = None, client: Client | None = None,
                       progress: Wanted = None, **settings: Unpack[LocalizeSettings]) -> pd.DataFrame:
        """``explain.localize`` on every run ``where`` selects (every finished run by default), as one DataFrame.

        ``where`` is a function given each run's :class:`RunSummary` (``run_id``, ``input``,
        ``answer``, ``status``... and ``run()``) that is true for the runs to localize (the wrong
        answers), or a collection of run ids (``frame[...].run_id``). ``settings`` are
        ``localize``'s own (``samples``, ``budget``, ``alpha``, ``comparator``, ``top``, ``sources``,
        ``strategy``, ``concurrency``, ``retries``) and apply to every run; ``rerun`` is the factory
        (``factory(exclude=[...], seed=...)``; on a cluster it is shipped with cloudpickle) or, in
        this process, the agent. A row per tested suspect of each run (``run_id``, ``source_id``,
        ``verdict``, ``flips``, ``samples``, ``noise_flips``, ``p_value``, ``reruns``...), and one per
        set of sources confirmed or tested together (``source_kind`` ``together``); ``run_reruns`` is
        each run's whole cost. :func:`culprits` reads it.
        """
        function = "RunSet.localize"
        wanted = check_progress(function, progress)
        client = _cluster.check_client(function, client)
        _check_settings(function, settings)
        if not (callable(rerun) or callable(getattr(rerun, "without", None))):
            raise BatchConfigError(function, "rerun", describe_shape(rerun),
                                   "must be a factory called as factory(exclude=[...], seed=...) that returns a "
                                   "runner, or (in this process) the agent that made the runs")
        chosen = [self._entries[i] for i in self._selected(function, where, default_finished=True)]
        _localizable(function, chosen)
        if client is not None:
            payload = _cluster.ship(function, "rerun", (rerun, settings), client)
            chunks = _cluster.chunked([e.item() for e in chosen], _cluster.threads(client))
            bar = Bar(len(chosen), "localized", wanted)
            frames = await _cluster.gather_async(client, _work.localize_task, chunks, payload, bar)
        else:
            frames = []
            bar = Bar(len(chosen), "localized", wanted)
            try:
                for entry in chosen:
                    frames.append(await _work.localize_frame(entry.run_id, entry.run(), rerun, settings))
                    bar.advance()
            except INTERRUPTS:
                bar.cancel()
                partial = _work.joined(frames, _work.LOCALIZE_COLUMNS)
                partial.attrs.update(runs=len(frames), partial=True)
                raise Stopped(function, "runs localized", len(frames), len(chosen), partial,
                              kept="the rows of the {done} localized: " + KEPT_AT) from None
            except BaseException:
                bar.cancel()
                raise
            bar.finish()
        frame = _work.joined(frames, _work.LOCALIZE_COLUMNS)
        frame.attrs["runs"] = len(chosen)
        self._culprits.update(_table.culprits_by_run(frame))
        return frame

    def compare(self, other: RunSet, metric: str | Callable[[RunSummary], float | None], *,
                confidence: float = 0.95) -> Comparison:
        """Two arms on the same inputs: ``mean(metric on other) - mean(metric on this set)``, with its interval.

        Runs are paired by input (the k-th run of an input in one set with the k-th in the other).
        ``metric`` is a column of ``frame()`` (``tokens``, ``duration_ms``, ``members``) or a function
        of a :class:`RunSummary` giving a number or a bool (``None``: no value; the pair is left out
        and counted). The interval: Newcombe's for paired proportions when every value is 0 or 1,
        else Student's t on the paired differences (see :mod:`footprint_lab.batch._stats` for why).
        """
        function = "RunSet.compare"
        if not isinstance(other, RunSet):
            raise BatchConfigError(function, "other", describe_shape(other), "must be another RunSet, the second arm")
        if not isinstance(confidence, float) or not 0.5 <= confidence < 1.0:
            raise BatchConfigError(function, "confidence", describe_shape(confidence),
                                   "must be a number from 0.5 to below 1 (0.95 is usual)")
        read = _metric(function, metric)
        pairs = _pairs(function, self.summaries(), other.summaries())
        return compared(function, metric, read, pairs, confidence)

    # -- helpers ---------------------------------------------------------------------------------
    async def explain_differences(self, other: RunSet, *, replay: Provider | None = None, rerun: Restore | None = None,
                                  where: Where | None = None, trials: Trials | None = None,
                                  **settings: Unpack[TrialSettings]) -> pd.DataFrame:
        """Which differences between two arms explain their changed answers: for each input whose answer differs
        between this set (the good arm) and ``other``, ``explain.explain_difference`` carries each difference of the
        pair into ``other``'s run and confirms which bring this set's answer back (``replay=`` a provider, or
        ``rerun=`` the other arm's agent or factory; ``trials=`` / keywords as for ``localize``).

        One row per difference: ``difference`` (as the explanation names it), ``pairs`` (changed pairs where it
        was one of the differences), ``confirmed`` (pairs where it brought the good answer back), ``tested``
        (pairs where it got a verdict), ``not_tested`` (pairs where it could not be tested, with the reason in
        ``why_not_tested``), and ``share`` (``confirmed / changed pairs``), most confirmed first. ``where`` picks
        the pairs (a function of this set's run summary, or run ids of this set); ``frame.attrs`` says how many
        pairs were compared and how many had changed answers.
        """
        function = "RunSet.explain_differences"
        if not isinstance(other, RunSet):
            raise BatchConfigError(function, "other", describe_shape(other), "must be the other arm, a RunSet")
        if (replay is None) == (rerun is None):
            raise BatchConfigError(function, "replay", "both or neither of replay= and rerun=",
                                   "is one way to carry the differences in: replay=provider re-sends each bad run's "
                                   "answering call; rerun= reruns it (the other arm's agent or factory)")
        chosen = set(self._selected(function, where, default_finished=True))
        by_id = self._by_id()
        pairs = [(a, b) for a, b in _pairs(function, self.summaries(), other.summaries()) if by_id[a.run_id] in chosen]
        return await explained(pairs, replay=replay, rerun=rerun, trials=trials, settings=settings)

    def _by_id(self) -> dict[str, int]:
        if self._positions is None:
            self._positions = {entry.run_id: i for i, entry in reversed(list(enumerate(self._entries)))}
        return self._positions

    def _selected(self, function: str, where: Any, *, default_finished: bool = False) -> list[int]:
        if where is None:
            return [i for i, e in enumerate(self._entries) if not default_finished or e.summary.status == "finished"]
        if callable(where):
            problem = call_problem(where, 1)
            if problem is not None:
                raise BatchConfigError(function, "where", problem, _WHERE_FIX)
            return [i for i, entry in enumerate(self._entries) if where(entry.summary)]
        if isinstance(where, str | bytes) or not isinstance(where, Iterable):
            raise BatchConfigError(function, "where", describe_shape(where), _WHERE_FIX)
        wanted = list(where)
        if not all(isinstance(name, str) for name in wanted):
            raise BatchConfigError(function, "where", "a collection holding something other than run ids", _WHERE_FIX)
        known = self._by_id()
        unknown = sum(1 for name in wanted if name not in known)
        if unknown:
            raise BatchConfigError(function, "where", f"a collection with {unknown} id(s) that name no run of the set",
                                   _WHERE_FIX)
        chosen = set(wanted)
        return [i for i, entry in enumerate(self._entries) if entry.run_id in chosen]

    def _each(self, entries: Sequence[Entry], label: str, wanted: Any, work: Callable[[Entry, Run], None], *,
              kept: Callable[[], pd.DataFrame]) -> None:
        """Do ``work`` on each run in this process, reading each saved recording once and keeping none.

        Stopped (an interrupt, a progress function that raises one), it raises ``Stopped`` with what ``kept``
        makes of the work done so far (its frame, ``attrs`` ``partial`` and ``runs``: how many runs it covers).
        """
        bar = Bar(len(entries), label, wanted)
        with stopping(bar, lambda: partial_rows(kept(), bar), rows_kept(label)):
            for entry in entries:
                run = entry.load("RunSet")
                work(entry, run)
                bar.advance()

    def _on_cluster(self, function: str, client: Any, task: Callable[..., Any], settings: tuple[Any, ...],
                    setting: str, wanted: Any, label: str, columns: list[str] | None) -> pd.DataFrame:
        """A pure explanation of every run, on the cluster: the recordings' paths (or JSON) out, frames back."""
        payload = _cluster.ship(function, setting, settings[0] if len(settings) == 1 else settings, client)
        chunks = _cluster.chunked([e.item() for e in self._entries], _cluster.threads(client))
        bar = Bar(len(self._entries), label, wanted)
        return _work.joined(_cluster.gather(client, task, chunks, payload, bar,
                                            lambda frames: partial_rows(_work.joined(frames, columns), bar),
                                            rows_kept(label)), columns)

