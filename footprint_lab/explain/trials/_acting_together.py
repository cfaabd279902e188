"""After a group test: the candidates that each kept the outcome alone, while the reruns that removed them together
flipped it, are removed together before any of them is called "not it".

Defect closed: among thirty pieces or more, ``localize`` screens by a group test (each rerun removes half of the
pieces) and weighs single causes only. Two pieces that each suffice (either note makes the model say YES) flip the
outcome only when both go: the group test's flips pointed at both, each kept the outcome when removed alone, and both
were reported NOT CONFIRMED ("look elsewhere"), the flips that found them dropped.

Rule kept here: on a model whose unchanged reruns never flipped, when two or more group-test reruns flipped the outcome
and no confirmed piece was removed in them, the candidates removed in every one of them that were tested alone and
not confirmed are removed together, on the level the rounds left (none of alpha beyond it). A set confirmed so is
reported as acting together; otherwise each of them is undecided, its reason naming the others and
``bisect_culprits``, never not confirmed.

Role: explain layer, one step of :func:`~footprint_lab.explain.trials.trial.run_trial`'s group-test path.
"""

from __future__ import annotations

from collections.abc import Sequence

from footprint_lab.explain.trials._confirmation import _Confirmation
from footprint_lab.explain.trials.arms import Arm, ArmVerdict, joined
from footprint_lab.explain.trials.rerun import Outcome


async def left_together(arms: list[Arm], verdicts: dict[str, ArmVerdict], confirmation: _Confirmation,
                        joint: Sequence[Outcome], level: float) -> float:
    """Remove together the candidates the unexplained group-test flips all point at (see the module); returns the
    level left for what follows."""
    confirmed = {name for verdict in verdicts.values() if verdict.verdict == "confirmed"
                 for name in (*verdict.arm.exclude, *verdict.arm.force)}
    flips = [o for o in joint if o.error is None and o.flipped and not confirmed & set(o.changed)]
    doubted = [arm for arm in arms if verdicts[arm.key].tested and verdicts[arm.key].verdict == "not_confirmed"
               and all(set(arm.exclude) <= set(o.changed) for o in flips)]
    if len(flips) < 2 or len(doubted) < 2:
        return level
    together = joined(doubted)
    if level > 0 and together.key not in verdicts:
        verdicts[together.key] = ArmVerdict(together)
        level = await confirmation.run([together], level)
        if verdicts[together.key].verdict == "confirmed":
            return level
    for arm in doubted:
        others = ", ".join(f"'{other.key}'" for other in doubted if other is not arm)
        verdicts[arm.key].verdict = "undecided"
        verdicts[arm.key].reason = (
            f"kept the outcome when removed alone, yet the {len(flips)} group-test reruns that flipped it all removed "
            f"it with {others}, and no confirmed piece explains them: it may act only together with them "
            "(bisect_culprits(run, rerun=...) tests sets)")
    return level
