"""How reruns are spent to reach a verdict: screen cheaply, then confirm on fresh reruns with an exact test.

Rule kept here: a piece is confirmed only by reruns that played no part in choosing it. Every
trial of "does changing this change the outcome?" (removing a suspect, forcing a dropped piece
back in, removing a set together) goes through two phases:

1. **Screening** chooses what to test, and may be as adaptive as it likes: its reruns decide
   nothing. Two unchanged reruns show whether the model is noisy at all; then each arm (one
   change to the run) is tried once. A quiet round (no unchanged rerun flipped, at most one arm
   did) makes the arm that flipped the candidate (should it not hold up, the search below looks
   on, with a share of ``alpha`` kept for it). Otherwise (a noisy model, or nothing flipped
   alone) a search of removals together (:mod:`~footprint_lab.explain.trials._search`) weighs every
   screening rerun, whatever it removed, for the explanation it supports: one arm, or a pair that
   acts only together (each keeps the outcome alone), which becomes an arm of its own, or two arms
   that are each a cause (both go on); it removes
   the sets that would tell the most until one explanation is likely, always leaving what two
   looks at one candidate take. With many arms (trying each would spend more than half the
   budget) the screening removes halves of them at once instead (a group test), and the search of
   removals together starts from those reruns, weighing single causes only. The default budget
   (:func:`default_budget`) pays the screening's own reruns on top of the rest.
2. **Confirmation** proves it. The candidates, strongest first, get fresh reruns with their own
   seeds (``0, 1, 2 ...``, each candidate's rerun ``k`` with the same seed as baseline rerun
   ``k``) beside a fresh baseline of unchanged reruns, in three looks: ``samples`` reruns a side,
   then twice and four times as many (the baseline half again as many, since it serves every
   candidate) while a candidate is still undecided. At each look its flips are tested against
   the baseline's by Boschloo's exact test (:mod:`~footprint_lab.explain.trials._stats`). The
   candidates share ``alpha`` by Wiens' fallback procedure (weights fixed from the screening;
   a confirmed candidate passes its level on to the next), and each candidate's level is split
   over its looks (65%, 20% and 15%; a share a look's test cannot spend passes to the next look,
   and a look the budget cannot pay in full runs what is left and spends the rest, see
   :mod:`~footprint_lab.explain.trials._look_plan`).

So the chance that a call confirms any arm that has no effect is at most ``alpha`` (5% by
default), whatever the model's noise: screening only chooses, each look's test is exact for the
look's size, fixed before it runs, and the candidates and looks split ``alpha`` between them.
Reruns of a batch run in a shuffled order, so that a provider that drifts over time sides with no
arm. Verdicts:

- ``confirmed``: the test rejected "no more flips than noise" at its look;
- ``not_confirmed``: screening saw no sign of an effect, or the confirmation's reruns flipped no
  more often than the baseline's (over two looks), or too weakly for more looks to change that
  (already at the first look when it flipped in at most half of its reruns: a screening fluke
  costs no second look; stopping never adds a confirmation, so ``alpha`` holds);
- ``undecided``: there is a sign of an effect, but the budget or the looks ran out before the test
  could decide (or too many reruns failed, or the baseline was too noisy to tell anything).

A rerun that fails is tried again (see :class:`~footprint_lab.explain.trials.rerun.Rerunner`); one that
still fails is counted as failed, never as a flip and never as noise, and the counts a test uses
are those of the reruns that finished.

Role: explain layer; it knows arms, seeds and counts, never a runner (``draw`` runs the reruns).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field

from footprint_lab.explain.trials._look_plan import afforded, hopeless_trend, look_plan
from footprint_lab.explain.trials._search import BATCH, DECISIVE, CauseSearch
from footprint_lab.explain.trials._stats import boschloo_greater, rate
from footprint_lab.explain.trials.rerun import Outcome
from footprint_lab.markup.words import VERDICT_WORDS

#: Unchanged reruns the screening starts with (do they flip at all?).
SCREEN_BASELINE = 2
#: Seeds of screening reruns start here, so no confirmation rerun repeats one (they are seeded from 0).
SCREEN_SEED = 1000
#: Seeds of the search of removals together (see :func:`_together`).
SEARCH_SEED = SCREEN_SEED + 300
#: A hypothesis the search leaves less likely than this is not confirmed.
CANDIDATE_SHARE = 0.1
#: When the budget stops the search before it is sure, an arm it still gives at least this chance stays ``undecided``.
UNSETTLED = 0.05
#: The default budget, in reruns, for each rerun a side of the first look.
BUDGET_PER_SAMPLE = 16
#: a verdict as every report, view and frame writes it: the vocabulary's own words (markup.words)
VERDICT_LABELS = VERDICT_WORDS


@dataclass(frozen=True, slots=True)
class Arm:
    """One change to the run to test: sources removed, sources forced in, under the name it is reported by."""

    key: str
    exclude: tuple[str, ...] = ()
    force: tuple[str, ...] = ()


#: Runs one rerun per ``(arm, seed)`` (``None`` for an unchanged rerun), concurrently, outcomes judged.
Draw = Callable[[Sequence[tuple["Arm | None", int]]], Awaitable[list[Outcome]]]


def tally(outcomes: Sequence[Outcome]) -> tuple[int, int]:
    """``(flips, finished)`` of some reruns: failed ones count in neither."""
    finished = [o for o in outcomes if o.error is None]
    return sum(1 for o in finished if o.flipped), len(finished)


def failures(outcomes: Sequence[Outcome]) -> Counter[str]:
    """How many reruns failed, by the error each ended with."""
    return Counter(str(o.error) for o in outcomes if o.error is not None)


@dataclass(slots=True)
class ArmVerdict:
    """What the reruns said about one arm: its verdict and every count it rests on."""

    arm: Arm
    verdict: str = "not_confirmed"
    reason: str = ""
    screening: list[Outcome] = field(default_factory=list)
    confirmation: list[Outcome] = field(default_factory=list)
    #: the baseline this arm was last judged against: flips and finished reruns
    noise_flips: int = 0
    noise_samples: int = 0
    p_value: float | None = None
    #: the level ``p_value`` was compared with (``alpha``'s share at its look, as much as its test can spend)
    level: float | None = None
    #: the look that decided it (1, 2, 3), or 0 when screening set it aside
    look: int = 0
    #: joint screening: how much more often the outcome flipped when this arm was among the removed
    screening_score: float | None = None
    #: every rerun that made this arm's change, alone or with others, in any phase (failed ones included) ...
    reached: int = 0
    #: ... and how many of them finished: none, and the arm was never measured (see :func:`settle`)
    judged_on: int = 0

    @property
    def tested(self) -> bool:
        """Whether the arm reached confirmation."""
        return bool(self.confirmation)

    @property
    def counted(self) -> list[Outcome]:
        """The reruns its flips and samples are counted over: the confirmation's, else the screening's."""
        return self.confirmation or self.screening

    @property
    def flips(self) -> int:
        return tally(self.counted)[0]

    @property
    def samples(self) -> int:
        """The reruns counted (failed ones excluded)."""
        return tally(self.counted)[1]

    @property
    def flip_rate(self) -> float | None:
        return rate(*tally(self.counted))

    @property
    def noise_rate(self) -> float | None:
        return rate(self.noise_flips, self.noise_samples)

    @property
    def reruns(self) -> int:
        """Every rerun spent on this arm alone, screening and confirmation, failed ones included."""
        return len(self.screening) + len(self.confirmation)

    @property
    def failed(self) -> int:
        return sum(1 for o in (*self.screening, *self.confirmation) if o.error is not None)

    @property
    def failures(self) -> Counter[str]:
        return failures([*self.screening, *self.confirmation])

    @property
    def untested(self) -> bool:
        """Whether no rerun made this arm's change at all (the budget ran out first)."""
        return self.reached == 0


