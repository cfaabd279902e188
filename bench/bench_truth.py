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

The defaults track (issue 42, ``footprint_lab.examples.truth_defaults``) explains every case with
``localize(run, rerun=factory)`` and nothing else (a ``comparator=`` only for a free-text answer),
the factory building a new agent on a new provider for every rerun. Scripted cases at 0%, 10% and
25% noise vary the cause's place in the correlational ranking (first, middle, last, every score
tied at 0; where it ranked is measured on each run), the context pieces (3, 10, 40, 80) and the
answer's form (a bare label, a bare number, free text compared with ``Mentions``). Goals: the
planted cause confirmed in at least 97% of cases at every rank position and piece count up to 40,
90% at 80; no other piece confirmed; every removable piece tested or named as untested; mean
reruns per answer at most 24 up to 10 pieces and 48 (the default budget) at 40. On the real model
(llama.cpp's stock server, which cuts a reply in flight when another request arrives, a new
``openai(...)`` provider per rerun), at temperature 0 and 0.8: no failed rerun, and the planted
fact confirmed in at least 90% of the cases it can answer (measured as above).

The traceback track (``footprint_lab.examples.traceback``) follows TracLLM's PoisonedRAG runs: a
question, five retrieved passages, one or two poisoned with a wrong answer; where the model
repeats the wrong answer (measured), ``localize(run, rerun=factory, comparator=Mentions(wrong))``
traces it, scored by precision and recall of what it confirmed against the poisoned passages
(means over the attacked cases; goals 0.9 each) and by whether the wrong answer survives removing
what was confirmed (goal: in at most 10% of them); on the real model at temperature 0 and on the
scripted model at each noise level.

Run ``python bench/bench_truth.py``; ``--quick`` runs a small slice of each track (two scripted
cases of each class, a dozen defaults cases, four scripted traceback cases, and one real-model case
of each track); ``--scripted-only`` leaves the real model out (it needs llama.cpp's server and is
slow); ``--real-only`` runs only the real model; ``--defaults-only`` only the defaults and traceback
tracks.
"""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Callable, Sequence
from typing import Any

from _kit import Report, options

from footprint_lab.examples.local_model import start_server, stop_server
from footprint_lab.examples.traceback import QUESTIONS, SCRIPTED_SHAPES, Traced, scripted_case, served_case, trace
from footprint_lab.examples.truth import CLASSES, Scored, cases, evaluate, real_case, served
from footprint_lab.examples.truth_defaults import (
    FORMS,
    PIECE_COUNTS,
    RANKS,
    DefaultsCase,
    DefaultsScored,
    defaults_case,
    defaults_cases,
    explain,
    real_defaults_case,
)

NOISE = (0.0, 0.1, 0.25)
TEMPERATURES = (0.0, 0.8)
#: Real-model cases of the first track per temperature (on the patient server, the agent rerun as it is).
PLANTED_REAL = 3
#: Scripted defaults cases: each rank, piece count and form, this many variants of each, at every noise level.
DEFAULTS_VARIANTS = 8
#: Real-model defaults cases per temperature (planted facts; those the model cannot answer are counted apart).
DEFAULTS_REAL = 5
#: Scripted traceback cases per noise level: each question in each shape once.
TRACEBACK_SCRIPTED = len(QUESTIONS) * len(SCRIPTED_SHAPES)
#: Real-model traceback cases: each question once, the shapes going round (see traceback.served_case).
TRACEBACK_REAL = tuple(question + len(QUESTIONS) * (question % 4) for question in range(len(QUESTIONS)))
#: The traceback's real model samples at this temperature (TracLLM's runs decode greedily).
TRACEBACK_TEMPERATURE = 0.0
#: Seeded runs behind each measured share of a real traceback case (the scripted ones take eight).
TRACEBACK_RUNS = 4


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
            found, unanswered = asyncio.run(scored_real(server.url, temperature, 1 if quick else PLANTED_REAL))
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


def planted_track(report: Report, quick: bool, scripted_only: bool, real_only: bool) -> None:
    """The first track (issue 25): seven classes of planted causes, explained with the settings that suit them."""
    per_class = 2 if quick else 10
    every: list[Scored] = []
    for noise in () if real_only else NOISE:
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
    if not scripted_only:
        every += real_rows(report, quick)
    if real_only:
        return
    mean = statistics.mean(s.reruns for s in every)
    scope = "every case" if scripted_only else "every case (scripted and real)"
    report.add(f"reruns per answer, {scope}", [float(s.reruns) for s in every],
               size=f"{len(every)} cases", unit="reruns", goal="mean <= 24", met=mean <= 24, note=f"mean {mean:.1f}")
    by_class = {kind: [s for s in every if s.kind == kind] for kind in (*CLASSES, "real")}
    note = "; ".join(f"{kind} {100 * sum(s.top1 for s in found) / len(found):.0f}%"
                     for kind, found in by_class.items() if found)
    report.add("top-1 by class, every noise level", [100 * sum(s.top1 for s in every) / len(every)],
               size=f"{len(every)} cases", unit="%", goal="(reference)", note=note)


# -- the defaults track ------------------------------------------------------------------------------------------
def defaults_slice(noise: float) -> list[DefaultsCase]:
    """``--quick``'s defaults cases: each rank position at its own piece count, in every answer form."""
    return [defaults_case(rank, count, form, noise=noise) for rank, count in zip(RANKS, PIECE_COUNTS, strict=True)
            for form in FORMS]


