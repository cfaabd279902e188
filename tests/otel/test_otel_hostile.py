"""Hostile spans at the import door: loops, malformed OTLP JSON, odd SDK spans: refused by name, in bounded time."""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Callable
from functools import cache
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanContext, TraceFlags

from footprint_lab import Agent, define_tool, errors, load_recording
from footprint_lab.base.refusal import Refusal
from footprint_lab.otel import (
    OtelCaptureError,
    OtelSpanFieldError,
    OtelSpanLoopError,
    OtelSpansError,
    capture,
    from_spans,
    to_spans,
)
from footprint_lab.providers import LLMRequest, mock

# most spans here are hand-made and carry no message content: the import says so, which is not under test here
pytestmark = pytest.mark.filterwarnings("ignore::footprint_lab.otel.ContentCaptureWarning")

SECRET = "ZQX-caller-secret"
LIMIT_S = 20.0  # far above what a linear walk needs: a hang (a loop walked forever) fails here instead
_RESOURCE = Resource({"service.name": "hostile-test"})


def bounded(work: Callable[[], Any], seconds: float = LIMIT_S) -> Any:
    """``work()``'s result (or its exception), failing the test if it has not returned within ``seconds``."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = work()
        except BaseException as error:  # handed back to the test thread as it was
            outcome["error"] = error

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"from_spans did not return within {seconds} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def refused(spans: Any) -> Refusal:
    """The refusal ``from_spans(spans)`` raises, within the time bound."""
    with pytest.raises(Refusal) as raised:
        bounded(lambda: from_spans(spans))
    assert SECRET not in str(raised.value)
    return raised.value


def span(span_id: str, parent: str | None = None, *, name: str = "chat m", trace_id: str = "t1",
         start: int = 1_000, **extra: Any) -> dict[str, Any]:
    """One OTLP JSON span (ids are opaque text to the importer)."""
    out: dict[str, Any] = {"traceId": trace_id, "spanId": span_id, "name": name,
                           "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 10), **extra}
    if parent is not None:
        out["parentSpanId"] = parent
    return out


def otlp(*spans: dict[str, Any]) -> dict[str, Any]:
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "s"}, "spans": list(spans)}]}]}


def ring(size: int, prefix: str = "loop", trace_id: str = "t1") -> list[dict[str, Any]]:
    """``size`` spans, each the parent of the next, the last the parent of the first."""
    ids = [f"{prefix}-{SECRET}-{n}" for n in range(size)]
    return [span(ids[n], ids[n - 1], trace_id=trace_id, start=1_000 + n) for n in range(size)]


def tree(trace_id: str = "t1") -> list[dict[str, Any]]:
    """A valid run: an ``invoke_agent`` root with a chat and a tool span under it."""
    return [span("root", name="invoke_agent helper", trace_id=trace_id),
            span("chat", "root", trace_id=trace_id, start=1_001),
            span("tool", "root", name="execute_tool lookup", trace_id=trace_id, start=1_002)]


# -- parent loops ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 2, 3, 50, 5_000])
def test_a_loop_of_any_length_is_refused_with_its_length(size: int) -> None:
    refusal = refused(otlp(*ring(size)))
    assert isinstance(refusal, OtelSpanLoopError) and refusal.code == "ERR_OTEL_SPAN_LOOP"
    assert (refusal.spans, refusal.loops, refusal.traces) == (size, (size,), 1)
    assert "loop-" not in str(refusal)  # no id is quoted


def test_a_loop_in_the_trace_of_a_valid_run_is_refused_and_spans_below_it_are_not_on_it() -> None:
    loop = ring(3)  # in trace t1, beside the valid run, with one of its spans an agent run
    loop[1]["name"] = "invoke_agent stuck"
    below = [span("below-1", loop[1]["spanId"]), span("below-2", "below-1", name="execute_tool t")]
    refusal = refused(otlp(*tree(), *loop, *below, span("leaf", "chat")))
    assert isinstance(refusal, OtelSpanLoopError)
    assert (refusal.spans, refusal.loops, refusal.traces) == (3, (3,), 1)


def test_loops_in_two_traces_are_counted_apart() -> None:
    refusal = refused(otlp(*tree("ok"), *ring(2, trace_id="a"), *ring(4, trace_id="b"), *ring(1, "self", "b")))
    assert isinstance(refusal, OtelSpanLoopError)
    assert (refusal.spans, refusal.loops, refusal.traces) == (7, (4, 2, 1), 2)


def test_many_loops_each_refused_once_in_bounded_time() -> None:
    spans = [s for n in range(2_000) for s in ring(n % 5 + 1, prefix=f"p{n}")]
    refusal = refused(otlp(*spans))
    assert isinstance(refusal, OtelSpanLoopError)
    assert len(refusal.loops) == 2_000 and refusal.spans == len(spans)
    assert "and 1990 more" in str(refusal)


def test_an_sdk_span_that_is_its_own_parent_is_refused() -> None:
    context = SpanContext(0xABC, 0xDEF, False, TraceFlags(1))
    me = ReadableSpan("chat m", context=context, parent=context, resource=_RESOURCE, start_time=1, end_time=2)
    other = SpanContext(0xABC, 0x123, False, TraceFlags(1))
    pair = [ReadableSpan("chat m", context=context, parent=other, resource=_RESOURCE, start_time=1, end_time=2),
            ReadableSpan("chat m", context=other, parent=context, resource=_RESOURCE, start_time=1, end_time=2)]
    assert isinstance(refused([me]), OtelSpanLoopError)
    refusal = refused(pair)
    assert isinstance(refusal, OtelSpanLoopError) and refusal.loops == (2,)


def test_a_parent_id_from_another_trace_is_not_a_parent() -> None:
    # the same span ids in two traces name different spans: two runs, neither a copy of the other
    runs = bounded(lambda: from_spans(otlp(*tree("a"), *tree("b"))))
    assert sorted(run.recording.meta["otel"]["trace_id"] for run in runs) == ["a", "b"]
    assert [len(run.recording.exchanges) for run in runs] == [1, 1]
    crossed = otlp(span("agent", name="invoke_agent a", trace_id="a"), span("orphan", "agent", trace_id="b"))
    runs = bounded(lambda: from_spans(crossed))
    assert len(runs) == 2  # the chat of trace b is not pulled into trace a's run
    assert sorted(len(run.recording.exchanges) for run in runs) == [0, 1]


def test_nesting_thousands_deep_imports_in_bounded_time() -> None:
    spans = [span("s0", name="invoke_agent deep")]
    spans += [span(f"s{n}", f"s{n - 1}", name="chat m" if n % 3 == 0 else "step", start=1_000 + n)
              for n in range(1, 20_000)]
    (run,) = bounded(lambda: from_spans(otlp(*spans)))
    assert len(run.recording.exchanges) == len(range(3, 20_000, 3))


def test_a_span_delivered_twice_is_kept_once_and_a_different_span_with_its_id_is_refused() -> None:
    once = bounded(lambda: from_spans(otlp(*tree())))
    twice = bounded(lambda: from_spans(otlp(*tree(), *tree())))  # a collector's retry wrote the batch again
    assert [len(r.recording.steps) for r in twice] == [len(r.recording.steps) for r in once]
    forged = tree()
    forged[1]["name"] = "execute_tool other"
    refusal = refused(otlp(*tree(), *forged))
    assert isinstance(refusal, OtelSpanFieldError)
    assert refusal.field == "resourceSpans[0].scopeSpans[0].spans[4].spanId"
    assert "resourceSpans[0].scopeSpans[0].spans[1].spanId" in refusal.problem


# -- malformed OTLP JSON, refused by the path of the field at fault ---------------------------------------------

SPAN = "resourceSpans[0].scopeSpans[0].spans[0]"


def _with(**fields: Any) -> dict[str, Any]:
    """One chat span with some fields replaced."""
    return otlp({**span("a"), **fields})


MALFORMED = [
    ({"resourceSpans": {}}, "resourceSpans"),
    ({"resourceSpans": [SECRET]}, "resourceSpans[0]"),
    ({"resourceSpans": [{"resource": SECRET}]}, "resourceSpans[0].resource"),
    ({"resourceSpans": [{"scopeSpans": {"spans": []}}]}, "resourceSpans[0].scopeSpans"),
    ({"resourceSpans": [{"scopeSpans": [[]]}]}, "resourceSpans[0].scopeSpans[0]"),
    ({"resourceSpans": [{"scopeSpans": [{"scope": 7}]}]}, "resourceSpans[0].scopeSpans[0].scope"),
    ({"resourceSpans": [{"scopeSpans": [{"spans": SECRET}]}]}, "resourceSpans[0].scopeSpans[0].spans"),
    (otlp(["a", "b"]), SPAN),  # type: ignore[arg-type]
    (otlp({"spanId": "a"}), f"{SPAN}.traceId"),
    (otlp({"traceId": "t", "spanId": ""}), f"{SPAN}.spanId"),
    (otlp({"traceId": 5, "spanId": "a"}), f"{SPAN}.traceId"),
    (_with(parentSpanId=["x"]), f"{SPAN}.parentSpanId"),
    (_with(name={"n": 1}), f"{SPAN}.name"),
    (_with(startTimeUnixNano="soon"), f"{SPAN}.startTimeUnixNano"),
    (_with(startTimeUnixNano="9" * 5_000), f"{SPAN}.startTimeUnixNano"),
    (_with(startTimeUnixNano=-1), f"{SPAN}.startTimeUnixNano"),
    (_with(startTimeUnixNano=2**64), f"{SPAN}.startTimeUnixNano"),
    (_with(startTimeUnixNano=1.5), f"{SPAN}.startTimeUnixNano"),
    (_with(startTimeUnixNano=float("nan")), f"{SPAN}.startTimeUnixNano"),
    (_with(startTimeUnixNano=True), f"{SPAN}.startTimeUnixNano"),
    (_with(startTimeUnixNano="١٢٣"), f"{SPAN}.startTimeUnixNano"),  # digits, but not ASCII ones
    (_with(status="error"), f"{SPAN}.status"),
    (_with(status={"code": [2]}), f"{SPAN}.status.code"),
    (_with(attributes={"gen_ai.request.model": "m"}), f"{SPAN}.attributes"),
    (_with(attributes=[SECRET]), f"{SPAN}.attributes[0]"),
    (_with(attributes=[{"value": {"stringValue": SECRET}}]), f"{SPAN}.attributes[0].key"),
    (_with(attributes=[{"key": 3, "value": {}}]), f"{SPAN}.attributes[0].key"),
    (_with(attributes=[{"key": "k", "value": SECRET}]), f"{SPAN}.attributes[0].value"),
    (_with(attributes=[{"key": "k", "value": {"stringValue": 3}}]), f"{SPAN}.attributes[0].value.stringValue"),
    (_with(attributes=[{"key": "k", "value": {"boolValue": "true"}}]), f"{SPAN}.attributes[0].value.boolValue"),
    (_with(attributes=[{"key": "k", "value": {"intValue": "12abc"}}]), f"{SPAN}.attributes[0].value.intValue"),
    (_with(attributes=[{"key": "k", "value": {"intValue": str(2**63)}}]), f"{SPAN}.attributes[0].value.intValue"),
    (_with(attributes=[{"key": "k", "value": {"intValue": 1.5}}]), f"{SPAN}.attributes[0].value.intValue"),
    (_with(attributes=[{"key": "k", "value": {"doubleValue": "many"}}]), f"{SPAN}.attributes[0].value.doubleValue"),
    (_with(attributes=[{"key": "k", "value": {"arrayValue": [1, 2]}}]), f"{SPAN}.attributes[0].value.arrayValue"),
    (_with(attributes=[{"key": "k", "value": {"arrayValue": {"values": {}}}}]),
     f"{SPAN}.attributes[0].value.arrayValue.values"),
    (_with(attributes=[{"key": "k", "value": {"arrayValue": {"values": [{"intValue": "x"}]}}}]),
     f"{SPAN}.attributes[0].value.arrayValue.values[0].intValue"),
    (_with(attributes=[{"key": "k", "value": {"kvlistValue": {"values": [{"value": {}}]}}}]),
     f"{SPAN}.attributes[0].value.kvlistValue.values[0].key"),
    (_with(attributes=[{"key": "k", "value": {"stringValue": "a", "intValue": "1"}}]), f"{SPAN}.attributes[0].value"),
    (_with(attributes=[{"key": "gen_ai.agent.name", "value": {"intValue": "7"}}]),
     f"{SPAN}.attributes['gen_ai.agent.name']"),
    (_with(attributes=[{"key": "gen_ai.usage.input_tokens", "value": {"stringValue": "12"}}]),
     f"{SPAN}.attributes['gen_ai.usage.input_tokens']"),
    (_with(attributes=[{"key": "gen_ai.usage.output_tokens", "value": {"intValue": "-3"}}]),
     f"{SPAN}.attributes['gen_ai.usage.output_tokens']"),
    (_with(attributes=[{"key": "gen_ai.input.messages", "value": {"stringValue": "[" * 5_000 + "]" * 5_000}}]),
     f"{SPAN}.attributes['gen_ai.input.messages']"),
    (_with(attributes=[{"key": "gen_ai.tool.definitions", "value": {"stringValue": "[" * 80 + "]" * 80}}]),
     f"{SPAN}.attributes['gen_ai.tool.definitions']"),
]


def _nested_array(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"stringValue": "leaf"}
    for _ in range(depth):
        value = {"arrayValue": {"values": [value]}}
    return value


@pytest.mark.parametrize(("data", "field"), MALFORMED)
def test_malformed_otlp_json_is_refused_by_the_path_of_the_field_at_fault(data: Any, field: str) -> None:
    refusal = refused(data)
    assert isinstance(refusal, OtelSpanFieldError) and refusal.code == "ERR_OTEL_SPAN_FIELD"
    assert refusal.field == field and field in str(refusal)


def test_values_nested_past_the_limit_are_refused_at_any_depth() -> None:
    assert from_spans(_with(attributes=[{"key": "k", "value": _nested_array(10)}]))
    for depth in (65, 900, 50_000):  # 50,000 levels would exhaust Python's stack if read recursively
        refusal = refused(_with(attributes=[{"key": "k", "value": _nested_array(depth)}]))
        assert isinstance(refusal, OtelSpanFieldError) and "nests more than 64" in refusal.problem


def test_text_and_bytes_that_are_not_spans_are_refused_whole() -> None:
    for text in ("[" * 100_000, b"\xff\xfe not utf-8", "{\"resourceSpans\": [", "42"):
        refusal = refused(text)
        assert isinstance(refusal, OtelSpansError) and errors.OtelSpansError is OtelSpansError


def test_a_path_inside_a_list_of_otlp_documents_names_the_document() -> None:
    refusal = refused([otlp(*tree()), _with(startTimeUnixNano="later")])
    assert isinstance(refusal, OtelSpanFieldError)
    assert refusal.field == f"spans[1].{SPAN}.startTimeUnixNano"


def test_an_end_before_the_start_reads_as_no_duration() -> None:
    # the SDK stamps both ends with the wall clock, which can step back while a span is open
    for spans in (_with(startTimeUnixNano="2000000", endTimeUnixNano="5"), [_sdk(start_time=2_000_000, end_time=5)]):
        (run,) = bounded(lambda spans=spans: from_spans(spans))
        assert [step.duration_ms for step in run.recording.steps if step.stage == "call-llm"] == [0]


def test_lone_surrogates_in_ids_names_and_content_import_as_text_that_saves() -> None:
    data = json.loads(_valid_otlp())
    for item in data["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        item["name"] += "\ud800"
        item["traceId"] += "\udc00"
        for pair in item["attributes"]:
            text = pair["value"].get("stringValue")
            if pair["key"] != "gen_ai.operation.name" and isinstance(text, str):
                escaped = text.replace("DECLINED", "DECL\\ud800INED")  # an escape inside the JSON text
                pair["value"]["stringValue"] = escaped if text[:1] in "[{" else text + "\udfff"
    (run,) = bounded(lambda: from_spans(data))
    assert run.answer == f"DECL\ufffdINED {SECRET}"
    assert load_recording(run.recording.model_dump_json()) == run.recording


def test_what_otlp_allows_imports() -> None:
    # protobuf writes 64-bit numbers as text; null and missing mean "not set"; doubles may be words
    data = _with(startTimeUnixNano=1_000, endTimeUnixNano=None, status={"code": "STATUS_CODE_ERROR"},
                 attributes=[{"key": "gen_ai.usage.input_tokens", "value": {"intValue": "12"}},
                             {"key": "x.double", "value": {"doubleValue": "NaN"}},
                             {"key": "x.empty", "value": {}}, {"key": "x.none"},
                             {"key": "x.list", "value": {"arrayValue": {}}},
                             {"key": "gen_ai.input.messages", "value": {"stringValue": "not json at all"}}])
    with pytest.warns(UserWarning, match="attribute length limit"):  # read as missing, and said
        (run,) = from_spans(data)
    assert run.status == "failed" and run.recording.exchanges[0].response.usage.input_tokens == 12
    assert "attribute length limit" in run.recording.meta["note"]


def test_spans_none_of_which_this_reads_are_refused_never_an_empty_list() -> None:
    """An LLM call recorded in a convention this does not read (the Vercel AI SDK's ``ai.*`` attributes) would
    vanish: the import is refused, naming how to record spans it reads; a receiver passes such traces over."""
    import urllib.request

    from footprint_lab.otel import receive

    attributes = [{"key": "operation.name", "value": {"stringValue": "ai.generateText"}},
                  {"key": "ai.prompt", "value": {"stringValue": SECRET}}]
    data = otlp({**span("a"), "name": "ai.generateText", "attributes": attributes})
    with pytest.raises(OtelSpansError) as refused:
        from_spans(data)
    assert "OpenInference" in str(refused.value) and SECRET not in str(refused.value)
    assert from_spans([]) == []  # no spans: nothing to import, nothing wrong
    with receive() as receiver:
        request = urllib.request.Request(receiver.url, data=json.dumps(data).encode(),
                                         headers={"Content-Type": "application/json"})
        urllib.request.urlopen(request, timeout=10).read()
        receiver.flush()
        assert receiver.runs == [] and receiver.import_errors == 0


# -- the SDK's spans with odd values ------------------------------------------------------------------------------


def _sdk(**overrides: Any) -> Any:
    """An object shaped like the SDK's finished span, with some properties replaced."""
    fields = {"name": "chat m", "context": SimpleNamespace(trace_id=1, span_id=2), "parent": None,
              "attributes": {}, "start_time": 10, "end_time": 20, "status": None, **overrides}
    return SimpleNamespace(**fields)


class _Odd:
    def __repr__(self) -> str:
        return SECRET


_SELF: list[Any] = []
_SELF.append(_SELF)

ODD_SDK = [
    (_sdk(context=None), "spans[0].context"),
    (_sdk(context=SimpleNamespace(trace_id="1", span_id=2)), "spans[0].context.trace_id"),
    (_sdk(context=SimpleNamespace(trace_id=1, span_id=-2)), "spans[0].context.span_id"),
    (_sdk(context=SimpleNamespace(trace_id=1, span_id=2**64)), "spans[0].context.span_id"),
    (_sdk(context=SimpleNamespace(trace_id=True, span_id=2)), "spans[0].context.trace_id"),
    (_sdk(parent=SECRET), "spans[0].parent"),
    (_sdk(parent=SimpleNamespace(span_id=None)), "spans[0].parent.span_id"),
    (_sdk(name=7), "spans[0].name"),
    (_sdk(start_time="10"), "spans[0].start_time"),
    (_sdk(start_time=1.5), "spans[0].start_time"),
    (_sdk(start_time=-1), "spans[0].start_time"),
    (_sdk(end_time="20"), "spans[0].end_time"),
    (_sdk(attributes=[("k", "v")]), "spans[0].attributes"),
    (_sdk(attributes={1: "v"}), "spans[0].attributes[0]"),
    (_sdk(attributes={"a": "ok", "b": _Odd()}), "spans[0].attributes[1]"),
    (_sdk(attributes={"k": {1, 2}}), "spans[0].attributes[0]"),
    (_sdk(attributes={"k": [1, object()]}), "spans[0].attributes[0]"),
    (_sdk(attributes={"k": {"x": {3: "y"}}}), "spans[0].attributes[0]"),
    (_sdk(attributes={"k": _SELF}), "spans[0].attributes[0]"),
    (_sdk(attributes={"gen_ai.request.model": ("a", "b")}), "spans[0].attributes['gen_ai.request.model']"),
    (_sdk(attributes={"gen_ai.usage.input_tokens": 1.5}), "spans[0].attributes['gen_ai.usage.input_tokens']"),
    (_sdk(attributes={"gen_ai.usage.input_tokens": True}), "spans[0].attributes['gen_ai.usage.input_tokens']"),
    (_sdk(attributes={"gen_ai.output.messages": "[" * 3_000}), "spans[0].attributes['gen_ai.output.messages']"),
]


@pytest.mark.parametrize(("odd", "field"), ODD_SDK)
def test_sdk_spans_with_odd_values_are_refused_by_path(odd: Any, field: str) -> None:
    refusal = refused([odd])
    assert isinstance(refusal, OtelSpanFieldError) and refusal.field == field


@pytest.mark.parametrize("odd", [object(), {1, 2}, [[[[]]]] * 2 + [_Odd()], _SELF, {"k": {7: "v"}}, 1j, range(3)])
def test_readable_spans_with_odd_attribute_values_are_refused(odd: Any) -> None:
    context = SpanContext(0xABC, 0xDEF, False, TraceFlags(1))
    real = ReadableSpan("chat m", context=context, resource=_RESOURCE, start_time=1, end_time=2,
                        attributes={"gen_ai.request.model": "m", "x.odd": odd})
    refusal = refused([real])
    assert isinstance(refusal, OtelSpanFieldError) and refusal.field == "spans[0].attributes[1]"


def test_sdk_values_the_sdk_allows_import() -> None:
    odd = _sdk(attributes={"b": b"bytes", "t": ("a", 1, 2.5, True), "n": None, "gen_ai.usage.input_tokens": 4,
                           "gen_ai.response.finish_reasons": ["stop"], "gen_ai.tool.definitions": 5})
    (run,) = bounded(lambda: from_spans([odd]))
    exchange = run.recording.exchanges[0]
    assert exchange.response.usage.input_tokens == 4 and exchange.response.stop_reason == "stop"


def test_capture_refuses_a_provider_it_cannot_listen_on_and_installs_nothing() -> None:
    before = trace.get_tracer_provider()
    for bad in (42, SECRET, object()):
        with pytest.raises(OtelCaptureError) as raised, capture(tracer_provider=bad):
            pass
        assert raised.value.code == "ERR_OTEL_CAPTURE" and raised.value.argument == "tracer_provider"
        assert SECRET not in str(raised.value)
    assert trace.get_tracer_provider() is before


# -- properties: whatever the mutation, the door imports or refuses by name --------------------------------------


def _agent() -> Agent:
    lookup = define_tool(name="lookup_order", description="Find an order by its id.",
                         input_schema={"type": "object", "properties": {"order_id": {"type": "string"}}},
                         fn=lambda order_id="": {"order_id": order_id, "note": SECRET})

    def respond(request: LLMRequest) -> Any:
        if request.call_index == 0:
            return {"tool": "lookup_order", "args": {"order_id": "A-1", "nested": {"deep": [1, {"x": None}]}}}
        return f"DECLINED {SECRET}"

    return Agent(provider=mock(respond=respond), tools=[lookup], system=f"Refunds within 30 days. {SECRET}",
                 name="refunds")


@cache
def _valid_sdk_spans() -> tuple[ReadableSpan, ...]:
    return tuple(to_spans(_agent().run_sync(f"Refund? {SECRET}")))


@cache
def _valid_otlp() -> str:
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return json.dumps(MessageToDict(encode_spans(list(_valid_sdk_spans()))))


def _imports_or_refuses(spans: Any) -> None:
    """The property: ``from_spans`` returns runs whose recordings build and load back, or raises a ``Refusal``."""

    def attempt() -> None:
        try:
            runs = from_spans(spans)
        except Refusal as refusal:
            assert SECRET not in str(refusal)
            return
        for run in runs:
            recording = run.recording
            run.context()
            assert load_recording(recording.model_dump_json()) == recording

    bounded(attempt)


scalars = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
           | st.floats() | st.text(max_size=6)
           | st.sampled_from(["", "-1", "1e3", "0x1f", "9" * 30, "NaN", "Infinity", "١٢", "[" * 2_000, "{}", "[]",
                              "\ud800", "x\udfff", SECRET]))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.sampled_from(["values", "key", "value", "stringValue", "intValue",
                                                         "arrayValue", "x"]), inner, max_size=3), max_leaves=6)


