"""Question-the-evidence benchmark: integrity on a 10,000-step recording, and bisect_culprits' rerun count.

Goals (issue 18): ``integrity`` over a recording of 10,000 steps in at most 50 ms (median; the
recording is materialised before timing, and every tool call carries an order id, so the
invented-identifier check traces each one), and ``bisect_culprits`` on 8 suspects of which one
pair is jointly sufficient (each alone is not) in at most 40 reruns, baseline included.
Run ``python bench/bench_question.py``; ``--quick`` takes fewer samples of the same workloads.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time
from typing import Any

from footprint_lab import Agent, define_tool
from footprint_lab.context import define_fact
from footprint_lab.explain import bisect_culprits, integrity
from footprint_lab.providers import LLMRequest, mock

STEPS = 10_000
SUSPECTS = 8


def long_agent(steps: int) -> Agent:
    """An agent whose run records ``steps`` steps, each tool round looking up the order the last one named."""
    rounds = (steps - 4) // 3
    lookup = define_tool(
        name="lookup_order", description="Find an order by its id.",
        input_schema={"type": "object", "properties": {"order_id": {"type": "string"}}},
        fn=lambda order_id: {"order_id": order_id, "next": f"A-{int(order_id[2:]) + 1}", "age_days": 12})

    def respond(request: LLMRequest) -> Any:
        if request.call_index >= rounds:
            return "done"
        return {"tool": "lookup_order", "args": {"order_id": f"A-{1000 + request.call_index}"}}

    return Agent(provider=mock(respond=respond), tools=[lookup], system="Start from order A-1000.",
                 max_iterations=rounds + 1)


def pair_agent(exclude: Any = (), seed: Any = None) -> Agent:
    """8 facts; the model approves while fact 'f2' or fact 'f5' is there (either alone is enough)."""
    facts = [define_fact(id=f"f{n}", data=f"note {n}" + (": the customer is a VIP" if n in (2, 5) else ""))
             for n in range(SUSPECTS)]

    def respond(request: LLMRequest) -> str:
        return "APPROVED" if "VIP" in request.system else "DECLINED"

    agent = Agent(provider=mock(respond=respond), system="Decide.", context=facts)
    return agent.without(list(exclude)) if exclude else agent


def median_ms(action: Any, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        gc.collect()
        started = time.perf_counter_ns()
        action()
        samples.append((time.perf_counter_ns() - started) / 1e6)
    return statistics.median(samples)


async def integrity_figure(repeats: int) -> float:
    """Median ``integrity`` time on a 10,000-step recording (which is gone when this returns)."""
    recording = (await long_agent(STEPS).run("go")).recording
    assert len(recording.steps) == STEPS, len(recording.steps)
    report = integrity(recording)
    assert report.findings == [], str(report)
    return median_ms(lambda: integrity(recording), repeats)


async def main(quick: bool) -> None:
    integrity_ms = await integrity_figure(5 if quick else 31)
    # The machine's pace, to read the figure on a shared or loaded host (about 3.5 ms on an idle core).
    reference_ms = median_ms(lambda: [n * 2 for n in range(100_000)], 5 if quick else 31)

    run = await pair_agent().run("Refund?")
    suspects = [f"f{n}" for n in range(SUSPECTS)]
    found = await bisect_culprits(run, rerun=pair_agent, samples=3, sources=suspects)
    assert [set(s.sources) for s in found.culprits] == [{"f2", "f5"}], str(found)
    print(f"integrity on a {STEPS:,}-step recording: {integrity_ms:.1f} ms median (goal <= 50 ms); "
          f"reference loop of 100,000 items {reference_ms:.1f} ms, ratio {integrity_ms / reference_ms:.1f}")
    print(f"bisect_culprits on {SUSPECTS} suspects, one jointly sufficient pair: {found.reruns} reruns "
          f"(goal <= 40), found {found.culprits[0].sources} {found.culprits[0].flips}/{found.culprits[0].samples}")
    assert found.reruns <= 40, found.reruns  # a count, the same on any machine


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="only check that it runs")
    asyncio.run(main(parser.parse_args().quick))
