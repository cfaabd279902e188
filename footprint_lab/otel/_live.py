"""``live_spans()``: a subscriber that emits OpenTelemetry spans while a footprint_lab run happens.

Rule kept: live spans are made from the run's events only, which the recorder has already
passed through the run's redaction policy, so nothing a policy covers reaches the tracer. They
follow the conventions of :mod:`footprint_lab.otel._exporter` (``invoke_agent`` per run and member
run, ``chat`` per LLM call, ``execute_tool`` per tool call, ``footprint_lab.*`` ids), with what the
events carry: models, usage, finish reasons, tool arguments and a preview of each result. The
full messages and tool definitions are in the recording; send them after the run with
``export_otlp``. A subscriber never breaks the run it watches: the recorder counts and skips a
listener that raises.

Pattern: a listener (``agent.subscribe(live_spans())`` or ``run(..., on_event=...)``) that opens a
span on each ``*_start`` event and closes it on the matching ``*_end``.

Role: the live half of the export; imports ``opentelemetry`` when built.
"""

from __future__ import annotations

import json
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from footprint_lab.base.refusal import describe_shape
from footprint_lab.otel.refusals import OtelExportError


class LiveSpans:
    """Turns one runner's events into spans on a tracer, as they arrive."""

    def __init__(self, tracer_provider: trace.TracerProvider | None = None) -> None:
        provider = tracer_provider if tracer_provider is not None else trace.get_tracer_provider()
        if not callable(getattr(provider, "get_tracer", None)):
            raise OtelExportError("tracer_provider", describe_shape(provider),
                                  "Pass an OpenTelemetry TracerProvider (it has get_tracer), or leave it out to "
                                  "emit on the global one", door="live_spans")
        self.tracer = provider.get_tracer("footprint_lab.otel")
        self.runs: list[tuple[str, Any]] = []  # open invoke_agent spans, innermost last: (run id, span)
        self.open: dict[tuple[str, str], Any] = {}  # (run id, step id) -> an open chat or tool span

    def _parent(self, run_id: str) -> Any:
        span = next((s for r, s in reversed(self.runs) if r == run_id), None)
        if span is None and self.runs:
            span = self.runs[-1][1]
        return trace.set_span_in_context(span) if span is not None else None

    def __call__(self, event: Any) -> None:
        kind, run_id, step_id, payload = event.type, event.run_id, event.step_id, event.payload
        if kind == "run_start":
            name = payload.get("name") or payload.get("id") or payload.get("runner") or "agent"
            span = self.tracer.start_span(f"invoke_agent {name}", context=self._parent(run_id), attributes={
                "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": str(name),
                "footprint_lab.run_id": run_id, "footprint_lab.runner_kind": str(payload.get("runner", ""))})
            self.runs.append((run_id, span))
        elif kind == "run_end":
            index = next((i for i in range(len(self.runs) - 1, -1, -1) if self.runs[i][0] == run_id), None)
            if index is not None:
                _, span = self.runs.pop(index)
                status = str(payload.get("status", ""))
                span.set_attribute("footprint_lab.status", status)
                if status == "failed":
                    span.set_status(Status(StatusCode.ERROR))
                span.end()
        elif kind == "llm_start":
            model = str(payload.get("model", ""))
            self.open[(run_id, step_id)] = self.tracer.start_span(
                f"chat {model}", context=self._parent(run_id), kind=SpanKind.CLIENT, attributes={
                    "gen_ai.operation.name": "chat", "gen_ai.request.model": model,
                    "footprint_lab.run_id": run_id, "footprint_lab.step_id": step_id})
        elif kind == "llm_end":
            span = self.open.pop((run_id, step_id), None)
            if span is not None:
                span.set_attribute("gen_ai.usage.input_tokens", int(payload.get("input_tokens") or 0))
                span.set_attribute("gen_ai.usage.output_tokens", int(payload.get("output_tokens") or 0))
                if payload.get("stop_reason"):
                    span.set_attribute("gen_ai.response.finish_reasons", (str(payload["stop_reason"]),))
                span.end()
        elif kind == "tool_start":
            tool = str(payload.get("tool", ""))
            self.open[(run_id, step_id)] = self.tracer.start_span(
                f"execute_tool {tool}", context=self._parent(run_id), attributes={
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool,
                    "gen_ai.tool.call.id": str(payload.get("tool_call_id", "")),
                    "gen_ai.tool.call.arguments": json.dumps(payload.get("args", {}), ensure_ascii=False,
                                                             default=str),
                    "footprint_lab.run_id": run_id, "footprint_lab.step_id": step_id})
        elif kind == "tool_end":
            span = self.open.pop((run_id, step_id), None)
            if span is not None:
                if "result" in payload:
                    span.set_attribute("footprint_lab.result_preview", str(payload["result"]))
                if payload.get("is_error"):
                    span.set_status(Status(StatusCode.ERROR))
                span.end()


def live_spans(tracer_provider: trace.TracerProvider | None = None) -> LiveSpans:
    """A subscriber emitting spans as runs happen: ``agent.subscribe(live_spans())``.

    ``tracer_provider``: the SDK provider to emit on (the global one by default, with whatever
    exporters the team set up on it).
    """
    return LiveSpans(tracer_provider)
