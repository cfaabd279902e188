"""Unsupported-value benchmark: the check reads each side once (issue 46, high 8).

The ``unsupported_value`` integrity check reads the numbers, amounts, dates, identifiers and
names of an answer and looks for each in what the answering call was sent. It used to look for
each value of the answer in the whole of the evidence, and for each one it did not find it
compared it with every value the evidence held: a 40 kB answer took 9-24 s, 1 MB did not end.

Scenarios, each timed on ``unsupported_values(recording)`` (the recording is built before
timing), medians:

- a long answer: prose dense with values (orders, amounts, dates, times, names), half of them
  in the tool result, half not, at 40 kB and 1 MB;
- a one-line answer behind a long tool result of the same prose, at 40 kB and 1 MB;
- 2,000 identifiers in the answer, none of them among 2,000 others in the tool result (each is
  reported, with the nearest identifier looked up for it);
- one invented value stated 20,000 times (one finding, with its count).

Each is compared with the same scenario at a quarter of its size, in the same process: a check
that is linear in the text takes about 4x as long on 4x the text (goal: at most 6x); a
quadratic one takes about 16x. Before (commit dbc42da, same texts): the 40 kB answer took 2.5 s, the
2,000 x 2,000 identifiers 58.6 s, the value stated 20,000 times 19 s (one finding per statement), and 1 MB
did not end.

Run ``python bench/bench_unsupported.py``; ``--quick`` takes a tenth of each size and few samples.
"""

from __future__ import annotations

import asyncio
import functools
import statistics
from typing import Any

from _kit import Report, options, samples_ms

from footprint_lab import Agent, define_tool
from footprint_lab.explain.checks._unsupported import unsupported_values
from footprint_lab.providers import mock

GROWTH_GOAL = 6.0
NAMES = ("Maria Lopez", "Jonas Weber", "Zoë Müller", "Ines Duarte", "Kenji Sato", "Amara Okafor")


def prose(size: int, *, seed: int) -> str:
    """About ``size`` characters of sentences full of values; ``seed`` shifts every value it states."""
    lines = []
    total = 0
    index = 0
    while total < size:
        n = index + seed
        line = (f"Order A-{1000 + n} for {NAMES[n % len(NAMES)]} was placed on 2026-{1 + n % 12:02d}-"
                f"{1 + n % 28:02d} and totals {100 + n:,} EUR; pickup at {8 + n % 10}:{n % 60:02d}, "
                f"{1 + n % 9} items, ticket TCK-{700000 + n}.")
        lines.append(line)
        total += len(line) + 1
        index += 1
    return "\n".join(lines)


def recording(answer: str, result: str) -> Any:
    tool = define_tool(name="lookup", description="Look up orders.", fn=lambda: result)
    provider = mock(replies=[{"tool": "lookup", "args": {}}, answer])
    agent = Agent(provider=provider, system="You are a support desk.", tools=[tool])
    return asyncio.run(agent.run("Orders?")).recording


def scenarios(size: int, ids: int, repeats: int) -> dict[str, tuple[str, str, str]]:
    """Each scenario's (size in words, answer, tool result), at the given sizes."""
    return {
        "long answer, half its values in the tool result": (
            f"{size:,} chars", prose(size // 2, seed=0) + "\n" + prose(size // 2, seed=size), prose(size // 2, seed=0)),
        "one-line answer behind a long tool result": (
            f"{size:,} chars", "Order A-1003 for Maria Lopez totals 103 EUR, not 99 EUR.", prose(size, seed=0)),
        "identifiers in the answer, none in the tool result": (
            f"{ids:,} x {ids:,} ids", " ".join(f"INV-{2 * i + 1:06d}" for i in range(ids)),
            " ".join(f"INV-{2 * i:06d}" for i in range(ids))),
        "one invented value stated again and again": (
            f"{repeats:,} times", " ".join(["Refund 135 EUR."] * repeats), "The refund is 120 EUR."),
    }


def timed(report: Report, rounds: int, full: dict[str, tuple[str, str, str]],
          quarter: dict[str, tuple[str, str, str]]) -> None:
    for name, (size, answer, result) in full.items():
        big = recording(answer, result)
        small_size, small_answer, small_result = quarter[name]
        small = recording(small_answer, small_result)
        missing, _, looked, _ = unsupported_values(big)
        took = samples_ms(functools.partial(unsupported_values, big), rounds)
        peer = samples_ms(functools.partial(unsupported_values, small), rounds)
        growth = statistics.median(took) / max(statistics.median(peer), 1e-3)
        report.add(name, took, size=size, goal=f"<= {GROWTH_GOAL:.0f}x the quarter size", met=growth <= GROWTH_GOAL,
                   peer=small_size, peer_samples=peer, ratio=growth,
                   note=f"{looked:,} values read, {len(missing):,} findings "
                        f"({sum(one.count for one in missing):,} statements)")


def main() -> None:
    args = options(__doc__.splitlines()[0])
    report = Report("unsupported", args)
    rounds = 3 if args.quick else 7
    for size in ((4_000, 100_000) if args.quick else (40_000, 1_000_000)):
        ids, repeats = (200, 2_000) if args.quick else (2_000, 20_000)
        full = scenarios(size, ids, repeats)
        quarter = scenarios(size // 4, ids // 4, repeats // 4)
        if size != (4_000 if args.quick else 40_000):  # the id and repeat scenarios once, at the first size
            full = {name: full[name] for name in list(full)[:2]}
        timed(report, rounds, full, quarter)
    report.close()


if __name__ == "__main__":
    main()
