"""Explain benchmark: backtrack on a 10,000-step recording, and localize on the planted-fact scenario.

Goals (issue 6), medians: ``backtrack`` from the answer of a recording of 10,000 steps in at
most 100 ms (the recording is materialised before timing: the walk is what is measured; it was
20 ms until the walk went on to the earlier calls whose output a call was sent, which a piece
that steered a tool choice reaches the answer through: about 3x the time, still nothing a
reader waits for), and
``localize`` on the planted-fact scenario, 5 suspects x 3 samples plus the 3-rerun baseline on
the mock provider, in at most 100 ms (ranking, rebuilding the agents and all 18 reruns).
Issue 14: ``localize`` on the two-member ``Sequence`` (the fact planted in the triage member),
6 suspects x 3 samples plus the baseline, reruns concurrent, in at most 150 ms (ranking across
members, rebuilding the pipeline for each of the 21 reruns, and running them).
Rendering (issue 13): on the same 10,000-step recording, ``str(bt)`` and the notebook display
(``_repr_mimebundle_``: markdown and HTML) of its backtrack, and the HTML of its suspects table,
each at most 2x the time to compute the object; views that would be huge say what they left out
(``bt.render()`` and ``bt.to_frame()`` give everything).
Run ``python bench/bench_explain.py``; ``--quick`` takes a 1,000-step recording and fewer samples.
"""

from __future__ import annotations

import asyncio
import statistics
from typing import Any

from _kit import Report, options, samples_async_ms, samples_ms

from footprint_lab import Agent, Run, define_tool
from footprint_lab.examples.pipelines import refund_pipeline
from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent
from footprint_lab.explain import backtrack, find_dropped_context, localize, suspects
from footprint_lab.lab.views import answer_view
from footprint_lab.lab.views.tree import drawn_steps
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


def rendering(report: Report, steps: int, repeats: int) -> None:
    """Backtrack and suspects on a ``steps``-step recording: computed, then shown as text and HTML."""
    recording = asyncio.run(long_agent(steps).run("go")).recording
    assert len(recording.steps) == steps, len(recording.steps)
    run = Run.from_recording(recording)
    bt = backtrack(recording)
    size = f"{steps:,} steps, {len(bt.candidates):,} candidates"
    walk = samples_ms(lambda: backtrack(recording), repeats)
    report.add("backtrack", walk, size=size, goal="<= 100 ms", met=statistics.median(walk) <= 100)
    for label, show in (("str(backtrack)", lambda: str(bt)), ("backtrack display (markdown + HTML)",
                                                               lambda: bt._repr_mimebundle_())):
        shown = samples_ms(show, repeats)
        ratio = statistics.median(shown) / statistics.median(walk)
        report.add(label, shown, size=size, goal="<= 2x computing it", met=ratio <= 2, peer="backtrack",
                   peer_samples=walk, ratio=ratio)
    view = samples_ms(lambda: answer_view(recording), max(3, repeats // 10))
    report.add("answer view (what displaying the run draws)", view, size=size,
               note=f"reference: {len(answer_view(recording)) / 1e6:.2f} MB of HTML, computing included (backtrack, "
                    "suspects, integrity); each slot's first and latest pieces and top suspects are drawn, the "
                    "latest 20 earlier calls, the rest counted with the method that shows it")
    tree = run.tree(steps=True)
    shown_tree = samples_ms(tree._repr_mimebundle_, max(3, repeats // 10))
    drawn, left_out = drawn_steps(tree)
    report.add("step tree display (steps=True)", shown_tree, size=size,
               note=f"reference: {len(drawn.nodes):,} of {len(tree.nodes):,} nodes drawn, {left_out:,} steps counted "
                    "(each run's first and latest steps); tree.to_frame() lists every node")
    # computed by the explanation itself: run.suspects() hands back the copy its run keeps once computed
    ranked = samples_ms(lambda: suspects(recording), max(3, repeats // 10))
    table = suspects(recording)
    shown = samples_ms(table._repr_html_, repeats)
    ratio = statistics.median(shown) / statistics.median(ranked)
    report.add("suspects table HTML", shown, size=f"{steps:,} steps, {len(table):,} rows", goal="<= 2x computing it",
               met=ratio <= 2, peer="explain.suspects(recording)", peer_samples=ranked, ratio=ratio)


async def planted(report: Report, repeats: int) -> None:
    agent = planted_fact_agent()
    run = await agent.run(REFUND_REQUEST)
    report_ = await localize(run, rerun=agent, samples=3, top=5)
    assert len(report_.suspects) == 5 and report_.confirmed == ["vip-override"], str(report_)
    localized = await samples_async_ms(lambda: localize(run, rerun=agent, samples=3, top=5), repeats)
    report.add("localize, planted fact, 5 suspects x 3 samples + baseline", localized, size="18 reruns",
               goal="<= 100 ms", met=statistics.median(localized) <= 100)
    report.add("explain.suspects(recording), planted fact", samples_ms(lambda: suspects(run.recording), repeats),
               size="1 run")
    budget = planted_fact_agent(variant="budget")
    dropped_run = await budget.run(REFUND_REQUEST)
    report.add("find_dropped_context with restoration",
               await samples_async_ms(lambda: find_dropped_context(dropped_run, rerun=budget), repeats), size="1 run")
    pipeline = refund_pipeline(planted_in="triage")
    composed = await pipeline.run(REFUND_REQUEST)
    proven = await localize(composed, rerun=pipeline, samples=3, top=6)
    assert len(proven.suspects) == 6 and proven.confirmed == ["vip-status"], str(proven)
    localized = await samples_async_ms(lambda: localize(composed, rerun=pipeline, samples=3, top=6), repeats)
    report.add("localize, two-member Sequence, 6 suspects x 3 samples + baseline", localized, size="21 reruns",
               goal="<= 150 ms", met=statistics.median(localized) <= 150)


def main() -> None:
    args = options(__doc__ or "")
    report = Report("explain", args)
    rendering(report, 1_000 if args.quick else STEPS, 5 if args.quick else 31)
    # The long recording is gone now: the rest is timed on a small heap, as in an analyst's notebook.
    asyncio.run(planted(report, 5 if args.quick else 101))
    report.close()


if __name__ == "__main__":
    main()
