"""Two arms on the same inputs: the paired difference of a metric, with a confidence interval that holds.

Rule kept: the interval fits the data and the design. Both arms answered the same inputs, so
the inputs are paired and the difference is taken input by input (what varies between inputs
cancels out); the interval is then

- for a metric that is 0 or 1 on every run (an answer right or wrong, a check passed):
  Newcombe's hybrid score interval for paired proportions (Newcombe 1998, method 10): built from
  the Wilson score intervals of the two arms and the correlation of the pairs. An evaluation
  set's accuracy often sits near 0 or 1 with a few hundred inputs, where the usual Wald interval
  (difference +/- z standard errors) is too narrow, can leave [-1, 1] and is empty of width when
  the arms never disagree; Newcombe's keeps close to its stated coverage there, in closed form.
- for any other number (tokens, duration, a score): Student's t interval on the paired
  differences, with n - 1 degrees of freedom: exact for normal differences, close for others of
  a few dozen pairs and more (the central limit theorem), and, like the other, deterministic, so
  the same runs give the same interval on any machine (a bootstrap would not, unseeded).

Role: pure arithmetic (no scipy at run time: the t quantile is computed here; the tests check it
against scipy).
"""

from __future__ import annotations

import math
from statistics import NormalDist


def wilson(successes: int, n: int, z: float) -> tuple[float, float]:
    """The Wilson score interval of ``successes`` in ``n``."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe_paired(first: list[int], second: list[int], confidence: float) -> tuple[float, float, float]:
    """``(difference, low, high)`` of ``mean(second) - mean(first)`` for paired 0/1 outcomes (Newcombe's method 10)."""
    n = len(first)
    both = sum(1 for a, b in zip(first, second, strict=True) if a and b)
    only_first = sum(1 for a, b in zip(first, second, strict=True) if a and not b)
    only_second = sum(1 for a, b in zip(first, second, strict=True) if b and not a)
    neither = n - both - only_first - only_second
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p1, p2 = (both + only_first) / n, (both + only_second) / n
    l1, u1 = wilson(both + only_first, n, z)
    l2, u2 = wilson(both + only_second, n, z)
    margins = (both + only_first) * (only_second + neither) * (both + only_second) * (only_first + neither)
    phi = 0.0
    if margins > 0:
        cross = both * neither - only_first * only_second
        # Newcombe's continuity correction of the correlation: shrunk by n/2 when positive, kept when negative
        corrected = cross - n / 2 if cross > n / 2 else (cross if cross < 0 else 0.0)
        phi = corrected / math.sqrt(margins)
    difference = p2 - p1
    low = difference - math.sqrt(max(0.0, (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2))
    high = difference + math.sqrt(max(0.0, (u2 - p2) ** 2 - 2 * phi * (u2 - p2) * (p1 - l1) + (p1 - l1) ** 2))
    return difference, max(-1.0, low), min(1.0, high)


def paired_t(first: list[float], second: list[float], confidence: float) -> tuple[float, float, float]:
    """``(difference, low, high)`` of ``mean(second - first)``: Student's t interval on the paired differences."""
    differences = [b - a for a, b in zip(first, second, strict=True)]
    n = len(differences)
    mean = sum(differences) / n
    if n < 2:
        return mean, -math.inf, math.inf
    spread = math.sqrt(sum((d - mean) ** 2 for d in differences) / (n - 1))
    half = t_quantile(0.5 + confidence / 2, n - 1) * spread / math.sqrt(n)
    return mean, mean - half, mean + half


def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (``p`` above 0.5), by bisection on its CDF."""
    low, high = 0.0, 1.0
    while _t_cdf(high, df) < p:
        high *= 2
    for _ in range(200):
        middle = (low + high) / 2
        if _t_cdf(middle, df) < p:
            low = middle
        else:
            high = middle
        if high - low < 1e-12:
            break
    return (low + high) / 2


def _t_cdf(t: float, df: int) -> float:
    """P(T <= t) for t >= 0: one minus half the regularized incomplete beta of df / (df + t^2)."""
    x = df / (df + t * t)
    return 1.0 - 0.5 * _incomplete_beta(df / 2, 0.5, x)


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta I_x(a, b), by its continued fraction (Lentz's method)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _incomplete_beta(b, a, 1.0 - x)
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 500):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return front * result / a
