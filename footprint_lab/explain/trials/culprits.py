"""Causes that only act together: the smallest sets of suspects whose joint removal flips the outcome.

Rule kept here: when no single removal flips an answer (two redundant facts, each enough to
approve), ``bisect_culprits`` searches the suspects for minimal sets whose removal together
does, within a bounded number of reruns that it reports, and then proves each set it found
the way ``localize`` proves a suspect. The search:

1. probes the baseline (``samples`` unchanged reruns); when half of them or more already change the
   outcome, a probe's majority cannot be told from noise and the search ends;
2. removes every suspect at once; if that does not flip the outcome, no set of them can;
3. shrinks the removal set by delta debugging: tries putting back halves, then quarters, down
   to single suspects, keeping any chunk whose return still leaves the outcome flipped. What
   remains is 1-minimal: putting back any one of its suspects keeps the original outcome;
4. looks for other minimal sets: for each member of a set found, starts again from all the
   suspects but that one.

A probe flips when most of its ``samples`` reruns do (the reruns that decide the majority run
first). The search only chooses: each set found is then confirmed on fresh reruns against a
fresh baseline by Boschloo's exact test, at false-confirmation rate ``alpha`` shared over the
sets by Wiens' fallback procedure (see :mod:`~footprint_lab.explain.trials.trial`), and carries that
verdict, its flips, the noise and the p-value. A probe that would pass the budget (less what one confirmation
needs) is not started: the result says the search was cut short, and a set not yet shrunk to
1-minimal is reported as such.

Role: explain layer; it reruns through :mod:`footprint_lab.explain.trials.trial`'s machinery.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Unpack

from footprint_lab.base.progress import INTERRUPTS
from footprint_lab.explain.arguments import ExplainConfigError, recording_of, whole_number
from footprint_lab.explain.render import display_bundle, shorten
from footprint_lab.explain.trials._arm_fields import ArmFields
from footprint_lab.explain.trials._localization import untested_count, untested_lines
from footprint_lab.explain.trials._rerun_pool import Draws
from footprint_lab.explain.trials._stopping import Guarded, Partial, partial_line, run_trial, stopped
from footprint_lab.explain.trials.ablation import choose_suspects, original_answer
from footprint_lab.explain.trials.arms import VERDICT_LABELS, Arm, ArmVerdict, TrialResult, tally
from footprint_lab.explain.trials.rerun import Outcome, Progress, Rerunner, check_comparator
from footprint_lab.explain.trials.settings import Trials, TrialSettings, settings_for
from footprint_lab.explain.trials.trial import SCREEN_SEED

if TYPE_CHECKING:
    import pandas as pd

    from footprint_lab.core.conversation import CheckpointInput
    from footprint_lab.core.door import RunInput
    from footprint_lab.explain.arguments import RunLike
    from footprint_lab.explain.provenance.influence import InfluenceStrategy
    from footprint_lab.explain.trials.rerun import Rerun


@dataclass(slots=True)
class CulpritSet(ArmFields):
    """Suspects whose joint removal flipped the outcome in the search, and what its confirmation said."""

    sources: tuple[str, ...]
    minimal: bool
    trial: ArmVerdict

    def line(self) -> str:
        names = " + ".join(f"'{n}'" for n in self.sources)
        shape = "minimal" if self.minimal else "NOT shrunk to minimal (budget spent)"
        return f"CULPRITS {names} ({shape}): {VERDICT_LABELS[self.verdict]}: removing them together {self.trial.reason}"


@dataclass(slots=True)
class Probe:
    """One test of the search: the sources removed together, and how many reruns flipped."""

    removed: tuple[str, ...]
    flips: int
    samples: int
    flipped: bool


@dataclass(slots=True)
class Culprits(Partial):
    """The minimal sets found and confirmed, the probes that found them, and the reruns spent."""

    original: str
    baseline: list[Outcome]
    suspects: list[str]
    untested: list[tuple[str, str]]
    culprits: list[CulpritSet]
    probes: list[Probe]
    reruns: int
    budget: int
    exhausted: bool
    note: str
    alpha: float
    #: the confirmation of the sets found (``None`` when none was found)
    trial: TrialResult | None = None
    #: ``(reruns done, reruns planned)`` when the call was stopped: the search cut there, found sets undecided
    stopped: tuple[int, int] | None = None

    @property
    def noise(self) -> tuple[int, int]:
        """``(flips, finished)`` of the search's unchanged reruns."""
        return tally(self.baseline)

    @property
    def baseline_stable(self) -> bool:
        flips, finished = self.noise
        return finished > 0 and flips == 0

    @property
    def confirmed(self) -> list[tuple[str, ...]]:
        """The sets whose joint removal was shown to flip the outcome."""
        return [c.sources for c in self.culprits if c.verdict == "confirmed"]

    def summary(self) -> str:
        flips, finished = self.noise
        cut = f"; the {'stop' if self.stopped else 'budget'} cut the search short" if self.exhausted else ""
        confirmed = len(self.confirmed)
        return (f"{partial_line(self.stopped)}Culprits of \"{shorten(self.original, 60)}\": {len(self.culprits)} "
                "set(s) found among "
                f"{len(self.suspects)} suspects, {confirmed} confirmed{untested_count(self.untested)}; "
                f"{self.reruns} reruns (budget "
                f"{self.budget}){cut}; noise: {flips}/{finished} unchanged reruns changed the outcome; "
                f"false-confirmation rate at most {self.alpha:.0%}.")

    def __str__(self) -> str:
        lines = [self.summary(), *(c.line() for c in self.culprits)]
        if self.note:
            lines.append(self.note)
        lines += untested_lines(self.untested)
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """One row per probe: the sources removed together, flips, samples, whether it flipped the outcome."""
        from footprint_lab.explain.frame import ShownFrame  # imports pandas

        rows = [{"removed": list(p.removed), "flips": p.flips, "samples": p.samples, "flipped": p.flipped}
                for p in self.probes]
        return ShownFrame(rows, columns=["removed", "flips", "samples", "flipped"])

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return display_bundle("culprits", self, self.summary(), str(self), include, exclude)


