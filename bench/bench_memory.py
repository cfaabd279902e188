"""Memory benchmark: what a finished run keeps, per iteration, with its recording materialised.

Scenario (issue 13): a scripted run of ``n`` iterations, each one ``noop`` tool call without
large payloads (the last one answers), through ``run_sync``; tracemalloc measures what stays
allocated after ``run.recording`` was asked for and the garbage collector has run, divided by
``n``. Goal: at most 8 kB per iteration (it was 47 kB: validated pydantic objects). For
reference, the rows also give the size of the recording's own JSON per iteration, and what it
keeps once every list of the recording (events, reads, steps...) has been read as models.

Run ``python bench/bench_memory.py`` (``--quick`` only checks it runs).
"""

from __future__ import annotations

import gc
import statistics
import tracemalloc
from typing import Any

from _kit import Report, options

from footprint_lab import Agent, define_tool
from footprint_lab.providers import mock


def scripted(iterations: int) -> Agent:
    noop = define_tool(name="noop", description="Does nothing.", input_schema={"type": "object", "properties": {}},
                       fn=lambda: "ok")
    replies: list[Any] = [{"tool": "noop", "args": {}}] * (iterations - 1) + ["final"]
    return Agent(provider=mock(replies=replies), tools=[noop], max_iterations=iterations,
                 system="You are a careful assistant.")


def kept_kb(iterations: int) -> tuple[float, float, float]:
    """kB per iteration kept with the recording materialised, then with every list read; JSON kB per iteration."""
    agent = scripted(iterations)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    run = agent.run_sync("go")
    recording = run.recording
    gc.collect()
    materialised = tracemalloc.get_traced_memory()[0] - before
    for name in ("steps", "reads", "commits", "decisions", "events", "context_pieces", "exchanges"):
        len(getattr(recording, name)[:1])
    gc.collect()
    every_list = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    json_kb = len(recording.model_dump_json()) / 1024 / iterations
    return materialised / 1024 / iterations, every_list / 1024 / iterations, json_kb


def main() -> None:
    args = options(__doc__ or "")
    report = Report("memory", args)
    kept_kb(50)  # imports and one-off caches are not a run's
    sizes = (100, 1000) if args.quick else (100, 1000, 10_000)
    for size in sizes:
        samples = [kept_kb(size) for _ in range(1 if args.quick else 3)]
        report.add("kept per iteration, recording materialised", [s[0] for s in samples], size=f"{size} iter",
                   unit="kB", goal="<= 8 kB", met=statistics.median(s[0] for s in samples) <= 8,
                   note=f"its JSON: {samples[0][2]:.1f} kB per iteration")
        report.add("kept per iteration, every list read as models", [s[1] for s in samples], size=f"{size} iter",
                   unit="kB", goal="(reference)")
    report.close()


if __name__ == "__main__":
    main()