@dataclass(slots=True)
class TrialResult:
    """Every arm's verdict, the baselines they were judged against, and what was spent."""

    arms: list[ArmVerdict]
    screening_baseline: list[Outcome]
    baseline: list[Outcome]
    reruns: int
    budget: int
    alpha: float
    design: str
    #: screening reruns that removed several arms at once (the group test's halves, the search's sets)
    joint: list[Outcome] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def noise(self) -> tuple[int, int]:
        """``(flips, finished)`` of the baseline the verdicts rest on (the confirmation's, else the screening's)."""
        return tally(self.baseline or self.screening_baseline)

    @property
    def all_outcomes(self) -> list[Outcome]:
        arms = [o for verdict in self.arms for o in (*verdict.screening, *verdict.confirmation)]
        return [*self.screening_baseline, *self.baseline, *self.joint, *arms]

    @property
    def failures(self) -> Counter[str]:
        return failures(self.all_outcomes)




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


async def decide(arms: Sequence[Arm], draw: Draw, *, samples: int, alpha: float, budget: int,
                 screen: bool = True) -> TrialResult:
    """Screen ``arms`` (when there are more than two and ``screen``), then confirm the candidates; every arm no
    finished rerun measured is then said to be so (:func:`settle`)."""
    result = await _trial(arms, draw, samples=samples, alpha=alpha, budget=budget, screen=screen)
    settle(result)
    return result


