"""OpenTelemetry benchmark: importing and exporting 1,000 agent runs of 5 iterations each.

Goals (issue 15), medians: ``from_spans`` on the spans of 1,000 runs (5 ``chat`` spans and 4
``execute_tool`` spans under one ``invoke_agent`` span each: 10,000 spans) into 1,000 ``Run``
objects, in at most 2 s (each run's ``Recording`` is built on first access, as for a live run;
the time with every recording built is printed too); ``to_spans`` of those 1,000 recordings
(materialised before timing) in at most 2 s, which is the export's cost before network time.
The spans are the ones footprint_lab exports, so a round trip is what is measured.
Run ``python bench/bench_otel.py``; ``--quick`` uses 100 runs and fewer samples (checks it runs).
"""

from __future__ import annotations

from typing import Any

from _kit import Report, median, options, samples_ms

from footprint_lab import Agent, define_tool
from footprint_lab.otel import from_spans
from footprint_lab.otel._exporter import to_spans
from footprint_lab.providers import LLMRequest, mock

ITERATIONS = 5


def five_iteration_agent() -> Agent:
    """Four tool rounds, then the answer: five LLM calls per run."""
    lookup = define_tool(name="lookup_order", description="Find an order by its id.",
                         input_schema={"type": "object", "properties": {"order_id": {"type": "string"}}},
                         fn=lambda order_id="": {"order_id": order_id, "age_days": 47})

    def respond(request: LLMRequest) -> Any:
        if request.call_index < ITERATIONS - 1:
            return {"tool": "lookup_order", "args": {"order_id": f"A-{request.call_index}"}}
        return "DECLINED: the order is 47 days old."

    return Agent(provider=mock(respond=respond), tools=[lookup], system="Refunds are allowed within 30 days.",
                 max_iterations=ITERATIONS)


def main() -> None:
    args = options(__doc__.splitlines()[0])
    count = 100 if args.quick else 1000
    repeats = 3 if args.quick else 7
    agent = five_iteration_agent()
    recordings = [agent.run_sync(f"Refund for order {n}?").recording for n in range(count)]
    spans = to_spans(recordings)
    runs = from_spans(spans)
    assert len(runs) == count and all(len(r.recording.exchanges) == ITERATIONS for r in runs)
    assert runs[0].answer == recordings[0].answer
    report = Report("otel", args)
    size = f"{count:,} runs x {ITERATIONS} iterations ({len(spans):,} spans)"
    goal = 2000.0 * count / 1000
    imported = samples_ms(lambda: from_spans(spans), repeats)
    report.add("from_spans", imported, size=size, goal=f"<= {goal:.0f} ms", met=median(imported) <= goal)
    built = samples_ms(lambda: [run.recording for run in from_spans(spans)], repeats)
    report.add("from_spans, every run's Recording then built (as on first view)", built, size=size,
               note="reference: imported runs build their recording on first access, as live runs do")
    exported = samples_ms(lambda: to_spans(recordings), repeats)
    report.add("to_spans (before network time)", exported, size=f"{count:,} runs x {ITERATIONS} iterations",
               goal=f"<= {goal:.0f} ms", met=median(exported) <= goal)
    report.close()


if __name__ == "__main__":
    main()
