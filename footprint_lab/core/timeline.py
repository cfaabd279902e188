"""``Timeline``: a run's steps in time order, each placed at its start and sized by its duration.

Rule kept here: a position on the timeline is a time the recording holds, never one made up.
A step records ``started_ms`` (the recorder's monotonic clock at the step's start, from the
run's start) and ``duration_ms``; a member run of a composition has its own recording and its
own clock, so its steps are placed at the member's ``started_at`` (wall clock, seconds) less the
root's, plus their own ``started_ms``. Each member's steps follow the step that mounted it, one
level deeper, so the rows read as a tree in time order; a member mounted by no step of its
parent follows the parent's steps.

Each row says what kind of step it was: ``llm`` (a step that recorded an LLM exchange, or a
``call-llm`` step that failed before it could), ``tool`` (a step that started a tool), ``member``
(a step that ran member runs) or ``step`` (the rest: seeding, assembling, merging, finishing),
with a label (the model, the tool, the member's name).

Role: core layer (a ``Run``'s view of its recording); its HTML is drawn by the lab through the
display registry (kind ``"timeline"``), pandas is imported when a frame is asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from footprint_lab.core._displayed import Displayed

if TYPE_CHECKING:
    import pandas as pd

    from footprint_lab.record.recording import Recording

#: the columns of ``Timeline.to_frame()``, in order
TIMELINE_COLUMNS = ["step", "stage", "kind", "status", "start_ms", "duration_ms", "depth", "member", "label"]
#: the stage of an LLM call's step (one that failed recorded no exchange, and is an LLM call all the same)
LLM_STAGE = "call-llm"
#: the step statuses that say the step failed (drawn marked, counted in the view's legend)
FAILED = frozenset({"error", "failed", "tool_error", "refused"})


@dataclass(frozen=True, slots=True)
class TimelineRow:
    """One step on the timeline: where it starts and how long it took, in ms from the run's start.

    ``depth`` is 0 for the run's own steps and one more per member level; ``member`` is the mount
    path of the run that took the step (empty for the run itself); ``label`` names what the step
    worked with (an LLM call's model, a tool's name, a member's name), empty when nothing.
    """

    step: str
    stage: str
    kind: str
    status: str
    start_ms: float
    duration_ms: float
    depth: int
    member: str
    label: str

    @property
    def failed(self) -> bool:
        """Whether the step ended in an error (a tool that raised, a call that failed)."""
        return self.status in FAILED

    @property
    def end_ms(self) -> float:
        return self.start_ms + self.duration_ms


def timeline_rows(root: Recording) -> list[TimelineRow]:
    """Every step of ``root`` and its members, each member's steps under the step that mounted it."""
    rows: list[TimelineRow] = []
    _visit(root, 0, root, rows)
    return rows


def _visit(recording: Recording, depth: int, root: Recording, rows: list[TimelineRow]) -> None:
    offset = (recording.started_at - root.started_at) * 1000 if recording is not root else 0.0
    mounted: dict[str, list[Recording]] = {}
    for child in recording.children:
        mounted.setdefault(child.path, []).append(child)
    labels = _labels(recording, mounted)
    calls = {exchange.step_id for exchange in recording.exchanges}
    for step in sorted(recording.steps, key=lambda s: s.started_ms):
        members = mounted.pop(step.step_id, [])
        kind = ("llm" if step.step_id in calls or step.stage == LLM_STAGE else "tool" if step.step_id in labels.tools
                else "member" if members else "step")
        rows.append(TimelineRow(step=step.step_id, stage=step.stage, kind=kind, status=step.status,
                                start_ms=round(offset + step.started_ms, 3), duration_ms=round(step.duration_ms, 3),
                                depth=depth, member=recording.path, label=labels.of(step.step_id)))
        for child in members:
            _visit(child, depth + 1, root, rows)
    for unmounted in mounted.values():
        for child in unmounted:
            _visit(child, depth + 1, root, rows)


@dataclass(frozen=True, slots=True)
class _Labels:
    tools: dict[str, str]
    others: dict[str, str]

    def of(self, step_id: str) -> str:
        return self.tools.get(step_id) or self.others.get(step_id, "")


def _labels(recording: Recording, mounted: dict[str, list[Recording]]) -> _Labels:
    """Per step id: the tool it started, the model it called, the members it ran."""
    tools = {event.step_id: str(event.payload.get("tool") or "tool") for event in recording.events
             if event.type == "tool_start"}
    others = {exchange.step_id: exchange.model for exchange in recording.exchanges}
    for path, children in mounted.items():
        others[path] = ", ".join(_member_name(child) for child in children)
    return _Labels(tools, others)


def _member_name(child: Recording) -> str:
    runner = child.runner
    return runner.name or runner.id or str(child.meta.get("member") or runner.kind)


class Timeline(Displayed):
    """A run's steps as a timeline: ``rows`` (:class:`TimelineRow`), ``to_frame()``, and a view in a notebook.

    Displayed, it is a waterfall of bars, each at its step's start and as long as its duration,
    LLM calls and tools told apart by word and colour, failed steps marked, members indented
    under the step that ran them (drawn by the lab, ``lab.views.timeline``).
    """

    kind = "timeline"
    __slots__ = ("recording", "rows")

    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        self.rows = timeline_rows(recording)

    @property
    def span_ms(self) -> float:
        """The time the timeline covers: the run's duration, or its latest step's end when later."""
        ends = [row.end_ms for row in self.rows]
        return max([self.recording.duration_ms, *ends])

    def to_frame(self) -> pd.DataFrame:
        """One row per step: ``step``, ``stage``, ``kind``, ``status``, ``start_ms``, ``duration_ms``, ``depth``,
        ``member``, ``label`` (times in ms from the run's start, to the microsecond; no value missing)."""
        from footprint_lab.explain.frame import ShownFrame  # imports pandas

        frame = ShownFrame([[getattr(row, name) for name in TIMELINE_COLUMNS] for row in self.rows],
                           columns=TIMELINE_COLUMNS)
        return frame.astype({"start_ms": "float64", "duration_ms": "float64", "depth": "int64"})

    def __len__(self) -> int:
        return len(self.rows)

    def __str__(self) -> str:
        lines = [f"{'  ' * row.depth}{row.step} [{row.kind}] {row.status} at {row.start_ms:.3f} ms for "
                 f"{row.duration_ms:.3f} ms" for row in self.rows[:TEXT_ROWS]]
        if len(self.rows) > TEXT_ROWS:
            lines.append(f"... and {len(self.rows) - TEXT_ROWS} more steps (timeline.to_frame() has them all)")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"Timeline(run_id={self.recording.run_id!r}, steps={len(self.rows)}, span_ms={self.span_ms:.3f})"



#: the most rows ``str(timeline)`` writes
TEXT_ROWS = 40
