"""Truth benchmark: do the explanations find a planted cause, and only it, on noisy models?

Goals (issue 25): over planted-culprit cases in seven classes (a fact, stale memory, a tool
result, an instruction, a topical innocent, missing context, two causes that act only together;
``footprint_lab.examples.truth``), on a scripted model that strays at random in 0%, 10% and 25%
of its seeded calls: the planted cause confirmed first (top-1) in at least 95% of cases at every
noise level; no benign piece confirmed; at most 24 reruns per answer on average. Each case is
explained as an analyst would: ``localize(run, rerun=agent, comparator=Label(...), budget=48)``,
or ``find_dropped_context`` for missing context. Rows report top-1 and top-3, false
confirmations, reruns per answer and wall time per case.
Run ``python bench/bench_truth.py``; ``--quick`` runs two cases of each class.
"""

from __future__ import annotations

import asyncio
import statistics

from _kit import Report, options

from footprint_lab.examples.truth import CLASSES, Scored, cases, evaluate

NOISE = (0.0, 0.1, 0.25)


async def scored(per_class: int, noise: float) -> list[Scored]:
    return [await evaluate(case) for case in cases(per_class, noise=noise)]


def main() -> None:
    args = options(__doc__ or "")
    report = Report("truth", args)
    per_class = 2 if args.quick else 10
    every: list[Scored] = []
    for noise in NOISE:
        found = asyncio.run(scored(per_class, noise))
        every += found
        size = f"{len(found)} cases, noise {noise:.0%}"
        top1 = 100 * sum(s.top1 for s in found) / len(found)
        top3 = 100 * sum(s.top3 for s in found) / len(found)
        missed = [s.case for s in found if not s.top1]
        report.add("planted cause confirmed first (top-1)", [top1], size=size, unit="%", goal=">= 95%",
                   met=top1 >= 95, note=f"top-3 {top3:.0f}%" + (f"; missed: {', '.join(missed)}" if missed else ""))
        false = sum(s.false for s in found)
        report.add("benign pieces confirmed", [float(false)], size=size, unit="pieces", goal="0", met=false == 0)
        report.add("reruns per answer", [float(s.reruns) for s in found], size=size, unit="reruns",
                   goal="(reference; the average over every level is the goal)",
                   note=f"mean {statistics.mean(s.reruns for s in found):.1f}")
        report.add("wall time per case", [1000 * s.seconds for s in found], size=size, goal="(reference)")
    mean = statistics.mean(s.reruns for s in every)
    report.add("reruns per answer, every noise level", [float(s.reruns) for s in every],
               size=f"{len(every)} cases", unit="reruns", goal="mean <= 24", met=mean <= 24, note=f"mean {mean:.1f}")
    by_class = {kind: [s for s in every if s.kind == kind] for kind in CLASSES}
    note = "; ".join(f"{kind} {100 * sum(s.top1 for s in found) / len(found):.0f}%"
                     for kind, found in by_class.items())
    report.add("top-1 by class, every noise level", [100 * sum(s.top1 for s in every) / len(every)],
               size=f"{len(every)} cases", unit="%", goal="(reference)", note=note)
    report.close()


if __name__ == "__main__":
    main()
