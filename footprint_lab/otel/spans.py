"""Finished spans, whatever form they arrive in, read once into one plain shape.

Rule kept: the import door accepts the two forms a team has at hand (the SDK's finished
``ReadableSpan`` objects, and the OTLP JSON a collector's file exporter writes) and refuses
anything else by name before a recording is built (``OtelSpansError``), saying what
arrived by shape only. Past this module nothing looks at a span's origin.

Pattern: duck typing on the SDK's public span properties (``context``, ``parent``,
``attributes``...), so reading spans needs no OpenTelemetry import.

Role: the door of :mod:`footprint_lab.otel`; free of ``opentelemetry``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from footprint_lab.engine.refusal import describe_shape
from footprint_lab.otel.refusals import OtelSpansError


class SpanData(NamedTuple):
    """One finished span as the importer reads it."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attributes: Mapping[str, Any]
    failed: bool


def read_spans(spans: Any) -> list[SpanData]:
    """``spans`` (SDK spans, OTLP JSON, or ``SpanData``) as a list of :class:`SpanData`, refused if it is neither."""
    if isinstance(spans, str | bytes | bytearray):
        try:
            spans = json.loads(spans)
        except ValueError:
            raise OtelSpansError("text that is not JSON") from None
    if isinstance(spans, Mapping):
        if "resourceSpans" not in spans:
            raise OtelSpansError("a dict without 'resourceSpans'")
        return list(_otlp_json(spans))
    if not isinstance(spans, Iterable):
        raise OtelSpansError(describe_shape(spans))
    out: list[SpanData] = []
    for n, span in enumerate(spans):
        if isinstance(span, SpanData):
            out.append(span)
        elif isinstance(span, Mapping) and "resourceSpans" in span:
            out.extend(_otlp_json(span))
        elif hasattr(span, "context") and hasattr(span, "attributes") and hasattr(span, "start_time"):
            out.append(_sdk_span(span))
        else:
            raise OtelSpansError(f"a collection whose item {n} is {describe_shape(span)}")
    return out


def _sdk_span(span: Any) -> SpanData:
    context = span.context
    parent = span.parent
    status = getattr(getattr(span, "status", None), "status_code", None)
    return SpanData(
        trace_id=format(context.trace_id, "032x"), span_id=format(context.span_id, "016x"),
        parent_id=format(parent.span_id, "016x") if parent is not None else None,
        name=span.name or "", start_ns=span.start_time or 0, end_ns=span.end_time or span.start_time or 0,
        attributes=dict(span.attributes or {}), failed=getattr(status, "name", "") == "ERROR",
    )


def _otlp_value(value: Mapping[str, Any]) -> Any:
    """One OTLP JSON ``AnyValue`` as a Python value."""
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return tuple(_otlp_value(v) for v in value["arrayValue"].get("values", []))
    if "kvlistValue" in value:
        return {kv["key"]: _otlp_value(kv.get("value", {})) for kv in value["kvlistValue"].get("values", [])}
    return None


def _otlp_json(data: Mapping[str, Any]) -> Iterable[SpanData]:
    for resource in data.get("resourceSpans") or []:
        for scope in resource.get("scopeSpans") or []:
            for span in scope.get("spans") or []:
                attributes = {kv["key"]: _otlp_value(kv.get("value", {})) for kv in span.get("attributes") or []}
                start = int(span.get("startTimeUnixNano") or 0)
                yield SpanData(
                    trace_id=str(span.get("traceId", "")), span_id=str(span.get("spanId", "")),
                    parent_id=span.get("parentSpanId") or None, name=str(span.get("name", "")),
                    start_ns=start, end_ns=int(span.get("endTimeUnixNano") or start), attributes=attributes,
                    failed=(span.get("status") or {}).get("code") in (2, "STATUS_CODE_ERROR"),
                )


def operation(span: SpanData) -> str:
    """The GenAI operation of a span (``invoke_agent``, ``chat``, ``execute_tool``...), or ``""``.

    ``gen_ai.operation.name`` when set; otherwise the first word of the span's name, which the
    conventions make the operation (``chat gpt-4o``), with pydantic-ai's older names mapped.
    """
    name = span.attributes.get("gen_ai.operation.name")
    if isinstance(name, str) and name:
        return name
    first = span.name.split(" ", 1)[0]
    if span.name.startswith("agent run"):
        return "invoke_agent"
    if span.name.startswith("running tool"):
        return "execute_tool"
    return first


def json_attribute(span: SpanData, key: str) -> Any:
    """A JSON-valued attribute decoded (``None`` when missing or not JSON)."""
    value = span.attributes.get(key)
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value if key.endswith((".result", ".arguments")) else None
    return value
