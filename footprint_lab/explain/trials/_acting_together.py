"""After a group test: the pieces removed in every flip no confirmed piece explains are removed together before any of
them is called "not it".

Defect closed: among thirty pieces or more, ``localize`` screens by a group test (each rerun removes half of the
pieces) and weighs single causes only. Two pieces that each suffice (either note makes the model say YES) flip the
outcome only when both go: the group test's flips pointed at both, each kept the outcome when removed alone, and both
were reported NOT CONFIRMED ("look elsewhere"), the flips that found them dropped.

Rule kept here: on a model whose unchanged reruns never flipped, the pieces removed in every group-test or search
rerun that flipped the outcome with no confirmed piece removed (one such flip is evidence already) are removed
together when they are two to :data:`MOST_TOGETHER`, first on the level kept back for a second round (none of alpha
beyond it), a piece of three or four first left in once to see the flip needs it. A set confirmed so is reported as
acting together; otherwise none of its pieces is not confirmed: each
is undecided, its reason naming the others and ``bisect_culprits`` (of a bigger set, each piece tested alone).

Role: explain layer, one step of :func:`~footprint_lab.explain.trials.trial.decide`'s group-test path.
"""

from __future__ import annotations

from collections.abc import Sequence

from footprint_lab.explain.trials._confirmation import _Confirmation
from footprint_lab.explain.trials.arms import Arm, ArmVerdict, joined
from footprint_lab.explain.trials.rerun import Outcome

#: the most pieces a set removed together may hold (more: too few flips to tell which pieces act)
MOST_TOGETHER = 4


async def left_together(arms: list[Arm], verdicts: dict[str, ArmVerdict], confirmation: _Confirmation,
                        joint: Sequence[Outcome], level: float) -> float:
    """Remove together the pieces every unexplained flip removed (see the module); returns the level left for what
    follows. Unless that set is confirmed, none of its pieces is called not confirmed: each is undecided."""
    confirmed = {name for verdict in verdicts.values() if verdict.verdict == "confirmed"
                 for name in (*verdict.arm.exclude, *verdict.arm.force)}
    flips = [o for o in joint if o.error is None and o.flipped and not confirmed & set(o.changed)]
    if not flips:
        return level
    common = set.intersection(*(set(o.changed) for o in flips))  # on a quiet model, one flip is evidence already
    inside = [arm for arm in arms if arm.exclude and set(arm.exclude) <= common]
    if 3 <= len(inside) <= MOST_TOGETHER:
        inside = await _needed(inside, confirmation)
    together = joined(inside)
    if 2 <= len(inside) <= MOST_TOGETHER and level > 0 and together.key not in verdicts:
        verdicts[together.key] = ArmVerdict(together)
        level = await confirmation.run([together], level)
    if together.key in verdicts and verdicts[together.key].verdict == "confirmed":
        return level
    # in a set too big to test, only a piece tested alone is cleared of "not confirmed" (one set aside by the group
    # test already says it was never removed alone, and a noise flip would otherwise leave half the pieces undecided)
    cleared = [arm for arm in inside if verdicts[arm.key].verdict == "not_confirmed"
               and (len(inside) <= MOST_TOGETHER or verdicts[arm.key].tested)] if len(inside) >= 2 else []
    for arm in cleared:
        verdict = verdicts[arm.key]
        alone = "kept the outcome when removed alone, yet" if verdict.tested else "was never removed alone, and"
        with_whom = f"{len(inside) - 1} other pieces" if len(inside) > MOST_TOGETHER else ", ".join(
            f"'{other.key}'" for other in inside if other is not arm)
        verdict.verdict = "undecided"
        verdict.reason = (f"{alone} the {len(flips)} rerun(s) that removed pieces together and flipped the outcome all "
                          f"removed it with {with_whom}, and no confirmed piece explains them: it may act only "
                          "together with some of them (bisect_culprits(run, rerun=...) finds such sets)")
    return level


#: seeds of the reruns that tell which pieces of a set are needed (after the screening's and the search's)
SHRINK_SEED = 1900


async def _needed(inside: list[Arm], confirmation: _Confirmation) -> list[Arm]:
    """The pieces of ``inside`` the flip needs: each is left in once, the others removed, on a rerun of its own (no
    part of alpha: the set is confirmed on fresh reruns after); one whose absence the flip does not need (the others
    removed, the outcome still flipped) happened to be removed in every flip and goes."""
    spend = confirmation.spend
    if spend.left() < len(inside) + 2 * confirmation.samples:
        return inside
    jobs: list[tuple[Arm | None, int]] = [(joined([other for other in inside if other is not arm]), SHRINK_SEED + k)
                                          for k, arm in enumerate(inside)]
    outcomes = await spend(jobs)
    needed = [arm for arm, outcome in zip(inside, outcomes, strict=True) if outcome.error is not None
              or not outcome.flipped]
    return needed if len(needed) >= 2 else inside
