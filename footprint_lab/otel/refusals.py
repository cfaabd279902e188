"""The errors of :mod:`footprint_lab.otel`, kept free of ``opentelemetry`` so ``footprint_lab.errors`` can list them.

Rule kept: a wrong argument to an OpenTelemetry door is refused by name before anything is
imported or sent (``OtelSpansError``, ``OtelExportError``), and a capture with no SDK tracer
provider to listen on before anything is installed (``OtelCaptureError``), saying what
arrived by shape only.
Spans that are spans but do not hold together are refused the same way, before a single span
is replayed: a field of the wrong shape by its path (``OtelSpanFieldError``), spans whose
parents run in a loop by how many and how long (``OtelSpanLoopError``), never quoting an id,
a name or an attribute. An export the collector did not accept is a failure while working (``OtlpExportFailed``), which
says how many spans were built and that none was confirmed, never quoting the endpoint or headers.
"""

from __future__ import annotations

from footprint_lab.base.refusal import Refusal, RunFailure


class OtelSpansError(Refusal, ValueError):
    """Raised when ``from_spans`` is given something that is not a collection of finished spans, or spans none of
    which is an LLM call, agent, tool or retriever span in a convention it reads (nothing would be imported).

    Carries ``received`` (the shape of what arrived, never its content). Nothing is imported.
    """

    code = "ERR_OTEL_SPANS"
    fields = ("received",)

    def __init__(self, received: str, fix: str | None = None) -> None:
        super().__init__(
            f"from_spans: received {received}" + (f". {fix}." if fix else
            ", not finished spans. Pass a list of the SDK's finished spans "
            "(InMemorySpanExporter().get_finished_spans(), or cap.spans inside `with capture() as cap:`) or "
            "OTLP JSON (a dict with 'resourceSpans', as a collector's file exporter writes it).")
        )
        self.received = received


class OtelSpanFieldError(Refusal, ValueError):
    """Raised when one field of the spans handed to ``from_spans`` has a shape no span can have.

    Carries ``field`` (its path: ``resourceSpans[0].scopeSpans[2].spans[5].startTimeUnixNano``
    for OTLP JSON, ``spans[3].context.span_id`` for the SDK's spans) and ``problem`` (what is
    wrong, by shape). Nothing is imported and no value is quoted.
    """

    code = "ERR_OTEL_SPAN_FIELD"
    fields = ("field", "problem")

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(
            f"from_spans: {field} {problem}. Pass spans as the OpenTelemetry SDK finishes them, or OTLP JSON as a "
            "collector's file exporter writes it (ids as text, times as whole nanoseconds, attributes as a list of "
            "{key, value} objects); nothing was imported."
        )
        self.field = field
        self.problem = problem


class OtelSpanLoopError(Refusal, ValueError):
    """Raised when following the spans' parents runs in a circle instead of reaching a root.

    Carries ``spans`` (how many spans are on a loop), ``loops`` (each loop's length, longest
    first; a span that is its own parent is a loop of 1) and ``traces`` (how many traces hold
    one). A loop has no root to hang a run on, so nothing is imported; no id is quoted.
    """

    code = "ERR_OTEL_SPAN_LOOP"
    fields = ("spans", "loops", "traces")

    def __init__(self, loops: list[int], traces: int) -> None:
        lengths = sorted(loops, reverse=True)
        shown = ", ".join(str(n) for n in lengths[:10]) + (f" and {len(lengths) - 10} more" if len(lengths) > 10
                                                           else "")
        super().__init__(
            f"from_spans: {sum(lengths)} span(s) in {traces} trace(s) are their own ancestors: following their "
            f"parents goes round {len(lengths)} loop(s) (lengths: {shown}; a span naming itself as its parent is a "
            "loop of 1), so no run can be rooted on them and nothing was imported. A span's parent is the span "
            "that was open when it began, so a loop means ids were edited, reused or mixed up on the way: import "
            "the spans as the SDK or the collector wrote them, or clear the parent id of one span in each loop."
        )
        self.spans = sum(lengths)
        self.loops = tuple(lengths)
        self.traces = traces


class OtelCaptureError(Refusal, ValueError):
    """Raised when ``capture()`` has no SDK tracer provider to listen on.

    Carries ``argument`` (``tracer_provider`` when the one passed is at fault, ``global`` when
    the process's own is) and ``received`` (its shape). Nothing is installed or listened to.
    """

    code = "ERR_OTEL_CAPTURE"
    fields = ("argument", "received")

    def __init__(self, argument: str, received: str) -> None:
        where = ("'tracer_provider' is" if argument == "tracer_provider"
                 else "the process's global tracer provider is")
        super().__init__(
            f"capture: {where} {received}, which spans cannot be collected from (it has no add_span_processor). "
            "Pass capture(tracer_provider=...) the OpenTelemetry SDK TracerProvider your framework reports to; "
            "nothing was installed."
        )
        self.argument = argument
        self.received = received


class OtelExportError(Refusal, ValueError):
    """Raised when ``to_spans`` / ``export_otlp`` get something other than runs, or an unusable endpoint,
    when ``live_spans`` is given a tracer provider it cannot make a tracer from, and when ``from_spans``
    is given a ``progress=`` it cannot use.

    Carries ``argument`` (which one is at fault) and ``received`` (its shape). Nothing is sent.
    """

    code = "ERR_OTEL_EXPORT"
    fields = ("argument", "received")

    def __init__(self, argument: str, received: str, fix: str, *, door: str = "export_otlp") -> None:
        super().__init__(f"{door}: '{argument}' is {received}. {fix}.")
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


class OtelReceiverError(OtelExportError):
    """Raised when ``receive()`` is given a setting it cannot listen with (a port out of range, a host that is not
    text, a size cap that is not a positive whole number, a callback that cannot be called), or the port is taken.

    Carries ``argument`` (which setting) and ``received`` (its shape, never its value). Nothing listens.
    """

    code = "ERR_OTEL_RECEIVER"

    def __init__(self, argument: str, received: str, fix: str) -> None:
        super().__init__(argument, received, f"{fix}; nothing is listening", door="receive")


class OtlpRequestRefused(Refusal):
    """What the receiver answers a POST that is not OTLP traces (never raised to the notebook: sent as the reply).

    Carries ``status`` (the HTTP status: 404 another path, 405 another method, 411 no length, 413 over the size
    cap, 415 a content type or encoding other than OTLP's, 400 a body that is not spans) and ``what`` (what
    arrived, by shape). The receiver keeps listening.
    """

    code = "ERR_OTLP_REQUEST"
    fields = ("status", "what")

    def __init__(self, status: int, what: str, fix: str) -> None:
        super().__init__(f"OTLP receiver: {what}. {fix}.")
        self.status = status
        self.what = what