class _Search:
    """The probes of one search within the budget; each probe's reruns run concurrently."""

    def __init__(self, draws: Guarded, samples: int, budget: int) -> None:
        self.draws = draws
        self.samples = samples
        self.budget = budget
        self.reruns = 0
        self.exhausted = False
        self.probes: list[Probe] = []
        self.seen: dict[frozenset[str], tuple[bool, list[Outcome]]] = {}

    async def outcomes(self, removed: Sequence[str], seeds: Sequence[int]) -> list[Outcome] | None:
        """The reruns without ``removed`` for these seeds; ``None`` when the budget cannot pay for them."""
        if self.reruns + len(seeds) > self.budget:
            self.exhausted = True
            return None
        self.reruns += len(seeds)
        arm = Arm(" + ".join(removed), tuple(removed)) if removed else None
        outcomes = await self.draws([(arm, SCREEN_SEED + seed) for seed in seeds])
        if self.draws.stopped:  # the call was stopped: the search ends here, as when the budget runs out
            self.reruns -= len(seeds)
            self.exhausted = True
            return None
        return outcomes

    async def flips(self, removed: Sequence[str]) -> bool | None:
        """Whether removing these together flips the outcome; ``None`` when the budget allows no probe.

        The reruns that can decide the majority run first (2 of 3); the rest run only when those
        disagree, so the call is always the one all ``samples`` reruns would give.
        """
        key = frozenset(removed)
        if key in self.seen:
            return self.seen[key][0]
        deciding = self.samples // 2 + 1
        group = await self.outcomes(removed, range(deciding))
        if group is None:
            return None
        flips = sum(1 for o in group if o.flipped)
        if 0 < flips < deciding:
            rest = await self.outcomes(removed, range(deciding, self.samples))
            if rest is None:
                return None
            group += rest
        flips = sum(1 for o in group if o.flipped)
        flipped = flips * 2 > self.samples
        self.seen[key] = (flipped, group)
        self.probes.append(Probe(tuple(removed), flips, len(group), flipped))
        return flipped

    async def shrink(self, removal: list[str]) -> tuple[list[str], bool]:
        """Delta debugging on a removal set known to flip: put chunks back while it still flips.

        One pass per chunk size, halving down to single suspects. When removing more never
        restores the original outcome, the single-suspect pass leaves a 1-minimal set.
        """
        chunk = max(len(removal) // 2, 1)
        while True:
            start = 0
            while start < len(removal) and len(removal) > 1:
                kept = removal[:start] + removal[start + chunk:]
                verdict = await self.flips(kept) if kept else False
                if verdict is None:
                    return removal, False
                if verdict:
                    removal = kept
                else:
                    start += chunk
            if chunk == 1:
                return removal, True
            chunk = max(chunk // 2, 1)


#: bisect_culprits' budget when none is given.
BISECT_BUDGET = 40


async def bisect_culprits(
    run: RunLike,
    *,
    rerun: Rerun | None = None,
    top: int | None = None,
    sources: Sequence[str] | None = None,
    strategy: str | InfluenceStrategy = "lexical",
    input: RunInput = None,
    continue_from: CheckpointInput | None = None,
    trials: Trials | None = None,
    **settings: Unpack[TrialSettings],
) -> Culprits:
    """Search the suspects for minimal sets whose joint removal flips the outcome, then confirm them.

    By default every removable piece that reached the answer is searched (``top`` keeps the
    ranking's first ``top``, ``sources`` names them exactly); what is left out is named.

    ``budget`` caps every rerun, the search's baseline and the confirmation included (40 unless
    given). ``rerun``, ``top``, ``sources``, ``strategy``, ``input``, ``continue_from`` and the trial
    settings (``trials=`` or keywords) are as for ``localize``; ``samples`` is at least 2.
    """
    recording = recording_of(run, "bisect_culprits")
    original = original_answer("bisect_culprits", recording)
    chosen_trials = settings_for("bisect_culprits", trials, settings).for_call("bisect_culprits")
    samples, alpha, concurrency = chosen_trials.samples or 3, chosen_trials.alpha, chosen_trials.concurrency
    budget = chosen_trials.budget if chosen_trials.budget is not None else BISECT_BUDGET
    whole_number("bisect_culprits", "samples", samples, 2, 1000)
    if top is not None:
        whole_number("bisect_culprits", "top", top, 1, 100_000)
    if budget < 4 * samples:
        raise ExplainConfigError("bisect_culprits", "budget", "fewer reruns than a search and its proof need",
                                 f"must allow at least 4 x samples reruns (here {4 * samples}): the baseline, "
                                 "removing every suspect at once, and one confirmation of a set beside its baseline")
    compare = check_comparator("bisect_culprits", chosen_trials.comparator)
    rerunner = Rerunner("bisect_culprits", rerun, recording, input, continue_from, retries=chosen_trials.retries,
                         time_limit=chosen_trials.time_limit, run=run)
    chosen, untested = choose_suspects(recording, run, sources, strategy, top)
    names = [name for _, name, _, _ in chosen]
    bar = Progress(budget, "bisect_culprits", chosen_trials.progress, unit="reruns")
    draws = Draws(rerunner, compare, original, concurrency=concurrency, bar=bar)
    try:
        await draws.prepare([Arm(" + ".join(names), tuple(names))] if names else [])
    except INTERRUPTS:
        raise stopped("bisect_culprits", bar, None) from None
    guarded = Guarded(draws, bar, budget)
    reserve = 2 * samples  # one confirmation look of one set, beside its baseline
    search = _Search(guarded, samples, budget - reserve)
    baseline = await search.outcomes([], range(samples)) or []
    flips, finished = tally(baseline)
    found: list[tuple[list[str], bool]] = []
    note = ""
    if finished and flips * 2 >= finished:
        note = (f"The baseline is unstable: {flips}/{finished} unchanged reruns already changed the outcome, as many "
                "as a probe needs to count as flipped, so no set was searched for. A comparator that reads the "
                "outcome may help (footprint_lab.explain.compare).")
    elif not names:
        note = "No suspect a rerun can remove."
    elif not await search.flips(names):
        widen = " (widen top= or name sources=)" if top is not None or sources is not None else ""
        note = (f"Removing every tested suspect at once did not flip the outcome, so no set of them can{widen}."
                if not search.exhausted else "")
    else:
        starts = [names]
        while starts:
            start = starts.pop(0)
            verdict = True if start is names else await search.flips(start)
            if search.exhausted:
                break
            if not verdict:
                continue
            removal, minimal = await search.shrink(list(start))
            if all(set(sources) != set(removal) for sources, _ in found):
                found.append((removal, minimal))
                # Another minimal set must leave out some member of this one: start from all but that member.
                if minimal and len(names) > 1:
                    starts += [[n for n in names if n != member] for member in removal]
            if search.exhausted:
                break
    trial: TrialResult | None = None
    culprits: list[CulpritSet] = []
    stop = (bar.done, bar.total) if guarded.stopped else None
    if found:
        arms = [Arm(" + ".join(removal), tuple(removal)) for removal, _ in found]
        trial, stop = await run_trial("bisect_culprits", guarded, bar, arms, samples=samples, alpha=alpha,
                                      budget=budget - search.reruns, screen=False)
        culprits = [CulpritSet(tuple(removal), minimal, verdict)
                    for (removal, minimal), verdict in zip(found, trial.arms, strict=True)]
    elif stop is None:
        bar.close()
    spent = search.reruns + (trial.reruns if trial is not None else 0)
    report = Culprits(original, baseline, names, untested, culprits, search.probes, spent, budget,
                      search.exhausted, note, alpha, trial, stop)
    if stop is not None:
        raise stopped("bisect_culprits", bar, report)
    return report
