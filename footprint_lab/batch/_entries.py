"""One entry per run of a set: its summary (what ``frame()`` and the index hold) and where its recording is.

Rule kept: a set never needs a run's recording to say what the run was. The summary (run id,
input, answer, status, error, tokens, duration, member runs, LLM calls) is read from the
recording once, as recorded (so a redaction policy covers it), and kept; a saved set keeps it in
its index, so 10,000 runs are listed, filtered and selected without opening one recording. The
recording itself is read when a run is touched, through the one door back in
(``load_recording``), and a run touched is kept only while its caller holds it.
"""

from __future__ import annotations

import os
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from footprint_lab.base.regular_file import UnreadableFile, read_regular
from footprint_lab.batch.refusals import RunSetFolderError
from footprint_lab.core.run import Run
from footprint_lab.providers.prices import ModelKey, usage_by_model
from footprint_lab.providers.types import Usage
from footprint_lab.record.recording_door import load_recording

if TYPE_CHECKING:
    from footprint_lab.record.recording import Recording

#: the columns of ``RunSet.frame()``, in order; the index stores these and ``calls``
FRAME_COLUMNS = ["run_id", "input", "answer", "status", "error", "tokens", "duration_ms", "members"]
SUMMARY_FIELDS = [*FRAME_COLUMNS, "calls"]


@dataclass(frozen=True, slots=True)
class RunSummary:
    """What a set knows about one run without opening its recording: a row of ``frame()``, plus ``calls``.

    ``where=`` predicates and ``compare`` metrics are given these. ``run()`` opens the recording.
    """

    run_id: str
    input: str | None
    answer: str | None
    status: str
    #: the type of the error a failed run ended with, else ``None``
    error: str | None
    #: input and output tokens of every LLM call, member runs' included
    tokens: int
    duration_ms: float
    #: member runs, at any depth
    members: int
    #: LLM calls, member runs' included
    calls: int
    _entry: Any = field(default=None, repr=False, compare=False)

    def run(self) -> Run:
        """The run itself (its recording read now, if it was not already)."""
        return cast("Run", self._entry.run())



def summarize(recording: Recording) -> dict[str, Any]:
    """The summary fields of a run, read from its recording (as recorded: masked under a policy)."""
    tokens = members = calls = 0
    stack = [recording]
    while stack:
        current = stack.pop()
        for exchange in current.exchanges:
            usage = exchange.response.usage
            tokens += usage.input_tokens + usage.output_tokens
            calls += 1
        members += len(current.children)
        stack.extend(current.children)
    message = recording.input.get("message")
    error = recording.error.get("type") if recording.error else None
    return {"run_id": recording.run_id, "input": message if isinstance(message, str) else None,
            "answer": recording.answer, "status": recording.status, "error": error, "tokens": tokens,
            "duration_ms": float(recording.duration_ms), "members": members, "calls": calls}


def summary_row(recording: Recording) -> tuple[Any, ...]:
    """The summary's values, in ``SUMMARY_FIELDS`` order (an index row, less its file)."""
    found = summarize(recording)
    return tuple(found[name] for name in SUMMARY_FIELDS)