def _places(node: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) in a JSON tree, walked without recursion."""
    out: list[tuple[Any, Any]] = []
    stack = [node]
    while stack:
        current = stack.pop()
        keys = range(len(current)) if isinstance(current, list) else list(current)
        for key in keys:
            out.append((current, key))
            if isinstance(current[key], list | dict):
                stack.append(current[key])
    return out


def _swap(value: Any) -> Any:
    """The same content in the wrong container (or a number as text, text as a number)."""
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, list):
        return {str(n): item for n, item in enumerate(value)}
    if isinstance(value, str):
        return [value] if not value.isdigit() else int(value)
    return str(value)


@st.composite
def mutated(draw: st.DrawFn, base: Any, inner: bool = True) -> Any:
    """``base`` with one to four places dropped, replaced, wrapped, swapped or (in JSON text) mutated inside."""
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 4))):
        places = _places(doc)
        if not places:
            break
        container, key = draw(st.sampled_from(places))
        action = draw(st.sampled_from(["drop", "replace", "list", "object", "swap", "inner", "parent"]))
        value = container[key]
        spans = [place[0] for place in places if place[1] == "spanId"]
        if action == "parent" and spans:  # any span made the child of any (itself included): loops of every size
            draw(st.sampled_from(spans))["parentSpanId"] = draw(st.sampled_from(spans))["spanId"]
        elif action == "drop":
            del container[key]
        elif action == "replace":
            container[key] = draw(values)
        elif action == "list":
            container[key] = [value]
        elif action == "object":
            container[key] = {"values": value}
        elif action == "swap":
            container[key] = _swap(value)
        elif inner and isinstance(value, str) and value[:1] in "[{":
            try:
                decoded = json.loads(value)
            except ValueError:
                continue
            container[key] = json.dumps(draw(mutated(decoded, inner=False)))
    return doc


PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(st.data())
def test_mutated_otlp_json_imports_or_is_refused_by_name(data: st.DataObject) -> None:
    doc = data.draw(mutated(json.loads(_valid_otlp())))
    _imports_or_refuses(doc)


@PROPERTY
@given(st.data())
def test_sdk_spans_with_mutated_properties_import_or_are_refused_by_name(data: st.DataObject) -> None:
    spans = []
    for original in _valid_sdk_spans():
        fields = {"name": original.name, "context": original.context, "parent": original.parent,
                  "attributes": dict(original.attributes), "start_time": original.start_time,
                  "end_time": original.end_time, "status": original.status}
        for _ in range(data.draw(st.integers(0, 2))):
            name = data.draw(st.sampled_from([*fields, "attribute"]))
            odd = data.draw(values | st.builds(object) | st.sets(st.integers(), max_size=2) | st.binary(max_size=4))
            if name == "attribute" and isinstance(fields["attributes"], dict) and fields["attributes"]:
                key = data.draw(st.sampled_from(sorted(fields["attributes"])))
                fields["attributes"][key] = odd
            elif name != "attribute":
                fields[name] = odd
        spans.append(SimpleNamespace(**fields))
    _imports_or_refuses(spans)


@PROPERTY
@given(st.lists(st.tuples(st.sampled_from(["a", "b"]), st.none() | st.integers(0, 39)), min_size=1, max_size=40))
def test_any_parent_graph_is_refused_exactly_when_it_loops(links: list[tuple[str, int | None]]) -> None:
    ids = [f"s{n}" for n in range(len(links))]
    parents = [ids[p] if p is not None and p < len(ids) else None for _, p in links]
    spans = [span(ids[n], parents[n], trace_id=trace_id, name="chat m" if n % 2 else "invoke_agent x", start=n)
             for n, (trace_id, _) in enumerate(links)]
    # a span is on a loop when walking up from it, within the same trace, comes back to it
    up = {n: ids.index(parents[n]) if parents[n] is not None and links[ids.index(parents[n])][0] == links[n][0]
          else None for n in range(len(ids))}
    on_loop = []
    for n in up:
        node = up[n]
        for _ in range(len(ids)):
            if node is None or node == n:
                break
            node = up[node]
        if node == n:
            on_loop.append(n)
    try:
        runs = bounded(lambda: from_spans(otlp(*spans)))
    except OtelSpanLoopError as refusal:
        assert refusal.spans == len(on_loop) and sum(refusal.loops) == len(on_loop)
        assert refusal.traces == len({links[n][0] for n in on_loop})
    else:
        assert not on_loop
        assert len(runs) >= 1


def test_the_unmutated_documents_import() -> None:
    (from_json,) = from_spans(_valid_otlp())
    (from_sdk,) = from_spans(list(_valid_sdk_spans()))
    assert from_json.answer == from_sdk.answer == f"DECLINED {SECRET}"


# -- the export walks member runs the same way ---------------------------------------------------------------------


def test_export_walks_deeply_nested_member_runs_and_refuses_a_recording_that_holds_itself() -> None:
    from footprint_lab.otel import OtelExportError

    leaf = Agent(provider=mock(reply="ok"), name="leaf").run_sync("hi").recording
    chain = leaf
    for n in range(3_000):  # deeper than Python's stack would allow a recursive walk
        chain = chain.model_copy(update={"run_id": f"member-{n}", "children": [chain]})
    spans = bounded(lambda: to_spans(chain))
    assert len(spans) == 3_001 * 2  # each level: its invoke_agent span and its one chat
    looped = leaf.model_copy(update={"children": []})
    looped.children.append(looped)
    with pytest.raises(OtelExportError) as raised:
        bounded(lambda: to_spans(looped))
    assert raised.value.argument == "runs"
    shared = leaf.model_copy(update={"run_id": "parent", "children": [leaf, leaf]})  # a repeat, but no loop
    assert len(to_spans(shared)) == 6
