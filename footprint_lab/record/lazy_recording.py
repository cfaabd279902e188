"""A run's recording, built the first time it is asked for: what a runner hands its ``Run``.

Rule kept here: finishing a run costs nothing a caller does not use. A runner ends by handing its
``Run`` a :class:`RecordingLater`, which holds the closed recorder and the run's own fields and
builds the recording when first called; pydantic and the models load only then. A sealed run is
sealed by the function its runner passed in, since ``sealing`` sits beside the record layer, not
in it. It is one slotted object rather than a closure, which keeps a cell per value: a composition
keeps one per member run alive, and the collector walks each.

Role: record layer; used by ``core``'s agents and ``flow``'s compositions alike.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from footprint_lab.record.recorder import Recorder
    from footprint_lab.record.recording import Recording


class RecordingLater:
    """One run's recording build, deferred to its first call; sealed by ``seal`` when given."""

    __slots__ = ("answer", "bag", "children", "ended", "error", "identity", "rec", "report", "runner", "seal",
                 "status", "stopped_early")

    def __init__(self, rec: Recorder, *, runner: dict[str, Any], status: str, bag: dict[str, Any],
                 answer: str | None, identity: dict[str, str] | None, stopped_early: dict[str, Any] | None,
                 error: dict[str, Any] | None, ended: int, report: dict[str, Any] | None,
                 seal: Callable[[Recording], None] | None,
                 children: Sequence[Any] = ()) -> None:
        self.rec = rec
        self.runner = runner
        self.status = status
        self.bag = bag
        self.answer = answer
        self.identity = identity
        self.stopped_early = stopped_early
        self.error = error
        self.ended = ended
        self.report = report
        self.seal = seal
        #: the member runs (anything with a ``recording``), whose recordings become the children
        self.children = children

    def __call__(self) -> Recording:
        from footprint_lab.record.build import build_recording  # pydantic: loaded with the first recording

        recording = build_recording(
            self.rec, runner=self.runner, status=self.status, input=self.bag, answer=self.answer,
            identity=self.identity, stopped_early=self.stopped_early, error=self.error, ended_ns=self.ended,
            children=[child.recording for child in self.children], redaction=self.report,
        )
        if self.seal is not None:  # every way a run ends, failing and cancelled included, is sealed
            self.seal(recording)
        return recording
