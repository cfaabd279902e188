"""Exporting recordings as GenAI spans over OTLP/HTTP to a real local receiver, and importing them back."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from footprint_lab import Agent, Sequence, tool
from footprint_lab.otel import OtelExportError, OtlpExportFailed, export_otlp, from_spans, to_spans
from footprint_lab.providers import mock
from footprint_lab.redact.policy import Redaction

SECRET = "hunter2-do-not-leak"


@tool
def lookup_order(order_id: str) -> dict[str, Any]:
    """Find an order by its id."""
    return {"order_id": order_id, "age_days": 47, "password": SECRET}


def _agent(name: str = "refunds") -> Agent:
    return Agent(provider=mock(replies=[{"tool": "lookup_order", "args": {"order_id": "A-1001"}}, "DECLINED"]),
                 system="Refunds are allowed within 30 days of purchase.", tools=[lookup_order], name=name,
                 redact=Redaction(keys=["password"]))


class _Receiver(BaseHTTPRequestHandler):
    bodies: ClassVar[list[tuple[str, dict[str, str], bytes]]] = []
    status = 200

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).bodies.append((self.path, dict(self.headers), body))
        self.send_response(type(self).status)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()
        self.wfile.write(b"")

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def receiver() -> Iterator[tuple[str, type[_Receiver]]]:
    handler = type("Receiver", (_Receiver,), {"bodies": [], "status": 200})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1/traces", handler
    finally:
        server.shutdown()
        server.server_close()


def _decoded(body: bytes) -> list[Any]:
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    return [span for rs in request.resource_spans for ss in rs.scope_spans for span in ss.spans]


def _attrs(span: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in span.attributes:
        kind = kv.value.WhichOneof("value")
        value = getattr(kv.value, kind)
        out[kv.key] = [v.string_value for v in value.values] if kind == "array_value" else value
    return out


def test_export_reaches_a_collector_with_names_parents_attributes_and_no_secret(receiver: Any) -> None:
    endpoint, handler = receiver
    run = _agent().run_sync("Can I get a refund for order A-1001?")
    sent = export_otlp([run], endpoint=endpoint, headers={"x-team-key": "k-123"})
    ((path, headers, body),) = handler.bodies
    assert path == "/v1/traces" and headers["x-team-key"] == "k-123"
    assert {k.lower(): v for k, v in headers.items()}["content-type"] == "application/x-protobuf"
    assert SECRET.encode() not in body
    spans = _decoded(body)
    assert sent == len(spans) == 4
    by_name = {span.name: span for span in spans}
    root = by_name["invoke_agent refunds"]
    chats = [s for s in spans if s.name == "chat mock-model"]
    (tool_span,) = [s for s in spans if s.name == "execute_tool lookup_order"]
    assert root.parent_span_id == b"" and len(chats) == 2
    assert all(s.parent_span_id == root.span_id and s.trace_id == root.trace_id for s in [*chats, tool_span])
    assert _attrs(root)["footprint_lab.run_id"] == run.run_id
    first = _attrs(chats[0])
    assert first["gen_ai.operation.name"] == "chat" and first["footprint_lab.step_id"] == "call-llm#3"
    assert json.loads(first["gen_ai.input.messages"])[0] == {
        "role": "user", "parts": [{"type": "text", "content": "Can I get a refund for order A-1001?"}]}
    assert json.loads(first["gen_ai.tool.definitions"])[0]["name"] == "lookup_order"
    assert json.loads(first["footprint_lab.source_ids"])["system"] == [["base", "system-prompt"]]
    assert first["gen_ai.usage.input_tokens"] > 0
    tool_attrs = _attrs(tool_span)
    assert json.loads(tool_attrs["gen_ai.tool.call.arguments"]) == {"order_id": "A-1001"}
    assert json.loads(tool_attrs["gen_ai.tool.call.result"])["password"] == "[redacted:password]"
    assert tool_attrs["footprint_lab.step_id"] == "tool#4"


def test_exported_run_imports_back_with_answer_pieces_and_tool_calls() -> None:
    run = _agent().run_sync("Can I get a refund for order A-1001?")
    (again,) = from_spans(to_spans(run))
    assert again.answer == run.answer and again.run_id == run.run_id
    columns = ["source_id", "source_kind", "slot", "content"]
    for call in (0, 1):
        assert again.context(call)[columns].values.tolist() == run.context(call)[columns].values.tolist()
    assert [x.response.tool_calls for x in again.recording.exchanges] == [
        x.response.tool_calls for x in run.recording.exchanges]
    assert [s.stage for s in again.recording.steps] == [s.stage for s in run.recording.steps]


def test_a_composed_run_exports_member_runs_under_its_own() -> None:
    run = Sequence({"first": _agent("first"), "second": _agent("second")}).run_sync("Refund for A-1001?")
    spans = to_spans(run)
    agents = [s for s in spans if s.attributes["gen_ai.operation.name"] == "invoke_agent"]
    (root,) = [s for s in agents if s.parent is None]
    members = [s for s in agents if s.parent is not None]
    assert {s.attributes["gen_ai.agent.name"] for s in members} == {"first", "second"}
    assert all(s.parent.span_id == root.context.span_id for s in members)
    assert all(SECRET not in json.dumps(dict(s.attributes), default=str) for s in spans)


def test_export_refuses_bad_arguments_and_reports_a_refusing_collector(receiver: Any) -> None:
    endpoint, handler = receiver
    run = _agent().run_sync("Refund?")
    with pytest.raises(OtelExportError) as refused:
        export_otlp(run, endpoint="collector.internal:4318")
    assert refused.value.argument == "endpoint" and "collector.internal" not in str(refused.value)
    with pytest.raises(OtelExportError):
        export_otlp(["not a run"], endpoint=endpoint)
    assert handler.bodies == []
    handler.status = 400
    with pytest.raises(OtlpExportFailed) as failed:
        export_otlp(run, endpoint=endpoint, headers={"authorization": "Bearer sk-xyz"})
    assert failed.value.retryable and "sk-xyz" not in str(failed.value)


def test_live_spans_follow_a_composed_run_as_it_happens_without_the_secret() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from footprint_lab.otel import live_spans

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    pipeline = Sequence({"first": _agent("first"), "second": _agent("second")})
    pipeline.subscribe(live_spans(provider))
    run = pipeline.run_sync("Refund for A-1001?")
    spans = exporter.get_finished_spans()
    agents = [s for s in spans if s.attributes["gen_ai.operation.name"] == "invoke_agent"]
    (root,) = [s for s in agents if s.parent is None]
    assert root.attributes["footprint_lab.run_id"] == run.run_id
    assert root.attributes["footprint_lab.status"] == "finished"
    members = {s.attributes["gen_ai.agent.name"]: s for s in agents if s.parent is not None}
    assert set(members) == {"first", "second"}
    assert all(m.parent.span_id == root.context.span_id for m in members.values())
    chats = [s for s in spans if s.name == "chat mock-model"]
    tools = [s for s in spans if s.name == "execute_tool lookup_order"]
    assert len(chats) == 4 and len(tools) == 2
    member_ids = {m.context.span_id for m in members.values()}
    assert all(s.parent.span_id in member_ids for s in [*chats, *tools])
    assert all(s.attributes["gen_ai.usage.output_tokens"] > 0 for s in chats)
    assert json.loads(tools[0].attributes["gen_ai.tool.call.arguments"]) == {"order_id": "A-1001"}
    assert "[redacted:password]" in tools[0].attributes["footprint_lab.result_preview"]
    assert all(SECRET not in json.dumps(dict(s.attributes), default=str) for s in spans)


@pytest.mark.parametrize("provider", [42, "my-provider", {"get_tracer": None}, object()])
def test_live_spans_refuse_a_tracer_provider_that_makes_no_tracer(provider: Any) -> None:
    from footprint_lab.otel import live_spans

    with pytest.raises(OtelExportError) as caught:
        live_spans(tracer_provider=provider)
    assert caught.value.argument == "tracer_provider" and str(caught.value).startswith("live_spans:")
    assert "my-provider" not in str(caught.value)


def test_an_import_of_many_runs_shows_its_progress_and_a_stop_keeps_the_runs_imported(capsys) -> None:
    from stop_kit import stop_at

    from footprint_lab.base.progress import Stopped
    from footprint_lab.batch import RunSet
    from footprint_lab.otel import last_stopped

    agent = Agent(provider=mock(reply="ok"))
    runs = [agent.run_sync(f"question {k}") for k in range(6)]
    spans = to_spans(runs)
    assert len(from_spans(spans, progress=True)) == 6  # asked for: a line on stderr, even off a terminal
    assert "from_spans: runs imported [" in (shown := capsys.readouterr().err) and "6/6" in shown and "done" in shown

    with pytest.raises(Stopped) as stop:  # an interrupt landing in the import, after the fourth run
        from_spans(spans, progress=stop_at(4))
    assert str(stop.value) == ("from_spans: stopped after 4 of 6 runs imported; "
                               "the 4 imported: footprint_lab.otel.last_stopped()")
    assert [run.recording.input["message"] for run in last_stopped()] == [f"question {k}" for k in range(4)]
    heard: list[tuple[int, int]] = []
    assert len(RunSet.from_spans(spans, progress=lambda done, total: heard.append((done, total)))) == 6
    assert heard[0] == (0, 6) and heard[-1] == (6, 6)
    with pytest.raises(OtelExportError) as refused:
        from_spans(spans, progress=3)
    assert refused.value.argument == "progress" and str(refused.value).startswith("from_spans: 'progress' is ")
