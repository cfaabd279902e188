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
   that are each a cause (both go on); it removes the sets that would tell the most until one
   explanation is likely, always leaving what two looks at one candidate take (on a model whose
   unchanged reruns never flipped, a search eight reruns leave unsettled also weighs three or four
   of the arms that flipped alone each being a cause: three notes each needed). With many arms
   (trying each would spend more than half the budget) the screening
   removes halves of them at once instead (a group test), and the search of removals together
   starts from those reruns, weighing single causes only; a share of ``alpha`` kept back pays a
   second search, which after a confirmed arm weighs only the reruns that kept it (removing halves
   at once hides a second cause, two pieces each needed, behind the first), and on a model whose
   unchanged reruns never flipped each round that confirms a cause hands its level to another, and
   then each arm the group test set aside that the ranking points at as strongly as at the strongest
   confirmed arm is removed alone and followed up (one of several notes the model follows by majority
   hides from the group test). What the group test set aside without a rerun removing it alone, the
   report names. The
   search takes a cause to act whatever else is removed with it, so on a model whose unchanged
   reruns never flipped, an arm that flipped alone but was set aside follows the candidates:
   removed alone at one look, on the level confirmed candidates hand to no one (or the whole level
   of a round that named no candidate), and confirmed only when every rerun flips (two passages
   that each outvote a third: either one's removal flips the answer, removing it with the third
   does not; four notes whose parity is the answer). The default budget (:func:`default_budget`)
   pays the screening's own reruns on top of the rest.
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

The arms, their verdicts and the trial's result are :mod:`~footprint_lab.explain.trials.arms`'s; the
confirmation's reruns and test are spent by ``_confirmation``; this module holds the procedure and the
screening.

Role: explain layer; it knows arms, seeds and counts, never a runner (``draw`` runs the reruns).
"""

from __future__ import annotations

import math
import random
from collections.abc import Awaitable, Callable, Iterable, Sequence

from footprint_lab.explain.trials._acting_together import left_together
from footprint_lab.explain.trials._budget import SCREEN_BASELINE, screened_singly
from footprint_lab.explain.trials._confirmation import _Confirmation, _Spend
from footprint_lab.explain.trials._look_plan import look_plan
from footprint_lab.explain.trials._search import BATCH, DECISIVE, CauseSearch
from footprint_lab.explain.trials.arms import (
    Arm,
    ArmVerdict,
    Draw,
    TrialResult,
    _failure_text,
    failures,
    joined,
    tally,
)
from footprint_lab.explain.trials.rerun import Outcome

#: Seeds of screening reruns start here, so no confirmation rerun repeats one (they are seeded from 0).
SCREEN_SEED = 1000
#: Seeds of the search of removals together (see :func:`_together`).
SEARCH_SEED = SCREEN_SEED + 300
#: A hypothesis the search leaves less likely than this is not confirmed.
CANDIDATE_SHARE = 0.1
#: When the budget stops the search before it is sure, an arm it still gives at least this chance stays ``undecided``.
UNSETTLED = 0.05
#: The most candidates one search names (an arm that flipped alone beyond them is followed up, see :func:`_together`).
MOST_CANDIDATES = 3
#: The share of ``alpha`` kept back for a second round, run when nothing the first round named held up (see
#: :func:`decide`).
KEPT_BACK = 0.2


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
            shared = any(set(o.changed) != change for o in touched)  # a group test's reruns counted too
            verdict.reason = (f"could not be judged: every rerun failed ({_failure_text(failures(touched))}"
                              f"{', counting those that made this change with others' if shared else ''})")
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
        screened = [*screening_baseline, *joint, *(o for verdict in verdicts.values() for o in verdict.screening)]
        if screened and all(o.error is not None for o in screened):  # the settle() that follows says so of each arm
            notes.append(f"Every screening rerun failed ({_failure_text(failures(screened))}): the call stopped there "
                         "rather than spend its budget on reruns that fail. Fix what makes them fail (the reasons "
                         "above), then run it again.")
            return TrialResult(list(verdicts.values()), screening_baseline, [], spend.spent, budget, alpha,
                               design, joint, notes)
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
        # Part of alpha waits for a second round: after a strong arm, the search for a pair, run only when it did
        # not hold up; after a group test, always, the search's next best weighing the first round's reruns too (a
        # group test can leave two arms with codes a rerun or two apart), or, once an arm held, a second cause
        kept_back = KEPT_BACK if strong or not singly else 0.0
        spare = await confirmation.run(candidates, alpha * (1 - kept_back), weights)
        level = alpha * kept_back + spare
        if not singly and not tally([*screening_baseline, *confirmation.baseline])[0]:  # kept back first for a set
            level = await left_together(list(arms), verdicts, confirmation, joint, level)
        spare = level  # what is left when no second round runs (it holds the first round's spare already)
        held = _held(candidates, verdicts)
        while kept_back and (not held or not singly) and level > 0:
            every = [*joint, *(o for verdict in verdicts.values() for o in verdict.confirmation)]
            # a group test's removals were halves: another cause (each of several needed) hides behind those
            # confirmed, so the search weighs again only the reruns that kept every confirmed arm
            seen = [o for o in every if not held & set(o.changed)]
            later, weights, searched, how = await _together(list(arms), verdicts, confirmation, level,
                                                            screening_baseline, seen, pairs=singly,
                                                            seeds_after=len(every))
            joint = [*joint, *searched]
            design += "; then" + how.removeprefix(";")
            spare = await confirmation.run(later, level, weights)
            found = _held(later, verdicts)
            if singly or not found or tally(confirmation.baseline)[0]:
                break
            # on a model whose unchanged reruns never flipped, a round that confirmed a cause hands its level on to
            # the next (Wiens' fallback), for the next one
            held, level = held | found, spare
        if not singly and not tally([*screening_baseline, *confirmation.baseline])[0]:
            spare = await left_together(list(arms), verdicts, confirmation, joint, spare)
            await _ranked_alone(list(arms), verdicts, confirmation, spare)
    else:
        design = "each arm confirmed directly"
        await confirmation.run(list(arms), alpha)
    return TrialResult(list(verdicts.values()), screening_baseline, confirmation.baseline, spend.spent, budget,
                       alpha, design, joint, notes)


def _held(candidates: Sequence[Arm], verdicts: dict[str, ArmVerdict]) -> set[str]:
    """The pieces the confirmed ``candidates`` change."""
    return {name for arm in candidates if verdicts[arm.key].verdict == "confirmed"
            for name in (*arm.exclude, *arm.force)}


async def _ranked_alone(arms: list[Arm], verdicts: dict[str, ArmVerdict], confirmation: _Confirmation,
                        level: float) -> None:
    """After a group test, on a model whose unchanged reruns never flipped: each arm the group test set aside that the
    ranking points at as strongly as at the strongest confirmed arm (at the strongest of all, when none is confirmed;
    never when that is no score at all) is removed alone once, as far as the budget goes (a first look kept back),
    and followed up when it flips, on the ``level`` the rounds left. A piece that decides only while the others stay
    (one of several notes the model follows by majority) hides from the group test, not from a ranking that reads
    the answer in it."""
    spend = confirmation.spend
    confirmed = [arm.score for arm in arms if verdicts[arm.key].verdict == "confirmed"]
    least = max(confirmed or [arm.score for arm in arms])
    size, base, _ = look_plan(confirmation.samples, level)[0]
    room = spend.left() - 2 * size - max(base - len(confirmation.baseline), 0)
    todo = [arm for arm in arms if least > 0 and arm.score >= least and not verdicts[arm.key].tested
            and not verdicts[arm.key].screening][:max(room, 0)]
    if level <= 0 or not todo:
        return
    flipped, _ = await _screen_singly(todo, verdicts, spend, confirmation.baseline)
    confirmation.follow_ups.update((arm.key, arm) for arm in flipped)
    await confirmation.run([], level)


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
    """Each arm removed once: the arms that flipped, and whether the model looked quiet (``baseline`` its unchanged
    reruns). Also how pieces a group test set aside are removed alone (:func:`_ranked_alone`).

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
    for arm in arms:
        verdict = verdicts[arm.key]
        verdict.noise_flips, verdict.noise_samples = noise
        if arm not in flipped:
            verdict.reason = _screened_out(verdict)
    return flipped, not noise[0] and len(flipped) <= 1


