"""The arithmetic behind a verdict: an exact test of "removing it flips more often than noise does".

Rule kept here: a verdict compares two counts of reruns, never one. ``k`` of ``n`` reruns with a
piece removed changed the outcome; ``b`` of ``B`` unchanged reruns (the baseline) changed it too,
which is the model's own noise. The question is whether the first rate is higher than the second,
and it is answered by Boschloo's exact test (one-sided):

- the statistic of a table ``(k, n, b, B)`` is Fisher's one-sided p-value (small when the removal
  flips far more often than the baseline);
- the p-value is the largest chance, over every common flip rate the two could share, of a table
  at least that extreme. No approximation is made, so the p-value is valid at any sample size,
  even three reruns a side, and it is never smaller than the evidence allows.

Boschloo's test is uniformly more powerful than Fisher's: three flips of three against a stable
baseline of three gives p = 0.016 where Fisher gives 0.05.

Role: explain layer, pure functions (numpy is imported on first use).
"""

from __future__ import annotations

from functools import lru_cache
from math import comb
from typing import Any

#: Points of the first, coarse pass over common flip rates (each is then refined locally).
_GRID = 256
#: Relative tolerance under which two Fisher p-values count as the same (equally extreme tables).
_TIE = 1e-9


def fisher_greater(k: int, n: int, b: int, big_b: int) -> float:
    """Fisher's one-sided p-value: the chance the removed arm holds ``k`` or more of the ``k + b`` flips."""
    if n == 0 or big_b == 0:
        return 1.0
    flips = k + b
    total = n + big_b
    denominator = comb(total, n)
    top = min(flips, n)
    numerator = sum(comb(flips, x) * comb(total - flips, n - x) for x in range(k, top + 1))
    return numerator / denominator


@lru_cache(maxsize=256)
def _fisher_table(n: int, big_b: int) -> Any:
    """Fisher's one-sided p-value for every table with these sample sizes, as an ``(n+1, B+1)`` array."""
    import numpy as np

    table = np.ones((n + 1, big_b + 1))
    for x in range(n + 1):
        for y in range(big_b + 1):
            table[x, y] = fisher_greater(x, n, y, big_b)
    return table


def _binomial_rows(size: int, rates: Any) -> Any:
    """``P(X = x)`` for ``X ~ Binomial(size, rate)``, one row per rate, one column per ``x``."""
    import numpy as np

    counts = np.arange(size + 1)
    coefficients = np.array([float(comb(size, x)) for x in range(size + 1)])
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = (np.outer(np.log(rates), counts) + np.outer(np.log1p(-rates), size - counts))
    return coefficients * np.exp(logs)


@lru_cache(maxsize=4096)
def boschloo_greater(k: int, n: int, b: int, big_b: int) -> float:
    """Boschloo's exact one-sided p-value that the removed arm's flip rate exceeds the baseline's.

    ``k`` of ``n`` reruns flipped with the piece removed; ``b`` of ``big_b`` baseline reruns flipped.
    ``1.0`` when either arm is empty or the removed arm flipped no more often than the baseline.
    """
    if n == 0 or big_b == 0 or k == 0 or k * big_b <= b * n:
        return 1.0
    import numpy as np

    table = _fisher_table(n, big_b)
    extreme = table <= table[k, b] * (1 + _TIE)

    def tail(rates: Any) -> Any:
        removed = _binomial_rows(n, rates)
        baseline = _binomial_rows(big_b, rates)
        return np.einsum("rx,xy,ry->r", removed, extreme.astype(float), baseline)

    grid = (np.arange(_GRID) + 0.5) / _GRID
    values = tail(grid)
    best = int(np.argmax(values))
    low, high = grid[max(best - 1, 0)], grid[min(best + 1, _GRID - 1)]
    for _ in range(30):  # golden-section search inside the bracket around the grid's best point
        inner = np.array([low + 0.382 * (high - low), low + 0.618 * (high - low)])
        left, right = tail(inner)
        low, high = (inner[0], high) if left < right else (low, inner[1])
    refined = float(tail(np.array([(low + high) / 2]))[0])
    return min(1.0, max(float(values[best]), refined))


#: Tables weighed by :func:`attained_level`; a larger test keeps its whole level (its p-values are fine-grained).
_ATTAINED_TABLES = 400


@lru_cache(maxsize=64)
def _attainable(n: int, big_b: int) -> tuple[float, ...]:
    """Every p-value :func:`boschloo_greater` can give with these sample sizes, smallest first."""
    return tuple(sorted({boschloo_greater(k, n, b, big_b) for k in range(n + 1) for b in range(big_b + 1)}))


def attained_level(n: int, big_b: int, level: float) -> float:
    """The largest p-value at most ``level`` that a test of these sizes can give (0 when none can).

    Rejecting at ``p <= attained_level(...)`` rejects exactly the tables ``p <= level`` does, so the
    difference is a share of the false-confirmation rate the test could never spend.
    """
    if (n + 1) * (big_b + 1) > _ATTAINED_TABLES:
        return level
    return max((p for p in _attainable(n, big_b) if p <= level), default=0.0)


def rate(flips: int, samples: int) -> float | None:
    """``flips / samples``, or ``None`` when nothing finished."""
    return flips / samples if samples else None
