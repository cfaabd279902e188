"""How many reruns a trial plans for: the screening's, and the default budget when none is given.

Rule kept here: testing every piece never starves the proof. The default budget pays the search and
the confirmation (:data:`BUDGET_PER_SAMPLE` reruns for each of ``samples``), and the screening's own
reruns on top: two unchanged reruns and one without each piece, or a group test's when there are too
many pieces to remove each alone (:func:`screened_singly`).

Role: explain layer, pure arithmetic for :mod:`~footprint_lab.explain.trials.trial` and the explanations
that rerun.
"""

from __future__ import annotations

import math

#: Unchanged reruns the screening starts with (do they flip at all?).
SCREEN_BASELINE = 2
#: The default budget, in reruns, for each rerun a side of the first look.
BUDGET_PER_SAMPLE = 16
#: Reruns a group test's budget adds for narrowing the flips no single piece explains (``trials._acting_together``).
GROUP_FOLLOW_UP = 8


def group_size(arms: int) -> int:
    """The reruns of a group test of ``arms`` arms (see ``trial._screen_jointly``)."""
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
    return base + (SCREEN_BASELINE + arms if screened_singly(arms, base) else group_size(arms) + GROUP_FOLLOW_UP)