def settle(result: TrialResult) -> None:
    """Count, for each arm, the reruns that made its change (alone or among others), and name what none measured.

    A verdict must say what was measured: an arm whose every rerun failed is ``undecided`` ("every
    rerun failed"), never ``not_confirmed``; an arm no rerun reached (the budget ran out first) is
    ``undecided`` too and marked :attr:`ArmVerdict.untested`, for the report to name it apart.
    """
    every = result.all_outcomes
    for verdict in result.arms:
        change = {*verdict.arm.exclude, *verdict.arm.force}
        touched = [o for o in every if o.changed and change.issubset(o.changed)]
        verdict.reached = len(touched)
        verdict.judged_on = sum(1 for o in touched if o.error is None)
        if verdict.judged_on:
            continue
        verdict.verdict = "undecided"
        if touched:
            verdict.reason = f"could not be judged: every rerun failed ({_failure_text(failures(touched))})"
        else:
            verdict.reason = (f"was not tested: the budget ({result.budget} reruns) ran out before any rerun "
                              "made this change")


async def _trial(arms: Sequence[Arm], draw: Draw, *, samples: int, alpha: float, budget: int,
                 screen: bool) -> TrialResult:
    spend = _Spend(draw, budget)
    verdicts = {arm.key: ArmVerdict(arm) for arm in arms}
    screening_baseline: list[Outcome] = []
    joint: list[Outcome] = []
    notes: list[str] = []
    confirmation = _Confirmation(verdicts, spend, samples)
    if screen and len(arms) > 2:
        screening_baseline = await spend([(None, SCREEN_SEED + k) for k in range(SCREEN_BASELINE)])
        singly = screened_singly(len(arms), budget)
        quiet = False
        candidates: list[Arm] = []
        if singly:
            design = "one at a time"
            candidates, quiet = await _screen_singly(list(arms), verdicts, spend, screening_baseline)
        else:
            joint = await _screen_jointly(list(arms), verdicts, spend)
            design = f"group test ({len(joint)} reruns removing halves of the suspects together)"
        hopeless = _hopeless(screening_baseline, verdicts.values())
        if hopeless:
            notes.append(hopeless)
            for verdict in verdicts.values():
                verdict.verdict = "undecided"
                verdict.reason = "could not be judged: unchanged reruns change the outcome as often as removals do"
            return TrialResult(list(verdicts.values()), screening_baseline, [], spend.spent, budget, alpha,
                               design, joint, notes)
        # A quiet model where one arm flipped: that arm goes first. Otherwise (a noisy model, nothing flipped
        # alone, a group test) a search of removals together weighs every screening rerun, for one arm the noise
        # hid, two arms that act only together, or two causes.
        strong = singly and quiet and bool(candidates)
        weights: list[float] | None = None
        if not strong:
            candidates, weights, searched, how = await _together(list(arms), verdicts, confirmation, alpha,
                                                                 screening_baseline, joint, pairs=singly)
            joint = [*joint, *searched]
            design += how
        # Part of alpha waits for a second round, run only when nothing the first named held up: after a strong
        # arm, the search for a pair; after a group test, the search's next best, weighing the first round's
        # reruns too (a group test can leave two arms with codes a rerun or two apart)
        kept_back = KEPT_BACK if strong or not singly else 0.0
        await confirmation.run(candidates, alpha * (1 - kept_back), weights)
        if kept_back and not any(verdicts[arm.key].verdict == "confirmed" for arm in candidates):
            tried = [o for verdict in verdicts.values() for o in verdict.confirmation]
            later, weights, searched, how = await _together(list(arms), verdicts, confirmation, alpha * kept_back,
                                                            screening_baseline, [*joint, *tried], pairs=singly)
            joint = [*joint, *searched]
            design += "; then" + how.removeprefix(";")
            await confirmation.run(later, alpha * kept_back, weights)
    else:
        design = "each arm confirmed directly"
        await confirmation.run(list(arms), alpha)
    return TrialResult(list(verdicts.values()), screening_baseline, confirmation.baseline, spend.spent, budget,
                       alpha, design, joint, notes)


