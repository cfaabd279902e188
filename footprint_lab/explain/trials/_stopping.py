"""A proof by reruns that shows its progress and, when the analyst stops it, keeps the verdicts it reached.

Rule kept here: ``localize``, ``rerun_without``, ``bisect_culprits``, ``find_dropped_context`` and
``explain_difference`` run their trial through one :class:`Guarded` draw, which

- tells the bar what the trial is doing (``screening``, ``searching removals together``,
  ``confirming piece 'fact:refund-policy'``) and what it plans: the total starts at the reruns
  of the likeliest path (the screening and one candidate's first look, see :func:`first_plan`),
  never above the budget, and grows when the trial starts more; at the end it is what ran;
- when the call is stopped (an interrupt, a cancelled task) while reruns run, hands the trial
  reruns marked not run, at once, for everything it still asks, so the trial ends on the state
  it had: the reruns that finished are kept, a verdict the confirmation reached before the stop
  is kept, and every other piece is ``undecided`` ("not settled: the call was stopped") or, if
  no rerun reached it, not tested (:func:`keep_reached`). The report is marked partial and the
  call raises :class:`~footprint_lab.base.progress.Stopped` with it (:func:`stopped`), kept for
  ``footprint_lab.explain.last_stopped()``.

Role: explain layer; between the proofs and the trial (:mod:`~footprint_lab.explain.trials.trial`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from footprint_lab.base.progress import INTERRUPTS, Progress, Stopped
from footprint_lab.explain.trials._budget import SCREEN_BASELINE, group_size, screened_singly
from footprint_lab.explain.trials._look_plan import look_plan
from footprint_lab.explain.trials._rerun_pool import finished_before
from footprint_lab.explain.trials.arms import Arm, Draw, TrialResult
from footprint_lab.explain.trials.rerun import Outcome
from footprint_lab.explain.trials.trial import SCREEN_SEED, SEARCH_SEED, decide, settle

#: the error of a rerun a stopped call never ran (taken out of the report again by :func:`keep_reached`)
NOT_RUN = "not run: the call was stopped"
#: where a stopped proof's report is kept
KEPT_AT = "footprint_lab.explain.last_stopped()"


def first_plan(arms: int, samples: int, alpha: float, budget: int, *, screen: bool = True) -> int:
    """The reruns of a trial's likeliest path: its screening, then one candidate's first look beside its baseline
    (each arm's first look when it confirms them directly), at most ``budget``."""
    size, base, _ = look_plan(samples, alpha)[0]
    if screen and arms > 2:
        screening = SCREEN_BASELINE + arms if screened_singly(arms, budget) else group_size(arms)
        return min(budget, screening + size + base)
    return min(budget, base + arms * size)


def phase(jobs: Sequence[tuple[Arm | None, int]]) -> str:
    """What a batch of reruns is for, from its seeds and arms (seeds as :mod:`~footprint_lab.explain.trials.trial`
    hands them out)."""
    seeds = [seed for _, seed in jobs]
    if any(seed >= SEARCH_SEED for seed in seeds):
        return "searching removals together"
    if any(seed >= SCREEN_SEED for seed in seeds):
        return "screening"
    names = list(dict.fromkeys(arm.key for arm, _ in jobs if arm is not None))
    if not names:
        return "unchanged reruns"
    return "confirming " + ", ".join(f"'{name}'" for name in names[:2]) + (" ..." if len(names) > 2 else "")


class Guarded:
    """The draw a trial is handed: ``draw`` while the call runs, reruns marked not run once it was stopped."""

    def __init__(self, draw: Draw, bar: Progress, budget: int) -> None:
        self.draw = draw
        self.bar = bar
        self.budget = budget
        self.stopped = False

    async def __call__(self, jobs: Sequence[tuple[Arm | None, int]]) -> list[Outcome]:
        if self.stopped:
            return [Outcome(seed, None, NOT_RUN) for _, seed in jobs]
        self.bar.doing(phase(jobs))
        self.bar.plan(min(self.budget, max(self.bar.total, self.bar.done + len(jobs))))
        try:
            return await self.draw(jobs)
        except INTERRUPTS as stop:  # the trial ends now, on what finished (see the module docstring)
            self.stopped = True
            return [outcome or Outcome(seed, None, NOT_RUN)
                    for outcome, (_, seed) in zip(finished_before(stop, len(jobs)), jobs, strict=True)]


async def run_trial(function: str, draw: Draw, bar: Progress, arms: Sequence[Arm], *, samples: int, alpha: float,
                    budget: int, screen: bool = True, prepare: Any = None
                    ) -> tuple[TrialResult, tuple[int, int] | None]:
    """``decide`` through a :class:`Guarded` draw: the trial, and ``(done, planned)`` reruns when the call was
    stopped (its verdicts then cut to those reached, :func:`keep_reached`), else ``None`` and the bar finished.
    Stopped before the trial began (its runners being built): :class:`Stopped` at once, nothing kept."""
    guarded = draw if isinstance(draw, Guarded) else Guarded(draw, bar, budget)
    if not guarded.stopped:
        bar.plan(max(bar.done + first_plan(len(arms), samples, alpha, budget, screen=screen and len(arms) > 2),
                     bar.total if guarded is draw else 0))
    try:
        if prepare is not None:
            await prepare(arms)
        trial = await decide(arms, guarded, samples=samples, alpha=alpha, budget=budget, screen=screen)
    except INTERRUPTS:
        raise stopped(function, bar, None) from None
    if not guarded.stopped:
        bar.close()
        return trial, None
    keep_reached(trial, bar)
    return trial, (bar.done, bar.total)


def keep_reached(trial: TrialResult, bar: Progress) -> None:
    """A stopped trial as far as it got: reruns not run taken out, the verdicts its confirmation reached kept, every
    other arm ``undecided`` (or not tested, when no rerun reached it), and a note saying so."""
    def ran(outcomes: list[Outcome]) -> list[Outcome]:
        return [o for o in outcomes if o.error != NOT_RUN]

    not_run = sum(1 for o in trial.all_outcomes if o.error == NOT_RUN)
    cut = {verdict.arm.key for verdict in trial.arms if any(o.error == NOT_RUN for o in verdict.confirmation)}
    trial.screening_baseline, trial.baseline, trial.joint = (ran(trial.screening_baseline), ran(trial.baseline),
                                                             ran(trial.joint))
    for verdict in trial.arms:
        verdict.screening, verdict.confirmation = ran(verdict.screening), ran(verdict.confirmation)
    trial.reruns -= not_run
    settle(trial)
    why = f"the call was stopped after {bar.done} of {bar.total} reruns"
    for verdict in trial.arms:
        if verdict.untested:
            verdict.reason = f"was not tested: {why}, before any rerun made this change"
        elif verdict.arm.key in cut or not verdict.confirmation or verdict.verdict == "undecided":
            verdict.verdict = "undecided"
            verdict.reason = (f"was not settled: {why} (it flipped the outcome in {verdict.flips}/{verdict.samples} "
                              "of its reruns so far)")
    trial.notes.append(f"Partial: {why}; verdicts reached before the stop are kept, the others are undecided. Run it "
                       "again to settle them.")


def stopped(function: str, bar: Progress, report: Any) -> Stopped:
    """The one-line stop of a proof, its partial report kept (``None``: nothing finished to keep)."""
    bar.cancel()
    return Stopped(function, bar.unit or "reruns", bar.done, bar.total, report,
                   kept=f"the verdicts reached: {KEPT_AT}" if report is not None else "nothing kept")


class Partial:
    """What a report of a stoppable proof has: ``stopped``, ``(reruns done, reruns planned)`` when the call was
    stopped (``None`` for a whole report), and ``partial``."""

    __slots__ = ()
    stopped: tuple[int, int] | None

    @property
    def partial(self) -> bool:
        """``True`` when the call was stopped: the verdicts it reached are here, the rest are undecided."""
        return self.stopped is not None


def partial_line(stop: tuple[int, int] | None, unit: str = "reruns") -> str:
    """A stopped report's first words: ``partial: stopped after 12 of 40 reruns. `` (nothing for a whole one)."""
    return f"partial: stopped after {stop[0]} of {stop[1]} {unit}. " if stop is not None else ""