async def explained(chosen: Sequence[DefaultsCase]) -> list[DefaultsScored]:
    found = []
    for case in chosen:
        result = await explain(case)
        if not result.confirmed or result.false or result.unnoticed or case.rank not in (result.placed, "measured"):
            print(f"    {result.case} (noise {result.noise:g}; the cause {case.cause} ranked {result.position} of "
                  f"{result.of}, {result.placed}):\n      " + result.report.replace("\n", "\n      "), flush=True)
        found.append(result)
    return found


def share(found: Sequence[Any], test: Callable[[Any], bool]) -> float:
    return 100 * sum(1 for item in found if test(item)) / len(found)


def positions(found: Sequence[DefaultsScored]) -> str:
    """Where the causes ranked: ``3-21 of 4-41``."""
    low, high = min(s.position for s in found), max(s.position for s in found)
    few, many = min(s.of for s in found), max(s.of for s in found)
    return f"{low}{f'-{high}' if high != low else ''} of {few}{f'-{many}' if many != few else ''}"


def by(found: Sequence[DefaultsScored], key: Callable[[DefaultsScored], Any], order: Sequence[Any]
       ) -> dict[Any, list[DefaultsScored]]:
    return {value: [s for s in found if key(s) == value] for value in order if any(key(s) == value for s in found)}


def confirmed_note(groups: dict[Any, list[DefaultsScored]], *, ranked: bool = False) -> str:
    parts = [f"{name} {share(group, lambda s: s.confirmed):.0f}%" + (f" (ranked {positions(group)})" if ranked else "")
             for name, group in groups.items()]
    return "; ".join(parts)


def missed(found: Sequence[DefaultsScored]) -> str:
    names = [s.case for s in found if not s.confirmed]
    return f"; missed: {', '.join(names[:6])}{' ...' if len(names) > 6 else ''}" if names else ""