def _hopeless(baseline: Sequence[Outcome], verdicts: Iterable[ArmVerdict]) -> str:
    """Why no flip can be told from noise, when the unchanged reruns flip as often as anything."""
    flips, finished = tally(baseline)
    tried = [v for v in verdicts if v.screening]
    rates = [v.flip_rate for v in tried if v.flip_rate is not None]
    if finished and flips == finished and rates and sum(1 for r in rates if r >= 1.0) >= 0.8 * len(rates):
        return (f"Every unchanged rerun changed the outcome ({flips}/{finished}) and so did nearly every removal: "
                "the comparator tells each rerun from the original whatever is removed, so no flip can be told from "
                "noise and the screening stopped there.")
    return ""


async def _screen_singly(arms: list[Arm], verdicts: dict[str, ArmVerdict], spend: _Spend,
                         baseline: list[Outcome]) -> tuple[list[Arm], bool]:
    """Each arm removed once: the arms that flipped, and whether the model looked quiet.

    A quiet round (no unchanged rerun flipped, at most one arm did) makes the model look
    deterministic: what flipped is the candidate (or, when nothing did, there is none). On a noisy
    model one rerun an arm tells little, so the search of removals together (:func:`_together`)
    weighs these reruns with the ones it chooses and names the candidates.
    """
    jobs: list[tuple[Arm | None, int]] = [(arm, SCREEN_SEED + SCREEN_BASELINE) for arm in arms]
    if spend.left() >= len(jobs):
        for arm, outcome in zip(arms, await spend(jobs), strict=True):
            verdicts[arm.key].screening.append(outcome)
    flipped = [arm for arm in arms if verdicts[arm.key].flips]
    noise = tally(baseline)
    for verdict in verdicts.values():
        verdict.noise_flips, verdict.noise_samples = noise
        if verdict.arm not in flipped:
            verdict.reason = _screened_out(verdict)
    return flipped, not noise[0] and len(flipped) <= 1


def _screened_out(verdict: ArmVerdict) -> str:
    flips, finished = tally(verdict.screening)
    if not finished:  # the search's removals together may still set it aside; with none, settle() says so
        return (f"its screening rerun failed ({_failure_text(failures(verdict.screening))}); the reruns that "
                "removed it with others showed no sign of an effect")
    return (f"flipped the outcome in {flips}/{finished} screening reruns: no sign of an effect beside noise "
            f"({verdict.noise_flips}/{verdict.noise_samples}) and the other suspects")


