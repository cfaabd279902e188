"""The looks of a confirmation: how many reruns each takes and what share of the level it may spend.

Rule kept here: every look's sizes and level are fixed before it runs, from counts alone (the
budget left, the reruns already run), never from what its reruns show, and the levels of one
candidate's looks add up to at most the candidate's level. So each look's exact test holds its
level, and the looks together hold the candidate's.

Look ``j`` (1, 2, 3) runs ``samples * 2**(j-1)`` reruns of the candidate beside a baseline of
``samples`` unchanged reruns at the first look and half again the candidate's after (it serves
every candidate). Its level is its share of the candidate's (``LOOK_SHARES``) plus what earlier
looks could not spend: a test of few reruns can give only a few p-values (three against three:
1/64, then 0.11), so a share above the smallest it can reach is no use to it and passes on
(:func:`~footprint_lab.explain.trials._stats.attained_level`). A look the budget cannot pay in full runs
every rerun that is left, split as planned, and spends the rest of the candidate's level: it is
the last.

Role: explain layer, pure arithmetic (the confirmation in :mod:`~footprint_lab.explain.trials.trial` runs the looks).
"""

from __future__ import annotations

from footprint_lab.explain.trials._stats import attained_level, boschloo_greater

#: How the looks of the confirmation share a candidate's level.
LOOK_SHARES = (0.65, 0.2, 0.15)


def hopeless_trend(flips: int, finished: int, noise: tuple[int, int], samples: int, look: int,
                    next_level: float) -> bool:
    """Whether, at the rates seen so far, the next look would still fall far short of its level (futility).

    Stopping early never adds a false confirmation; this only spares reruns on a candidate whose flips,
    kept at their present rate over the next look's size, would leave the test twenty times its level.
    """
    size, base = samples * 2 ** look, baseline_size(samples, look + 1)
    projected = round(flips / finished * size)
    projected_noise = round(noise[0] / noise[1] * base)
    return boschloo_greater(projected, size, projected_noise, base) > 20 * next_level


def look_plan(samples: int, level: float) -> list[tuple[int, int, float]]:
    """``(arm reruns, baseline reruns, level)`` of each look: its share of ``level`` and what the tests of earlier
    looks could not spend (a test of few reruns has few p-values, see attained_level); the last spends the rest."""
    plan: list[tuple[int, int, float]] = []
    carried = 0.0
    for look, share in enumerate(LOOK_SHARES, 1):
        size, base = samples * 2 ** (look - 1), baseline_size(samples, look)
        allotted = level * share + carried
        spent = allotted if look == len(LOOK_SHARES) else attained_level(size, base, allotted)
        carried = allotted - spent
        plan.append((size, base, spent))
    return plan


def baseline_size(samples: int, look: int) -> int:
    """Baseline reruns at a look: ``samples`` at the first, then half again the arm's (it serves every arm)."""
    size = samples << (look - 1)
    return size if look == 1 else size * 3 // 2


def afforded(size: int, base: int, done: int, based: int, left: int) -> tuple[int, int, bool]:
    """A look's sizes within the budget ``left``: as planned, or, when it cannot pay them, every rerun left split
    between the arm and the baseline as the plan would (then it is the last look). Fixed before the look runs,
    from counts alone, so its test stays exact."""
    more, more_base = size - done, max(base - based, 0)
    if more + more_base <= left:
        return size, base, False
    if left < 2:
        return done, based, True  # fewer than two reruns left make no look
    arm_part = min(more, max(1, round(left * more / (more + more_base))))
    return done + arm_part, base if not more_base else based + left - arm_part, True
