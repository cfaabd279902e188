"""OpenTelemetry in and out: explain agents other frameworks built, send recordings to a team's collector.

- :func:`from_spans` turns finished spans (OpenInference's, as LangChain, LlamaIndex and the OpenAI
  Agents SDK write them; the GenAI conventions', current and older) into ``Run`` objects every view
  and explanation works on; :func:`capture` collects them in-process while a block runs, and
  :func:`receive` starts an OTLP/HTTP receiver that makes each trace a run as it ends. An import of
  many runs shows its progress once it lasts; stopped, it says so in one line and :func:`last_stopped`
  gives the runs imported.
- ``to_spans`` and ``export_otlp`` (:mod:`footprint_lab.otel._exporter`) write recordings as
  spans following the same conventions, over OTLP/HTTP (protobuf) through the official exporter;
  ``live_spans()`` (:mod:`footprint_lab.otel._live`) emits them while a run happens, as a subscriber.

Needs the optional extra ``otel`` (``opentelemetry-sdk``, ``opentelemetry-exporter-otlp-proto-http``).
This package imports it only when spans are captured or exported, so ``footprint_lab.errors``
can list the refusals here and ``import footprint_lab`` never loads OpenTelemetry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from footprint_lab.base.exports import public

if TYPE_CHECKING:
    from footprint_lab.base.progress import last_stopped as last_stopped
    from footprint_lab.otel._capture import Capture as Capture
    from footprint_lab.otel._capture import capture as capture
    from footprint_lab.otel._exporter import export_otlp as export_otlp
    from footprint_lab.otel._exporter import to_spans as to_spans
    from footprint_lab.otel._importer import ContentCaptureWarning as ContentCaptureWarning
    from footprint_lab.otel._importer import from_spans as from_spans
    from footprint_lab.otel._live import live_spans as live_spans
    from footprint_lab.otel._receiver import Receiver as Receiver
    from footprint_lab.otel._receiver import receive as receive
    from footprint_lab.otel.refusals import OtelCaptureError as OtelCaptureError
    from footprint_lab.otel.refusals import OtelExportError as OtelExportError
    from footprint_lab.otel.refusals import OtelReceiverError as OtelReceiverError
    from footprint_lab.otel.refusals import OtelSpanFieldError as OtelSpanFieldError
    from footprint_lab.otel.refusals import OtelSpanLoopError as OtelSpanLoopError
    from footprint_lab.otel.refusals import OtelSpansError as OtelSpansError
    from footprint_lab.otel.refusals import OtlpExportFailed as OtlpExportFailed
    from footprint_lab.otel.refusals import OtlpRequestRefused as OtlpRequestRefused

__all__ = [
    "Capture", "ContentCaptureWarning", "OtelCaptureError", "OtelExportError", "OtelReceiverError",
    "OtelSpanFieldError", "OtelSpanLoopError", "OtelSpansError", "OtlpExportFailed", "OtlpRequestRefused", "Receiver",
    "capture", "export_otlp", "from_spans", "last_stopped", "live_spans", "receive", "to_spans",
]
__getattr__, __dir__ = public(__name__)

