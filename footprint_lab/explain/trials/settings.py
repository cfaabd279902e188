"""``Trials``: the settings every proof by reruns shares, in one object, checked once.

Rule kept here: ``localize``, ``rerun_without``, ``bisect_culprits``, ``find_dropped_context``,
``explain_difference`` (and ``RunSet.localize`` and ``Chat.localize``, which call ``localize``)
take the same trial settings, spelled once here: as a ``Trials`` object (``trials=``), to keep
and pass around, or as keywords (``samples=3``), which change the object's fields for one call.
Every setting is refused by name, before anything runs, when no trial could use it; a keyword
that is no setting is refused with the nearest spelling.

- ``samples``: reruns a side of the confirmation's first look (``None``: the call's own default,
  3, and 1 for ``rerun_without``, one observed rerun);
- ``alpha``: the false-confirmation rate the verdicts hold to (above 0, at most 0.5);
- ``budget``: the most reruns the call may start, every phase included (``None``: the call's
  default, which pays the screening's own reruns on top of ``16 x samples``);
- ``comparator``: says whether a rerun's answer flipped the outcome (``None``: ``TextDifference``);
- ``concurrency``: reruns at once; ``retries``: more tries for a rerun that failed for a passing
  reason; ``time_limit``: the seconds one rerun may take (``None``: no limit);
- ``progress``: a bar in a notebook (``None``: only inside a kernel), or a function ``(done, total)``.

Role: explain layer; pure settings, no rerun.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, TypedDict, Unpack, cast

from footprint_lab.base.refusal import describe_shape, did_you_mean
from footprint_lab.explain.arguments import ExplainConfigError, whole_number
from footprint_lab.explain.trials.rerun import RERUN_TIME_LIMIT, check_comparator, check_progress, check_time_limit

#: ``samples`` when neither the call nor ``Trials`` names one: a call's own default.
DEFAULT_SAMPLES = {"rerun_without": 1}


class ProofSettings(TypedDict, total=False):
    """The trial settings but ``progress``: what a proof is (its reruns and how they are judged), not how it shows;
    ``RunSet.localize`` takes these for every run of a set beside a bar of its own."""

    samples: int | None
    alpha: float
    budget: int | None
    comparator: Callable[[str, str], Any] | None
    concurrency: int
    retries: int
    time_limit: float | None


class TrialSettings(ProofSettings, total=False):
    """The trial settings as keywords of one call (each a field of :class:`Trials`)."""

    progress: bool | Callable[[int, int], None] | None


@dataclass(frozen=True, slots=True)
class Trials:
    """The settings of a proof by reruns (see the module docstring); checked when made."""

    samples: int | None = None
    alpha: float = 0.05
    budget: int | None = None
    comparator: Callable[[str, str], Any] | None = None
    concurrency: int = 16
    retries: int = 2
    time_limit: float | None = RERUN_TIME_LIMIT
    progress: bool | Callable[[int, int], None] | None = None

    def __post_init__(self) -> None:
        check(self, "Trials")

    def values(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in FIELDS}

    def replace(self, **changes: Unpack[TrialSettings]) -> Trials:
        """A copy with ``changes`` (field names; anything else refused with the nearest name)."""
        return settings_for("Trials.replace", self, changes)

    def for_call(self, function: str) -> Trials:
        """These settings with the call's own defaults filled in (``samples``), checked for that call."""
        if self.samples is not None:
            return self
        return settings_for(function, self, {"samples": DEFAULT_SAMPLES.get(function, 3)})


FIELDS = tuple(field.name for field in dataclasses.fields(Trials))


def settings_for(function: str, trials: Any, changes: Mapping[str, Any]) -> Trials:
    """``trials`` (a :class:`Trials`, or ``None`` for the defaults) with the keywords ``changes``, for ``function``;
    every setting checked and refused naming ``function``."""
    if trials is None:
        trials = Trials()
    elif not isinstance(trials, Trials):
        raise ExplainConfigError(function, "trials", describe_shape(trials),
                                 "must be a footprint_lab.Trials(...) object, or left out and the settings given as "
                                 "keywords (samples=3, budget=60 ...)")
    unknown = [name for name in changes if name not in FIELDS]
    if unknown:
        near = did_you_mean(unknown, FIELDS)
        hint = f"; {near}" if near else ""
        raise ExplainConfigError(function, "settings", f"{len(unknown)} keyword(s) no trial takes",
                                 f"are the trial settings {', '.join(FIELDS)}{hint}")
    if not changes:
        return cast("Trials", trials)
    check(SimpleNamespace(**(trials.values() | dict(changes))), function)  # refused naming the call, not Trials
    return cast("Trials", dataclasses.replace(trials, **changes))


def check(trials: Any, function: str) -> Any:
    """``trials`` (a :class:`Trials`, or anything with its fields) when every setting is one a trial can use;
    refused by name, naming ``function``, otherwise."""
    if trials.samples is not None:
        whole_number(function, "samples", trials.samples, 1, 1000)
    whole_number(function, "concurrency", trials.concurrency, 1, 10_000)
    alpha = trials.alpha
    number = isinstance(alpha, int | float) and not isinstance(alpha, bool)
    if not (number and 0 < alpha <= 0.5):
        raise ExplainConfigError(function, "alpha", "a number outside (0, 0.5]" if number else describe_shape(alpha),
                                 "must be the false-confirmation rate to hold to, a number above 0 and at most 0.5 "
                                 "(0.05 is usual)")
    if trials.budget is not None:  # the least: two reruns for each of the samples the call will take
        samples = trials.samples or (1 if function == "Trials" else DEFAULT_SAMPLES.get(function, 3))
        whole_number(function, "budget", trials.budget, 2 * samples, 1_000_000, low_why=f"two reruns for each of "
                     f"samples={samples}")
    whole_number(function, "retries", trials.retries, 0, 10)
    check_time_limit(function, trials.time_limit)
    check_comparator(function, trials.comparator)
    check_progress(function, trials.progress)
    return trials
