"""Which difference between a good run and a bad one changed the answer: each carried in and tested.

Rule kept here: a difference explains the changed answer only when carrying it into the bad run brings
the good answer back.

:func:`explain_difference` carries each difference (:func:`~footprint_lab.explain.trials.comparison.compare_runs`)
from a good run into a bad one (put back what was
removed, restore what changed, take out what was added) and tests, with the statistics, budget and
report of ``localize`` (:mod:`~footprint_lab.explain.trials.trial`), which of them flip the bad answer to
the good one. The comparator's question is "does this rerun give the *good* answer?" (not "does it
differ from the bad one?"): a difference explains the changed answer only when carrying it in brings
the good answer back; one that only breaks the bad answer into a third one explains nothing, and the
report counts those reruns apart. With ``replay=`` each arm is a replay of the bad run's answering
call with that difference carried in (every kind of difference of that call can be carried but a
message that was not sent and the model's own turns); with ``rerun=`` it is a rerun of the bad run
built with ``exclude=`` / ``force=``, as ``localize`` and ``find_dropped_context`` do, which can carry
a declaration or a tool in or out but not a changed text nor a tool's result. Nothing is skipped
quietly: every difference it could not carry is named with why.

Role: explain layer; reruns go through whatever it is handed, as ``localize``'s do.
Refusal raised here: :class:`SameAnswerError`.
"""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Unpack

from footprint_lab.base.refusal import Refusal
from footprint_lab.explain.arguments import ExplainConfigError, recording_of
from footprint_lab.explain.render import display_bundle, shorten
from footprint_lab.explain.trials._arm_fields import ArmFields
from footprint_lab.explain.trials._budget import default_budget
from footprint_lab.explain.trials._localization import budget_note, untested_lines
from footprint_lab.explain.trials._recorded_call import Carry, RecordedCall, _Part, recorded_call
from footprint_lab.explain.trials._rerun_pool import Draws
from footprint_lab.explain.trials._stopping import Partial, partial_line, run_trial, stopped
from footprint_lab.explain.trials.ablation import original_answer
from footprint_lab.explain.trials.arms import VERDICT_LABELS, Arm, ArmVerdict, TrialResult
from footprint_lab.explain.trials.comparison import (
    Difference,
    PieceChange,
    _Keyed,
    call_changes,
    compare_runs,
    keyed_parts,
)
from footprint_lab.explain.trials.replay import CallReplayer, check_provider, replay_policy
from footprint_lab.explain.trials.rerun import Progress, Rerunner, check_comparator
from footprint_lab.explain.trials.settings import Trials, TrialSettings, settings_for

if TYPE_CHECKING:
    import pandas as pd

    from footprint_lab.core.conversation import CheckpointInput
    from footprint_lab.core.door import RunInput
    from footprint_lab.explain.arguments import RunLike
    from footprint_lab.explain.trials.rerun import Restore
    from footprint_lab.providers.types import Provider


#: what a difference of a piece is called, seen from the first run to the second, and what carries it back
CARRY_WORDS = {"removed": "put back", "added": "take out", "changed": "restore"}


class SameAnswerError(Refusal):
    """Raised by ``explain_difference`` when its comparator reads the good and the bad answer as the same.

    Carries ``comparator`` (the comparator's name): no rerun could then tell the good answer from the bad one.
    """

    code = "ERR_SAME_ANSWER"
    fields = ("comparator",)

    def __init__(self, function: str, comparator: str) -> None:
        super().__init__(f"{function}: the comparator ({comparator}) reads the good run's answer and the bad run's "
                         "as the same, so no rerun could show a difference bringing the good one back. Pass two runs "
                         "whose answers differ, or a comparator that tells them apart (footprint_lab.explain.compare "
                         "has ones that read a label or a mention).")
        self.comparator = comparator


@dataclass(slots=True)
class CarriedDifference(ArmFields):
    """One difference carried from the good run into the bad one, and what the reruns with it said.

    A flip is a rerun that gave the good answer (by the comparator); ``other`` counts the finished
    reruns that gave neither the good answer nor the bad one's text (spacing aside): the difference
    changed the answer without bringing the good one back.
    """

    name: str
    change: PieceChange
    call: str
    trial: ArmVerdict
    other: int = 0

    def line(self) -> str:
        cost = f"{self.reruns} rerun{'s' if self.reruns != 1 else ''}"
        other = f"; {self.other} rerun(s) gave a third answer" if self.other else ""
        return f"{VERDICT_LABELS[self.verdict]}: {self.name} ({self.change.why}) {self.reason}{other}; {cost}"


