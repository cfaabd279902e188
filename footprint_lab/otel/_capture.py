"""``with capture() as cap:``: the spans of a block collected in-process, and the runs they hold.

Rule kept: capturing never disturbs what a team already has. When the process has an SDK
tracer provider (with its exporters), a span processor is added beside them and goes quiet
when the block ends (the SDK offers no way to take a processor off); only when no provider was
ever set does capture install one as the global provider. Either way the spans still reach
every exporter that was there.

Role: the in-process collector of :mod:`footprint_lab.otel`; imports ``opentelemetry`` only
when a capture starts.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from footprint_lab.base.refusal import describe_shape
from footprint_lab.core.run import Run
from footprint_lab.otel.refusals import OtelCaptureError

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
    from opentelemetry.trace import TracerProvider as ApiTracerProvider

    from footprint_lab.redact.policy import Redaction


class Capture:
    """The spans finished inside a ``capture()`` block; :attr:`runs` imports them."""

    def __init__(self, tracer_provider: ApiTracerProvider, redact: Redaction | None = None) -> None:
        #: the SDK tracer provider the spans were collected from (pass it to a framework's instrumentation)
        self.tracer_provider = tracer_provider
        #: the policy the runs are recorded under (``None``: none)
        self.redact = redact
        #: the finished spans, in the order they ended
        self.spans: list[Any] = []
        self.active = True

    @property
    def runs(self) -> list[Run]:
        """One run per agent run captured so far (see :func:`footprint_lab.otel.from_spans`)."""
        from footprint_lab.otel._importer import from_spans

        return from_spans(self.spans, redact=self.redact)


def _processor(cap: Capture) -> Any:
    from opentelemetry.sdk.trace import SpanProcessor

    class _Collect(SpanProcessor):
        """Keeps each finished span while its capture is active."""

        def on_end(self, span: Any) -> None:
            if cap.active:
                cap.spans.append(span)

    return _Collect()


def _listens(provider: Any) -> bool:
    """Whether span processors can be added to ``provider`` (the SDK's, or a wrapper that forwards to it)."""
    return callable(getattr(provider, "add_span_processor", None))


@contextmanager
def capture(tracer_provider: SdkTracerProvider | None = None, *,
            redact: Redaction | None = None) -> Iterator[Capture]:
    """Collect the spans that finish inside the block; ``cap.runs`` gives their runs.

    ``tracer_provider``: an SDK ``TracerProvider`` to listen on; by default the global one (set
    up as a plain SDK provider first when the process has none). A provider spans cannot be
    collected from is refused with :class:`~footprint_lab.otel.refusals.OtelCaptureError`.
    ``redact``: the policy the runs are recorded under (see :func:`~footprint_lab.otel.from_spans`).
    """
    from footprint_lab.otel._importer import check_redact

    check_redact("capture", redact)
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider

    provider: Any  # the SDK's provider, or a wrapper forwarding to it: what _listens accepts, not a class
    if tracer_provider is not None:
        if not _listens(tracer_provider):
            raise OtelCaptureError("tracer_provider", describe_shape(tracer_provider))
        provider = tracer_provider
    else:
        provider = trace.get_tracer_provider()
        if isinstance(provider, trace.ProxyTracerProvider):  # nothing set yet: a proxy stands in for the global
            trace.set_tracer_provider(TracerProvider())
            provider = trace.get_tracer_provider()
        if not _listens(provider):
            raise OtelCaptureError("global", describe_shape(provider))
    cap = Capture(provider, redact)
    provider.add_span_processor(_processor(cap))
    try:
        yield cap
    finally:
        cap.active = False
