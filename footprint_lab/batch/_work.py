"""The work a run set does per run, and the chunk tasks that do it in this process or on a Dask worker.

Rule kept: one piece of code per piece of work, wherever it runs. ``integrity_rows``,
``suspect_frame``, ``localize_frame`` and ``run_one`` are what every path calls, run by run; the
``*_task`` functions are what a worker is sent: a chunk of runs (each a recording file's path or
the recording's JSON, so a worker reads only the recordings it is given) and one payload, the
settings and any factory serialized with cloudpickle, and they hand back one DataFrame. So the
same runs with the same settings give the same rows locally and on any cluster.

A refusal raised on a worker (a setting ``localize`` refuses for one run) travels back as
:class:`RemoteRefusal`, whose arguments pickle, and is raised again here as the refusal it was
(same class, message and fields), never as a pickling error.
"""

from __future__ import annotations

import asyncio
import importlib
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from footprint_lab.base.refusal import Refusal
from footprint_lab.batch._entries import load_run
from footprint_lab.core.run import Run
from footprint_lab.explain import integrity, localize
from footprint_lab.record.recording_door import load_recording

if TYPE_CHECKING:
    import pandas as pd


#: one run to work on: its id in the set, its recording's file path or JSON, and (for a file) the index row
#: the recording must match
Item = tuple[str, str | bytes, tuple[Any, ...] | None]

INTEGRITY_COLUMNS = ["run_id", "check", "status", "findings", "kinds", "steps", "what", "note"]
LOCALIZE_COLUMNS = ["run_id", "rank", "source_id", "source_kind", "verdict", "flips", "samples", "flip_rate",
                    "noise_flips", "noise_samples", "noise_rate", "p_value", "level", "reruns", "failed", "phase",
                    "score", "reason", "member", "member_name", "run_reruns"]
RUN_COLUMNS = ["position", "recording"]


# -- per run ----------------------------------------------------------------------------------
def integrity_rows(run_id: str, run: Run, claims: Any) -> list[dict[str, Any]]:
    """One row per check of ``explain.integrity``: its disposition and the findings it made."""

    report = integrity(run, claims=claims)
    rows = []
    for disposition in report.dispositions:
        found = report.of_kind(disposition.check)
        rows.append({"run_id": run_id, "check": disposition.check, "status": disposition.status,
                     "findings": len(found), "kinds": sorted({f.kind for f in found}),
                     "steps": [step for f in found for step in f.steps], "what": [f.what for f in found],
                     "note": disposition.note})
    return rows


def suspect_frame(run_id: str, run: Run, strategy: Any, embed: Any, top: int | None) -> pd.DataFrame:
    """``run.suspects()``, its ``top`` rows when given, with the run id first."""
    frame = run.suspects(strategy, embed=embed)
    if top is not None:
        frame = frame.head(top)
    frame = frame.reset_index(drop=True)
    frame.insert(0, "run_id", run_id)
    return frame


async def localize_frame(run_id: str, run: Run, rerun: Any, settings: Mapping[str, Any]) -> pd.DataFrame:
    """``explain.localize`` on one run: a row per tested suspect, one per set tested together, then one per piece
    left untested (verdict ``not_tested``, ``reason`` says why): nothing is skipped quietly."""
    report = await localize(run, rerun=rerun, progress=False, **settings)
    frame = report.to_frame()
    frame.insert(0, "run_id", run_id)
    frame["run_reruns"] = report.reruns
    return frame.reindex(columns=LOCALIZE_COLUMNS)


async def run_one(make: Callable[[], Any], message: Any, identity: Any, *, probe: bool = False) -> Run:
    """One run of a set; a failure is kept as a failed run, never raised.

    Only the probe (the set's first input, run alone before the others start) lets a refusal
    through: a runner that refuses the first input would refuse them all, and nothing has run yet.
    """
    started = time.time()
    runner: Any = None
    before: Any = None
    try:
        runner = make()
        before = getattr(runner, "last_run", None)
        keywords = {"identity": identity} if identity is not None else {}
        return cast("Run", await runner.run(message, **keywords))
    except Refusal as refused:
        if probe:
            raise
        return _failed(runner, refused, message, started)
    except Exception as exc:  # a failure while running is a failed run of the set, never a lost input
        ended = getattr(runner, "last_run", None)
        if ended is not None and ended is not before and getattr(ended, "status", None) in ("failed", "cancelled"):
            return cast("Run", ended)
        return _failed(runner, exc, message, started)


