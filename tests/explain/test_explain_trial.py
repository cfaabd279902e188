"""The statistics behind a verdict: the exact test, and how a trial spends reruns.

The trial is driven here by scripted draws (each arm flips with a set probability, seeded), so the
false-confirmation rate, the power and the reruns spent can be measured over many trials in a
second. The agents' side of it is in test_explain_localize.py.

Reaches explain.trials._stats: unit tests of the exact-test statistics, which have no public name.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence

import pytest
from scipy.stats import boschloo_exact, fisher_exact

from footprint_lab.explain.trials._stats import boschloo_greater, fisher_greater
from footprint_lab.explain.trials.arms import Arm
from footprint_lab.explain.trials.rerun import Outcome
from footprint_lab.explain.trials.trial import decide


def test_boschloo_agrees_with_scipy_on_random_tables():
    chooser = random.Random(7)
    checked = 0
    while checked < 60:
        n, big_b = chooser.randint(1, 16), chooser.randint(1, 16)
        k, b = chooser.randint(0, n), chooser.randint(0, big_b)
        ours = boschloo_greater(k, n, b, big_b)
        if k * big_b <= b * n:
            assert ours == 1.0  # no more flips than the baseline: nothing to test
            continue
        checked += 1
        reference = boschloo_exact([[k, b], [n - k, big_b - b]], alternative="greater", n=64).pvalue
        assert ours == pytest.approx(reference, abs=1e-9)
        fisher = fisher_exact([[k, b], [n - k, big_b - b]], alternative="greater")[1]
        assert fisher_greater(k, n, b, big_b) == pytest.approx(fisher, abs=1e-12)
        assert ours <= fisher + 1e-12  # Boschloo's test is never less powerful than Fisher's


def test_three_flips_of_three_against_a_stable_three():
    assert boschloo_greater(3, 3, 0, 3) == pytest.approx(1 / 64)
    assert fisher_greater(3, 3, 0, 3) == pytest.approx(1 / 20)
    assert boschloo_greater(0, 3, 0, 3) == 1.0 and boschloo_greater(2, 0, 0, 3) == 1.0


def scripted(rates: dict[str, float], noise: float, seed: int):
    """Draws where arm ``k`` flips with probability ``rates[k]`` (a removed set: the largest of its members')."""
    chooser = random.Random(seed)
    spent: list[int] = []

    async def draw(jobs: Sequence[tuple[Arm | None, int]]) -> list[Outcome]:
        spent.append(len(jobs))
        outcomes = []
        for arm, seed_of_rerun in jobs:
            chance = noise if arm is None else max([noise, *(rates.get(name, noise) for name in arm.exclude)])
            outcomes.append(Outcome(seed_of_rerun, "answer", flipped=chooser.random() < chance))
        return outcomes

    return draw, spent


def trials(rates: dict[str, float], noise: float, count: int, *, arms: int = 5, budget: int = 48,
           samples: int = 3) -> tuple[int, int, float]:
    """``(trials confirming the cause 'c0', trials confirming an arm without effect, mean reruns)`` over ``count``."""
    names = [f"c{n}" for n in range(arms)]
    hits = false = spent = 0
    for seed in range(count):
        draw, _ = scripted(rates, noise, seed)
        result = asyncio.run(decide([Arm(name, (name,)) for name in names], draw, samples=samples, alpha=0.05,
                                    budget=budget))
        confirmed = [verdict.arm for verdict in result.arms if verdict.verdict == "confirmed"]
        hits += any(arm.key == "c0" for arm in confirmed)
        # a false confirmation removes nothing that matters (a set holding the cause is a true one)
        false += any(not set(arm.exclude) & set(rates) for arm in confirmed)
        spent += result.reruns
        assert result.reruns <= budget
    return hits, false, spent / count


@pytest.mark.parametrize("noise", [0.0, 0.1, 0.3, 0.5])
def test_pieces_without_effect_are_confirmed_in_at_most_alpha_of_trials(noise):
    _, false, _ = trials({}, noise, 300)
    assert false <= 0.05 * 300 + 6  # alpha is 5%; 6 trials of slack for a sample of 300 (Clopper-Pearson upper)


@pytest.mark.parametrize(("noise", "least", "most_reruns"), [(0.0, 1.0, 13), (0.1, 0.95, 24), (0.25, 0.9, 32)])
def test_a_cause_that_always_flips_is_found_within_the_budget(noise, least, most_reruns):
    hits, false, mean = trials({"c0": 1.0}, noise, 200)
    assert hits >= least * 200 and false <= 0.05 * 200
    assert mean <= most_reruns


def test_a_deterministic_model_spends_two_screening_reruns_one_per_arm_and_three_a_side():
    draw, spent = scripted({"c2": 1.0}, 0.0, 0)
    result = asyncio.run(decide([Arm(f"c{n}", (f"c{n}",)) for n in range(5)], draw, samples=3, alpha=0.05,
                                budget=48))
    by_key = {verdict.arm.key: verdict for verdict in result.arms}
    assert by_key["c2"].verdict == "confirmed" and by_key["c2"].look == 1
    assert (by_key["c2"].flips, by_key["c2"].samples, by_key["c2"].noise_samples) == (3, 3, 3)
    assert spent == [2, 5, 6] and result.reruns == 13
    assert all(by_key[f"c{n}"].verdict == "not_confirmed" and not by_key[f"c{n}"].tested for n in (0, 1, 3, 4))


def test_a_cause_among_forty_is_found_by_group_testing_within_48_reruns():
    found = 0
    for seed in range(40):
        draw, _ = scripted({"c23": 1.0}, 0.05 if seed % 2 else 0.0, seed)
        result = asyncio.run(decide([Arm(f"c{n}", (f"c{n}",)) for n in range(40)], draw, samples=3, alpha=0.05,
                                    budget=48))
        assert result.reruns <= 48 and result.design.startswith("group test")
        confirmed = [verdict.arm.key for verdict in result.arms if verdict.verdict == "confirmed"]
        assert confirmed in ([], ["c23"])
        found += confirmed == ["c23"]
    assert found >= 38


def test_failed_reruns_count_as_neither_flips_nor_noise():
    async def draw(jobs: Sequence[tuple[Arm | None, int]]) -> list[Outcome]:
        outcomes = []
        for arm, seed in jobs:
            if seed % 3 == 0:
                outcomes.append(Outcome(seed, None, "ProviderUnavailableError"))
            else:
                outcomes.append(Outcome(seed, "answer", flipped=arm is not None))
        return outcomes

    result = asyncio.run(decide([Arm("a", ("a",))], draw, samples=3, alpha=0.05, budget=48))
    verdict = result.arms[0]
    # look 1: seeds 0-2, one failed a side (2 vs 2: p = 1/16); look 2: the arm's seeds 0-5 (two failed) against
    # the baseline's 0-8 (three failed)
    assert (verdict.verdict, verdict.look, verdict.flips, verdict.samples) == ("confirmed", 2, 4, 4)
    assert (verdict.noise_flips, verdict.noise_samples) == (0, 6) and verdict.failed == 2
    assert result.failures == {"ProviderUnavailableError": 5}
    assert "2 rerun(s) failed (ProviderUnavailableError x2)" in verdict.reason


def test_the_budget_is_never_passed():
    chooser = random.Random(3)
    for seed in range(60):
        budget = chooser.randint(6, 60)
        arms = chooser.randint(1, 12)
        draw, spent = scripted({"c0": 0.9}, chooser.choice([0.0, 0.2, 0.4]), seed)
        result = asyncio.run(decide([Arm(f"c{n}", (f"c{n}",)) for n in range(arms)], draw, samples=3,
                                    alpha=0.05, budget=budget))
        assert sum(spent) == result.reruns <= budget


def test_a_candidate_no_stronger_than_noise_at_its_first_look_gets_no_second_look():
    async def draw(jobs: Sequence[tuple[Arm | None, int]]) -> list[Outcome]:
        # the arm and the unchanged run both flip on seed 0 only: 1/3 against 1/3, a screening fluke
        return [Outcome(seed, "answer", flipped=seed == 0) for _, seed in jobs]

    result = asyncio.run(decide([Arm("a", ("a",))], draw, samples=3, alpha=0.05, budget=48))
    verdict = result.arms[0]
    assert (verdict.verdict, verdict.look, verdict.flips, verdict.samples) == ("not_confirmed", 1, 1, 3)
    assert result.reruns == 6 and "no more often than noise" in verdict.reason
