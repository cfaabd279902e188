"""The confirmation of a trial: candidates tested on fresh reruns beside one shared baseline, by an exact test.

Rule kept here: a candidate is confirmed only by reruns that played no part in choosing it, at a
level fixed before they run, so the chance of confirming any arm without effect stays within the
level it is given.

It holds what spends a trial's reruns (:class:`_Spend`: the budget left, the reruns shuffled so that
nothing that drifts with time sides with an arm) and the confirmation itself (:class:`_Confirmation`:
Wiens' fallback procedure over the candidates, each candidate's looks at their fixed sizes and
levels, Boschloo's exact test at each), with the reason each verdict gives. The screening that
chooses the candidates, and the whole procedure, are :mod:`~footprint_lab.explain.trials.trial`'s.

Role: explain layer; it knows arms, seeds and counts, never a runner (``draw`` runs the reruns).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from footprint_lab.explain.trials._look_plan import afforded, hopeless_trend, look_plan
from footprint_lab.explain.trials._search import DECISIVE
from footprint_lab.explain.trials._stats import attained_level, boschloo_greater
from footprint_lab.explain.trials.arms import Arm, ArmVerdict, Draw, _failure_text, tally
from footprint_lab.explain.trials.rerun import Outcome

#: A candidate that did not flip every time stops when its p-value is above this (evidence too weak to chase).
FUTILE = 0.5


class _Spend:
    """The reruns one trial may still start, and those it has run."""

    def __init__(self, draw: Draw, budget: int) -> None:
        self._draw = draw
        self.budget = budget
        self.spent = 0

    def left(self) -> int:
        return self.budget - self.spent

    async def __call__(self, jobs: Sequence[tuple[Arm | None, int]]) -> list[Outcome]:
        """Run ``jobs`` in a shuffled order (so that nothing that drifts with time sides with an arm), results in
        the order given."""
        self.spent += len(jobs)
        if not jobs:
            return []
        order = list(range(len(jobs)))
        random.Random(self.spent).shuffle(order)
        results = await self._draw([jobs[k] for k in order])
        placed: list[Outcome | None] = [None] * len(jobs)
        for position, outcome in zip(order, results, strict=True):
            arm = jobs[position][0]
            outcome.changed = (*arm.exclude, *arm.force) if arm is not None else ()
            placed[position] = outcome
        return [outcome for outcome in placed if outcome is not None]


def _strength(verdict: ArmVerdict) -> float:
    """How strongly the screening pointed at an arm: its flip rate alone, or what the group test saw of it (a
    pair the group test found counts as 1)."""
    if not verdict.screening and verdict.screening_score is None:
        return 1.0
    return max(verdict.flip_rate or 0.0, verdict.screening_score or 0.0)


class _Confirmation:
    """The confirmation: candidates tested one after another on fresh reruns beside one shared baseline.

    :meth:`run` confirms a list of candidates, strongest first, by Wiens' fallback procedure:
    candidate ``j`` is tested at ``level * w_j``, plus the whole level of candidate ``j - 1`` when
    that one was confirmed; the weights, fixed before any confirmation rerun from the screening's
    flip rates, sum to 1, so the chance of confirming any arm without effect stays within ``level``. Each candidate's
    level is split over its looks (``LOOK_SHARES``); every look has a fixed size, and the baseline
    grows with the looks, shared by all candidates (a look uses its first reruns, in seed order).
    """

    def __init__(self, verdicts: dict[str, ArmVerdict], spend: _Spend, samples: int) -> None:
        self.verdicts = verdicts
        self.spend = spend
        self.samples = samples
        self.baseline: list[Outcome] = []
        #: arms that flipped alone in screening, followed up after the search set them aside: tested after the
        #: candidates, at one look, on the level confirmed candidates hand to no one, and only while no unchanged
        #: rerun has flipped (skipping a test or a look never adds a confirmation)
        self.follow_ups: dict[str, Arm] = {}

    async def run(self, candidates: list[Arm], level: float, chances: list[float] | None = None) -> float:
        """Confirm ``candidates`` at ``level``, then the follow-ups; returns the level confirmed candidates hold and
        hand to no one (the whole ``level`` when there is no candidate), for a later round to take on."""
        spare = await self._fallback(candidates, level, chances) if candidates else level
        # a follow-up gets only a level a confirmed candidate has no one left to hand to (nothing more of alpha),
        # and is tested only while no unchanged rerun has flipped
        follow_ups = [arm for arm in self.follow_ups.values() if not self.verdicts[arm.key].tested]
        share = spare / len(follow_ups) if follow_ups else 0.0
        for arm in follow_ups:
            if spare <= 0 or tally(self.baseline)[0]:
                break
            await self._follow_up(arm, self.verdicts[arm.key], share)
            spare -= share
        return spare

    async def _fallback(self, candidates: list[Arm], level: float, chances: list[float] | None) -> float:
        """Wiens' fallback over ``candidates``; returns the level confirmed candidates hold and hand to no one."""
        # weights by the search's posterior chances when it gave them, else by the square of each candidate's
        # screening strength: equal for equals, most of the level for a clear leader
        strength = chances or [_strength(self.verdicts[arm.key]) ** 2 for arm in candidates]
        total = sum(strength)
        weights = [value / total if total else 1 / len(candidates) for value in strength]
        named = chances or [0.0] * len(candidates)
        # a set's members follow it at weight 0: a confirmed set hands them its level, split evenly, instead of
        # passing it on (a set not confirmed leaves them none)
        following = [next((n for n, later in enumerate(weights[k + 1:]) if later > 0), len(weights) - k - 1)
                     for k in range(len(weights))]
        passed_on = shared = spare = 0.0
        for arm, weight, chance, members in zip(candidates, weights, named, following, strict=True):
            verdict = self.verdicts[arm.key]
            own = level * weight + passed_on if weight > 0 else shared
            if own > 0:
                # a candidate the search all but named is not given up at its first look for a weak start
                await self._looks(arm, verdict, own, patient=chance >= DECISIVE)
                verdict.reason = _confirmation_reason(verdict, self.spend)
            held = verdict.verdict == "confirmed"
            if weight > 0:
                shared = own / members if held and members else 0.0
                passed_on = own if held and not members else 0.0
            elif held:
                spare += own  # a confirmed member hands its level to no later candidate
        return spare + passed_on

    async def _follow_up(self, arm: Arm, verdict: ArmVerdict, level: float) -> None:
        """One look at an arm the search set aside after it flipped alone in screening, at the whole ``level``. It is
        confirmed only when every rerun flipped and the test passed (a stricter rule never adds a confirmation);
        flipping every time short of the level, it is undecided; otherwise it keeps the search's verdict, with
        what the look saw added."""
        earlier, reason = verdict.verdict, verdict.reason
        # the first look's reruns, beside its baseline or the second's when the first's is too few to reach the level
        plan = look_plan(self.samples, level)
        size, base = plan[0][:2]
        base = base if attained_level(size, base, level) else plan[1][1]
        if not attained_level(size, base, level) or afforded(size, base, 0, len(self.baseline), self.spend.left())[2]:
            return  # no look the budget pays in full could reach the level: no rerun is spent on it
        await self._looks(arm, verdict, level, plan=[(size, base, level)])
        flips, finished = tally(verdict.confirmation)
        if not finished or not verdict.noise_samples:  # nothing measured: the search's verdict stands
            verdict.verdict, verdict.reason = earlier, reason
            return
        if flips == finished:
            verdict.verdict = "confirmed" if verdict.verdict == "confirmed" else "undecided"
            verdict.reason = _confirmation_reason(verdict, self.spend)
            return
        seen = (f"removed alone on {finished} fresh reruns, it flipped the outcome in {flips}/{finished} against "
                f"noise {verdict.noise_flips}/{verdict.noise_samples}")
        if flips * verdict.noise_samples > verdict.noise_flips * finished:  # more often than noise: a sign, not proof
            verdict.verdict = "undecided"
            verdict.reason = (f"{seen}: more often than noise, but a piece followed up is confirmed only when every "
                              "rerun flips; rerun_without(run, [...], samples=...) with more reruns could decide")
            return
        verdict.verdict = "not_confirmed"
        verdict.reason = f"{reason}; {seen}: no more often than noise"

    async def _looks(self, arm: Arm, verdict: ArmVerdict, level: float, *, patient: bool = False,
                     plan: list[tuple[int, int, float]] | None = None) -> None:
        """The looks at one candidate, each at its fixed size and level, until one decides it.

        Stopping early for futility never adds a confirmation (every look's level is fixed before it
        runs), so whether to stop may follow the screening: a ``patient`` candidate stops at its first
        look only when nothing flipped. A ``plan`` given replaces the looks ``look_plan`` makes of ``level``.
        """
        plan = plan or look_plan(self.samples, level)
        for look, (size, base, spent) in enumerate(plan, 1):
            size, base, last = afforded(size, base, len(verdict.confirmation), len(self.baseline), self.spend.left())
            if size <= len(verdict.confirmation):
                return
            if last:  # the budget ends at this look: it spends the whole level the looks before it left
                spent = level - sum(earlier for _, _, earlier in plan[: look - 1])
            unchanged = [(None, seed) for seed in range(len(self.baseline), base)]
            jobs: list[tuple[Arm | None, int]] = [*unchanged, *((arm, seed) for seed in
                                                                 range(len(verdict.confirmation), size))]
            results = await self.spend(jobs)
            self.baseline += results[: len(unchanged)]
            verdict.confirmation += results[len(unchanged):]
            noise = tally(self.baseline[:base])
            flips, finished = tally(verdict.confirmation)
            verdict.noise_flips, verdict.noise_samples = noise
            verdict.p_value = boschloo_greater(flips, finished, *noise)
            verdict.level, verdict.look = spent, look
            if verdict.p_value <= verdict.level:
                verdict.verdict = "confirmed"
                return
            if finished == 0 or not noise[1]:
                verdict.verdict = "undecided"  # nothing to count: every rerun of the arm, or of the baseline, failed
                return
            weak = verdict.p_value > FUTILE or flips * noise[1] <= noise[0] * finished or \
                (look < len(plan) and hopeless_trend(flips, finished, noise, self.samples, look, plan[look][2]))
            if flips < finished and (not flips or (weak and (look > 1 or (flips * 2 <= finished and not patient)))):
                # no more flips than noise (held over a second look), or evidence too weak for more looks to turn
                # (at the first look too, when at most half of its reruns flipped)
                verdict.verdict = "not_confirmed"
                return
            verdict.verdict = "undecided"
            if last:
                return