def _screened_out(verdict: ArmVerdict) -> str:
    flips, finished = tally(verdict.screening)
    if not finished:  # the search's removals together may still set it aside; with none, settle() says so
        why = _failure_text(failures(verdict.screening))
        return (f"could not be screened alone: its screening rerun failed ({why}); the reruns that removed it with "
                "others kept the outcome")
    return (f"flipped the outcome in {flips}/{finished} screening reruns: no sign of an effect beside the screening's "
            f"unchanged reruns ({verdict.noise_flips}/{verdict.noise_samples} changed) and the other suspects")


async def _together(arms: list[Arm], verdicts: dict[str, ArmVerdict], confirmation: _Confirmation, level: float,
                    baseline: list[Outcome], joint: Sequence[Outcome] = (), *, pairs: bool = True,
                    seeds_after: int | None = None
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
    observed: list[tuple[tuple[int, ...], bool]] = [((), o.flipped) for o in baseline if o.error is None]
    observed += [((k,), o.flipped) for k, arm in enumerate(arms) for o in verdicts[arm.key].screening
                 if o.error is None]
    # a group test's reruns: each removed many arms at once
    observed += [(tuple(index[name] for name in o.changed if name in index), o.flipped) for o in joint
                 if o.error is None]
    # on a model whose unchanged reruns never flipped, three arms or more that flipped alone may each be needed (three
    # notes): a search those reruns leave unsettled weighs that too (:func:`_searched`)
    alone = [k for k, arm in enumerate(arms) if verdicts[arm.key].flips] if not tally(baseline)[0] else []
    size, base, _ = look_plan(samples, level)[1]

    def room() -> int:  # what the search may spend: it leaves two looks at one candidate
        return spend.left() - size - max(base - len(confirmation.baseline), 0)

    async def run_sets(sets: list[tuple[int, ...]]) -> list[Outcome]:
        # a second round's sets get seeds of their own: after every rerun so far, whichever it weighs
        first = SEARCH_SEED + (len(joint) if seeds_after is None else seeds_after) + len(outcomes)
        return await spend([(joined([arms[k] for k in removed]), first + n) for n, removed in enumerate(sets)])

    outcomes: list[Outcome] = []
    widen = len(alone) > 2
    search = await _searched(CauseSearch(len(arms), with_pairs=pairs), observed, room, run_sets, outcomes,
                             limit=WIDEN_AFTER if widen else None)
    if widen and search.posterior()[0][1] < DECISIVE and room() > 0:
        search = await _searched(CauseSearch(len(arms), with_pairs=pairs, several=alone), observed, room, run_sets,
                                 outcomes)
    ranked = search.posterior()
    candidates: list[Arm] = []
    weights: list[float] = []
    for hypothesis, share in ranked:
        # the likeliest explanations (or, when none is likely enough, the best supported), each cause it names an
        # arm (a pair acting together a new one removing both), not yet tested
        if not hypothesis or not (share >= CANDIDATE_SHARE or (not candidates and hypothesis == ranked[0][0])):
            continue
        for cause in hypothesis:
            arm = arms[cause[0]] if len(cause) == 1 else joined([arms[k] for k in cause])
            if not (arm.key in verdicts and verdicts[arm.key].tested) and arm not in candidates and \
                    len(candidates) < MOST_CANDIDATES:
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
    if pairs and not tally(baseline)[0]:
        # on a model that looks quiet, an arm that flipped alone in screening is followed up after the candidates
        # (nothing of alpha): the search takes a cause to act whatever else is removed with it, and so sets aside a
        # piece whose effect another removal undoes (a poisoned passage that outvotes the right one only while the
        # right one is there)
        confirmation.follow_ups.update((arm.key, arm) for arm in arms if verdicts[arm.key].flips
                                       and not verdicts[arm.key].tested and arm not in candidates)
    return candidates, weights, outcomes, (f"; a search of removals together ({len(outcomes)} reruns, weighing every "
                                           f"screening rerun) left {', '.join(found) or 'no candidate'} most likely")


#: Search reruns after which a search left unsettled also weighs three or four causes (see :func:`_together`).
WIDEN_AFTER = 8


async def _searched(search: CauseSearch, observed: list[tuple[tuple[int, ...], bool]], room: Callable[[], int],
                    run_sets: Callable[[list[tuple[int, ...]]], Awaitable[list[Outcome]]],
                    outcomes: list[Outcome], *, limit: int | None = None) -> CauseSearch:
    """``search`` fed every observation so far, then the removal sets it chooses while it is undecided, ``room()``
    pays for them and it ran fewer than ``limit`` of its own. New reruns join ``outcomes`` and ``observed``."""
    for removed, flipped in observed:
        search.observe(removed, flipped)
    began = len(outcomes)
    while search.posterior()[0][1] < DECISIVE and room() > 0 and (limit is None or len(outcomes) - began < limit):
        sets, _ = search.next_sets(min(BATCH, room()))
        if not sets:
            break
        for removed, outcome in zip(sets, await run_sets(sets), strict=True):
            outcomes.append(outcome)
            if outcome.error is None:
                search.observe(removed, outcome.flipped)
                observed.append((removed, outcome.flipped))
    return search


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
            jobs.append((joined(half), SCREEN_SEED + SCREEN_BASELINE + 200 + len(jobs)))
    outcomes = await spend(jobs[: max(spend.left(), 0)])
    for arm in arms:
        seen = [(arm.key in outcome.changed, outcome.flipped) for outcome in outcomes if outcome.error is None]
        verdict = verdicts[arm.key]
        verdict.screening_score = _difference(seen)
        gone, kept = ([flipped for removed, flipped in seen if removed is side] for side in (True, False))
        did, other = ("restored", "left it out") if arm.force else ("removed", "kept it")
        verdict.reason = (f"was set aside by the group test, never {did} alone: reruns that {did} it with half the "
                          f"pieces changed the outcome {sum(gone)}/{len(gone)} times, those that {other} "
                          f"{sum(kept)}/{len(kept)}, short of the leading suspects")
        if len(outcomes) < len(jobs):  # a group test cut short parts some arms from none: it sets none aside
            verdict.verdict = "undecided"
            verdict.reason = (f"could not be set aside: the budget ({spend.budget} reruns) cut the group test short "
                              f"({len(outcomes)} of {len(jobs)} reruns)")
    return outcomes


def _difference(observations: list[tuple[bool, bool]]) -> float:
    """How much more often the outcome flipped in reruns that removed an arm than in those that kept it."""
    gone = [flipped for removed, flipped in observations if removed]
    kept = [flipped for removed, flipped in observations if not removed]
    return (sum(gone) / len(gone) if gone else 0.0) - (sum(kept) / len(kept) if kept else 0.0)

