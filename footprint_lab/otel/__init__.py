"""OpenTelemetry in and out: explain agents other frameworks built, send recordings to a team's collector.

- :func:`from_spans` turns finished GenAI spans (``invoke_agent``, ``chat``, ``execute_tool``)
  into ``Run`` objects every view and explanation works on; :func:`capture` collects them
  in-process while a block runs.
- :func:`to_spans` and :func:`export_otlp` write a recording as spans following the same
  conventions, over OTLP/HTTP (protobuf) through the official exporter.

Needs the optional extra ``otel`` (``opentelemetry-sdk``, ``opentelemetry-exporter-otlp-proto-http``);
``import footprint_lab`` never imports it.
"""

from footprint_lab.otel.capture import Capture, capture
from footprint_lab.otel.importer import ContentCaptureWarning, from_spans
from footprint_lab.otel.spans import OtelSpansError

__all__ = ["Capture", "ContentCaptureWarning", "OtelSpansError", "capture", "from_spans"]
