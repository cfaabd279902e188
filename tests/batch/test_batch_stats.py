"""The intervals ``RunSet.compare`` reports: Student's t quantile against scipy, Newcombe's coverage by simulation.

Reaches batch._stats: unit tests of the interval statistics, which have no public name.
"""

from __future__ import annotations

import random

import pytest
from scipy import stats

from footprint_lab.batch._stats import newcombe_paired, paired_t, t_quantile


@pytest.mark.parametrize("df", [1, 2, 3, 7, 29, 120, 1000])
@pytest.mark.parametrize("p", [0.9, 0.95, 0.975, 0.995])
def test_the_t_quantile_matches_scipy(df, p):
    assert t_quantile(p, df) == pytest.approx(stats.t.ppf(p, df), rel=1e-9)


def test_the_paired_t_interval_matches_scipy():
    chooser = random.Random(7)
    first = [chooser.gauss(10, 3) for _ in range(25)]
    second = [a + chooser.gauss(0.5, 1) for a in first]
    difference, low, high = paired_t(first, second, 0.9)
    differences = [b - a for a, b in zip(first, second, strict=True)]
    expected = stats.t.interval(0.9, 24, loc=sum(differences) / 25, scale=stats.sem(differences))
    assert (low, high) == pytest.approx(expected) and difference == pytest.approx(sum(differences) / 25)


def test_newcombes_interval_squares_and_adds_scipys_wilson_intervals_when_the_pairs_are_uncorrelated():
    # 10 both right, 5 only the first, 7 only the second, 4 neither: ad - bc = 5 lies within n/2, so phi is 0
    first = [1] * 10 + [1] * 5 + [0] * 7 + [0] * 4
    second = [1] * 10 + [0] * 5 + [1] * 7 + [0] * 4
    difference, low, high = newcombe_paired(first, second, 0.95)
    one = stats.binomtest(15, 26).proportion_ci(0.95, method="wilson")
    two = stats.binomtest(17, 26).proportion_ci(0.95, method="wilson")
    p1, p2 = 15 / 26, 17 / 26
    assert difference == pytest.approx(p2 - p1)
    assert low == pytest.approx(p2 - p1 - ((p2 - two.low) ** 2 + (one.high - p1) ** 2) ** 0.5)
    assert high == pytest.approx(p2 - p1 + ((two.high - p2) ** 2 + (p1 - one.low) ** 2) ** 0.5)


def test_newcombes_interval_keeps_its_coverage_where_wald_does_not():
    """Arms near 100% accuracy on 40 inputs: the interval covers the true difference about 95% of the time."""
    chooser = random.Random(11)
    truth_first, truth_second, trials = 0.95, 0.90, 2000
    covered = wald_covered = 0
    for _ in range(trials):
        first, second = [], []
        for _ in range(40):
            shared = chooser.random()  # one input's difficulty moves both arms: the pairs are correlated
            first.append(int(shared < truth_first))
            second.append(int(shared < truth_second if chooser.random() < 0.7 else chooser.random() < truth_second))
        difference, low, high = newcombe_paired(first, second, 0.95)
        covered += low <= truth_second - truth_first <= high
        differences = [b - a for a, b in zip(first, second, strict=True)]
        spread = (sum((d - difference) ** 2 for d in differences) / 39) ** 0.5
        wald_covered += abs(difference - (truth_second - truth_first)) <= 1.96 * spread / 40 ** 0.5
    assert covered / trials >= 0.93
    assert wald_covered / trials < covered / trials


def test_arms_that_never_disagree_still_get_an_interval_of_some_width():
    difference, low, high = newcombe_paired([1] * 30, [1] * 30, 0.95)
    assert difference == 0 and low < 0 < high
