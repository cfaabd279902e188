"""Explain benchmark: backtrack on a 10,000-step recording, and localize on the planted-fact scenario.

Goals (issue 6), medians: ``backtrack`` from the answer of a recording of 10,000 steps in at
most 20 ms (the recording is materialised before timing: the walk is what is measured), and
``localize`` on the planted-fact scenario, 5 suspects x 3 samples plus the 3-rerun baseline on
the mock provider, in at most 100 ms (ranking, rebuilding the agents and all 18 reruns).
Issue 14: ``localize`` on the two-member ``Sequence`` (the fact planted in the triage member),
6 suspects x 3 samples plus the baseline, reruns concurrent, in at most 150 ms (ranking across
members, rebuilding the pipeline for each of the 21 reruns, and running them).
Run ``python bench/bench_explain.py``; ``--quick`` takes fewer samples of the same workloads.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

from footprint_lab import Agent, define_tool
from footprint_lab.explain import backtrack, find_dropped_context, localize
from footprint_lab.lab.pipelines import refund_pipeline
from footprint_lab.lab.scenarios import REFUND_REQUEST, planted_fact_agent
from footprint_lab.providers import LLMRequest, mock

STEPS = 10_000


def long_agent(steps: int) -> Agent:
    """An agent whose run records exactly ``steps`` steps.

    Seed, then ``(assemble, call-llm, tool)`` per tool round, then assemble, call-llm and final.
    """
    rounds = (steps - 4) // 3
    noop = define_tool(name="noop", description="Does nothing.", input_schema={"type": "object", "properties": {}},
                       fn=lambda: "ok")

    def respond(request: LLMRequest) -> Any:
        return {"tool": "noop", "args": {}} if request.call_index < rounds else "done"

    return Agent(provider=mock(respond=respond), tools=[noop], system="You are a careful assistant.",
                 max_iterations=rounds + 1)


def median_ms(action: Callable[[], Any], repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        gc.collect()
        started = time.perf_counter_ns()
        result = action()
        samples.append((time.perf_counter_ns() - started) / 1e6)
        del result
    return statistics.median(samples)


async def median_async_ms(action: Callable[[], Any], repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        gc.collect()
        started = time.perf_counter_ns()
        result = await action()
        samples.append((time.perf_counter_ns() - started) / 1e6)
        del result
    return statistics.median(samples)


async def walk_figures(repeats: int, text_repeats: int) -> tuple[float, int, float]:
    """Median backtrack time on a 10,000-step recording, its candidate count, and the time to render it."""
    recording = (await long_agent(STEPS).run("go")).recording
    assert len(recording.steps) == STEPS, len(recording.steps)
    candidates = len(backtrack(recording).candidates)
    walk_ms = median_ms(lambda: backtrack(recording), repeats)
    text_ms = median_ms(lambda: str(backtrack(recording)), text_repeats)
    return walk_ms, candidates, text_ms


async def main(quick: bool) -> None:
    repeats = 11 if quick else 101
    walk_ms, candidates, text_ms = await walk_figures(repeats, 3 if quick else 11)
    # The long recording is gone now: the rest is timed on a small heap, as in an analyst's notebook.

    agent = planted_fact_agent()
    planted = await agent.run(REFUND_REQUEST)
    report = await localize(planted, rerun=agent, samples=3, top=5)
    assert len(report.suspects) == 5 and report.confirmed == ["vip-override"], str(report)
    localize_ms = await median_async_ms(lambda: localize(planted, rerun=agent, samples=3, top=5), repeats)
    suspects_ms = median_ms(planted.suspects, repeats)
    budget = planted_fact_agent(variant="budget")
    dropped_run = await budget.run(REFUND_REQUEST)
    dropped_ms = await median_async_ms(lambda: find_dropped_context(dropped_run, rerun=budget), repeats)
    pipeline = refund_pipeline(planted_in="triage")
    composed = await pipeline.run(REFUND_REQUEST)
    proven = await localize(composed, rerun=pipeline, samples=3, top=6)
    assert len(proven.suspects) == 6 and proven.confirmed == ["vip-status"], str(proven)
    pipeline_ms = await median_async_ms(lambda: localize(composed, rerun=pipeline, samples=3, top=6), repeats)

    print(f"backtrack, {STEPS:,}-step recording ({candidates:,} candidates), median: {walk_ms:.2f} ms   "
          "(goal <= 20 ms)")
    print(f"  str(backtrack) of it, every hop rendered:  {text_ms:.1f} ms")
    print(f"localize, planted fact, 5 suspects x 3 samples + baseline, median: {localize_ms:.2f} ms   "
          "(goal <= 100 ms)")
    print(f"run.suspects(), planted fact, median:      {suspects_ms:.2f} ms")
    print(f"find_dropped_context with restoration, median: {dropped_ms:.2f} ms")
    print(f"localize, two-member Sequence, 6 suspects x 3 samples + baseline, median: {pipeline_ms:.2f} ms   "
          "(goal <= 150 ms)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer samples of the same workloads")
    asyncio.run(main(parser.parse_args().quick))
