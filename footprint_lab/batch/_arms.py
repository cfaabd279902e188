"""Two arms of a set over the same inputs: their runs paired by input, compared on a metric, and the differences
that explain their changed answers.

Rule kept here: an input is compared only with itself (the k-th run of an input in one arm with the
k-th in the other), and two arms that did not answer the same inputs are refused, never matched
partly. The interval is Newcombe's for paired proportions when every value is 0 or 1, else
Student's t on the paired differences (:mod:`footprint_lab.batch._stats`).

Role: batch layer; what ``RunSet.compare`` and ``RunSet.explain_differences`` work out once the
set has judged its arguments and chosen the runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from footprint_lab.base.refusal import call_problem, describe_shape
from footprint_lab.batch._entries import RunSummary
from footprint_lab.batch._stats import newcombe_paired, paired_t
from footprint_lab.batch.refusals import BatchConfigError

if TYPE_CHECKING:
    import pandas as pd

    from footprint_lab.explain import Trials, TrialSettings


@dataclass(frozen=True, slots=True)
class Comparison:
    """Two arms' means of one metric over the same inputs, their paired difference and its interval."""

    metric: str
    #: the mean of the metric on the set ``compare`` was called on (the first arm) and on the other
    first: float
    second: float
    #: ``second - first``, over the pairs where both runs have a value
    difference: float
    low: float
    high: float
    confidence: float
    #: ``newcombe_paired`` (0/1 metrics) or ``paired_t`` (other numbers)
    interval: str
    pairs: int
    #: pairs left out because one of the runs had no value
    dropped: int

    @property
    def significant(self) -> bool:
        """Whether the interval leaves out 0: the arms differ at this confidence."""
        return self.low > 0 or self.high < 0

    def __str__(self) -> str:
        method = ("Newcombe's interval for paired proportions" if self.interval == "newcombe_paired"
                  else "Student's t interval on paired differences")
        dropped = f"; {self.dropped} pair(s) without a value left out" if self.dropped else ""
        verdict = "the arms differ" if self.significant else "no difference shown"
        return (f"{self.metric}: {self.first:.4g} -> {self.second:.4g}, difference {self.difference:+.4g} "
                f"({self.confidence:.0%} CI {self.low:+.4g} to {self.high:+.4g}, {method}; {self.pairs} pairs"
                f"{dropped}): {verdict}.")

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame([{name: getattr(self, name) for name in self.__dataclass_fields__}])


def compared(function: str, metric: Any, read: Callable[[RunSummary], Any],
             pairs: list[tuple[RunSummary, RunSummary]], confidence: float) -> Comparison:
    """The paired runs' values of ``metric`` (read by ``read``), their means, difference and interval."""
    values = [(read(a), read(b)) for a, b in pairs]
    for value in (v for pair in values for v in pair):
        if value is not None and (not isinstance(value, int | float) or value != value):
            raise BatchConfigError(function, "metric", f"a function that gave {describe_shape(value)}",
                                   "must give a number or a bool for each run (None when it has no value)")
    kept = [(float(a), float(b)) for a, b in values if a is not None and b is not None]
    if not kept:
        raise BatchConfigError(function, "metric", "a metric with no value on any pair of runs",
                               "must give a number for at least one run of each arm")
    first, second = [a for a, _ in kept], [b for _, b in kept]
    if all(v in (0.0, 1.0) for v in (*first, *second)):
        difference, low, high = newcombe_paired([int(v) for v in first], [int(v) for v in second], confidence)
        interval = "newcombe_paired"
    else:
        difference, low, high = paired_t(first, second, confidence)
        interval = "paired_t"
    name = metric if isinstance(metric, str) else getattr(metric, "__name__", "metric")
    return Comparison(name, sum(first) / len(first), sum(second) / len(second), difference, low, high,
                      confidence, interval, len(kept), len(values) - len(kept))


async def explained(pairs: list[tuple[RunSummary, RunSummary]], *, replay: Any, rerun: Any, trials: Trials | None,
                    settings: TrialSettings) -> pd.DataFrame:
    """``explain_difference`` on each pair whose answers differ, one row per difference (see
    ``RunSet.explain_differences``)."""
    from footprint_lab.explain import explain_difference

    changed = [(a, b) for a, b in pairs if a.answer is not None and b.answer is not None and a.answer != b.answer]
    rows: dict[str, dict[str, Any]] = {}
    for good, bad in changed:
        found = await explain_difference(good.run(), bad.run(), replay=replay, rerun=rerun, trials=trials,
                                         **settings)
        for carried in found.tested:
            row = rows.setdefault(carried.name, _difference_row(carried.name))
            row["pairs"] += 1
            row["tested"] += 1
            row["confirmed"] += carried.verdict == "confirmed"
        for name, why in found.untested:
            row = rows.setdefault(name, _difference_row(name))
            row["pairs"] += 1
            row["not_tested"] += 1
            row["why_not_tested"] = row["why_not_tested"] or why
    import pandas as pd

    frame = pd.DataFrame(list(rows.values()), columns=list(_difference_row("").keys()))
    frame["share"] = frame["confirmed"] / len(changed) if changed else 0.0
    frame = frame.sort_values(["confirmed", "pairs"], ascending=False, kind="stable").reset_index(drop=True)
    frame.attrs.update(pairs=len(pairs), changed=len(changed))
    return frame


def _metric(function: str, metric: Any) -> Callable[[RunSummary], Any]:
    numeric = ("tokens", "duration_ms", "members", "calls")
    if isinstance(metric, str):
        if metric not in numeric:
            raise BatchConfigError(function, "metric", "a string that names no numeric column",
                                   f"must be one of {', '.join(numeric)}, or a function of a run's summary")
        return lambda summary: getattr(summary, metric)
    problem = call_problem(metric, 1)
    if problem is not None:
        raise BatchConfigError(function, "metric", problem,
                               "must be a column of frame() or a function of a run's summary giving a number or a "
                               "bool, e.g. lambda r: r.answer == expected[r.input]")
    return cast("Callable[[RunSummary], Any]", metric)


def _difference_row(name: str) -> dict[str, Any]:
    return {"difference": name, "pairs": 0, "confirmed": 0, "tested": 0, "not_tested": 0, "why_not_tested": ""}


def _pairs(function: str, first: list[RunSummary], second: list[RunSummary]) -> list[tuple[RunSummary, RunSummary]]:
    """The runs of two arms paired by input; refused when the arms did not answer the same inputs."""
    waiting: dict[Any, list[RunSummary]] = {}
    for summary in second:
        waiting.setdefault(summary.input, []).append(summary)
    pairs = []
    unmatched = 0
    for summary in first:
        queue = waiting.get(summary.input)
        if queue:
            pairs.append((summary, queue.pop(0)))
        else:
            unmatched += 1
    unmatched += sum(len(queue) for queue in waiting.values())
    if unmatched:
        raise BatchConfigError(function, "other", f"a set whose inputs differ from this one's in {unmatched} run(s)",
                               "must hold runs of the same inputs (two prompts or two context strategies over one "
                               "evaluation set), so each input is compared with itself")
    return pairs