def _failed(runner: Any, exc: BaseException, message: Any, started: float) -> Run:
    """A run that failed before its runner recorded anything: a recording of that much, and no more."""

    text = message if isinstance(message, str) else message.get("message")
    if getattr(runner, "redact", None) is not None:
        text = "[redacted:input]"  # the runner's policy never saw this input, so none of it is kept
    error = {"type": type(exc).__name__, "code": getattr(exc, "code", None)}
    recording = load_recording({
        "run_id": f"run-failed-{uuid.uuid4().hex[:12]}", "status": "failed", "input": {"message": text},
        "runner": {"kind": str(getattr(runner, "kind", type(runner).__name__ if runner is not None else "factory")),
                   "name": getattr(runner, "name", None) if isinstance(getattr(runner, "name", None), str) else None},
        "error": error, "started_at": started, "duration_ms": (time.time() - started) * 1000.0,
    }, door="RunSet.run")
    return Run.from_recording(recording)


async def run_inputs(make: Callable[[], Any], inputs: Sequence[tuple[int, Any]], identity: Any, concurrency: int,
                     on_done: Callable[[int, Run], None]) -> None:
    """Run every ``(position, input)``, at most ``concurrency`` at once; ``on_done`` hears of each as it ends."""
    gate = asyncio.Semaphore(concurrency)

    async def one(position: int, message: Any) -> None:
        async with gate:
            run = await run_one(make, message, identity)
        on_done(position, run)

    tasks = [asyncio.ensure_future(one(position, message)) for position, message in inputs]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        raise


def joined(frames: Sequence[pd.DataFrame], columns: list[str] | None) -> pd.DataFrame:
    """The frames one under another; empty ones left out, so they cannot turn typed columns into objects."""
    import pandas as pd

    kept = [frame for frame in frames if not frame.empty]
    if not kept:
        return pd.DataFrame(columns=columns)
    frame = pd.concat(kept, ignore_index=True)
    return frame if columns is None else frame.reindex(columns=columns)


# -- chunk tasks: what a worker is sent ------------------------------------------------------
class RemoteRefusal(Exception):
    """A refusal raised on a worker, carried back in arguments that pickle: module, class, message, fields."""


def _carried(task: Callable[..., pd.DataFrame]) -> Callable[..., pd.DataFrame]:
    def carrying(*args: Any) -> pd.DataFrame:
        try:
            return task(*args)
        except Refusal as refused:
            cls = type(refused)
            raise RemoteRefusal(cls.__module__, cls.__qualname__, str(refused), refused.evidence()) from None

    carrying.__name__ = task.__name__
    carrying.__qualname__ = task.__qualname__
    carrying.__doc__ = task.__doc__
    return carrying


def rebuilt(remote: RemoteRefusal) -> Refusal:
    """The refusal a worker raised, as it was: its class, message and fields."""
    module, name, message, fields = remote.args
    cls = getattr(importlib.import_module(module), name)
    refusal: Refusal = cls.__new__(cls)
    Exception.__init__(refusal, message)
    refusal.message = message
    for key, value in fields.items():
        setattr(refusal, key, value)
    return refusal


def _unpacked(payload: bytes) -> Any:
    import cloudpickle

    return cloudpickle.loads(payload)


def _runs(items: Sequence[Item]) -> Iterator[tuple[str, Run]]:
    """Each run of a chunk, read when its turn comes (a worker holds one recording at a time)."""
    for run_id, source, expected in items:
        yield run_id, load_run(source, "RunSet", expected)


@_carried
def integrity_task(items: Sequence[Item], payload: bytes) -> pd.DataFrame:
    """``integrity`` over a chunk of runs."""
    import pandas as pd

    claims = _unpacked(payload)
    rows = [row for run_id, run in _runs(items) for row in integrity_rows(run_id, run, claims)]
    return pd.DataFrame(rows, columns=INTEGRITY_COLUMNS)


@_carried
def suspects_task(items: Sequence[Item], payload: bytes) -> pd.DataFrame:
    """``suspects`` over a chunk of runs."""
    strategy, embed, top = _unpacked(payload)
    return joined([suspect_frame(run_id, run, strategy, embed, top) for run_id, run in _runs(items)], None)


@_carried
def localize_task(items: Sequence[Item], payload: bytes) -> pd.DataFrame:
    """``localize`` over a chunk of runs, one run after another (each one's reruns concurrent)."""
    rerun, settings = _unpacked(payload)

    async def chunk() -> list[pd.DataFrame]:
        return [await localize_frame(run_id, run, rerun, settings) for run_id, run in _runs(items)]

    return joined(asyncio.run(chunk()), LOCALIZE_COLUMNS)


@_carried
def run_task(items: Sequence[tuple[int, Any]], payload: bytes) -> pd.DataFrame:
    """``RunSet.run`` over a chunk of inputs: each run's recording back as JSON, by position."""
    import pandas as pd

    make, identity, concurrency = _unpacked(payload)
    rows: list[tuple[int, str]] = []

    def keep(position: int, run: Run) -> None:
        rows.append((position, run.recording.model_dump_json()))

    asyncio.run(run_inputs(make, items, identity, concurrency, keep))
    return pd.DataFrame(sorted(rows), columns=RUN_COLUMNS)