def _confirmation_reason(verdict: ArmVerdict, spend: _Spend) -> str:
    noise = (verdict.noise_flips, verdict.noise_samples)
    if not verdict.confirmation:  # a candidate: the screening saw a sign of an effect that no rerun could test
        verdict.verdict = "undecided"
        return f"was a candidate, but the budget ({spend.budget} reruns) ran out before its confirmation"
    flips, finished = tally(verdict.confirmation)
    failed = verdict.failed
    lost = f"; {failed} rerun(s) failed ({_failure_text(verdict.failures)})" if failed else ""
    if not finished:
        return "could not be judged: every confirmation rerun failed" + lost
    if not noise[1]:
        return "could not be judged: every unchanged rerun failed, so there is no noise to test against" + lost
    counts = f"flipped the outcome in {flips}/{finished} reruns against noise {noise[0]}/{noise[1]}"
    shown = f"p = {_p(verdict.p_value)} {'<=' if verdict.verdict == 'confirmed' else '>'} {_p(verdict.level)}"
    if not verdict.level:
        shown = f"p = {_p(verdict.p_value)}, but the budget left no share of alpha for its test"
    if verdict.verdict == "confirmed":
        return f"{counts} ({shown})" + lost
    if verdict.verdict == "not_confirmed":
        if flips * noise[1] <= noise[0] * finished:
            return f"{counts}: no more often than noise" + lost
        return f"{counts}: too weak for more looks to reach the test" + lost
    why = "the budget ran out" if spend.left() < finished else "the looks ran out"
    return f"{counts} ({shown}): more reruns could decide, but {why}" + lost


def _p(value: float | None) -> str:
    if value is None:
        return "-"
    if value == 0:
        return "0"
    return f"{value:.2g}" if value >= 0.001 else f"{value:.1e}"
