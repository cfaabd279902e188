"""Explain at team scale: run sets made, saved, checked and localized over thousands of runs, here or on a cluster.

An analyst debugs one run; a team debugs a release: an evaluation set of hundreds of inputs, or
a day of production traces imported from OpenTelemetry, and asks which context sources cause
most of the wrong answers. A :class:`RunSet` holds those runs, in order, failed ones included:

- ``await RunSet.run(factory, inputs)``, ``RunSet.from_runs(runs)``, ``RunSet.from_spans(spans)``;
- ``save(folder)`` / ``RunSet.load(folder)``: a folder of recordings plus an index, read lazily;
- ``frame()``: a row per run; ``integrity()`` and ``suspects()``: the pure explanations of every run;
- ``await localize(rerun=factory, where=...)``: ``footprint_lab.explain.localize`` on every run
  selected, with its settings, and :func:`culprits` to read it: one row per source, most confirmed first;
- ``compare(other, metric)``: two arms on the same inputs, the difference and its interval.

Each method takes ``client=`` (a ``dask.distributed.Client``, from the ``dask`` extra) to do the
work on a cluster, in chunks, with the same results; each long call shows its progress and can
be cancelled: stopped, it raises :class:`Stopped` (one line) and :func:`last_stopped` gives what
finished (the one store every layer shares, ``footprint_lab.base.progress``). Refusals raised
here: :class:`BatchConfigError`, :class:`RunSetFolderError`.

Role: the top of the library (with ``notebook`` and ``examples``); it uses only the public doors
below it (runners, ``load_recording``, ``footprint_lab.explain``, ``footprint_lab.otel``).
"""

# each public name imported as itself (``X as X``): re-exported for a strict type checker, as __all__ lists it
from footprint_lab.base.progress import Stopped as Stopped
from footprint_lab.base.progress import last_stopped as last_stopped
from footprint_lab.batch._arms import Comparison as Comparison
from footprint_lab.batch._culprits import culprits as culprits
from footprint_lab.batch._entries import RunSummary as RunSummary
from footprint_lab.batch._runset import RunSet as RunSet
from footprint_lab.batch.refusals import BatchConfigError as BatchConfigError
from footprint_lab.batch.refusals import RunSetFolderError as RunSetFolderError

__all__ = ["BatchConfigError", "Comparison", "RunSet", "RunSetFolderError", "RunSummary", "Stopped", "culprits",
           "last_stopped"]
