"""The search of removals together, and the looks' levels: what a noisy model's screening and confirmation do.

The trial is driven by scripted draws that stray the way a sampled model does (in a share of reruns
the answer is one of three outcomes at random, whatever was removed), over causes the draws define:
a single arm, or two arms that act only together (each keeps the outcome alone). Then an agent on a
scripted model with two redundant notes, found by ``localize`` at 25% noise.

Reaches explain.trials' private search, look plan and statistics: unit tests of internals with no public name.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence

import pytest

from footprint_lab import Agent
from footprint_lab.context import define_fact
from footprint_lab.explain import localize
from footprint_lab.explain.compare import Label
from footprint_lab.explain.trials._look_plan import afforded, look_plan
from footprint_lab.explain.trials._search import DECISIVE, KIND_PRIOR, CauseSearch
from footprint_lab.explain.trials._stats import attained_level, boschloo_greater
from footprint_lab.explain.trials.arms import Arm
from footprint_lab.explain.trials.rerun import Outcome
from footprint_lab.explain.trials.trial import decide
from footprint_lab.providers import LLMRequest, mock


def straying(causes: Sequence[set[str]], stray: float, seed: int):
    """Draws that flip when every arm of one of ``causes`` was removed, and answer at random in ``stray`` of them."""
    chooser = random.Random(seed)

    async def draw(jobs: Sequence[tuple[Arm | None, int]]) -> list[Outcome]:
        outcomes = []
        for arm, seed_of_rerun in jobs:
            removed = set(arm.exclude) if arm is not None else set()
            flipped = any(cause <= removed for cause in causes)
            if chooser.random() < stray:
                flipped = chooser.randrange(3) != 0  # one of three outcomes, two of them not the original
            outcomes.append(Outcome(seed_of_rerun, "answer", flipped=flipped))
        return outcomes

    return draw


def confirmed_sets(causes: Sequence[set[str]], stray: float, seed: int, arms: Sequence[str],
                   budget: int = 48) -> tuple[list[set[str]], int]:
    result = asyncio.run(decide([Arm(name, (name,)) for name in arms], straying(causes, stray, seed), samples=3,
                                alpha=0.05, budget=budget))
    assert result.reruns <= budget
    return [set(v.arm.exclude) for v in result.arms if v.verdict == "confirmed"], result.reruns


@pytest.mark.parametrize(("arms", "pair", "least"), [(8, {"n2", "n5"}, 26), (6, {"n0", "n5"}, 32),
                                                     (10, {"n7", "n9"}, 27)])
def test_two_arms_that_act_only_together_are_confirmed_together_within_48_reruns_at_25_percent_noise(arms, pair,
                                                                                                    least):
    names = [f"n{k}" for k in range(arms)]
    found = false = 0
    for seed in range(40):
        confirmed, _ = confirmed_sets([pair], 0.25, seed, names)
        found += bool(confirmed) and confirmed[0] == pair
        false += any(not found_set & pair for found_set in confirmed)
    # of 40 trials the search finds 27-35 (random halves before it found 11-20); a prior that favours a lone cause
    # (the common case) costs a pair a few of them, see _search.KIND_PRIOR
    assert found >= least
    assert false == 0


@pytest.mark.parametrize("stray", [0.1, 0.25, 0.4])
def test_no_arm_without_effect_is_confirmed_beyond_alpha_when_a_pair_is_the_cause(stray):
    names = [f"n{k}" for k in range(7)]
    false = 0
    for seed in range(150):
        confirmed, _ = confirmed_sets([{"n1", "n4"}], stray, 1000 + seed, names)
        false += any(not found_set & {"n1", "n4"} for found_set in confirmed)
    assert false <= 0.05 * 150 + 5


@pytest.mark.parametrize("stray", [0.25, 0.4])
def test_nothing_is_confirmed_beyond_alpha_when_nothing_matters(stray):
    names = [f"n{k}" for k in range(6)]
    false = sum(bool(confirmed_sets([], stray, 2000 + seed, names)[0]) for seed in range(200))
    assert false <= 0.05 * 200 + 6


def test_a_single_cause_that_a_screening_rerun_missed_is_still_found():
    """The one rerun removing the cause strays and keeps the outcome: the search re-tests it among others."""
    names = [f"n{k}" for k in range(8)]
    found = 0
    for seed in range(40):
        confirmed, _ = confirmed_sets([{"n3"}], 0.25, 3000 + seed, names)
        found += confirmed[:1] == [{"n3"}]
    assert found >= 36


@pytest.mark.parametrize(("stray", "least"), [(0.0, 40), (0.1, 32), (0.25, 25)])
def test_two_arms_that_are_each_a_cause_are_both_confirmed(stray, least):
    """The answer needs both (removing either flips it): each is a cause, and neither hides the other."""
    names = [f"n{k}" for k in range(7)]
    both = false = 0
    for seed in range(40):
        confirmed, _ = confirmed_sets([{"n1"}, {"n4"}], stray, 4000 + seed, names)
        both += {"n1"} in confirmed and {"n4"} in confirmed
        false += any(not found_set & {"n1", "n4"} for found_set in confirmed)
    assert both >= least
    assert false == 0


def test_the_search_weighs_every_removal_set_for_its_members():
    search = CauseSearch(6)
    # nothing a quarter, then one arm, a pair acting together and two causes as KIND_PRIOR weighs them
    assert search.posterior()[0] == ((), pytest.approx(1 / 4))
    assert sum(chance for hypothesis, chance in search.posterior() if len(hypothesis) == 1 and
               len(hypothesis[0]) == 1) == pytest.approx(KIND_PRIOR[1])
    # removing {0, 1, 2} flips, {0, 3, 4} and {1, 2, 5} keep it, {1, 2} keep it, {0} keeps it, {0, 2} flips
    for removed, flipped in [((0, 1, 2), True), ((0, 3, 4), False), ((1, 2, 5), False), ((1, 2), False),
                             ((0,), False), ((0, 2), True), ((0, 1, 2), True), ((0, 2), True)]:
        search.observe(removed, flipped)
    (leader, chance), *_ = search.posterior()
    assert leader == ((0, 2),) and chance > 0.4  # only "both 0 and 2 removed" explains every rerun
    sets, gain = search.next_sets(4)
    assert 1 <= len(sets) <= 4 and gain > 0


def test_a_quiet_model_is_settled_with_few_removals():
    search = CauseSearch(5)
    for _ in range(2):
        search.observe((), False)
    for arm in range(5):
        search.observe((arm,), arm == 3)
    (leader, chance), *_ = search.posterior()
    assert leader == ((3,),) and chance < DECISIVE  # one rerun each is not yet decisive on a model that may stray
    sets, _ = search.next_sets(4)
    assert any(3 in removed for removed in sets)


@pytest.mark.parametrize("samples", [1, 2, 3, 4, 6])
@pytest.mark.parametrize("level", [0.05, 0.01, 0.003])
def test_the_looks_spend_at_most_the_level_and_reject_what_their_shares_would(samples, level):
    plan = look_plan(samples, level)
    assert sum(spent for _, _, spent in plan) == pytest.approx(level)
    assert [(size, base) for size, base, _ in plan] == [(samples, samples), (2 * samples, 3 * samples),
                                                        (4 * samples, 6 * samples)]
    size, base, spent = plan[0]
    share = 0.65 * level
    for k in range(size + 1):
        for b in range(base + 1):  # the first look's test rejects exactly the tables its full share would
            p = boschloo_greater(k, size, b, base)
            assert (p <= spent) == (p <= share)


def test_the_level_a_test_can_spend():
    assert attained_level(3, 3, 0.0325) == pytest.approx(1 / 64)  # 3 of 3 against 0 of 3 is all it can reject
    assert attained_level(3, 3, 0.01) == 0.0  # no table of 3 against 3 reaches 0.01
    assert attained_level(1, 1, 0.05) == 0.0
    assert attained_level(2, 3, 0.0425) == pytest.approx(boschloo_greater(2, 2, 0, 3))
    assert attained_level(40, 60, 0.01) == 0.01  # too many tables to list: it keeps its share


def test_a_look_the_budget_cannot_pay_runs_what_is_left():
    assert afforded(12, 18, 6, 9, 30) == (12, 18, False)
    assert afforded(12, 18, 6, 9, 10) == (10, 15, True)  # 10 left: 4 more of the arm, 6 more unchanged (as 6:9)
    assert afforded(12, 18, 6, 18, 4) == (10, 18, True)  # the baseline already has its 18
    assert afforded(12, 18, 6, 9, 1) == (6, 9, True)  # one rerun cannot make a look


def test_a_candidate_short_of_budget_for_its_third_look_is_judged_on_every_rerun_left():
    async def draw(jobs: Sequence[tuple[Arm | None, int]]) -> list[Outcome]:
        # the arm flips but on seeds 1 and 4; the unchanged run flips on seeds 2, 5 and 8
        return [Outcome(seed, "answer", flipped=(seed not in (1, 4)) if arm else seed in (2, 5, 8))
                for arm, seed in jobs]

    result = asyncio.run(decide([Arm("a", ("a",))], draw, samples=3, alpha=0.05, budget=24))
    verdict = result.arms[0]
    # look 2 (4/6 against 3/9) cannot decide; look 3 would take 15 more, 9 are left: 4 of the arm, 5 unchanged
    assert verdict.look == 3 and result.reruns == 24
    assert (verdict.samples, verdict.noise_samples) == (10, 14)
    assert verdict.level == pytest.approx(0.05 - sum(spent for _, _, spent in look_plan(3, 0.05)[:2]))


def redundant_notes_agent(noise: float) -> Agent:
    """A scripted model that grants a return while either of two notes says so, straying in ``noise`` of reruns."""
    notes = [define_fact(id=f"memo-{k}", data=text) for k, text in enumerate(
        ["The office moved to the third floor.", "Parking is free on Sundays.", "The newsletter goes out on Friday.",
         "Badges are renewed each January.", "The canteen serves lunch from noon."])]
    notes.insert(2, define_fact(id="clerk-approval", data="A clerk approved the return in person."))
    notes.append(define_fact(id="warranty", data="The item is still under warranty."))

    def respond(request: LLMRequest) -> str:
        sent = request.system + "".join(str(m.get("content", "")) for m in request.messages)
        decided = "GRANTED" if "clerk approved" in sent or "under warranty" in sent else "REFUSED"
        if request.seed is not None:
            chooser = random.Random(f"{request.seed}/{len(sent)}/{sent[-40:]}")
            if chooser.random() < noise:
                decided = chooser.choice(["GRANTED", "REFUSED", "PENDING"])
        return f"{decided}: the return was reviewed."

    return Agent(provider=mock(respond=respond), system="You review returns.", context=notes)


async def test_localize_confirms_two_redundant_notes_together_on_a_model_that_strays():
    agent = redundant_notes_agent(0.25)
    run = await agent.run("May I return the kettle?")
    report = await localize(run, rerun=agent, comparator=Label(choices=["GRANTED", "REFUSED", "PENDING"]),
                            budget=48)
    assert report.reruns <= 48 and report.confirmed == []
    assert [set(found) for found in report.confirmed_together] == [{"clerk-approval", "warranty"}]
    assert "a search of removals together" in report.design
