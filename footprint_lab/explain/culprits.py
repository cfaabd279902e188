"""Causes that only act together: the smallest sets of suspects whose joint removal flips the outcome.

Rule kept here: when no single removal flips an answer (two redundant facts, each enough to
approve), ``bisect_culprits`` searches the suspects for minimal sets whose removal together
does, judged like ``localize`` (most of ``samples`` seeded reruns flip, on a stable baseline)
and within a bounded number of reruns that it reports. The search:

1. probes the baseline (``samples`` reruns, nothing removed); an unstable one ends the search;
2. removes every suspect at once; if that does not flip the outcome, no set of them can;
3. shrinks the removal set by delta debugging: tries putting back halves, then quarters, down
   to single suspects, keeping any chunk whose return still leaves the outcome flipped. What
   remains is 1-minimal: putting back any one of its suspects keeps the original outcome;
4. looks for other minimal sets: for each member of a set found, starts again from all the
   suspects but that one.

Each probe's ``samples`` reruns run concurrently; probes run one after another, since each
depends on the last. A probe that would pass ``budget`` reruns is not started: the result
says the search was cut short, and a set not yet shrunk to 1-minimal is reported as such.

Role: explain layer; it reruns through :mod:`footprint_lab.explain.ablation`'s machinery.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from footprint_lab.explain.ablation import choose_suspects, judge, original_answer, rerun_groups
from footprint_lab.explain.checks import ExplainConfigError, recording_of, whole_number
from footprint_lab.explain.render import mimebundle, shorten
from footprint_lab.explain.rerun import Outcome, Progress, Rerunner, check_comparator

if TYPE_CHECKING:
    import pandas as pd


@dataclass(slots=True)
class CulpritSet:
    """Suspects whose joint removal flipped the outcome in ``flips`` of ``samples`` reruns."""

    sources: tuple[str, ...]
    flips: int
    samples: int
    minimal: bool
    outcomes: list[Outcome] = field(default_factory=list)

    def line(self) -> str:
        names = " + ".join(f"'{n}'" for n in self.sources)
        shape = "minimal" if self.minimal else "NOT shrunk to minimal (budget spent)"
        return f"CULPRITS {names}: removing them together flipped the outcome in {self.flips}/{self.samples} " \
               f"reruns ({shape})"


@dataclass(slots=True)
class Probe:
    """One test of the search: the sources removed together, and how many reruns flipped."""

    removed: tuple[str, ...]
    flips: int
    samples: int
    flipped: bool


@dataclass(slots=True)
class Culprits:
    """The minimal sets found, the probes that found them, and the reruns spent."""

    original: str
    baseline_stable: bool
    baseline: list[Outcome]
    suspects: list[str]
    untested: list[tuple[str, str]]
    culprits: list[CulpritSet]
    probes: list[Probe]
    reruns: int
    budget: int
    exhausted: bool
    note: str

    def summary(self) -> str:
        state = "stable" if self.baseline_stable else "UNSTABLE"
        cut = "; the budget cut the search short" if self.exhausted else ""
        return (f"Culprits of \"{shorten(self.original, 60)}\": baseline {state}; {len(self.culprits)} set(s) "
                f"found among {len(self.suspects)} suspects in {self.reruns} reruns (budget {self.budget}){cut}.")

    def __str__(self) -> str:
        lines = [self.summary(), *(c.line() for c in self.culprits)]
        if self.note:
            lines.append(self.note)
        lines += [f"not tested: '{name}' ({why})" for name, why in self.untested]
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """One row per probe: the sources removed together, flips, samples, whether it flipped the outcome."""
        import pandas as pd

        rows = [{"removed": list(p.removed), "flips": p.flips, "samples": p.samples, "flipped": p.flipped}
                for p in self.probes]
        return pd.DataFrame(rows, columns=["removed", "flips", "samples", "flipped"])

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return mimebundle(self.summary(), str(self))


class _Search:
    """The probes of one search within the budget; each probe's reruns run concurrently."""

    def __init__(self, rerunner: Rerunner, samples: int, budget: int, compare: Callable[[str, str], bool],
                 original: str, concurrency: int, bar: Progress) -> None:
        self.rerunner = rerunner
        self.samples = samples
        self.budget = budget
        self.compare = compare
        self.original = original
        self.concurrency = concurrency
        self.bar = bar
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
        group, = await rerun_groups(self.rerunner, [list(removed)], seeds, self.compare, self.original,
                                    concurrency=self.concurrency, bar=self.bar)
        return group

    async def flips(self, removed: Sequence[str]) -> bool | None:
        """Whether removing these together flips the outcome; ``None`` when the budget allows no probe.

        The reruns that can decide the majority run first (2 of 3); the rest run only when those
        disagree, so the verdict is always the one all ``samples`` reruns would give.
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
        failed = sum(1 for o in group if o.error is not None)
        flipped = judge(flips, self.samples, failed, True)[0] == "confirmed"
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

    async def culprit(self, removal: list[str], minimal: bool) -> CulpritSet:
        """The set with its flips over every one of ``samples`` reruns (the ones a probe skipped run now)."""
        flipped, group = self.seen[frozenset(removal)]
        missing = range(len(group), self.samples)
        if missing:
            rest = await self.outcomes(removal, missing)
            if rest is not None:
                group = group + rest
                self.seen[frozenset(removal)] = (flipped, group)
        return CulpritSet(tuple(removal), sum(1 for o in group if o.flipped), len(group), minimal, group)


async def bisect_culprits(
    run: Any,
    *,
    rerun: Any,
    samples: int = 3,
    budget: int = 40,
    top: int = 8,
    sources: Sequence[str] | None = None,
    strategy: Any = "lexical",
    comparator: Callable[[str, str], bool] | None = None,
    concurrency: int = 16,
    input: Any = None,
    continue_from: Any = None,
    progress: bool | None = None,
) -> Culprits:
    """Search the top suspects for minimal sets whose joint removal flips the outcome; see the module docstring.

    ``budget`` caps the reruns, baseline included. ``rerun``, ``samples``, ``top``, ``sources``,
    ``strategy``, ``comparator``, ``input``, ``continue_from`` and ``progress`` are as for ``localize``.
    """
    recording = recording_of(run, "bisect_culprits")
    original = original_answer("bisect_culprits", recording)
    whole_number("bisect_culprits", "samples", samples, 2, 1000)
    whole_number("bisect_culprits", "top", top, 1, 64)
    whole_number("bisect_culprits", "concurrency", concurrency, 1, 10_000)
    whole_number("bisect_culprits", "budget", budget, 1, 100_000)
    if budget < 2 * samples:
        raise ExplainConfigError("bisect_culprits", "budget", "fewer reruns than a baseline and one probe need",
                                 f"must allow at least 2 x samples reruns (here {2 * samples}): the baseline, "
                                 "then removing every suspect at once")
    compare = check_comparator("bisect_culprits", comparator)
    rerunner = Rerunner("bisect_culprits", rerun, recording, input, continue_from)
    chosen, untested = choose_suspects(recording, run, sources, strategy, top)
    names = [name for _, name, _, _ in chosen]
    bar = Progress(budget, "reruns", progress)
    search = _Search(rerunner, samples, budget, compare, original, concurrency, bar)
    baseline = await search.outcomes([], range(samples)) or []
    stable = all(o.error is None and not o.flipped for o in baseline)
    found: list[CulpritSet] = []
    note = ""
    if not stable:
        note = "The baseline is unstable, so a flip cannot be told from noise: no set was searched for."
    elif not names:
        note = "No suspect a rerun can remove."
    elif not await search.flips(names):
        note = ("Removing every tested suspect at once did not flip the outcome, so no set of them can "
                "(widen top= or name sources=)." if not search.exhausted else "")
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
            if all(set(c.sources) != set(removal) for c in found):
                found.append(await search.culprit(removal, minimal))
                # Another minimal set must leave out some member of this one: start from all but that member.
                if minimal and len(names) > 1:
                    starts += [[n for n in names if n != member] for member in removal]
            if search.exhausted:
                break
    bar.close()
    return Culprits(original, stable, baseline, names, untested, found, search.probes, search.reruns, budget,
                    search.exhausted, note)