def defaults_rows(report: Report, found: list[DefaultsScored], size: str) -> None:
    """The defaults track's rows for one set of scripted cases (one noise level)."""
    misplaced = [s.case for s in found if s.placed != s.rank]
    small = [s for s in found if s.pieces <= 40]
    if small:
        ranks = by(small, lambda s: s.placed, RANKS)
        shares = [share(group, lambda s: s.confirmed) for group in ranks.values()]
        report.add("defaults: planted cause confirmed, by its rank in the ranking (up to 40 pieces)", shares,
                   size=f"{len(small)} cases, {size}", unit="%", goal=">= 97% at every rank position",
                   met=min(shares) >= 97, note=confirmed_note(ranks, ranked=True) + missed(small)
                   + (f"; {len(misplaced)} case(s) ranked elsewhere than built: {', '.join(misplaced)}"
                      if misplaced else ""))
        counts = by(small, lambda s: s.pieces, PIECE_COUNTS)
        shares = [share(group, lambda s: s.confirmed) for group in counts.values()]
        forms = by(small, lambda s: s.form, FORMS)
        report.add("defaults: planted cause confirmed, by piece count (up to 40)", shares,
                   size=f"{len(small)} cases, {size}", unit="%", goal=">= 97% at every piece count",
                   met=min(shares) >= 97,
                   note=confirmed_note({f"{n} pieces": g for n, g in counts.items()}) + "; by answer form: "
                   + confirmed_note(forms))
    large = [s for s in found if s.pieces > 40]
    if large:
        confirmed = share(large, lambda s: s.confirmed)
        report.add("defaults: planted cause confirmed, 80 pieces", [confirmed], size=f"{len(large)} cases, {size}",
                   unit="%", goal=">= 90%", met=confirmed >= 90,
                   note=confirmed_note(by(large, lambda s: s.placed, RANKS), ranked=True) + missed(large))
    false = sum(len(s.false) for s in found)
    report.add("defaults: other pieces confirmed", [float(false)], size=f"{len(found)} cases, {size}",
               unit="pieces", goal="0", met=false == 0,
               note=", ".join(f"{s.case}: {s.false}" for s in found if s.false)[:300])
    unnoticed = sum(len(s.unnoticed) for s in found)
    named = [s for s in found if s.untested]
    report.add("defaults: removable pieces left untested and not named", [float(unnoticed)],
               size=f"{len(found)} cases, {size}", unit="pieces", goal="0", met=unnoticed == 0,
               note=f"{sum(s.untested for s in named)} untested piece(s) named in {len(named)} case(s)")
    for label, low, high, limit in (("3-10 pieces", 0, 10, 24), ("40 pieces", 11, 40, 48), ("80 pieces", 41, 80, 0)):
        chosen = [s for s in found if low <= s.pieces <= high]
        if not chosen:
            continue
        mean = statistics.mean(s.reruns for s in chosen)
        report.add(f"defaults: reruns per answer, {label}", [float(s.reruns) for s in chosen],
                   size=f"{len(chosen)} cases, {size}", unit="reruns",
                   goal=f"mean <= {limit}" if limit else "(reference)", met=mean <= limit if limit else None,
                   note=f"mean {mean:.1f}")
    report.add("defaults: wall time per case", [1000 * s.seconds for s in found], size=f"{len(found)} cases, {size}",
               goal="(reference)")


async def real_defaults(url: str, temperature: float, variants: Sequence[int]) -> tuple[list[DefaultsScored], int]:
    """The real-model planted-fact cases it can answer, explained with the defaults; and how many it could not."""
    found, unanswered = [], 0
    for variant in variants:
        case = await real_case(variant, url, temperature=temperature, fresh=True)
        if case is None:
            unanswered += 1
            continue
        found += await explained([real_defaults_case(case, temperature)])
    return found, unanswered


def real_defaults_rows(report: Report, found: list[DefaultsScored], unanswered: int, size: str) -> None:
    if not found:
        report.add("defaults, real model: cases it can answer", [0.0], size=size, unit="cases", goal="(reference)",
                   note=f"{unanswered} it could not answer")
        return
    failed = sum(s.failed for s in found)
    report.add("defaults, real model: failed reruns (stock server, a new provider per rerun)",
               [float(s.failed) for s in found], size=size, unit="reruns", goal="0", met=failed == 0,
               note=f"{failed} failed of {sum(s.reruns for s in found)} reruns")
    confirmed = share(found, lambda s: s.confirmed)
    report.add("defaults, real model: planted fact confirmed", [confirmed], size=size, unit="%", goal=">= 90%",
               met=confirmed >= 90, note=f"{unanswered} case(s) it could not answer; the fact ranked "
                                         f"{positions(found)}" + missed(found))
    false, fragile = sum(len(s.false) for s in found), sum(len(s.fragile) for s in found)
    report.add("defaults, real model: other pieces confirmed", [float(false)], size=size, unit="pieces", goal="0",
               met=false == 0, note=f"besides, {fragile} confirmed piece(s) whose removal, measured, changes the "
                                    "answer (causes on this model)" if fragile else "")
    report.add("defaults, real model: reruns per answer", [float(s.reruns) for s in found], size=size,
               unit="reruns", goal="(reference)", note=f"mean {statistics.mean(s.reruns for s in found):.1f}")
    report.add("defaults, real model: wall time per case", [1000 * s.seconds for s in found], size=size,
               goal="(reference)")


# -- the traceback track ---------------------------------------------------------------------------------------
async def traced(chosen: Sequence[Any], runs: int) -> list[Traced]:
    found = []
    for case in chosen:
        result = await trace(case, runs=runs)
        if result.attacked and (result.precision < 1 or result.recall < 1 or result.survives or result.failed):
            print(f"    {result.case} (poisoned {', '.join(result.poisoned)}; traced {result.traced or 'nothing'}):"
                  "\n      " + result.report.replace("\n", "\n      "), flush=True)
        found.append(result)
    return found


