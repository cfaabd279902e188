"""The report of ``localize``: a verdict per tested suspect, what was left untested, and the notes it carries.

Rule kept here: nothing is skipped quietly. Every report's first line counts the pieces left
untested and its "Not tested" section names each with why (``untested_count``,
``untested_lines``, which the reports of ``bisect_culprits`` and ``explain_difference`` share);
the notes say what to try when unchanged reruns flip often, when a ``budget=`` below the default
left pieces undecided, and what a proof by replay covers.

Role: explain layer; built by :func:`footprint_lab.explain.trials.ablation.localize`, whose module
is where a user imports these names from.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from footprint_lab.explain.compare import suggest
from footprint_lab.explain.provenance.sources import NOT_REMOVABLE, removal_id
from footprint_lab.explain.render import display_bundle, shorten
from footprint_lab.explain.trials._arm_fields import ArmFields
from footprint_lab.explain.trials._recorded_call import RecordedCall
from footprint_lab.explain.trials._stopping import Partial, partial_line
from footprint_lab.explain.trials.arms import VERDICT_LABELS, ArmVerdict, TrialResult
from footprint_lab.explain.trials.rerun import TextDifference

if TYPE_CHECKING:
    import pandas as pd


@dataclass(slots=True)
class LocalizedSuspect(ArmFields):
    """One suspect's trial: its place in the ranking and what the reruns without it said.

    ``flips`` of ``samples`` finished reruns changed the outcome (the confirmation's reruns when
    it reached confirmation, else the screening's), against ``noise_flips`` of ``noise_samples``
    unchanged ones; ``p_value`` is the exact test's, compared with ``level``.
    """

    rank: int
    source_id: str
    source_kind: str
    score: float
    trial: ArmVerdict
    #: in a composed run: the member's path (empty for the run itself) and the name its runner was given
    member: str = ""
    member_name: str | None = None

    @property
    def phase(self) -> str:
        """``confirmation`` when fresh reruns tested it, else ``screening`` (it was set aside there)."""
        return "confirmation" if self.trial.tested else "screening"

    @property
    def where(self) -> str:
        """`` in member 'triage' (agent 'triage')``, or nothing for a source of the run itself."""
        if not self.member:
            return ""
        named = self.member_name and self.member_name != self.member.rpartition("/")[2]
        return f" in member '{self.member}'" + (f" ('{self.member_name}')" if named else "")

    def line(self) -> str:
        cost = f"{self.reruns} rerun{'s' if self.reruns != 1 else ''}"
        return f"{VERDICT_LABELS[self.verdict]}: removing '{self.source_id}'{self.where} {self.reason}; {cost}"


@dataclass(slots=True)
class Localization(Partial):
    """The verdict on each tested suspect, in rank order, with the baseline and budget they were judged by."""

    original: str
    suspects: list[LocalizedSuspect]
    untested: list[tuple[str, str]]
    comparator: str
    trial: TrialResult
    #: ``(reruns done, reruns planned)`` when the call was stopped: the verdicts it reached, the rest undecided
    stopped: tuple[int, int] | None = None
    #: how the pieces were taken out: ``rerun=`` (the whole agent rerun) or ``replay=`` (the answering call re-sent)
    by: str = "rerun"
    #: what to try when reruns changed the answer's words below the default comparator's threshold (``wording_note``)
    wording: str = ""

    baseline = property(lambda self: self.trial.baseline, doc="The confirmation's unchanged reruns.")
    reruns = property(lambda self: self.trial.reruns, doc="Every rerun started, failed ones included.")
    budget = property(lambda self: self.trial.budget)
    alpha = property(lambda self: self.trial.alpha, doc="The false-confirmation rate the verdicts hold to.")
    design = property(lambda self: self.trial.design, doc="How the suspects were screened.")
    notes = property(lambda self: self.trial.notes)

    @property
    def noise(self) -> tuple[int, int]:
        """``(flips, finished)`` of the unchanged reruns the verdicts rest on."""
        return self.trial.noise

    @property
    def baseline_stable(self) -> bool:
        """``True`` when unchanged reruns finished and none of them changed the outcome."""
        flips, finished = self.noise
        return finished > 0 and flips == 0

    @property
    def failed(self) -> int:
        return sum(self.trial.failures.values())

    @property
    def confirmed(self) -> list[str]:
        """The ids of the suspects whose removal was shown to flip the outcome (verdict ``confirmed``)."""
        return [s.source_id for s in self.suspects if s.verdict == "confirmed"]

    @property
    def together(self) -> list[ArmVerdict]:
        """Sets of suspects tested together because none flipped the outcome alone (see the trial's design)."""
        return [verdict for verdict in self.trial.arms if len(verdict.arm.exclude) > 1]

    @property
    def confirmed_together(self) -> list[tuple[str, ...]]:
        """The sets whose joint removal was shown to flip the outcome: causes that act only together.

        A set holding a piece confirmed alone is left out: that piece explains why removing the set flips it.
        """
        alone = set(self.confirmed)
        return [verdict.arm.exclude for verdict in self.together
                if verdict.verdict == "confirmed" and not alone & set(verdict.arm.exclude)]

    def explained_by(self, verdict: ArmVerdict) -> str:
        """`` (explained by 'x' alone)`` for each member of a confirmed set that was confirmed alone: that member is
        why removing the set flips it, so the set is no cause acting together."""
        if verdict.verdict != "confirmed":
            return ""
        alone = set(self.confirmed)
        return "".join(f" (explained by '{name}' alone)" for name in verdict.arm.exclude if name in alone)

    def verdict(self, source_id: str) -> str | None:
        """The verdict on one tested source, or ``None`` when it was not tested."""
        return next((s.verdict for s in self.suspects if s.source_id == source_id), None)

    @property
    def unjudged(self) -> list[str]:
        """The tested pieces no finished rerun measured (every rerun that removed them failed): ``undecided``."""
        return [s.source_id for s in self.suspects if s.trial.reached and not s.trial.judged_on]

    def summary(self) -> str:
        counts = Counter(s.verdict for s in self.suspects)
        flips, finished = self.noise
        failed = self.trial.failures
        lost = (f"; {sum(failed.values())} failed ({', '.join(f'{k} x{v}' for k, v in failed.most_common())})"
                if failed else "")
        together = (f", {len(self.confirmed_together)} set(s) confirmed together" if self.confirmed_together
                    else "")
        unjudged = f" ({len(self.unjudged)} could not be judged: every rerun failed)" if self.unjudged else ""
        untested = untested_count(self.untested)
        return (f"{partial_line(self.stopped)}Localization of \"{shorten(self.original, 60)}\": "
                f"{counts['confirmed']} of {len(self.suspects)} "
                f"tested pieces confirmed{together}, {counts['undecided']} undecided{unjudged}{untested}; "
                f"{self.reruns} reruns (budget {self.budget}){lost}; noise: {flips}/{finished} unchanged reruns "
                f"changed the outcome; false-confirmation rate at most {self.alpha:.0%}; comparator "
                f"{self.comparator}.")

    @property
    def nothing_alone(self) -> bool:
        """``True`` when no tested suspect showed any effect alone (none confirmed, none undecided).

        Causes can still act together (two redundant facts, each enough to keep the outcome):
        :func:`~footprint_lab.explain.bisect_culprits` searches for sets whose joint removal flips it.
        """
        return bool(self.suspects) and all(s.verdict == "not_confirmed" for s in self.suspects) and \
            not self.notes

    @property
    def set_aside_in_groups(self) -> list[str]:
        """The suspects the group test set aside with no finished rerun removing them alone (``not_confirmed`` on what
        removing them with half of the others did)."""
        alone = {o.changed[0] for o in (*self.trial.joint, *(o for v in self.trial.arms for o in v.screening))
                 if len(o.changed) == 1 and o.error is None}
        return [s.source_id for s in self.suspects if s.verdict == "not_confirmed" and not s.trial.tested
                and s.source_id not in alone and s.trial.screening_score is not None]

    def group_line(self) -> str:
        """What the group test could not see, when it set suspects aside without removing them alone."""
        aside = self.set_aside_in_groups
        if not aside:
            return ""
        named = ", ".join(repr(name) for name in aside[:3])
        return (f"{len(aside)} piece(s) were set aside by the group test, which removes half of the pieces at once, "
                "without a rerun removing them alone: a piece that changes the answer only while the others stay (one "
                f"of several notes the model follows by majority) can pass it unseen. localize(run, {self.by}=..., "
                f"sources=[{named}]) tests the pieces named alone; budget={4 + 4 * len(self.suspects)} or more "
                "removes each alone.")

    def advice(self) -> list[str]:
        """What to try next, after the notes: the group test's blind spot, the wording hint, causes acting only
        together. The text, the view and the frame's ``attrs["notes"]`` all give these lines."""
        lines = [self.group_line(), self.wording]
        if self.nothing_alone and not self.confirmed_together:
            lines.append("No suspect was shown to flip the outcome alone; causes may act only together: "
                         f"bisect_culprits(run, {self.by}=...) searches for sets whose joint removal flips it.")
        return [line for line in lines if line]

    def __str__(self) -> str:
        lines = [self.summary(), *(s.line() for s in self.suspects)]
        lines += [f"{VERDICT_LABELS[v.verdict]} TOGETHER: removing {' + '.join(repr(n) for n in v.arm.exclude)} "
                  f"at once {v.reason}; {v.reruns} reruns{self.explained_by(v)}" for v in self.together]
        lines += untested_lines(self.untested)
        lines += self.notes
        lines += self.advice()
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """Every verdict of the report, as the printed report gives them: a row per tested suspect (in rank order),
        one per set tested together (``source_kind`` ``together``), then one per piece left untested (verdict
        ``not_tested``, ``reason`` says why). The report's notes are in ``frame.attrs["notes"]``."""
        from footprint_lab.explain.frame import ShownFrame  # imports pandas

        rows = [{"rank": s.rank, "source_id": s.source_id, "source_kind": s.source_kind, "verdict": s.verdict,
                 "flips": s.flips, "samples": s.samples, "flip_rate": s.flip_rate, "noise_flips": s.noise_flips,
                 "noise_samples": s.noise_samples, "noise_rate": s.noise_rate, "p_value": s.p_value,
                 "level": s.level, "reruns": s.reruns, "failed": s.failed, "phase": s.phase, "score": s.score,
                 "reason": s.reason, "member": s.member, "member_name": s.member_name}
                for s in self.suspects]
        rows += [{"rank": None, "source_id": " + ".join(v.arm.exclude), "source_kind": "together",
                  "verdict": v.verdict, "flips": v.flips, "samples": v.samples, "flip_rate": v.flip_rate,
                  "noise_flips": v.noise_flips, "noise_samples": v.noise_samples, "noise_rate": v.noise_rate,
                  "p_value": v.p_value, "level": v.level, "reruns": v.reruns, "failed": v.failed,
                  "phase": "confirmation" if v.tested else "screening", "score": None,
                  "reason": v.reason + self.explained_by(v), "member": "", "member_name": None}
                 for v in self.together]
        rows += [{"rank": None, "source_id": name, "verdict": "not_tested", "phase": "not tested", "reason": why,
                  "member": "", "member_name": None} for name, why in self.untested]
        frame = ShownFrame(rows, columns=LOCALIZATION_COLUMNS).astype({"rank": "Int64"})
        frame.attrs["notes"] = [*self.notes, *self.advice()]
        return frame

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return display_bundle("localization", self, self.summary(), str(self), include, exclude)


def untested_count(untested: Sequence[tuple[str, str]]) -> str:
    """The first line's clause on what was left untested (every report says it, nothing is skipped quietly)."""
    if untested:
        return f"; {len(untested)} not tested (named below)"
    return "; every piece that reached the answer was tested"


#: past this many pieces no rerun can remove for one same reason (a long loop's model turns), the section names the
#: first few and counts the rest (the frame holds them all); a piece a rerun could have tested is always named
NAMED_PER_REASON = 5


def untested_lines(untested: Sequence[tuple[str, str]]) -> list[str]:
    """The report's "Not tested" section: each piece left untested, and why."""
    if not untested:
        return []
    unremovable = set(NOT_REMOVABLE.values())
    grouped: dict[str, list[str]] = {}
    for name, why in untested:
        grouped.setdefault(why, []).append(name)
    lines = [f"Not tested ({len(untested)}): no verdict, neither shown to matter nor not to:"]
    for name, why in untested:
        names = grouped[why]
        if why not in unremovable or len(names) <= NAMED_PER_REASON:
            lines.append(f"  '{name}': {why}")
        elif name == names[0]:
            shown = ", ".join(f"'{other}'" for other in names[:NAMED_PER_REASON])
            lines.append(f"  {shown} and {len(names) - NAMED_PER_REASON} more: {why}")
    return lines


LOCALIZATION_COLUMNS = ["rank", "source_id", "source_kind", "verdict", "flips", "samples", "flip_rate", "noise_flips",
                        "noise_samples", "noise_rate", "p_value", "level", "reruns", "failed", "phase", "score",
                        "reason", "member", "member_name"]


def noise_note(trial: TrialResult, comparator: Any, original: str) -> list[str]:
    """What to make of unchanged reruns that flip often. When two or more gave one same other answer, the model does
    not reliably give the answer the run shows, and a verdict short of confirmed clears nothing; under the default
    comparator, free text may also differ from rerun to rerun, which a comparator of outcomes reads."""
    flips, finished = trial.noise
    if not finished or flips * 3 < finished:
        return []
    others = [o.answer for o in trial.baseline or trial.screening_baseline if o.flipped and o.answer is not None]
    same = len(others) >= 2 and len(set(others)) == 1
    agreed = (f"{flips} of {finished} unchanged reruns gave another answer, the same one each time: the model does not "
              "reliably give the answer this run shows, and reruns that do not reproduce it cannot tell what made it "
              "from chance, so a verdict here that is not CONFIRMED does not clear a piece. run.context() shows what "
              "the answering call was given; rerunning the agent on the same input shows how often it answers so.")
    if not isinstance(comparator, TextDifference):
        return [agreed] if same else []
    unstable = f"The baseline is unstable under {comparator!r} ({flips}/{finished} unchanged reruns read as changed)"
    if same:
        return [f"{unstable}. {agreed} If only the wording differs: {suggest(original)}"]
    return [f"{unstable}: free text differs from rerun to rerun. {suggest(original)}"]


def wording_note(trial: TrialResult, comparator: Any, original: str) -> str:
    """What to try when reruns without a piece changed the answer's words, each below the default comparator's
    threshold, while no unchanged rerun changed a word: a decision held in one word of a long answer reads as
    unchanged, and the report would otherwise show no sign of it."""
    if not isinstance(comparator, TextDifference) or any(v.verdict == "confirmed" for v in trial.arms):
        return ""
    unchanged = [o.answer for o in trial.all_outcomes if not o.changed and o.answer is not None]
    if any(comparator.difference(original, answer) for answer in unchanged):
        return ""
    moved = [difference for o in trial.all_outcomes if o.changed and o.answer is not None and not o.flipped
             and (difference := comparator.difference(original, o.answer)) > 0]
    if not moved:
        return ""
    return (f"{len(moved)} rerun(s) without a piece changed the answer's words, each below the comparator's threshold "
            f"(at most {max(moved):.1%} of them, threshold {comparator.threshold:.0%}), while no unchanged rerun "
            "changed a word. If the outcome is a word or a number inside a longer answer, such a change reads as "
            "unchanged. " + suggest(original))


def budget_note(trial: TrialResult, given: int | None, default: int) -> list[str]:
    """A line for a ``budget=`` below the default that left some piece undecided or untested: what the default is."""
    short = [verdict for verdict in trial.arms
             if verdict.verdict == "undecided" and (verdict.judged_on or not verdict.reached)]
    if given is None or given >= default or not short:
        return []
    return [f"budget={given} is below the {default} reruns the default gives this run, and {len(short)} piece(s) "
            "were left undecided or untested for it: leave budget= out, or raise it, to settle them."]


def replay_note(call: RecordedCall, tested: Sequence[str]) -> list[str]:
    """What a proof by replay covers: the answering call only; the tested pieces also sent to earlier calls."""
    earlier = {removal_id(call.recording.context_pieces[i]) for exchange in call.recording.exchanges
               if exchange.step_id != call.step_id
               for indices in call.recording.exchange_pieces(exchange).values() for i in indices}
    also = [name for name in tested if name in earlier]
    line = (f"Tested by replaying the answering call ({call.step_id}) without each piece: this proves what each piece "
            "did to that call's answer.")
    if also:
        line += (f" {len(also)} of them were also sent to earlier calls ({', '.join(also[:5])}"
                 f"{' ...' if len(also) > 5 else ''}), where they may have acted too (a tool call they caused): "
                 "localize(run, rerun=agent) tests them whole (rerun=factory for an agent built elsewhere).")
    return [line]