async def _together(arms: list[Arm], verdicts: dict[str, ArmVerdict], confirmation: _Confirmation, level: float,
                    baseline: list[Outcome], joint: Sequence[Outcome] = (), *, pairs: bool = True
                    ) -> tuple[list[Arm], list[float], list[Outcome], str]:
    """Search removals together (:class:`~footprint_lab.explain.trials._search.CauseSearch`) for what explains the
    flips.

    The search starts from every screening rerun so far (the unchanged ones and each arm's) and
    runs the removal sets it chooses while it is undecided, always leaving what two looks at one
    candidate at ``level`` take. Its likeliest explanations, an arm not yet tested or a pair (a new
    arm removing both), are the candidates, weighted by their posterior; when none is likely enough
    and "nothing" is not the likeliest, the best supported one is. Returns the candidates, their
    weights, the reruns it took and how the design grew (a phrase for ``design``).
    """
    spend, samples = confirmation.spend, confirmation.samples
    index = {arm.key: k for k, arm in enumerate(arms)}
    # after a group test (many arms, ``pairs`` off) the search weighs single causes only: pairs of forty arms and
    # more would cost it seconds a batch, and a pair among many is what bisect_culprits searches for
    search = CauseSearch(len(arms), with_pairs=pairs)
    for outcome in baseline:
        if outcome.error is None:
            search.observe((), outcome.flipped)
    for k, arm in enumerate(arms):
        for outcome in verdicts[arm.key].screening:
            if outcome.error is None:
                search.observe((k,), outcome.flipped)
    for outcome in joint:  # a group test's reruns: each removed many arms at once
        if outcome.error is None:
            search.observe(tuple(index[name] for name in outcome.changed if name in index), outcome.flipped)
    size, base, _ = look_plan(samples, level)[1]

    def room() -> int:  # what the search may spend: it leaves two looks at one candidate
        return spend.left() - size - max(base - len(confirmation.baseline), 0)

    outcomes: list[Outcome] = []
    while search.posterior()[0][1] < DECISIVE and room() > 0:
        sets, _ = search.next_sets(min(BATCH, room()))
        if not sets:
            break
        first = SEARCH_SEED + len(joint) + len(outcomes)  # a second round's sets get seeds of their own
        jobs: list[tuple[Arm | None, int]] = [(_joined([arms[k] for k in removed]), first + n)
                                              for n, removed in enumerate(sets)]
        for removed, outcome in zip(sets, await spend(jobs), strict=True):
            outcomes.append(outcome)
            if outcome.error is None:
                search.observe(removed, outcome.flipped)
    ranked = search.posterior()
    candidates: list[Arm] = []
    weights: list[float] = []
    for hypothesis, share in ranked:
        # the likeliest explanations (or, when none is likely enough, the best supported), each cause it names an
        # arm (a pair acting together a new one removing both), not yet tested
        if not hypothesis or not (share >= CANDIDATE_SHARE or (not candidates and hypothesis == ranked[0][0])):
            continue
        for cause in hypothesis:
            arm = arms[cause[0]] if len(cause) == 1 else _joined([arms[k] for k in cause])
            if not (arm.key in verdicts and verdicts[arm.key].tested) and arm not in candidates and \
                    len(candidates) < 3:
                candidates.append(verdicts.setdefault(arm.key, ArmVerdict(arm)).arm)
                weights.append(share)
    # a search the budget stopped before it was sure sets nothing aside: what it still gives a chance stays undecided
    cut = ranked[0][1] < DECISIVE and room() <= 0
    for k, arm in enumerate(arms):
        verdict = verdicts[arm.key]
        if arm in candidates or verdict.tested:
            continue
        named = sum(share for hypothesis, share in ranked if (k,) in hypothesis)
        if cut and named >= UNSETTLED:
            verdict.verdict = "undecided"
            verdict.reason = (f"could not be settled: the search of removals together gives it a {named:.0%} chance "
                              f"of being a cause, and the budget ({spend.budget} reruns) ran out before it could tell")
        elif verdict.flips:
            verdict.reason = (f"flipped the outcome in {verdict.flips}/{verdict.samples} screening reruns; weighed "
                              f"with the removals together, the chance it is a cause is {named:.0%}, "
                              "short of the leading suspects")
    found = [f"'{arm.key}' ({share:.0%})" for arm, share in zip(candidates, weights, strict=True)]
    candidates, weights = _members_after_sets(candidates, weights, arms, verdicts)
    return candidates, weights, outcomes, (f"; a search of removals together ({len(outcomes)} reruns, weighing every "
                                           f"screening rerun) left {', '.join(found) or 'no candidate'} most likely")


def _members_after_sets(candidates: list[Arm], weights: list[float], arms: list[Arm],
                        verdicts: dict[str, ArmVerdict]) -> tuple[list[Arm], list[float]]:
    """Each set candidate followed by its members, at weight 0: a member is tested only on the level a confirmed set
    passes on (Wiens' fallback), so it costs nothing of ``alpha`` and runs only once the set holds.

    Confirming "removing both flips it" says nothing of whether they act only together: a set holding a
    cause that acts alone flips too. A member confirmed alone then explains the set, which the report
    no longer calls a cause acting together.
    """
    by_key = {arm.key: arm for arm in arms}
    ordered: list[Arm] = []
    shares: list[float] = []
    for arm, share in zip(candidates, weights, strict=True):
        ordered.append(arm)
        shares.append(share)
        members = [by_key[name] for name in arm.exclude if name in by_key] if arm.key not in by_key else []
        for member in members:
            if member not in candidates and member not in ordered and not verdicts[member.key].tested:
                ordered.append(member)
                shares.append(0.0)
    return ordered, shares


