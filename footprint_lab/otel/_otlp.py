"""OTLP protobuf (``ExportTraceServiceRequest``) read into the OTLP JSON shape the import door reads.

Rule kept: protobuf is a third form of the same spans, so it is turned into the OTLP JSON mapping
(ids as hex text, times as whole numbers, attributes as ``{key, value}`` objects) and read by the
one reader of :mod:`footprint_lab.otel._spans`, with the same checks and refusals. Bytes that do not
parse as a request are refused by name (``OtelSpansError``), never quoted.

Role: the protobuf half of the door; imports ``opentelemetry-proto`` when called.
"""

from __future__ import annotations

import base64
from typing import Any

from footprint_lab.otel.refusals import OtelSpansError


def decode(data: bytes) -> dict[str, Any]:
    """``data`` (the bytes of an OTLP ``ExportTraceServiceRequest``) as OTLP JSON, or :class:`OtelSpansError`."""
    try:
        from google.protobuf.message import DecodeError
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    except ImportError:
        raise OtelSpansError("bytes that are not JSON (reading OTLP protobuf needs opentelemetry-proto: pip "
                             "install opentelemetry-proto)") from None
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(data)
    except (DecodeError, RecursionError, ValueError):
        raise OtelSpansError(f"{len(data)} bytes that are neither OTLP JSON nor an OTLP protobuf "
                             "ExportTraceServiceRequest") from None
    return as_json(request)


def as_json(request: Any) -> dict[str, Any]:
    """An ``ExportTraceServiceRequest`` message as the OTLP JSON mapping."""
    return {"resourceSpans": [{"scopeSpans": [{"spans": [_span(span) for span in scope.spans]}
                                              for scope in resource.scope_spans]}
                              for resource in request.resource_spans]}


def _span(span: Any) -> dict[str, Any]:
    return {"traceId": span.trace_id.hex(), "spanId": span.span_id.hex(),
            "parentSpanId": span.parent_span_id.hex() or None, "name": span.name,
            "startTimeUnixNano": span.start_time_unix_nano, "endTimeUnixNano": span.end_time_unix_nano,
            "status": {"code": span.status.code},
            "attributes": [{"key": pair.key, "value": _value(pair.value)} for pair in span.attributes]}


def _value(value: Any) -> dict[str, Any] | None:
    """One ``AnyValue`` as its JSON object (protobuf's own parse limit bounds the nesting)."""
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "string_value":
        return {"stringValue": value.string_value}
    if kind == "bool_value":
        return {"boolValue": value.bool_value}
    if kind == "int_value":
        return {"intValue": value.int_value}
    if kind == "double_value":
        return {"doubleValue": value.double_value}
    if kind == "bytes_value":
        return {"bytesValue": base64.b64encode(value.bytes_value).decode("ascii")}
    if kind == "array_value":
        return {"arrayValue": {"values": [_value(item) for item in value.array_value.values]}}
    return {"kvlistValue": {"values": [{"key": pair.key, "value": _value(pair.value)}
                                       for pair in value.kvlist_value.values]}}
