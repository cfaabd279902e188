"""Truth benchmark: do the explanations find a planted cause, and only it, on noisy models?

Goals (issue 25): over planted-culprit cases in seven classes (a fact, stale memory, a tool
result, an instruction, a topical innocent, missing context, two causes that act only together;
``footprint_lab.examples.truth``), on a scripted model that strays at random in 0%, 10% and 25%
of its seeded calls: the planted cause confirmed first (top-1) in at least 95% of cases at every
noise level; no benign piece confirmed; at most 24 reruns per answer on average. Each case is
explained as an analyst would: ``localize(run, rerun=agent, comparator=Label(...), budget=48)``,
or ``find_dropped_context`` for missing context. Then the same on a real model (llama.cpp's server
on SmolLM2-135M, ``footprint_lab.examples.local_model``) at temperature 0 and 0.8: a planted fact
says where an order's package is, compared with ``Mentions(city)``; the goal there is top-1 in at
least 90% of the cases the model can answer, and no benign piece confirmed. What the real model
does is measured on 8 seeded runs of its own, never assumed (``truth.Measured``): it can answer a
case when it names the city in at least 75% of them with every piece and in less than half as
many without the fact; a confirmed piece other than the fact is a false confirmation only when
removing it leaves the city named in at least half as many runs as with every piece (otherwise it
is a cause of the answer on this model, counted apart as "fragile": a 135M model's answer turns
on the wording of its whole prompt). The measuring runs are neither reruns of the explanation
nor part of its wall time.
Rows report top-1 and top-3, false confirmations, reruns per answer and wall time per case.
Run ``python bench/bench_truth.py``; ``--quick`` runs two scripted cases of each class and one
real-model case; ``--scripted-only`` leaves the real model out (it needs llama.cpp's server and is slow);
``--real-only`` runs only the real model.
"""

from __future__ import annotations

import asyncio
import statistics

from _kit import Report, options

from footprint_lab.examples.local_model import start_server, stop_server
from footprint_lab.examples.truth import CLASSES, PLACES, Scored, cases, evaluate, real_case

NOISE = (0.0, 0.1, 0.25)
TEMPERATURES = (0.0, 0.8)


async def scored(per_class: int, noise: float) -> list[Scored]:
    return [await evaluate(case) for case in cases(per_class, noise=noise)]


async def scored_real(url: str, temperature: float, count: int) -> tuple[list[Scored], int]:
    """The real-model cases the model can answer, scored; and how many it could not."""
    found, unanswered = [], 0
    for variant in range(count):
        case = await real_case(variant, url, temperature=temperature)
        if case is None:
            unanswered += 1
        else:
            found.append(await evaluate(case))
    return found, unanswered


def real_rows(report: Report, quick: bool) -> list[Scored]:
    server = start_server("patient")
    every: list[Scored] = []
    try:
        for temperature in TEMPERATURES[-1:] if quick else TEMPERATURES:
            found, unanswered = asyncio.run(scored_real(server.url, temperature, 1 if quick else len(PLACES)))
            every += found
            size = f"{len(found)} cases, SmolLM2-135M at temperature {temperature:g}"
            if not found:
                report.add("real model: cases it can answer", [0.0], size=size, unit="cases", goal="(reference)",
                           note=f"{unanswered} it could not answer")
                continue
            top1 = 100 * sum(s.top1 for s in found) / len(found)
            report.add("real model: planted fact confirmed first (top-1)", [top1], size=size, unit="%",
                       goal=">= 90%", met=top1 >= 90,
                       note=f"{unanswered} case(s) it could not answer; top-3 "
                            f"{100 * sum(s.top3 for s in found) / len(found):.0f}%")
            false, fragile = sum(s.false for s in found), sum(s.fragile for s in found)
            report.add("real model: benign pieces confirmed", [float(false)], size=size, unit="pieces", goal="0",
                       met=false == 0, note=f"besides, {fragile} confirmed piece(s) whose removal, measured, changes "
                                            "the answer (causes on this model)" if fragile else "")
            report.add("real model: reruns per answer", [float(s.reruns) for s in found], size=size, unit="reruns",
                       goal="(reference)", note=f"mean {statistics.mean(s.reruns for s in found):.1f}")
            report.add("real model: wall time per case", [1000 * s.seconds for s in found], size=size,
                       goal="(reference)")
    finally:
        stop_server(server)
    return every


def main() -> None:
    args = options(__doc__ or "", ("--scripted-only", "leave out the real-model cases (no llama.cpp server)"),
                   ("--real-only", "only the real-model cases"))
    report = Report("truth", args)
    per_class = 2 if args.quick else 10
    every: list[Scored] = []
    for noise in () if args.real_only else NOISE:
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
    if not args.scripted_only:
        every += real_rows(report, args.quick)
    if args.real_only:
        report.close()
        return
    mean = statistics.mean(s.reruns for s in every)
    scope = "every case" if args.scripted_only else "every case (scripted and real)"
    report.add(f"reruns per answer, {scope}", [float(s.reruns) for s in every],
               size=f"{len(every)} cases", unit="reruns", goal="mean <= 24", met=mean <= 24, note=f"mean {mean:.1f}")
    by_class = {kind: [s for s in every if s.kind == kind] for kind in (*CLASSES, "real")}
    note = "; ".join(f"{kind} {100 * sum(s.top1 for s in found) / len(found):.0f}%"
                     for kind, found in by_class.items() if found)
    report.add("top-1 by class, every noise level", [100 * sum(s.top1 for s in every) / len(every)],
               size=f"{len(every)} cases", unit="%", goal="(reference)", note=note)
    report.close()


if __name__ == "__main__":
    main()