@dataclass(slots=True)
class DifferenceExplanation(Partial):
    """Which differences between a good run and a bad one flip the bad answer to the good one, and which do not."""

    good: str
    bad: str
    difference: Difference
    tested: list[CarriedDifference]
    untested: list[tuple[str, str]]
    comparator: str
    trial: TrialResult
    #: ``replay`` (the bad run's answering call replayed) or ``rerun`` (the bad run rerun)
    how: str
    #: ``(reruns done, reruns planned)`` when the call was stopped: the verdicts it reached, the rest undecided
    stopped: tuple[int, int] | None = None

    reruns = property(lambda self: self.trial.reruns, doc="Every rerun started, failed ones included.")
    budget = property(lambda self: self.trial.budget)
    alpha = property(lambda self: self.trial.alpha)
    notes = property(lambda self: self.trial.notes)

    @property
    def confirmed(self) -> list[str]:
        """The differences shown to bring the good answer back when carried into the bad run."""
        return [d.name for d in self.tested if d.verdict == "confirmed"]

    def verdict(self, name: str) -> str | None:
        return next((d.verdict for d in self.tested if d.name == name), None)

    def summary(self) -> str:
        counts = Counter(d.verdict for d in self.tested)
        flips, finished = self.trial.noise
        failed = self.trial.failures
        lost = f"; {sum(failed.values())} failed" if failed else ""
        untested = (f"; {len(self.untested)} not tested (named below)" if self.untested
                    else "; every difference was tested")
        return (f"{partial_line(self.stopped)}Difference explained by {self.how}: {counts['confirmed']} of "
                f"{len(self.tested)} tested differences "
                f"bring the good answer \"{shorten(self.good, 40)}\" back into the bad run, {counts['undecided']} "
                f"undecided{untested}; {self.reruns} reruns (budget {self.budget}){lost}; "
                f"noise: {flips}/{finished} unchanged reruns gave the good answer; false-confirmation rate at most "
                f"{self.alpha:.0%}; comparator {self.comparator}.")

    def __str__(self) -> str:
        lines = [self.summary(), f"  good: \"{shorten(self.good)}\"", f"  bad:  \"{shorten(self.bad)}\"",
                 *(d.line() for d in self.tested)]
        lines += untested_lines(self.untested)
        lines += self.notes
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """One row per tested difference: what it is, its verdict and every count the verdict rests on."""
        from footprint_lab.explain.frame import ShownFrame  # imports pandas

        rows = [{"difference": d.name, "change": d.change.change, "what": d.change.what, "call": d.call,
                 "verdict": d.verdict, "flips": d.flips, "samples": d.samples, "other": d.other,
                 "noise_flips": d.noise_flips, "noise_samples": d.noise_samples, "p_value": d.p_value,
                 "level": d.level, "reruns": d.reruns, "failed": d.failed, "came_from": d.change.why,
                 "reason": d.reason}
                for d in self.tested]
        return ShownFrame(rows, columns=EXPLANATION_COLUMNS)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return display_bundle("difference_explanation", self, self.summary(), str(self), include, exclude)


EXPLANATION_COLUMNS = ["difference", "change", "what", "call", "verdict", "flips", "samples", "other", "noise_flips",
                       "noise_samples", "p_value", "level", "reruns", "failed", "came_from", "reason"]


class GoodAnswer:
    """The comparator of ``explain_difference``: a rerun flips when it gives the good answer.

    It asks the given comparator (``(original, rerun) -> True when they differ``) whether the rerun's
    answer differs from the good one, and says the opposite; an awaitable judgement is awaited.
    """

    def __init__(self, compare: Callable[[str, str], Any]) -> None:
        self.compare = compare

    def __call__(self, good: str, answer: str) -> Any:
        judged = self.compare(good, answer)
        if inspect.isawaitable(judged):
            return _opposite(judged)
        return None if judged is None else not judged

    def __repr__(self) -> str:
        return f"the good answer, by {self.compare!r}"


async def _opposite(judged: Any) -> bool | None:
    value = await judged
    return None if value is None else not value


