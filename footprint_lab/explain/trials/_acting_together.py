"""After a group test: the pieces removed in every flip no confirmed piece explains are removed together before any of
them is called "not it".

Defect closed: among thirty pieces or more, ``localize`` screens by a group test (each rerun removes half of the
pieces) and weighs single causes only. Two pieces that each suffice (either note makes the model say YES) flip the
outcome only when both go: the group test's flips pointed at both, each kept the outcome when removed alone, and both
were reported NOT CONFIRMED ("look elsewhere"), the flips that found them dropped.

Rule kept here: on a model whose unchanged reruns never flipped, the pieces removed in every group-test or search
rerun that flipped the outcome with no confirmed piece removed (one such flip is evidence already) are removed
together when they are two to :data:`MOST_TOGETHER`, first on the level kept back for a second round (none of alpha
beyond it). Up to :data:`MOST_SHARED` of them are first narrowed to a smallest set whose removal still flips the
outcome (delta debugging, on screening reruns), each piece of it then removed alone :data:`REMOVED_ALONE` times, so
neither a piece that happened to be removed in every flip nor a companion of a cause that flips the outcome only now
and then rides along (one piece that flips it alone is confirmed as one). A set confirmed so is reported as acting
together; otherwise none of its pieces is not confirmed: each is undecided, its reason naming the others and
``bisect_culprits`` (of a bigger set, each piece tested alone).

Role: explain layer, one step of :func:`~footprint_lab.explain.trials.trial.decide`'s group-test path.
"""

from __future__ import annotations

from collections.abc import Sequence

from footprint_lab.explain.trials._confirmation import _Confirmation
from footprint_lab.explain.trials._look_plan import look_plan
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
    settled = True
    if 2 <= len(inside) <= MOST_SHARED and level > 0:
        inside, settled = await _smallest(inside, confirmation, level)
    if len(inside) == 1:  # one piece alone flips it: a cause the group test hid, confirmed (or not) as one
        verdict = verdicts[inside[0].key]
        return level if verdict.tested else await confirmation.run([inside[0]], level)
    together = joined(inside)
    if settled and 2 <= len(inside) <= MOST_TOGETHER and level > 0 and together.key not in verdicts:
        verdicts[together.key] = ArmVerdict(together)
        # its members follow at weight 0, on the level a confirmed set hands them: one confirmed alone explains the set,
        # which is then not called acting together (a weak cause the narrowing could not tell from its companion)
        members = [arm for arm in inside if not verdicts[arm.key].tested]
        level = await confirmation.run([together, *members], level, [1.0] + [0.0] * len(members))
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


#: the most pieces the flips may share for a search of the smallest set among them (each rerun halves what is left)
MOST_SHARED = 32
#: seeds of the reruns that look for the smallest set (after the screening's and the search's)
SHRINK_SEED = 1900
#: how many times each piece of a smallest set is removed alone (a weak cause flips the outcome only now and then)
REMOVED_ALONE = 3


async def _smallest(inside: list[Arm], confirmation: _Confirmation, level: float) -> tuple[list[Arm], bool]:
    """A smallest set of ``inside`` whose removal still flips the outcome (delta debugging: remove a part, or all but
    a part, keep what still flips), one screening rerun a try, none of alpha (the set is confirmed on fresh reruns
    after), while the budget leaves the confirmation its looks; and whether it got to the end (a set the budget cut
    short may hold a piece the flip does not need: it is not confirmed as acting together)."""
    spend = confirmation.spend
    size, base, _ = look_plan(confirmation.samples, level)[0]
    reserve = 2 * size + max(base - len(confirmation.baseline), 0)
    tried = 0

    async def flips(part: list[Arm]) -> bool | None:
        nonlocal tried
        if spend.left() - 1 < reserve:
            return None
        (outcome,) = await spend([(joined(part), SHRINK_SEED + tried)])
        tried += 1
        return outcome.error is None and outcome.flipped

    current, chunks = inside, 2
    if len(inside) > 2:  # (a pair's flips already removed both; only its pieces alone are left to try)
        first = await flips(inside)
        if not first:
            return inside, first is not None
    while len(current) > 2:
        reduced = False
        for part in [current[k::chunks] for k in range(chunks)]:
            rest = [arm for arm in current if arm not in part]
            for smaller in (part, rest) if chunks > 2 else (part,):
                if not smaller:
                    continue
                answer = await flips(smaller)
                if answer is None:
                    return current, False
                if answer:
                    current, chunks, reduced = smaller, 2, True
                    break
            if reduced:
                break
        if not reduced:
            if chunks >= len(current):
                break
            chunks = min(2 * chunks, len(current))
    # a piece whose removal flips only now and then (a weak cause) can look needed beside a companion: each piece of
    # the set is removed alone a few times before the set is taken to act only together
    for arm in current:
        for _ in range(REMOVED_ALONE):
            answer = await flips([arm])
            if answer is None:  # the narrowing ended; only these extra looks found no room
                return current, True
            if answer:
                return [arm], True
    return current, True