class Entry:
    """One run of a set: held in memory (a live or imported run), or read from a saved folder when touched.

    A saved run's summary stays the index's row (a tuple) until someone asks for it as a
    :class:`RunSummary`, and its file stays a string: 10,000 of either built on load cost more
    than the index's parsing.
    """

    __slots__ = ("_held", "_row", "_summary", "_touched", "_usage", "path")

    def __init__(self, *, run: Run | None = None, path: str | None = None,
                 row: tuple[Any, ...] | None = None) -> None:
        self._held = run
        self.path = path
        self._touched: Any = None
        self._row = row
        self._summary: RunSummary | None = None
        self._usage: dict[ModelKey, Usage] | None = None

    @property
    def summary(self) -> RunSummary:
        if self._summary is None:
            fields = self._row if self._row is not None else self.row()
            self._summary = RunSummary(**dict(zip(SUMMARY_FIELDS, fields, strict=True)), _entry=self)
        return self._summary

    def row(self) -> tuple[Any, ...]:
        """The summary's values, in ``SUMMARY_FIELDS`` order."""
        if self._row is None:
            self._row = summary_row(self.run().recording)
        return self._row

    def usage(self, *, read: bool = True) -> dict[ModelKey, Usage] | None:
        """The run's LLM calls' tokens by model (what its cost is worked out from), kept once known; a saved run
        not in memory is read for it only with ``read`` (else ``None``)."""
        if self._usage is None:
            live = self.live()
            if live is None and not read:
                return None
            self._usage = usage_by_model(live if live is not None else self.run())
        return self._usage

    @property
    def run_id(self) -> str:
        return cast("str", self.row()[0])

    def run(self) -> Run:
        """The run: the one held, the one a caller still holds from an earlier touch, or read now."""
        if self._held is not None:
            return self._held
        touched = self._touched() if self._touched is not None else None
        if touched is not None:
            return cast("Run", touched)
        run = self.load("RunSet")
        self._touched = weakref.ref(run)
        return run

    def load(self, function: str) -> Run:
        """The run read anew: a saved one from its file, checked against its index row."""
        if self.live() is not None:
            return self.run()
        _, source, expected = self.item()
        return load_run(source, function, expected)

    def item(self) -> tuple[str, str | bytes, tuple[Any, ...] | None]:
        """What a worker needs to read this run: its id, its file's path (with the index row it must match)
        or its JSON."""
        source = self.source()
        return self.run_id, source, self._row if isinstance(source, str) else None

    def live(self) -> Run | None:
        """The run object if one exists now (held, or touched and still held by a caller), else ``None``."""
        if self._held is not None:
            return self._held
        return self._touched() if self._touched is not None else None

    def source(self) -> str | bytes:
        """What a worker needs to read this run: the recording file's path, or the recording as JSON."""
        live = self.live()
        if live is not None or self.path is None:
            return self.run().recording.model_dump_json().encode("utf-8")
        return self.path


#: the most one saved recording may hold; a larger file is refused before it is read whole
MAX_RECORDING_BYTES = 256 << 20


def read_saved(path: str, function: str, expected: tuple[Any, ...] | None) -> tuple[bytes, Recording]:
    """A saved run's recording file (its bytes, and the recording they hold), read only as a regular file inside
    its set's ``recordings/`` (no link, FIFO or device), checked through the one door back in and against the
    row the index gives it (``expected``): a recording moved, swapped or forged under its row is refused."""
    folder, name = os.path.split(path)
    try:
        raw = read_regular(name, limit=MAX_RECORDING_BYTES, follow=False, folder=folder)
    except UnreadableFile as refused:
        if refused.reason == "missing":
            raise RunSetFolderError(function, "missing_recording", "lost a recording the index lists") from None
        found = {"too-large": f"a recording larger than {MAX_RECORDING_BYTES >> 20} MiB",
                 "unreadable": "a recording that could not be read"}.get(refused.reason, refused.kind)
        raise RunSetFolderError(function, "unsafe_recording", f"holds {found} where the index lists a recording"
                                ) from None
    recording = load_recording(raw, door=function)
    if expected is not None and not _same_row(summary_row(recording), expected):
        raise RunSetFolderError(function, "mismatch", "holds a recording that does not match its row in the index "
                                "(its run id, input, answer or another summary field differs)")
    return raw, recording


def _same_row(found: tuple[Any, ...], expected: tuple[Any, ...]) -> bool:
    return len(found) == len(expected) and all(
        a == b or (a != a and b != b) for a, b in zip(found, expected, strict=True))  # NaN is NaN


def read_recording(source: str | bytes, function: str, expected: tuple[Any, ...] | None = None) -> Recording:
    """A recording from its JSON, or from a saved set's file at a path (checked against its index row)."""
    if isinstance(source, str):
        return read_saved(source, function, expected)[1]
    return load_recording(source, door=function)


def load_run(source: str | bytes, function: str, expected: tuple[Any, ...] | None = None) -> Run:
    return Run.from_recording(read_recording(source, function, expected))