#: why a difference cannot be carried, by how it would be carried
_REPLAY_CANNOT = {
    "assistant": "a model turn: the model's own turns are what a replay produces again",
    "unsent message": ("a message the bad call was not sent: putting it back needs the model turn that asked for "
                       "it; rerun= reruns the whole run"),
}
_RERUN_CANNOT = {
    "changed": "a changed text: a rerun cannot restore another run's text (replay= restores it in the answering call)",
    "message": ("a message of the conversation (a tool's result, a turn): a rerun produces them again; replay= "
                "carries a tool result into the answering call"),
}


def _anchor(change: PieceChange, good: RecordedCall, bad: RecordedCall, bad_keys: dict[tuple[str, ...], _Keyed]
            ) -> int:
    """Where in the bad call a piece only the good call was sent goes back: after the last piece of its slot
    that comes before it in the good call and that the bad call has too, else where its slot begins."""
    good_keys = list(keyed_parts(good))
    before = good_keys[: good_keys.index(change.key)]
    for key in reversed(before):
        if key[0] == change.slot and key in bad_keys:
            return bad_keys[key].index + 1
    first = [k for k, part in enumerate(bad.parts) if part.slot == change.slot]
    if first:
        return first[0]
    return 0 if change.slot == "system" else len(bad.parts)


def _replay_carry(change: PieceChange, good: RecordedCall, bad: RecordedCall,
                  bad_keys: dict[tuple[str, ...], _Keyed]) -> Carry | str:
    """How one difference of the answering calls is carried into the bad one, or why it cannot be."""
    origin = f"{good.recording.run_id}/{good.step_id}"
    if change.source_kind == "assistant":
        return _REPLAY_CANNOT["assistant"]
    if change.change == "added":
        return Carry(drop=frozenset({change.b_index})) if change.b_index is not None else "not in the bad call"
    assert change.a_part is not None
    carried = _Part(change.a_part.slot, change.a_part.piece, change.a_part.value, origin)
    if change.change == "removed":
        if change.slot == "messages":
            return _REPLAY_CANNOT["unsent message"]
        return Carry(insert={_anchor(change, good, bad, bad_keys): (carried,)})
    assert change.b_index is not None and change.b_part is not None
    if change.slot == "messages":  # the good text, in the bad call's own message (its call id kept)
        carried.value = {**change.b_part.value, "content": change.a_part.value.get("content")}
    return Carry(restore={change.b_index: carried})


def _rerun_arm(change: PieceChange) -> tuple[tuple[str, ...], tuple[str, ...]] | str:
    """``(exclude, force)`` that carry one difference into a rerun of the bad run, or why none can."""
    if change.change == "changed":
        return _RERUN_CANNOT["changed"]
    if change.slot == "messages":
        return _RERUN_CANNOT["message"]
    name = change.removal_id
    if name is None:
        return "no rerun can take it out or force it in"
    return ((name,), ()) if change.change == "added" else ((), (name,))


def _flat(text: str | None) -> str:
    return " ".join((text or "").split())


def _carried_name(change: PieceChange) -> str:
    return f"{CARRY_WORDS[change.change]} {change.what}"


