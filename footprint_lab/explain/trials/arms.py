"""What a trial is made of and what it says: the arms it tests, each arm's verdict, and the trial's result.

Rule kept here: a count is over the reruns that finished; a rerun that failed is counted as failed,
never as a flip and never as noise.

An :class:`Arm` is one change to the run (sources removed, sources forced in); an
:class:`ArmVerdict` is what the reruns said of it, with every count the verdict rests on; a
:class:`TrialResult` holds every arm's verdict, the baselines they were judged against and what was
spent. How the reruns are spent to reach them is :mod:`~footprint_lab.explain.trials.trial`'s.

Role: explain layer; plain records of a trial, read by every report, view and frame of one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from footprint_lab.explain.trials._stats import rate
from footprint_lab.explain.trials.rerun import Outcome
from footprint_lab.markup.words import VERDICT_WORDS

#: a verdict as every report, view and frame writes it: the vocabulary's own words (markup.words)
VERDICT_LABELS = VERDICT_WORDS


@dataclass(frozen=True, slots=True)
class Arm:
    """One change to the run to test: sources removed, sources forced in, under the name it is reported by, and how
    strongly a ranking of the run already points at it (``score``, 0 when none does)."""

    key: str
    exclude: tuple[str, ...] = ()
    force: tuple[str, ...] = ()
    score: float = field(default=0.0, compare=False)


#: Runs one rerun per ``(arm, seed)`` (``None`` for an unchanged rerun), concurrently, outcomes judged.
Draw = Callable[[Sequence[tuple["Arm | None", int]]], Awaitable[list[Outcome]]]


def joined(arms: Sequence[Arm]) -> Arm:
    """One arm that makes every change of ``arms`` at once."""
    return Arm(" + ".join(arm.key for arm in arms), tuple(name for arm in arms for name in arm.exclude),
               tuple(name for arm in arms for name in arm.force))


def tally(outcomes: Sequence[Outcome]) -> tuple[int, int]:
    """``(flips, finished)`` of some reruns: failed ones count in neither."""
    finished = [o for o in outcomes if o.error is None]
    return sum(1 for o in finished if o.flipped), len(finished)


def failures(outcomes: Sequence[Outcome]) -> Counter[str]:
    """How many reruns failed, by the error each ended with."""
    return Counter(str(o.error) for o in outcomes if o.error is not None)


@dataclass(slots=True)
class ArmVerdict:
    """What the reruns said about one arm: its verdict and every count it rests on."""

    arm: Arm
    verdict: str = "not_confirmed"
    reason: str = ""
    screening: list[Outcome] = field(default_factory=list)
    confirmation: list[Outcome] = field(default_factory=list)
    #: the baseline this arm was last judged against: flips and finished reruns
    noise_flips: int = 0
    noise_samples: int = 0
    p_value: float | None = None
    #: the level ``p_value`` was compared with (``alpha``'s share at its look, as much as its test can spend)
    level: float | None = None
    #: the look that decided it (1, 2, 3), or 0 when screening set it aside
    look: int = 0
    #: joint screening: how much more often the outcome flipped when this arm was among the removed
    screening_score: float | None = None
    #: every rerun that made this arm's change, alone or with others, in any phase (failed ones included) ...
    reached: int = 0
    #: ... and how many of them finished: none, and the arm was never measured (see :func:`settle`)
    judged_on: int = 0

    @property
    def tested(self) -> bool:
        """Whether the arm reached confirmation."""
        return bool(self.confirmation)

    @property
    def counted(self) -> list[Outcome]:
        """The reruns its flips and samples are counted over: the confirmation's, else the screening's."""
        return self.confirmation or self.screening

    @property
    def flips(self) -> int:
        return tally(self.counted)[0]

    @property
    def samples(self) -> int:
        """The reruns counted (failed ones excluded)."""
        return tally(self.counted)[1]

    @property
    def flip_rate(self) -> float | None:
        return rate(*tally(self.counted))

    @property
    def noise_rate(self) -> float | None:
        return rate(self.noise_flips, self.noise_samples)

    @property
    def reruns(self) -> int:
        """Every rerun spent on this arm alone, screening and confirmation, failed ones included."""
        return len(self.screening) + len(self.confirmation)

    @property
    def failed(self) -> int:
        return sum(1 for o in (*self.screening, *self.confirmation) if o.error is not None)

    @property
    def failures(self) -> Counter[str]:
        return failures([*self.screening, *self.confirmation])

    @property
    def untested(self) -> bool:
        """Whether no rerun made this arm's change at all (the budget ran out first)."""
        return self.reached == 0


@dataclass(slots=True)
class TrialResult:
    """Every arm's verdict, the baselines they were judged against, and what was spent."""

    arms: list[ArmVerdict]
    screening_baseline: list[Outcome]
    baseline: list[Outcome]
    reruns: int
    budget: int
    alpha: float
    design: str
    #: screening reruns that removed several arms at once (the group test's halves, the search's sets)
    joint: list[Outcome] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def noise(self) -> tuple[int, int]:
        """``(flips, finished)`` of the baseline the verdicts rest on (the confirmation's, else the screening's)."""
        return tally(self.baseline or self.screening_baseline)

    @property
    def all_outcomes(self) -> list[Outcome]:
        arms = [o for verdict in self.arms for o in (*verdict.screening, *verdict.confirmation)]
        return [*self.screening_baseline, *self.baseline, *self.joint, *arms]

    @property
    def failures(self) -> Counter[str]:
        return failures(self.all_outcomes)


def _failure_text(counts: Counter[str]) -> str:
    return ", ".join(f"{name} x{count}" for name, count in counts.most_common())
