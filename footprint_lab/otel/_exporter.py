"""``to_spans`` and ``export_otlp``: a recording sent where a team already looks at traces.

Rule kept: the spans follow the GenAI semantic conventions a collector, Phoenix, Langfuse or
Jaeger already read (one ``invoke_agent`` span per run and member run, ``chat`` children with
``gen_ai.input.messages`` / ``gen_ai.output.messages`` / ``gen_ai.system_instructions`` /
``gen_ai.tool.definitions`` and usage, ``execute_tool`` children with the call's arguments and
result), and each carries ``footprint_lab.run_id`` / ``footprint_lab.step_id`` /
``footprint_lab.source_ids`` so a span in the team's backend points back to the evidence. They
are built from the ``Recording`` only, which a redaction policy has already masked, so nothing
it covers can leave. Ids are derived from the run and step ids: exporting twice gives the
same trace.

Pattern: finished SDK ``ReadableSpan`` objects made directly (no tracer, no clock), handed to
the official OTLP/HTTP protobuf exporter. No collector is started here.

Role: the export half of :mod:`footprint_lab.otel`; imports ``opentelemetry`` (the ``otel`` extra).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from footprint_lab.base.refusal import describe_shape
from footprint_lab.core.run import Run
from footprint_lab.core.runs_given import Runs, runs_given
from footprint_lab.otel.refusals import OtelExportError, OtlpExportFailed
from footprint_lab.record.recording import LLMExchange, Recording
from footprint_lab.record.schema import KIND_TOOL_RESULT

_SCOPE = InstrumentationScope("footprint_lab.otel", "0.1.0")
_RESOURCE = Resource({"service.name": "footprint_lab"})
_OK = Status(StatusCode.UNSET)
_FAILED = Status(StatusCode.ERROR)


def _id(bits: int, *parts: str) -> int:
    digest = hashlib.blake2b("\x1f".join(parts).encode("utf-8", "surrogatepass"), digest_size=bits // 8).digest()
    return int.from_bytes(digest, "big") or 1


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def genai_messages(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """footprint_lab turns as GenAI messages (``role`` and typed ``parts``)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role == "tool":
            out.append({"role": "tool", "parts": [{"type": "tool_call_response", "id": message.get("tool_call_id"),
                                                    "name": message.get("name"),
                                                    "result": message.get("content")}]})
            continue
        parts: list[dict[str, Any]] = []
        if message.get("content"):
            parts.append({"type": "text", "content": message["content"]})
        parts.extend({"type": "tool_call", "id": c["id"], "name": c["name"], "arguments": c["args"]}
                     for c in message.get("tool_calls") or [])
        out.append({"role": role, "parts": parts})
    return out


def _runs(runs: Runs, door: str) -> list[Recording]:
    items = runs_given(runs)
    if items is None:
        raise OtelExportError("runs", describe_shape(runs), "Pass a Run, a Recording, or a list of them", door=door)
    out: list[Recording] = []
    for item in items:
        if isinstance(item, Run):
            out.append(item.recording)
        elif isinstance(item, Recording):
            out.append(item)
        else:
            raise OtelExportError("runs", f"a collection holding {describe_shape(item)}",
                                  "Pass a Run, a Recording, or a list of them", door=door)
    return out


