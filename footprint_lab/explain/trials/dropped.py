"""Missing context: what was declared and available, but did not reach the call that answered.

Rule kept here: every piece left out is reported with the reason the recording gives for it,
and its absence is tested by *restoration*, never by ablation: with ``rerun=``, each left-out
source is forced back in (``agent.with_forced([...])`` / ``factory(force=[...])``) and the
same input is run again, as a trial like ``localize``'s (screened when there are more than two,
confirmed on fresh reruns against unchanged ones by an exact test, at false-confirmation rate
``alpha``; see :mod:`~footprint_lab.explain.trials.trial`). A piece is

- ``confirmed`` when restoring it changes the outcome more often than noise does (its absence mattered),
- ``not_confirmed`` when restoring it showed no sign of changing it,
- ``undecided`` when there was a sign, but the reruns allowed could not settle it,
- ``not_tested`` when no ``rerun`` was given.

Left out means: a declaration whose trigger did not fire (``skipped``), a piece over its
slot's budget (``dropped``), a memory or RAG item below its threshold or with nothing to
give (``skipped``), in the iteration of the LLM call that produced the answer. A source that
reached an earlier call of the run says so.

Role: explain layer; a function of a ``Recording`` (plus reruns when asked).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Unpack

from footprint_lab.explain.arguments import recording_of
from footprint_lab.explain.provenance.members import SourceNames
from footprint_lab.explain.render import display_bundle, shorten
from footprint_lab.explain.trials._budget import default_budget
from footprint_lab.explain.trials._rerun_pool import Draws
from footprint_lab.explain.trials._stopping import Partial, partial_line, run_trial, stopped
from footprint_lab.explain.trials.ablation import original_answer
from footprint_lab.explain.trials.arms import VERDICT_LABELS, Arm, ArmVerdict
from footprint_lab.explain.trials.rerun import Outcome, Progress, Rerunner, check_comparator
from footprint_lab.explain.trials.settings import Trials, TrialSettings, settings_for

if TYPE_CHECKING:
    import pandas as pd

    from footprint_lab.core.conversation import CheckpointInput
    from footprint_lab.core.door import RunInput
    from footprint_lab.explain.arguments import RunLike
    from footprint_lab.explain.trials.arms import TrialResult
    from footprint_lab.explain.trials.rerun import Restore
    from footprint_lab.record.recording import ContextPiece, Recording


@dataclass(slots=True)
class DroppedPiece:
    """One piece that was available but did not reach the answering call, and why."""

    source_id: str
    source_kind: str
    #: the LLM call it did not reach: the one that produced its run's (or member run's) answer
    call: str
    slot: str
    verdict: str
    why: str
    decided_by: str | None
    iteration: int | None
    item: str | None
    detail: dict[str, Any]
    #: LLM calls of the run that this source did reach (earlier iterations)
    reached_earlier: list[str] = field(default_factory=list)
    #: the restoration's trial (``None`` when nothing was rerun)
    trial: ArmVerdict | None = None
    #: in a composed run: the member's path (empty for the run itself) and the name its runner was given
    member: str = ""
    member_name: str | None = None
    #: the id a rerun of the whole run forces back in (qualified by member when another member has the same id)
    force_id: str = ""

    @property
    def status(self) -> str:
        """``confirmed`` / ``not_confirmed`` / ``undecided`` by restoration, or ``not_tested``."""
        return self.trial.verdict if self.trial is not None and not self.trial.untested else "not_tested"

    @property
    def restoration(self) -> Outcome | None:
        """One rerun with it restored (the first that finished), to read what the answer became."""
        if self.trial is None:
            return None
        reruns = self.trial.counted or self.trial.confirmation or self.trial.screening
        return next((o for o in reruns if o.error is None), reruns[0] if reruns else None)

    @property
    def label(self) -> str:
        item = f" item {self.item}" if self.item else ""
        return f"{self.source_kind} '{self.source_id}'{item}"

    def describe(self) -> str:
        """What was left out, of which call, by which step and why (the recording's account, no rerun)."""
        where = f" at {self.decided_by}" if self.decided_by else ""
        member = f" of member '{self.member}'" if self.member else ""
        text = f"{self.label}{member} ({self.slot} slot of {self.call}): {self.verdict}{where}: {self.why}"
        if self.reached_earlier:
            text += f"; it did reach {', '.join(self.reached_earlier)}"
        return text

    def line(self) -> str:
        text = self.describe()
        if self.trial is None:
            return text + "\n    not tested: pass rerun=agent to force it back in and rerun"
        if self.trial.untested:
            return text + f"\n    NOT TESTED: no verdict: it {self.trial.reason}"
        restored = self.restoration
        example = (f"; e.g. \"{shorten(restored.answer, 80)}\"" if restored is not None and restored.answer is not None
                   else "")
        return text + f"\n    {VERDICT_LABELS[self.trial.verdict]}: restoring it {self.trial.reason}{example}"


@dataclass(slots=True)
class DroppedContext(Partial):
    """Every piece left out of an answering call, in the order the run evaluated them.

    ``calls`` are the calls examined: the one that produced the run's answer, and for a
    composed run the one that produced each member's answer.
    """

    calls: list[str]
    original: str | None
    pieces: list[DroppedPiece]
    #: the restorations' trial (``None`` when nothing was rerun)
    trial: TrialResult | None = None
    #: ``(restorations done, planned)`` when the call was stopped: the verdicts it reached, the rest undecided
    stopped: tuple[int, int] | None = None

    def __iter__(self) -> Iterator[DroppedPiece]:
        return iter(self.pieces)

    def __len__(self) -> int:
        return len(self.pieces)

    def __getitem__(self, position: int) -> DroppedPiece:
        return self.pieces[position]

    @property
    def source_ids(self) -> list[str]:
        return list(dict.fromkeys(p.source_id for p in self.pieces))

    def summary(self) -> str:
        return partial_line(self.stopped, "restorations") + self._summary()

    def _summary(self) -> str:
        if not self.calls:
            return "Missing context: the run made no LLM call, so nothing could be left out of one."
        calls = ", ".join(self.calls)
        if not self.pieces:
            return f"Missing context: every declared piece evaluated for {calls} reached it."
        confirmed = sum(1 for p in self.pieces if p.status == "confirmed")
        tested = sum(1 for p in self.pieces if p.status != "not_tested")
        spent = f" ({self.trial.reruns} reruns, false-confirmation rate at most {self.trial.alpha:.0%})" \
            if self.trial is not None else ""
        proof = f"; restoring {confirmed} of {tested} tested was shown to change the outcome{spent}" if tested else ""
        if self.trial is not None and tested < len(self.pieces):
            proof += f"; {len(self.pieces) - tested} not tested (named below)"
        return f"Missing context: {len(self.pieces)} piece(s) were available but did not reach {calls}{proof}."

    def __str__(self) -> str:
        return "\n".join([self.summary(), *(f"  {p.line()}" for p in self.pieces)])

    def to_frame(self) -> pd.DataFrame:
        """One row per left-out piece: source, slot, admission (what its trigger or the budget did), why, who
        decided, and the restoration's status (its verdict)."""
        from footprint_lab.explain.frame import ShownFrame  # imports pandas

        columns = ["source_id", "source_kind", "call", "slot", "admission", "why", "decided_by", "iteration", "item",
                   "reached_earlier", "status", "flips", "samples", "noise_flips", "noise_samples", "p_value",
                   "restored_answer", "member", "member_name"]
        rows = [{"source_id": p.source_id, "source_kind": p.source_kind, "call": p.call, "slot": p.slot,
                 "admission": p.verdict,
                 "why": p.why, "decided_by": p.decided_by, "iteration": p.iteration, "item": p.item,
                 "reached_earlier": p.reached_earlier, "status": p.status,
                 "flips": p.trial.flips if p.trial else None, "samples": p.trial.samples if p.trial else None,
                 "noise_flips": p.trial.noise_flips if p.trial else None,
                 "noise_samples": p.trial.noise_samples if p.trial else None,
                 "p_value": p.trial.p_value if p.trial else None,
                 "restored_answer": p.restoration.answer if p.restoration is not None else None,
                 "member": p.member, "member_name": p.member_name}
                for p in self.pieces]
        return ShownFrame(rows, columns=columns)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return display_bundle("dropped", self, self.summary(), str(self), include, exclude)


def left_out(recording: Recording) -> tuple[list[str], list[DroppedPiece]]:
    """The answering calls of a recording and its member runs, and the pieces each left out."""
    calls: list[str] = []
    found: list[DroppedPiece] = []
    names = SourceNames(recording)
    pending = [recording]
    while pending:
        current = pending.pop(0)
        pending.extend(current.children)
        if current.exchanges:
            calls.append(current.exchanges[-1].step_id)
            member = names.members[id(current)]
            for piece in _left_out_of_answer(current):
                piece.member, piece.member_name = member.path, member.name
                piece.force_id = names.qualify(member, piece.source_id)
                found.append(piece)
    return calls, found


def _left_out_of_answer(recording: Recording) -> list[DroppedPiece]:
    """The pieces the iteration of a recording's last call evaluated but did not send it."""
    exchange = recording.exchanges[-1]
    evaluated = recording.call_pieces(exchange, left_out=True)
    sent_keys = {_key(piece) for piece in evaluated if piece.verdict == "admitted"}
    reached = _reached_by_call(recording)
    found: list[DroppedPiece] = []
    seen: set[tuple[str, str, str | None]] = set()
    for piece in evaluated:
        key = _key(piece)
        if piece.verdict == "admitted" or key in sent_keys or key in seen:
            continue
        seen.add(key)
        found.append(DroppedPiece(
            source_id=piece.source_id, source_kind=piece.source_kind, call=exchange.step_id, slot=piece.slot,
            verdict=piece.verdict, why=piece.reason or "no reason recorded", decided_by=piece.allowed_by,
            iteration=piece.iteration,
            item=key[2], detail=dict(piece.detail),
            reached_earlier=[c for c in reached.get(key[:2], []) if c != exchange.step_id],
        ))
    return found


def _key(piece: ContextPiece) -> tuple[str, str, str | None]:
    item = piece.detail.get("chunk") or piece.detail.get("item")
    return piece.source_kind, piece.source_id, str(item) if item is not None else None


def _reached_by_call(recording: Recording) -> dict[tuple[str, str], list[str]]:
    """For each source, the LLM calls it was sent to."""
    pieces = recording.context_pieces
    reached: dict[tuple[str, str], list[str]] = {}
    for exchange in recording.exchanges:
        for indices in (exchange.system_pieces, exchange.tool_pieces, exchange.message_pieces):
            for index in indices:
                if 0 <= index < len(pieces):
                    calls = reached.setdefault((pieces[index].source_kind, pieces[index].source_id), [])
                    if exchange.step_id not in calls:
                        calls.append(exchange.step_id)
    return reached


async def find_dropped_context(
    run: RunLike,
    *,
    rerun: Restore | None = None,
    input: RunInput = None,
    continue_from: CheckpointInput | None = None,
    trials: Trials | None = None,
    **settings: Unpack[TrialSettings],
) -> DroppedContext:
    """What was available but never reached the model, each with why; with ``rerun``, tested by restoration.

    ``rerun`` is the agent (rebuilt with each left-out source forced in: ``agent.with_forced``)
    or a factory called as ``factory(force=[...])``. Without it, nothing is rerun. ``input``,
    ``continue_from`` and the trial settings (``trials=`` or keywords) are as for ``localize``.
    """
    recording = recording_of(run, "find_dropped_context")
    chosen_trials = settings_for("find_dropped_context", trials, settings).for_call("find_dropped_context")
    samples, alpha, budget, concurrency = (chosen_trials.samples or 3, chosen_trials.alpha, chosen_trials.budget,
                                           chosen_trials.concurrency)
    compare = check_comparator("find_dropped_context", chosen_trials.comparator)
    rerunner = (Rerunner("find_dropped_context", rerun, recording, input, continue_from,
                         retries=chosen_trials.retries, time_limit=chosen_trials.time_limit, run=run)
                if rerun is not None else None)
    calls, pieces = left_out(recording)
    report = DroppedContext(calls, recording.answer, pieces)
    if rerunner is None or not pieces:
        return report
    original = original_answer("find_dropped_context", recording)  # a paused or failed run: nothing to compare with
    arms = [Arm(name, force=(name,)) for name in dict.fromkeys(p.force_id for p in pieces)]
    limit = budget if budget is not None else default_budget(samples, len(arms))
    bar = Progress(limit, "find_dropped_context", chosen_trials.progress, unit="restorations")
    draws = Draws(rerunner, compare, original, concurrency=concurrency, bar=bar, keep_runs=True)
    report.trial, report.stopped = await run_trial("find_dropped_context", draws, bar, arms, samples=samples,
                                                   alpha=alpha, budget=limit, prepare=draws.prepare)
    by_name = {verdict.arm.key: verdict for verdict in report.trial.arms}
    for piece in pieces:
        piece.trial = by_name[piece.force_id]
    if report.stopped is not None:
        raise stopped("find_dropped_context", bar, report)
    return report