async def explain_difference(
    good: RunLike,
    bad: RunLike,
    *,
    rerun: Restore | None = None,
    replay: Provider | None = None,
    input: RunInput = None,
    continue_from: CheckpointInput | None = None,
    trials: Trials | None = None,
    **settings: Unpack[TrialSettings],
) -> DifferenceExplanation:
    """Which differences between a good run and a bad one bring the good answer back into the bad run.

    Each difference (:func:`compare_runs`) is carried from ``good`` into ``bad``: what ``good`` was sent
    and ``bad`` was not is put back, a changed text restored, what ``bad`` was sent alone taken out.
    ``replay`` is a provider: each arm replays the bad run's answering call with the difference
    carried in (the differences of that call with the good run's answering call; those of earlier
    calls are named untested). ``rerun`` is the bad run's agent or a factory called with
    ``exclude=`` / ``force=`` (as ``localize`` and ``find_dropped_context`` call it): each arm reruns
    the bad run with the declaration or tool carried in or out. A rerun flips when ``comparator``
    (``(original, rerun) -> True when they differ``, by default ``TextDifference``) reads its answer
    as the *good* answer. The screening, statistics, budget and the trial settings (``trials=`` or
    keywords) are ``localize``'s.
    """
    function = "explain_difference"
    good_rec, bad_rec = recording_of(good, function, "good"), recording_of(bad, function, "bad")
    good_answer, bad_answer = original_answer(function, good_rec), original_answer(function, bad_rec)
    chosen_trials = settings_for(function, trials, settings).for_call(function)
    samples, alpha, budget, concurrency = (chosen_trials.samples or 3, chosen_trials.alpha, chosen_trials.budget,
                                           chosen_trials.concurrency)
    compare_answers = check_comparator(function, chosen_trials.comparator)
    if replay is not None and rerun is not None:
        raise ExplainConfigError(function, "replay", "a provider beside rerun=",
                                 "is one way to carry the differences in; rerun= is the other: pass one of them "
                                 "(replay= re-sends the bad run's answering call, rerun= reruns the bad run)")
    differs = compare_answers(good_answer, bad_answer)
    if inspect.isawaitable(differs):
        differs = await differs
    if not differs:
        raise SameAnswerError(function, repr(compare_answers))
    found = compare_runs(good_rec, bad_rec)
    arms: dict[str, tuple[Arm, PieceChange, str]] = {}
    untested: list[tuple[str, str]] = []
    carries: dict[str, Carry] = {}
    answering: set[int] = set()
    if replay is not None:
        good_call, bad_call = recorded_call(function, good_rec), recorded_call(function, bad_rec)
        bad_keys = keyed_parts(bad_call)
        for change in call_changes(good_call, bad_call):
            name = _carried_name(change)
            carry = _replay_carry(change, good_call, bad_call, bad_keys)
            if isinstance(carry, str):
                untested.append((name, carry))
                continue
            carries[name] = carry
            arms[name] = (Arm(name, (name,)), change, bad_call.step_id)
        answering = {id(pair) for pair in found.calls if pair.b is not None and pair.b.step_id == bad_call.step_id
                     and pair.member == ""}
        policy = replay_policy(function, bad_rec)
        runner: Any = CallReplayer(bad_call, check_provider(function, replay, "replay"), policy, carries)
    else:
        runner = rerun
    earlier: dict[str, list[str]] = {}
    for pair in found.calls:
        if id(pair) in answering:
            continue
        call = pair.step_b or pair.step_a or "?"
        for change in pair.pieces:
            name = _carried_name(change) + (f" in member '{pair.member}'" if pair.member else "")
            if replay is not None:
                if name not in arms:
                    earlier.setdefault(name, []).append(call)
                continue
            how = _rerun_arm(change)
            if isinstance(how, str):
                earlier.setdefault(name, []).append(f"{call}: {how}")
            elif name not in arms:
                arms[name] = (Arm(name, *how), change, call)
    for name, where in earlier.items():
        if name in arms:
            continue
        why = (f"in call(s) {', '.join(dict.fromkeys(where))}, not the answering call: a replay of the answering "
               "call cannot carry it; rerun= reruns the whole run" if replay is not None
               else "; ".join(dict.fromkeys(where)))
        untested.append((name, why))
    rerunner = Rerunner(function, runner, bad_rec, input, continue_from, retries=chosen_trials.retries,
                         time_limit=chosen_trials.time_limit, run=bad)
    chosen = list(arms.values())
    trial_arms = [arm for arm, _, _ in chosen]
    limit = budget if budget is not None else default_budget(samples, len(trial_arms))
    judge = GoodAnswer(compare_answers)
    bar = Progress(limit, "explain_difference", chosen_trials.progress, unit="reruns")
    draws = Draws(rerunner, judge, good_answer, concurrency=concurrency, bar=bar)
    trial, stop = await run_trial("explain_difference", draws, bar, trial_arms, samples=samples, alpha=alpha,
                                  budget=limit, prepare=draws.prepare)
    trial.notes += budget_note(trial, budget, default_budget(samples, len(trial_arms)))
    by_key = {verdict.arm.key: verdict for verdict in trial.arms}
    tested: list[CarriedDifference] = []
    for arm, change, call in chosen:
        verdict = by_key[arm.key]
        if verdict.untested:
            untested.append((arm.key, verdict.reason.removeprefix("was not tested: ")))
            continue
        other = sum(1 for o in (*verdict.screening, *verdict.confirmation)
                    if o.error is None and not o.flipped and _flat(o.answer) != _flat(bad_answer))
        tested.append(CarriedDifference(arm.key, change, call, verdict, other))
    report = DifferenceExplanation(good_answer, bad_answer, found, tested, untested, repr(judge), trial,
                                   "replay" if replay is not None else "rerun", stop)
    if stop is not None:
        raise stopped("explain_difference", bar, report)
    return report
