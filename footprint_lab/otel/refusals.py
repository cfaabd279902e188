"""The errors of :mod:`footprint_lab.otel`, kept free of ``opentelemetry`` so ``footprint_lab.errors`` can list them.

Rule kept: a wrong argument to an OpenTelemetry door is refused by name before anything is
imported or sent (``OtelSpansError``, ``OtelExportError``), saying what arrived by shape only;
an export the collector did not accept is a failure while working (``OtlpExportFailed``), which
says how many spans were built and that none was confirmed, never quoting the endpoint or headers.
"""

from __future__ import annotations

from footprint_lab.engine.refusal import Refusal, RunFailure


class OtelSpansError(Refusal):
    """Raised when ``from_spans`` is given something that is not a collection of finished spans.

    Carries ``received`` (the shape of what arrived, never its content). Nothing is imported.
    """

    code = "ERR_OTEL_SPANS"
    fields = ("received",)

    def __init__(self, received: str) -> None:
        super().__init__(
            f"from_spans: received {received}, not finished spans. Pass a list of the SDK's finished spans "
            "(InMemorySpanExporter().get_finished_spans(), or cap.spans inside `with capture() as cap:`) or "
            "OTLP JSON (a dict with 'resourceSpans', as a collector's file exporter writes it)."
        )
        self.received = received


class OtelExportError(Refusal):
    """Raised when ``to_spans`` / ``export_otlp`` get something other than runs, or an unusable endpoint.

    Carries ``argument`` (which one is at fault) and ``received`` (its shape). Nothing is sent.
    """

    code = "ERR_OTEL_EXPORT"
    fields = ("argument", "received")

    def __init__(self, argument: str, received: str, fix: str) -> None:
        super().__init__(f"export_otlp: '{argument}' is {received}. {fix}.")
        self.argument = argument
        self.received = received


class OtlpExportFailed(RunFailure):
    """The collector did not accept an export (unreachable, refused, timed out).

    Carries ``spans`` (how many were built and offered) and ``retryable`` (``True``: the
    recordings are untouched, so exporting them again is safe).
    """

    code = "ERR_OTLP_EXPORT_FAILED"
    fields = ("spans", "retryable")

    def __init__(self, spans: int) -> None:
        super().__init__(
            f"export_otlp: the collector did not accept the {spans} span(s) (unreachable, refused or timed out); "
            "nothing is confirmed as stored. The recordings are unchanged: check the endpoint (an OTLP/HTTP "
            "traces URL such as http://host:4318/v1/traces) and the headers, then export again."
        )
        self.spans = spans
        self.retryable = True