async def _screen_jointly(arms: list[Arm], verdicts: dict[str, ArmVerdict], spend: _Spend) -> list[Outcome]:
    """A group test: pairs of reruns that each remove one half of the arms; the search then weighs them.

    The halves are a binary code: in pair ``j`` one rerun removes the arms whose ``j``-th bit is set,
    the other the rest, so any two arms are parted by at least one pair; two random pairs follow,
    for noise. Each arm's screening score is how much more often the outcome flipped when it was
    removed than when it was kept; the search of removals together (:func:`_together`) starts from
    these reruns and removes what tells the most next.
    """
    chooser = random.Random(len(arms))  # a fixed seed: the same arms give the same design
    bits = max(1, math.ceil(math.log2(len(arms))))
    order = arms[:]
    chooser.shuffle(order)
    splits = [[arm for k, arm in enumerate(order) if k >> bit & 1] for bit in range(bits)]
    for _ in range(2):
        chooser.shuffle(order)
        splits.append(order[: len(order) // 2])
    jobs: list[tuple[Arm | None, int]] = []
    for split in splits:
        chosen = {arm.key for arm in split}
        for half in (split, [arm for arm in arms if arm.key not in chosen]):
            jobs.append((_joined(half), SCREEN_SEED + SCREEN_BASELINE + 200 + len(jobs)))
    outcomes = await spend(jobs[: max(spend.left(), 0)])
    for arm in arms:
        seen = [(arm.key in outcome.changed, outcome.flipped) for outcome in outcomes if outcome.error is None]
        verdict = verdicts[arm.key]
        verdict.screening_score = _difference(seen)
        verdict.reason = (f"changed the flip rate by {verdict.screening_score:+.2f} in the group test (removed "
                          "against kept), short of the leading suspects")
        if len(outcomes) < len(jobs):  # a group test cut short parts some arms from none: it sets none aside
            verdict.verdict = "undecided"
            verdict.reason = (f"could not be set aside: the budget ({spend.budget} reruns) cut the group test short "
                              f"({len(outcomes)} of {len(jobs)} reruns)")
    return outcomes


def group_size(arms: int) -> int:
    """The reruns of a group test of ``arms`` arms (see :func:`_screen_jointly`)."""
    return 2 * (max(1, math.ceil(math.log2(arms))) + 2)


def screened_singly(arms: int, budget: int) -> bool:
    """Whether ``budget`` lets the screening remove each of ``arms`` arms alone (else it runs a group test).

    Half the budget is kept for what comes after: the search on a noisy model and the confirmation.
    """
    return SCREEN_BASELINE + 2 * arms <= budget // 2


def default_budget(samples: int, arms: int) -> int:
    """The budget when none is given: ``BUDGET_PER_SAMPLE`` reruns for each of ``samples`` (the search and the
    confirmation), and the screening's own reruns on top: two unchanged reruns and one without each arm, or the group
    test's when there are too many arms to remove each alone. So testing every piece never starves the proof."""
    base = BUDGET_PER_SAMPLE * samples
    if arms <= 2:
        return base
    return base + (SCREEN_BASELINE + arms if screened_singly(arms, base) else group_size(arms))


def _joined(arms: Sequence[Arm]) -> Arm:
    """One arm that makes every change of ``arms`` at once."""
    return Arm(" + ".join(arm.key for arm in arms), tuple(name for arm in arms for name in arm.exclude),
               tuple(name for arm in arms for name in arm.force))


def _difference(observations: list[tuple[bool, bool]]) -> float:
    """How much more often the outcome flipped in reruns that removed an arm than in those that kept it."""
    gone = [flipped for removed, flipped in observations if removed]
    kept = [flipped for removed, flipped in observations if not removed]
    return (sum(gone) / len(gone) if gone else 0.0) - (sum(kept) / len(kept) if kept else 0.0)


#: The share of ``alpha`` kept back for a second round, run when nothing the first round named held up (see
#: :func:`decide`).
KEPT_BACK = 0.2
#: A candidate that did not flip every time stops when its p-value is above this (evidence too weak to chase).
FUTILE = 0.5


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

    async def run(self, candidates: list[Arm], level: float, chances: list[float] | None = None) -> None:
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
        passed_on = shared = 0.0
        for arm, weight, chance, members in zip(candidates, weights, named, following, strict=True):
            verdict = self.verdicts[arm.key]
            own = level * weight + passed_on if weight > 0 else shared
            if own > 0:
                # a candidate the search all but named is not given up at its first look for a weak start
                await self._looks(arm, verdict, own, patient=chance >= DECISIVE)
                verdict.reason = _confirmation_reason(verdict, self.spend)
            if weight > 0:
                held = verdict.verdict == "confirmed"
                shared = own / members if held and members else 0.0
                passed_on = own if held and not members else 0.0

    async def _looks(self, arm: Arm, verdict: ArmVerdict, level: float, *, patient: bool = False) -> None:
        """The looks at one candidate, each at its fixed size and level, until one decides it.

        Stopping early for futility never adds a confirmation (every look's level is fixed before it
        runs), so whether to stop may follow the screening: a ``patient`` candidate stops at its first
        look only when nothing flipped.
        """
        plan = look_plan(self.samples, level)
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


def _failure_text(counts: Counter[str]) -> str:
    return ", ".join(f"{name} x{count}" for name, count in counts.most_common())
