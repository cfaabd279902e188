"""Proof by ablation: remove a suspect, rerun the same input, and see whether the outcome flips.

Rule kept here: a suspect is called a cause only when removing it flips the outcome in most
of several reruns while the unchanged agent keeps giving the original outcome. ``localize``

1. probes the baseline: ``samples`` reruns with nothing removed (is the outcome stable?);
2. takes the top suspects of the ranking that a rerun can remove (at most ``top``);
3. reruns each ``samples`` times without it, seeded ``0..samples-1`` like the baseline, all
   concurrently;
4. judges each rerun against the original answer with the comparator, and gives a verdict:

   - ``confirmed``: most reruns flipped (more than half of the ``samples``, so at least 2),
     over at least 2 reruns, on a stable baseline;
   - ``inconclusive``: the baseline is unstable, or some reruns flipped but not most (a minority,
     or exactly half);
   - ``not_confirmed``: otherwise (nothing flipped, a single rerun, or every rerun failed).

A rerun that fails is no flip: it is reported with its error type and still counts among the
``samples`` a majority is taken over, so failures never help confirm a suspect. The baseline is
stable only when every one of its reruns finished with the original outcome.
``rerun_without`` is the single-shot form: one rerun without named sources, and what changed.

Role: explain layer; it reruns whatever runner it is handed (see :mod:`footprint_lab.explain.rerun`).
Refusal raised here: :class:`NothingToLocalizeError`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from footprint_lab.engine.refusal import Refusal
from footprint_lab.explain.checks import id_list, recording_of, whole_number
from footprint_lab.explain.custody import backtrack
from footprint_lab.explain.influence import suspects as rank_suspects
from footprint_lab.explain.members import Source
from footprint_lab.explain.render import display_bundle, shorten
from footprint_lab.explain.rerun import (
    Outcome,
    Progress,
    Rerunner,
    TextDifference,
    check_comparator,
    check_removable,
    not_removable_reason,
    run_all,
)
from footprint_lab.explain.sources import describe_source

if TYPE_CHECKING:
    import pandas as pd

    from footprint_lab.engine.recording import Recording

VERDICT_LABELS = {"confirmed": "CAUSAL", "inconclusive": "INCONCLUSIVE", "not_confirmed": "NOT CONFIRMED"}


class NothingToLocalizeError(Refusal):
    """Raised by ``localize`` / ``rerun_without`` on a run with no LLM call or no answer to compare reruns with.

    Carries ``reason`` (``no_llm_call`` or ``no_answer``) and ``status`` (the run's status).
    """

    code = "ERR_NOTHING_TO_LOCALIZE"
    fields = ("reason", "status")

    def __init__(self, function: str, reason: str, status: str) -> None:
        if reason == "no_llm_call":
            why = ("made no LLM call, so no context reached a model and there is nothing to remove. Localize a run "
                   "that called a model; run.steps shows whether it did")
        else:
            why = (f"has no answer to compare reruns with (its status is {status}). Localize a finished run; "
                   "for a failed one, backtrack(at='call-llm#N') shows what its calls were sent")
        super().__init__(f"{function}: this run {why}.")
        self.reason = reason
        self.status = status


def original_answer(function: str, recording: Recording) -> str:
    if not recording.exchanges and not any(child.exchanges for child in recording.children):
        raise NothingToLocalizeError(function, "no_llm_call", recording.status)
    if recording.answer is None:
        raise NothingToLocalizeError(function, "no_answer", recording.status)
    return recording.answer


@dataclass(slots=True)
class LocalizedSuspect:
    """One suspect's ablation: removed ``samples`` times; ``flips`` of those reruns changed the outcome."""

    rank: int
    source_id: str
    source_kind: str
    score: float
    verdict: str
    flips: int
    samples: int
    reason: str
    outcomes: list[Outcome] = field(default_factory=list)
    #: in a composed run: the member's path (empty for the run itself) and the name its runner was given
    member: str = ""
    member_name: str | None = None

    @property
    def where(self) -> str:
        """`` in member 'triage' (agent 'triage')``, or nothing for a source of the run itself."""
        if not self.member:
            return ""
        named = self.member_name and self.member_name != self.member.rpartition("/")[2]
        return f" in member '{self.member}'" + (f" ('{self.member_name}')" if named else "")

    @property
    def failed(self) -> int:
        return sum(1 for o in self.outcomes if o.error is not None)

    def line(self) -> str:
        label = VERDICT_LABELS[self.verdict]
        return (f"{label}: removing '{self.source_id}'{self.where} flipped the outcome in {self.flips}/{self.samples} "
                "reruns") + (
            f" ({self.reason})" if self.verdict != "confirmed" else "")


@dataclass(slots=True)
class Localization:
    """The verdict on each tested suspect, in rank order, with the baseline they were judged against."""

    original: str
    baseline_stable: bool
    baseline: list[Outcome]
    suspects: list[LocalizedSuspect]
    untested: list[tuple[str, str]]
    comparator: str

    @property
    def confirmed(self) -> list[str]:
        """The ids of the suspects whose removal flipped the outcome (verdict ``confirmed``)."""
        return [s.source_id for s in self.suspects if s.verdict == "confirmed"]

    def verdict(self, source_id: str) -> str | None:
        """The verdict on one tested source, or ``None`` when it was not tested."""
        return next((s.verdict for s in self.suspects if s.source_id == source_id), None)

    def summary(self) -> str:
        held = sum(1 for o in self.baseline if o.error is None and not o.flipped)
        state = "stable" if self.baseline_stable else "UNSTABLE"
        return (f"Localization of \"{shorten(self.original, 60)}\": baseline {state} ({held}/{len(self.baseline)} "
                f"unchanged reruns gave the original outcome); {len(self.confirmed)} of {len(self.suspects)} "
                f"suspects confirmed; comparator {self.comparator}.")

    @property
    def nothing_alone(self) -> bool:
        """``True`` when, on a stable baseline, no tested suspect flipped the outcome in any rerun.

        Causes can still act together (two redundant facts, each enough to keep the outcome):
        :func:`~footprint_lab.explain.bisect_culprits` searches for sets whose joint removal flips it.
        """
        return self.baseline_stable and bool(self.suspects) and not any(s.flips for s in self.suspects)

    def __str__(self) -> str:
        lines = [self.summary(), *(s.line() for s in self.suspects)]
        lines += [f"not tested: '{name}' ({why})" for name, why in self.untested]
        if self.nothing_alone:
            lines.append("No suspect flipped the outcome alone; causes may act only together: "
                         "bisect_culprits(run, rerun=...) searches for sets whose joint removal flips it.")
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """One row per tested suspect: rank, source, verdict, flips, samples, failed reruns, score, reason, member."""
        import pandas as pd

        columns = ["rank", "source_id", "source_kind", "verdict", "flips", "samples", "failed", "score", "reason",
                   "member", "member_name"]
        rows = [{"rank": s.rank, "source_id": s.source_id, "source_kind": s.source_kind, "verdict": s.verdict,
                 "flips": s.flips, "samples": s.samples, "failed": s.failed, "score": s.score, "reason": s.reason,
                 "member": s.member, "member_name": s.member_name}
                for s in self.suspects]
        return pd.DataFrame(rows, columns=columns)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return display_bundle("localization", self, self.summary(), str(self), include, exclude)


def judge(flips: int, samples: int, failed: int, baseline_stable: bool) -> tuple[str, str]:
    """The verdict and its reason for ``flips`` out of ``samples`` reruns, ``failed`` of which did not finish.

    A majority is counted over every rerun asked for: a failed rerun is no flip, so failures
    can keep a suspect from being confirmed, never make it so.
    """
    failures = f"; {failed} rerun(s) failed" if failed else ""
    if not baseline_stable:
        return "inconclusive", "the baseline is unstable, so a flip cannot be told from noise" + failures
    if samples < 2:
        if flips:
            return "not_confirmed", "a single rerun cannot confirm; use samples=2 or more" + failures
        return "not_confirmed", ("the rerun failed" if failed else "the rerun did not flip") + failures
    if flips * 2 > samples:
        return "confirmed", "most reruns flipped on a stable baseline" + failures
    if flips:
        return "inconclusive", "some reruns flipped, but not most" + failures
    if failed == samples:
        return "not_confirmed", "every rerun failed"
    return "not_confirmed", "no rerun flipped" + failures


async def localize(
    run: Any,
    *,
    rerun: Any,
    samples: int = 3,
    top: int = 5,
    sources: Sequence[str] | None = None,
    strategy: Any = "lexical",
    comparator: Callable[[str, str], bool] | None = None,
    concurrency: int = 16,
    input: Any = None,
    continue_from: Any = None,
    progress: bool | Callable[[int, int], None] | None = None,
) -> Localization:
    """Test the top suspects of a run by removing each and rerunning; see the module docstring for verdicts.

    ``rerun`` is the agent itself (rebuilt without each suspect) or a factory called as
    ``factory(exclude=[...])``. ``sources`` tests exactly these removal ids instead of the
    ranking's top. ``input`` replaces the recorded message (needed when it was redacted);
    ``continue_from`` is the checkpoint a follow-up run continued (needed for one).
    ``progress`` shows a bar in a notebook (``None``: only inside a kernel), or is a function ``(done, total)``.
    """
    recording = recording_of(run, "localize")
    original = original_answer("localize", recording)
    whole_number("localize", "samples", samples, 1, 1000)
    whole_number("localize", "top", top, 1, 1000)
    whole_number("localize", "concurrency", concurrency, 1, 10_000)
    compare = check_comparator("localize", comparator)
    rerunner = Rerunner("localize", rerun, recording, input, continue_from)
    chosen, untested = choose_suspects(recording, run, sources, strategy, top)
    bar = Progress(samples * (len(chosen) + 1), "reruns", progress)
    groups = await rerun_groups(rerunner, [[], *([name] for _, name, _, _ in chosen)], range(samples), compare,
                                original, concurrency=concurrency, bar=bar)
    bar.close()
    baseline = groups[0]
    stable = all(o.error is None and not o.flipped for o in baseline)
    tested = []
    for (rank, name, source, score), group in zip(chosen, groups[1:], strict=True):
        failed = sum(1 for o in group if o.error is not None)
        flips = sum(1 for o in group if o.flipped)
        verdict, reason = judge(flips, len(group), failed, stable)
        tested.append(LocalizedSuspect(rank, name, source.kind, score, verdict, flips, len(group), reason, group,
                                       source.member, source.member_name))
    return Localization(original, stable, baseline, tested, untested, repr(compare))


async def rerun_groups(rerunner: Rerunner, groups: Sequence[Sequence[str]], seeds: Sequence[int],
                       compare: Callable[[str, str], bool], original: str, *, concurrency: int,
                       bar: Progress | None = None) -> list[list[Outcome]]:
    """Rerun once per seed without each group of sources, all concurrently.

    Every runner is built before the first rerun starts, so a bad factory is refused before
    anything is billed. Each outcome is judged against ``original``; the result holds one list
    of outcomes per group, in order.
    """
    seeds = list(seeds)
    samples = len(seeds)
    runners = [rerunner.build(exclude=list(group), seed=seed) for group in groups for seed in seeds]
    jobs = [functools.partial(rerunner.run, runner, seeds[k % samples]) for k, runner in enumerate(runners)]
    outcomes = await run_all(jobs, concurrency=concurrency, on_done=bar.step if bar is not None else None)
    for outcome in outcomes:
        outcome.flipped = outcome.answer is not None and bool(compare(original, outcome.answer))
    return [outcomes[samples * n: samples * (n + 1)] for n in range(len(groups))]


def choose_suspects(recording: Recording, run: Any, sources: Sequence[str] | None, strategy: Any,
                    top: int) -> tuple[list[tuple[int, str, Source, float]], list[tuple[str, str]]]:
    """``(rank, removal id, source, score)`` of each suspect to test, and the higher-ranked ones no rerun can remove."""
    if sources is not None:
        named = id_list("localize", "sources", sources)
        known = check_removable("localize", recording, named)
        return [(position, name, known[name], 0.0) for position, name in enumerate(named, 1)], []
    known = check_removable("localize", recording, [])
    frame = rank_suspects(run, strategy=strategy)
    chosen: list[tuple[int, str, Source, float]] = []
    untested: list[tuple[str, str]] = []
    seen: set[str] = set()
    for row in frame.to_dict("records"):
        if len(chosen) >= top:
            break
        name = row["removal_id"]
        if not isinstance(name, str):
            if row["source_kind"] != "decision":
                untested.append((str(row["source_id"]), not_removable_reason(str(row["source_kind"]))))
            continue
        if name in seen:
            continue
        seen.add(name)
        source = known.get(name) or Source(str(row["source_kind"]), [])
        chosen.append((int(row["rank"]), name, source, float(row["score"])))
    return chosen, untested


@dataclass(slots=True)
class RerunReport:
    """What changed when the same input was run again without some sources."""

    removed: list[str]
    before: str
    after: str | None
    changed: bool
    error: str | None
    run: Any
    gone: list[str]
    appeared: list[str]
    difference: float | None

    def summary(self) -> str:
        names = ", ".join(f"'{n}'" for n in self.removed)
        if self.error is not None:
            return f"Rerun without {names}: the rerun failed ({self.error})."
        measured = f" (text difference {self.difference:.2f})" if self.difference is not None else ""
        state = "changed" if self.changed else "did not change"
        return f"Rerun without {names}: the outcome {state}{measured}."

    def __str__(self) -> str:
        lines = [self.summary(), f"  before: \"{shorten(self.before)}\""]
        if self.after is not None:
            lines.append(f"  after:  \"{shorten(self.after)}\"")
        lines.append(f"  no longer sent: {', '.join(self.gone) or 'nothing'}")
        lines.append(f"  newly sent:     {', '.join(self.appeared) or 'nothing'}")
        lines.append("One rerun is an observation, not a proof: localize() repeats it against a baseline.")
        return "\n".join(lines)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return display_bundle("rerun_report", self, self.summary(), str(self), include, exclude)


async def rerun_without(
    run: Any,
    ignore: Sequence[str] | str,
    *,
    rerun: Any,
    comparator: Callable[[str, str], bool] | None = None,
    input: Any = None,
    continue_from: Any = None,
) -> RerunReport:
    """Run the same input again without the named sources, and report what changed.

    ``ignore`` names sources by their removal id (``run.suspects()`` shows it): declaration
    ids, tool names, ``system-prompt``. ``rerun``, ``input`` and ``continue_from`` are as for
    ``localize``.
    """
    recording = recording_of(run, "rerun_without")
    names = id_list("rerun_without", "ignore", ignore)
    check_removable("rerun_without", recording, names)
    original = original_answer("rerun_without", recording)
    compare = check_comparator("rerun_without", comparator)
    rerunner = Rerunner("rerun_without", rerun, recording, input, continue_from)
    runner = rerunner.build(exclude=names, seed=0)
    outcome = await rerunner.run(runner, 0, keep_run=True)
    if outcome.answer is None:
        return RerunReport(names, original, None, False, outcome.error, None, [], [], None)
    before = _sent_sources(recording)
    after = _sent_sources(outcome.run.recording) if outcome.run is not None else []
    difference = TextDifference.difference(original, outcome.answer) if isinstance(compare, TextDifference) else None
    return RerunReport(
        names, original, outcome.answer, bool(compare(original, outcome.answer)), None, outcome.run,
        [s for s in before if s not in after], [s for s in after if s not in before], difference,
    )


def _sent_sources(recording: Recording) -> list[str]:
    """The sources that reached the answer (members' included), as ``kind 'id'``, in the order they were sent."""
    return list(dict.fromkeys(
        describe_source(c.piece) + (f" of member '{c.member.path}'" if c.member.path else "")
        for c in backtrack(recording).candidates))