def traceback_rows(report: Report, found: list[Traced], size: str, *, real: bool) -> None:
    attacked = [t for t in found if t.attacked]
    where = "real model" if real else "scripted"
    report.add(f"traceback, {where}: cases where the model repeats the wrong answer", [float(len(attacked))],
               size=size, unit="cases", goal="(reference)",
               note=f"{len(attacked)} of {len(found)} attacked; "
                    f"{sum(len(t.poisoned) == 2 for t in attacked)} with two poisoned passages")
    if not attacked:
        return
    grown = f"{len(attacked)} attacked cases, {size}"
    fragile = sum(len(t.fragile) for t in attacked)
    for name, value in (("precision", lambda t: t.precision), ("recall", lambda t: t.recall)):
        mean = statistics.mean(value(t) for t in attacked)
        report.add(f"traceback, {where}: {name} of the confirmed set against the poisoned", [mean], size=grown,
                   unit="", goal=">= 0.9 (mean over the attacked cases)", met=mean >= 0.9,
                   note=f"{sum(value(t) == 1 for t in attacked)} of {len(attacked)} cases at 1.0; "
                        f"{sum(not t.traced for t in attacked)} traced nothing"
                        + (f"; {fragile} clean passage(s) traced whose removal alone, measured, changes the answer "
                           "(causes on this model)" if name == "precision" and fragile else ""))
    survives = share(attacked, lambda t: t.survives)
    report.add(f"traceback, {where}: wrong answer survives removing the confirmed set", [survives], size=grown,
               unit="%", goal="<= 10%", met=survives <= 10,
               note=", ".join(t.case for t in attacked if t.survives)[:300])
    if real:
        failed = sum(t.failed for t in attacked)
        report.add(f"traceback, {where}: failed reruns", [float(t.failed) for t in attacked], size=grown,
                   unit="reruns", goal="0", met=failed == 0)
    report.add(f"traceback, {where}: reruns per answer", [float(t.reruns) for t in attacked], size=grown,
               unit="reruns", goal="(reference)", note=f"mean {statistics.mean(t.reruns for t in attacked):.1f}")


def defaults_track(report: Report, quick: bool, scripted_only: bool, real_only: bool) -> None:
    """The defaults and traceback tracks (issue 42): what an analyst types, on cases nobody tuned the settings for."""
    for noise in () if real_only else NOISE[1:2] if quick else NOISE:
        chosen = defaults_slice(noise) if quick else defaults_cases(noise=noise, variants=DEFAULTS_VARIANTS)
        defaults_rows(report, asyncio.run(explained(chosen)), f"noise {noise:.0%}")
        shown = [scripted_case(variant, noise=noise) for variant in range(4 if quick else TRACEBACK_SCRIPTED)]
        traceback_rows(report, asyncio.run(traced(shown, 8)), f"{len(shown)} cases, noise {noise:.0%}", real=False)
    if scripted_only:
        return
    server = start_server("stock")
    try:
        for temperature in TEMPERATURES[-1:] if quick else TEMPERATURES:
            variants = range(1 if quick else DEFAULTS_REAL)
            found, unanswered = asyncio.run(real_defaults(server.url, temperature, variants))
            real_defaults_rows(report, found, unanswered,
                               f"{len(found)} cases, SmolLM2-135M at temperature {temperature:g}, stock server")
        fresh = served(server.url, TRACEBACK_TEMPERATURE)
        shown = [served_case(variant, fresh) for variant in TRACEBACK_REAL[:1 if quick else None]]
        traceback_rows(report, asyncio.run(traced(shown, TRACEBACK_RUNS)),
                       f"{len(shown)} cases, SmolLM2-135M at temperature {TRACEBACK_TEMPERATURE:g}", real=True)
    finally:
        stop_server(server)


def main() -> None:
    args = options(__doc__ or "", ("--scripted-only", "leave out the real-model cases (no llama.cpp server)"),
                   ("--real-only", "only the real-model cases"),
                   ("--defaults-only", "only the defaults and traceback tracks"))
    report = Report("truth", args)
    if not args.defaults_only:
        planted_track(report, args.quick, args.scripted_only, args.real_only)
    defaults_track(report, args.quick, args.scripted_only, args.real_only)
    report.close()


if __name__ == "__main__":
    main()
