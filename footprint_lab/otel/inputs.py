"""What the OpenTelemetry import door reads, as a type checker sees it: :data:`Spans`.

Rule kept: this names what ``from_spans`` (and ``RunSet.from_spans``, which hands its spans on) accepts;
the door itself still judges what arrives by its shape and refuses anything else by name
(:class:`~footprint_lab.otel.refusals.OtelSpansError`), so the annotation only adds static help.

Role: the types of :mod:`footprint_lab.otel`'s import door, kept out of its private modules so a room above
(``batch``) can name them; nothing here imports ``opentelemetry`` at run time.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.sdk.trace import ReadableSpan

    from footprint_lab.otel._spans import SpanData

__all__ = ["Spans"]

#: what ``from_spans`` reads: the SDK's finished spans, OTLP JSON (a dict, its text or bytes, JSON lines), OTLP
#: protobuf (an ``ExportTraceServiceRequest`` or its bytes), a path to a file of either, or a list mixing them
Spans: TypeAlias = ("Iterable[ReadableSpan | Mapping[str, Any] | SpanData] | Mapping[str, Any]"
                    " | ExportTraceServiceRequest | str | bytes | bytearray | memoryview | os.PathLike[str]")
