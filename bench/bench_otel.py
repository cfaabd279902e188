"""OpenTelemetry benchmark: importing and exporting 1,000 agent runs of 5 iterations each, and the receiver.

Goals (issue 15), medians: ``from_spans`` on the spans of 1,000 runs (5 ``chat`` spans and 4
``execute_tool`` spans under one ``invoke_agent`` span each: 10,000 spans) into 1,000 ``Run``
objects, in at most 2 s (each run's ``Recording`` is built on first access, as for a live run;
the time with every recording built is printed too); ``to_spans`` of those 1,000 recordings
(materialised before timing) in at most 2 s, which is the export's cost before network time.
The spans are the ones footprint_lab exports, so a round trip is what is measured.

Goals (issue 44): ``from_spans`` on 1,000 OpenInference traces of 5 LLM calls each (the shape
LangGraph's instrumentation writes: a CHAIN root, per iteration an LLM span whose flattened
``llm.input_messages.N.*`` grow with the conversation, ``llm.tools``, the invocation parameters,
and a TOOL span between calls: 10,000 SDK spans) in at most 2 s, its peer the GenAI spans of the
same runs imported in the same process (the ratio is OpenInference over GenAI); and ``receive()``
taking 100 traces a second, sent by another process through the official OTLP/HTTP exporter
(protobuf, a batch processor), with none lost.
Run ``python bench/bench_otel.py``; ``--quick`` uses 100 runs and fewer samples (checks it runs).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

from _kit import Report, median, options, samples_ms

from footprint_lab import Agent, define_tool
from footprint_lab.otel import from_spans, receive
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


SYSTEM = "Refunds are allowed within 30 days."
TOOL = json.dumps({"type": "function", "function": {"name": "lookup_order", "description": "Find an order by its id.",
                                                    "parameters": {"type": "object",
                                                                   "properties": {"order_id": {"type": "string"}}}}})


def openinference_traces(count: int, provider: Any = None) -> list[Any]:
    """``count`` LangGraph-shaped OpenInference traces of :data:`ITERATIONS` LLM calls, as finished SDK spans (ended
    on ``provider`` when one is given, for an exporter to send)."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    if provider is None:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("bench")
    for n in range(count):
        with tracer.start_as_current_span("LangGraph", attributes={"openinference.span.kind": "CHAIN"}):
            history: list[tuple[str, str, str]] = [("user", f"Refund for order {n}?", "")]
            for k in range(ITERATIONS):
                attrs: dict[str, Any] = {"openinference.span.kind": "LLM", "llm.model_name": "gpt-test",
                                         "llm.invocation_parameters": '{"model": "gpt-test", "temperature": 0.2}',
                                         "llm.tools.0.tool.json_schema": TOOL, "llm.token_count.prompt": 40 + k,
                                         "llm.token_count.completion": 9,
                                         "llm.input_messages.0.message.role": "system",
                                         "llm.input_messages.0.message.content": SYSTEM}
                for m, (role, content, call) in enumerate(history, 1):
                    key = f"llm.input_messages.{m}.message"
                    attrs[f"{key}.role"] = role
                    if role == "assistant":
                        attrs[f"{key}.tool_calls.0.tool_call.id"] = call
                        attrs[f"{key}.tool_calls.0.tool_call.function.name"] = "lookup_order"
                        attrs[f"{key}.tool_calls.0.tool_call.function.arguments"] = content
                    else:
                        attrs[f"{key}.content"] = content
                        if role == "tool":
                            attrs[f"{key}.tool_call_id"] = call
                call = f"call_{n}_{k}"
                out = "llm.output_messages.0.message"
                attrs[f"{out}.role"] = "assistant"
                if k < ITERATIONS - 1:
                    attrs[f"{out}.tool_calls.0.tool_call.id"] = call
                    attrs[f"{out}.tool_calls.0.tool_call.function.name"] = "lookup_order"
                    attrs[f"{out}.tool_calls.0.tool_call.function.arguments"] = f'{{"order_id": "A-{k}"}}'
                else:
                    attrs[f"{out}.content"] = "DECLINED: the order is 47 days old."
                with tracer.start_as_current_span("ChatOpenAI", attributes=attrs):
                    pass
                if k < ITERATIONS - 1:
                    result = json.dumps({"order_id": f"A-{k}", "age_days": 47})
                    with tracer.start_as_current_span("lookup_order", attributes={
                            "openinference.span.kind": "TOOL", "tool.name": "lookup_order",
                            "input.value": f"A-{k}", "output.value": result}):
                        pass
                    history += [("assistant", f'{{"order_id": "A-{k}"}}', call), ("tool", result, call)]
    return list(memory.get_finished_spans())


SENDER = """
import sys, time
sys.path.insert(0, "bench")
from bench_otel import openinference_traces
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
url, count, rate = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
spans = openinference_traces(count)
size = len(spans) // count
exporter = OTLPSpanExporter(endpoint=url)
print(time.time(), flush=True)
started = time.perf_counter()
for n in range(count):
    assert exporter.export(spans[n * size:(n + 1) * size]).name == "SUCCESS"
    pause = started + (n + 1) / rate - time.perf_counter()
    if pause > 0:
        time.sleep(pause)
print(time.perf_counter() - started)
"""


def receiver_rate(count: int, rate: float) -> tuple[int, float, float]:
    """(runs received, seconds the sender took, seconds from the sender's first trace until the last run arrived)
    for ``count`` traces sent by another process at ``rate`` a second."""
    last = [0.0]
    with receive(on_run=lambda run: last.__setitem__(0, time.time())) as receiver:
        sent = subprocess.run([sys.executable, "-c", SENDER, receiver.url, str(count), str(rate)], check=True,
                              capture_output=True, text=True)
        deadline = time.perf_counter() + 30
        while len(receiver.runs) < count and time.perf_counter() < deadline:
            time.sleep(0.05)
        assert not receiver.refused, receiver.refused
        began, took = (float(line) for line in sent.stdout.split())
        return len(receiver.runs), took, last[0] - began


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
    foreign = openinference_traces(count)
    (first,) = from_spans(foreign[: len(foreign) // count])
    assert first.answer == recordings[0].answer and len(first.recording.exchanges) == ITERATIONS
    assert first.recording.exchanges[-1].wire["request"]["options"] == {"temperature": 0.2}
    assert len(from_spans(foreign)) == count
    peer, timed = [], []
    for _ in range(repeats):  # taking turns, so both meet the same load
        peer += samples_ms(lambda: from_spans(spans), 1)
        timed += samples_ms(lambda: from_spans(foreign), 1)
    report.add("from_spans, OpenInference traces (LangGraph's shape)", timed,
               size=f"{count:,} traces x {ITERATIONS} LLM calls ({len(foreign):,} spans)", goal=f"<= {goal:.0f} ms",
               met=median(timed) <= goal, peer="from_spans, GenAI spans of the same runs", peer_samples=peer,
               ratio=median(timed) / median(peer))
    traces = 200 if args.quick else 1000
    got, sending, arrived = receiver_rate(traces, 100.0)
    report.add("receive(): traces sent by another process at 100 a second (official OTLP/HTTP exporter, "
               "protobuf, one POST a trace)",
               [arrived * 1000], size=f"{traces:,} traces x {ITERATIONS} LLM calls", goal="100 traces/s, none lost",
               met=got == traces and traces / arrived >= 95.0,
               note=f"time from the first trace sent to the last run made; {got} of {traces} runs made, the sender "
                    f"took {sending:.1f} s ({traces / arrived:.0f} traces/s end to end)")
    report.close()


if __name__ == "__main__":
    main()
