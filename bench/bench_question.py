"""Question-the-evidence benchmark: integrity on a 10,000-step recording, and bisect_culprits' rerun count.

Goals (issue 18): ``integrity`` over a recording of 10,000 steps in at most 50 ms (median; the
recording is materialised before timing, and every tool call carries an order id, so the
invented-identifier check traces each one), and ``bisect_culprits`` on 8 suspects of which one
pair is jointly sufficient (each alone is not) in at most 40 reruns, baseline included.
Run ``python bench/bench_question.py``; ``--quick`` takes fewer samples of the same workloads.
"""

from __future__ import annotations

import asyncio
from typing import Any

from _kit import Report, median, options, samples_ms

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


async def integrity_samples(repeats: int) -> list[float]:
    """``integrity`` times on a 10,000-step recording (which is gone when this returns)."""
    recording = (await long_agent(STEPS).run("go")).recording
    assert len(recording.steps) == STEPS, len(recording.steps)
    report = integrity(recording)
    assert report.findings == [], str(report)
    return samples_ms(lambda: integrity(recording), repeats)


async def main() -> None:
    args = options(__doc__.splitlines()[0])
    report = Report("question", args)
    timed = await integrity_samples(5 if args.quick else 31)
    # The machine's pace, to read the figure on a shared or loaded host (about 3.5 ms on an idle core).
    reference = samples_ms(lambda: [n * 2 for n in range(100_000)], 5 if args.quick else 31)
    report.add("integrity", timed, size=f"{STEPS:,} steps", goal="<= 50 ms", met=median(timed) <= 50,
               peer="reference loop of 100,000 items", peer_samples=reference,
               ratio=median(timed) / median(reference))

    run = await pair_agent().run("Refund?")
    suspects = [f"f{n}" for n in range(SUSPECTS)]
    found = await bisect_culprits(run, rerun=pair_agent, samples=3, sources=suspects)
    assert [set(s.sources) for s in found.culprits] == [{"f2", "f5"}], str(found)
    culprit = found.culprits[0]
    report.add("bisect_culprits, reruns needed", [float(found.reruns)], unit="reruns",
               size=f"{SUSPECTS} suspects, one jointly sufficient pair", goal="<= 40 reruns", met=found.reruns <= 40,
               note=f"found {culprit.sources} {culprit.flips}/{culprit.samples}")
    assert found.reruns <= 40, found.reruns  # a count, the same on any machine
    report.close()


if __name__ == "__main__":
    asyncio.run(main())