class _Builder:
    """Writes one run tree's spans into ``out``."""

    def __init__(self, out: list[ReadableSpan], door: str) -> None:
        self.out, self.door = out, door

    def span(self, name: str, context: SpanContext, parent: SpanContext | None, attributes: dict[str, Any],
             start: int, end: int, *, failed: bool = False, kind: SpanKind = SpanKind.INTERNAL) -> None:
        self.out.append(ReadableSpan(
            name, context=context, parent=parent, resource=_RESOURCE, attributes=attributes, kind=kind,
            status=_FAILED if failed else _OK, start_time=start, end_time=end, instrumentation_scope=_SCOPE))

    def tree(self, recording: Recording) -> None:
        """One run and its member runs, parents first, walked without recursion (any depth).

        A recording among its own members (which only a hand-edited one can be) is refused.
        """
        trace_id = _id(128, recording.run_id)
        path: list[int] = []  # ids of the recordings from the root down to the one being written
        on_path: set[int] = set()
        stack: list[tuple[Recording, SpanContext | None, int]] = [(recording, None, 0)]
        while stack:
            current, parent, depth = stack.pop()
            while len(path) > depth:
                on_path.discard(path.pop())
            if id(current) in on_path:
                raise OtelExportError("runs", "a recording that holds itself among its member runs",
                                      "Pass runs as footprint_lab recorded them, or load_recording a saved one",
                                      door=self.door)
            path.append(id(current))
            on_path.add(id(current))
            context = self.run(current, trace_id, parent)
            stack.extend((child, context, depth + 1) for child in reversed(current.children))

    def run(self, recording: Recording, trace_id: int, parent: SpanContext | None) -> SpanContext:
        """One run's own spans (``invoke_agent``, its chats and tools); the context its members hang under."""
        run_id = recording.run_id
        start = int(recording.started_at * 1e9)
        context = SpanContext(trace_id, _id(64, run_id, recording.path, "run"), False, TraceFlags(1))
        name = recording.runner.name or recording.runner.id or recording.runner.kind
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name,
            "footprint_lab.run_id": run_id, "footprint_lab.runner_kind": recording.runner.kind,
            "footprint_lab.status": recording.status,
        }
        if recording.path:
            attributes["footprint_lab.path"] = recording.path
        if recording.answer is not None:
            attributes["gen_ai.output.messages"] = _json(genai_messages([{"role": "assistant",
                                                                           "content": recording.answer}]))
        end = start + int(recording.duration_ms * 1e6)
        self.span(f"invoke_agent {name}", context, parent, attributes, start, end,
                  failed=recording.status == "failed")
        steps = {step.step_id: step for step in recording.steps}
        for exchange in recording.exchanges:
            self.chat(recording, exchange, steps, trace_id, context, start)
        for step in recording.steps:
            if step.stage == "tool":
                self.tool(recording, step, trace_id, context, start)
        return context

    def chat(self, recording: Recording, exchange: LLMExchange, steps: dict[str, Any], trace_id: int,
             parent: SpanContext, run_start: int) -> None:
        step = steps.get(exchange.step_id)
        start = run_start + int(step.started_ms * 1e6) if step is not None else run_start
        pieces = recording.context_pieces
        slots = recording.exchange_pieces(exchange)
        response = exchange.response
        system = [{"type": "text", "content": pieces[i].content} for i in slots["system"]]
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat", "gen_ai.request.model": exchange.model,
            "gen_ai.system_instructions": _json(system),
            "gen_ai.input.messages": _json(genai_messages(recording.request_messages(exchange))),
            "gen_ai.output.messages": _json([{
                "role": "assistant", "finish_reason": response.stop_reason,
                **genai_messages([{"role": "assistant", "content": response.content,
                                   "tool_calls": [c.model_dump() for c in response.tool_calls]}])[0]}]),
            "gen_ai.tool.definitions": _json([{"type": "function", "name": t.get("name"),
                                               "description": t.get("description"),
                                               "parameters": t.get("input_schema")} for t in exchange.tools]),
            "gen_ai.usage.input_tokens": response.usage.input_tokens,
            "gen_ai.usage.output_tokens": response.usage.output_tokens,
            "footprint_lab.run_id": recording.run_id, "footprint_lab.step_id": exchange.step_id,
            "footprint_lab.source_ids": _json({slot: [[pieces[i].source_kind, pieces[i].source_id] for i in indices]
                                               for slot, indices in slots.items()}),
        }
        if response.model:
            attributes["gen_ai.response.model"] = response.model
        if response.stop_reason:
            attributes["gen_ai.response.finish_reasons"] = (response.stop_reason,)
        context = SpanContext(trace_id, _id(64, recording.run_id, exchange.step_id), False, TraceFlags(1))
        self.span(f"chat {exchange.model}", context, parent, attributes, start,
                  start + int(exchange.duration_ms * 1e6), kind=SpanKind.CLIENT,
                  failed=step is not None and step.status == "error")

    def tool(self, recording: Recording, step: Any, trace_id: int, parent: SpanContext, run_start: int) -> None:
        result = next((p for p in recording.context_pieces
                       if p.landed_by == step.step_id and p.source_kind == KIND_TOOL_RESULT), None)
        call_id = result.source_id if result is not None else ""
        asker = recording.exchange_at(str(result.detail.get("requested_by"))) if result is not None else None
        call = next((c for c in asker.response.tool_calls if c.id == call_id), None) if asker else None
        name = call.name if call is not None else str(result.detail.get("tool", "")) if result is not None else ""
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.id": call_id,
            "footprint_lab.run_id": recording.run_id, "footprint_lab.step_id": step.step_id,
        }
        if call is not None:
            attributes["gen_ai.tool.call.arguments"] = _json(call.args)
        if result is not None:
            attributes["gen_ai.tool.call.result"] = result.content
            attributes["footprint_lab.source_ids"] = _json({"messages": [[KIND_TOOL_RESULT, call_id]]})
        start = run_start + int(step.started_ms * 1e6)
        context = SpanContext(trace_id, _id(64, recording.run_id, step.step_id), False, TraceFlags(1))
        self.span(f"execute_tool {name}", context, parent, attributes, start, start + int(step.duration_ms * 1e6),
                  failed=step.status != "ok")


def to_spans(runs: Runs) -> list[ReadableSpan]:
    """A run (or a list of runs, or recordings) as finished OpenTelemetry spans, one trace per run."""
    return _spans(runs, "to_spans")


def _spans(runs: Runs, door: str) -> list[ReadableSpan]:
    out: list[ReadableSpan] = []
    builder = _Builder(out, door)
    for recording in _runs(runs, door):
        builder.tree(recording)
    return out


def export_otlp(runs: Runs, *, endpoint: str, headers: Mapping[str, str] | None = None,
                timeout: float = 10.0) -> int:
    """Send runs to an OTLP/HTTP collector (protobuf, the official exporter); the number of spans sent.

    ``endpoint`` is the traces URL (``http://localhost:4318/v1/traces``); ``headers`` carry what
    the backend asks for (an API key). A collector that does not accept them raises
    :class:`~footprint_lab.otel.refusals.OtlpExportFailed`; the recordings are unchanged.
    """
    if not isinstance(endpoint, str) or not endpoint.startswith(("http://", "https://")):
        raise OtelExportError("endpoint", describe_shape(endpoint) if not isinstance(endpoint, str)
                              else "text that is not an http(s) URL",
                              "Pass the collector's OTLP/HTTP traces URL, such as http://localhost:4318/v1/traces")
    if headers is not None and not (isinstance(headers, Mapping) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in headers.items())):
        raise OtelExportError("headers", describe_shape(headers), "Pass a dict of header names to text values")
    spans = _spans(runs, "export_otlp")
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    exporter = OTLPSpanExporter(endpoint=endpoint, headers=dict(headers or {}), timeout=timeout)
    try:
        result = exporter.export(spans)
    finally:
        exporter.shutdown()
    if result is not SpanExportResult.SUCCESS:
        raise OtlpExportFailed(len(spans))
    return len(spans)
