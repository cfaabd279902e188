"""Importing a foreign agent's OpenTelemetry spans: a real pydantic-ai agent, instrumented, on a FunctionModel."""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")
pydantic_ai = pytest.importorskip("pydantic_ai")

from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_ai.models.instrumented import InstrumentationSettings  # noqa: E402

from footprint_lab import errors, load_recording  # noqa: E402
from footprint_lab.otel import (  # noqa: E402
    ContentCaptureWarning,
    OtelExportError,
    OtelSpansError,
    capture,
    export_otlp,
    from_spans,
    to_spans,
)

PLANTED = "Orders older than 30 days are final: answer DECLINED, final sale."


def _reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart("lookup_order", {"order_id": "A-1001"})])
    return ModelResponse(parts=[TextPart("DECLINED: a final sale, older than 30 days.")])


def _agent() -> Agent:
    agent = Agent(FunctionModel(_reply), instructions="Use the tools.",
                  system_prompt=["You help with refunds.", PLANTED])

    @agent.tool_plain
    def lookup_order(order_id: str) -> dict[str, object]:
        """Find an order by its id."""
        return {"order_id": order_id, "age_days": 47}

    return agent


def _spans(include_content: bool = True) -> list[object]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    agent = _agent()
    agent.instrument = InstrumentationSettings(tracer_provider=provider, include_content=include_content)
    agent.run_sync("Can I get a refund for order A-1001?")
    return list(exporter.get_finished_spans())


def test_pydantic_ai_run_imports_with_slots_kinds_and_tool_call() -> None:
    (run,) = from_spans(_spans())
    assert run.answer == "DECLINED: a final sale, older than 30 days."
    recording = run.recording
    assert [s.stage for s in recording.steps] == ["seed", "assemble", "call-llm", "tool", "assemble", "call-llm",
                                                  "final"]
    last = run.context()
    rows = {(r.source_id, r.source_kind, r.slot): r.content for r in last.itertuples()}
    assert rows[("instructions-1", "base", "system")] == "Use the tools."
    assert rows[("system-part-1", "base", "system")] == "You help with refunds."
    assert rows[("system-part-2", "base", "system")] == PLANTED
    assert rows[("user-message", "user", "messages")] == "Can I get a refund for order A-1001?"
    assert rows[("lookup_order", "registry", "tools")] == "Find an order by its id."
    (tool_result,) = [r for r in last.itertuples() if r.source_kind == "tool_result"]
    assert json.loads(tool_result.content) == {"order_id": "A-1001", "age_days": 47}
    first = recording.exchanges[0]
    assert [(c.name, c.args) for c in first.response.tool_calls] == [("lookup_order", {"order_id": "A-1001"})]
    assert first.system == f"You help with refunds.\n\n{PLANTED}\n\nUse the tools."  # as pydantic-ai sends them
    assert first.response.usage.input_tokens > 0 and recording.exchanges[1].response.usage.output_tokens > 0
    tool_step = recording.steps[3]
    assert tool_step.duration_ms > 0 and recording.duration_ms >= tool_step.duration_ms
    assert recording.runner.name == "agent" and recording.meta["otel"]["trace_id"]
    assert load_recording(recording.model_dump_json()) == recording  # the loaded-recording door accepts it


def test_planted_system_part_ranks_first_and_hops_are_marked_honestly() -> None:
    (run,) = from_spans(_spans())
    suspects = run.suspects()
    assert suspects.iloc[0]["source_id"] == "system-part-2"
    chain = {c.piece.source_id: {h.kind: h.proven for h in c.hops} for c in run.backtrack().candidates}
    planted = chain["system-part-2"]
    assert planted["ANSWER"] and planted["READ"] and planted["LANDED"]
    assert not planted["BORN"] and not planted["ALLOWED"]
    (result_id,) = [k for k in chain if k.startswith("pyd_ai_")]
    assert chain[result_id]["ASKED"] is True


def test_answer_view_and_tree_render_on_an_imported_run() -> None:
    (run,) = from_spans(_spans())
    html = run.to_html()
    assert "data-fl-answer" in html and "DECLINED: a final sale" in html
    (node,) = run.tree().nodes
    assert node.kind == "agent" and node.status == "finished"


def test_capture_collects_beside_an_existing_exporter() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    agent = _agent()
    agent.instrument = InstrumentationSettings(tracer_provider=provider)
    with capture(provider) as cap:
        agent.run_sync("Can I get a refund for order A-1001?")
    agent.run_sync("A second run, after the block")
    assert len(cap.runs) == 1 and cap.runs[0].answer.startswith("DECLINED")
    assert len(exporter.get_finished_spans()) == 2 * len(cap.spans)  # the team's exporter got both runs


def test_otlp_json_imports_like_sdk_spans() -> None:
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    spans = _spans()
    data = MessageToDict(encode_spans(spans))
    (again,) = from_spans(data)
    (direct,) = from_spans(spans)
    assert again.answer == direct.answer
    assert list(again.context()["content"]) == list(direct.context()["content"])


def test_spans_without_content_import_with_a_note() -> None:
    with pytest.warns(ContentCaptureWarning, match="include_content=True"):
        (run,) = from_spans(_spans(include_content=False))
    assert "include_content=True" in run.recording.meta["note"]
    assert [s.stage for s in run.recording.steps].count("call-llm") == 2


@pytest.mark.parametrize("bad", [42, {"spans": []}, [object()], "not json"])
def test_from_spans_refuses_what_is_not_spans(bad: object) -> None:
    with pytest.raises(OtelSpansError) as refused:
        from_spans(bad)
    assert refused.value.code == "ERR_OTEL_SPANS" and errors.OtelSpansError is OtelSpansError


def test_a_file_name_given_as_text_is_refused_with_how_to_pass_it(tmp_path: Path) -> None:
    missing = str(tmp_path / "spans-of-tuesday.json")
    with pytest.raises(OtelSpansError) as refused:
        from_spans(missing)
    assert "pathlib.Path" in str(refused.value) and "tuesday" not in str(refused.value)


@pytest.mark.parametrize("door", ["to_spans", "export_otlp"])
def test_runs_that_are_not_runs_are_refused_by_the_door_they_were_given_to(door: str) -> None:
    call = {"to_spans": lambda: to_spans("runs"),
            "export_otlp": lambda: export_otlp("runs", endpoint="http://localhost:4318/v1/traces")}[door]
    with pytest.raises(OtelExportError) as refused:
        call()
    assert str(refused.value).startswith(f"{door}: 'runs' is")


def _refunds_agent(parts: dict[str, str], provider: TracerProvider | None = None) -> Agent:
    """A pydantic-ai agent whose model declines exactly when the planted rule is in its system prompt."""

    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        system = " ".join(str(getattr(p, "content", "")) for m in messages for p in getattr(m, "parts", [])
                          if type(p).__name__ == "SystemPromptPart")
        return ModelResponse(parts=[TextPart("DECLINED: final sale." if PLANTED in system else "APPROVED.")])

    agent = Agent(FunctionModel(reply), system_prompt=list(parts.values()))
    if provider is not None:
        agent.instrument = InstrumentationSettings(tracer_provider=provider)
    return agent


async def _imported_refunds() -> tuple[Any, Any]:
    """A pydantic-ai refunds agent's run imported from its spans, and a factory of fresh agents without the named
    system parts (its run is awaited: the foreign-agent rerun)."""
    parts = {"system-part-1": "You help with refunds.", "system-part-2": PLANTED}
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    await _refunds_agent(parts, provider).run("Refund for order A-1001?")
    (run,) = from_spans(exporter.get_finished_spans())

    def factory(exclude: list[str]) -> object:
        kept = {k: v for k, v in parts.items() if k not in exclude}
        return _refunds_agent(kept).run(run.recording.input["message"])

    return run, factory


async def test_localize_confirms_a_system_part_of_an_imported_run_with_a_pydantic_ai_factory() -> None:
    from footprint_lab.explain import localize

    run, factory = await _imported_refunds()
    report = await localize(run, rerun=factory, samples=2, top=2)
    assert report.verdict("system-part-2") == "confirmed"
    assert report.verdict("system-part-1") == "not_confirmed"


@pytest.mark.filterwarnings("error::RuntimeWarning", "error::pytest.PytestUnraisableExceptionWarning")
async def test_rerun_without_a_part_of_an_imported_run_with_a_pydantic_ai_factory_reports_the_new_answer() -> None:
    """A foreign agent's rerun leaves an answer and no recording: the report says the answer changed, and has no
    run (nor sources sent) to show for it, instead of failing on the recording it does not have. The runner built
    only to check the factory is discarded without Python warning of a coroutine never awaited."""
    from footprint_lab.explain import rerun_without

    run, factory = await _imported_refunds()
    report = await rerun_without(run, ["system-part-2"], rerun=factory)
    gc.collect()  # the discarded runner is finalized inside the test
    assert report.changed and report.after == "APPROVED." and report.error is None
    assert report.run is None and report.gone == report.appeared == []


def test_a_policy_given_at_import_masks_every_record_view_and_export_of_the_run() -> None:
    """A pydantic-ai run whose tool returns an email and whose system prompt holds a key: imported under a policy,
    neither shows anywhere the run is looked at, as for an Agent's own run; a policy that is no Redaction is
    refused before anything is imported."""
    from footprint_lab import Redaction, verify
    from footprint_lab.otel import receive

    secret = "dana.reyes@example.com"
    key = "sk-abcdefghijklmnopqrstuvwx1234"

    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("lookup_order", {"order_id": "A-1001"})])
        return ModelResponse(parts=[TextPart(f"DECLINED; a note went to {secret}.")])

    agent = Agent(FunctionModel(reply), system_prompt=[f"Use the key {key} for the store."])

    @agent.tool_plain
    def lookup_order(order_id: str) -> dict[str, object]:
        """Find an order by its id."""
        return {"order_id": order_id, "email": secret}

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    agent.instrument = InstrumentationSettings(tracer_provider=provider, include_content=True)
    agent.run_sync("Refund order A-1001?")
    spans = list(exporter.get_finished_spans())
    (run,) = from_spans(spans, redact=Redaction(builtins=["email", "openai_key"]))
    assert run.answer == f"DECLINED; a note went to {secret}."  # the live run keeps what it was told, as an Agent's
    shown = [run.recording.model_dump_json(), run.to_html(), repr(run), run.context().to_string(),
             run.suspects().to_string(), str(run.backtrack()), json.dumps(to_spans([run]), default=str)]
    for text in shown:
        assert secret not in text and key not in text
    assert run.recording.redaction is not None and "[redacted:email]" in run.recording.answer
    assert verify(load_recording(run.recording.model_dump_json())).status == "unsealed"
    for door, call in (("from_spans", lambda: from_spans(spans, redact=["email"])),
                       ("capture", lambda: capture(redact="email").__enter__()),
                       ("receive", lambda: receive(redact={"keys": ["email"]}))):
        with pytest.raises(OtelExportError) as refused:
            call()
        assert refused.value.code == "ERR_OTEL_EXPORT" and door in str(refused.value)


def test_a_pydantic_ai_request_over_the_wire_is_recorded_in_the_order_it_was_sent() -> None:
    """pydantic-ai sends its system prompts, then its instructions (recorded apart, in gen_ai.system_instructions):
    the recorded request, which a replay sends again, is the request the server received, in that order."""
    from otel_kit import ChatServer, completion
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    server = ChatServer(completion("DECLINED"))
    try:
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        agent = Agent(OpenAIChatModel("gpt-test", provider=OpenAIProvider(base_url=f"{server.url}/v1",
                                                                          api_key="sk-test")),
                      instructions="Use the tools.", system_prompt=["You help with refunds.", PLANTED])
        agent.instrument = InstrumentationSettings(tracer_provider=provider, include_content=True)
        agent.run_sync("Refund order A-1001?")
        (received,) = [r.body["messages"] for r in server.received]
    finally:
        server.close()
    (run,) = from_spans(list(exporter.get_finished_spans()))
    (exchange,) = run.recording.exchanges
    sent = [message["content"] for message in received if message["role"] == "system"]
    assert exchange.system == "\n\n".join(sent)
    assert exchange.wire["request"]["system_messages"] == [len(text) for text in sent]


@pytest.mark.parametrize("with_text", [True, False])
def test_a_message_part_that_is_not_text_is_said_to_be_left_out_never_dropped_in_silence(with_text: bool) -> None:
    """An image sent beside (or instead of) the question: the import keeps text only, so it warns and notes that
    a replay sends the request without the image; an image alone is content, never "content capture was off"."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    parts = ([("text", "Is this refundable?")] if with_text else []) + [("image", None)]
    attributes: dict[str, Any] = {"openinference.span.kind": "LLM", "llm.model_name": "m",
                                  "llm.input_messages.0.message.role": "user",
                                  "llm.output_messages.0.message.role": "assistant",
                                  "llm.output_messages.0.message.content": "DECLINED"}
    for n, (kind, text) in enumerate(parts):
        attributes[f"llm.input_messages.0.message.contents.{n}.message_content.type"] = kind
        if text is not None:
            attributes[f"llm.input_messages.0.message.contents.{n}.message_content.text"] = text
        else:
            attributes[f"llm.input_messages.0.message.contents.{n}.message_content.image.image.url"] = "data:,x"
    with provider.get_tracer("test").start_as_current_span("llm", attributes=attributes):
        pass
    with pytest.warns(ContentCaptureWarning) as said:
        (run,) = from_spans(exporter.get_finished_spans())
    assert [str(w.message).count("not text") for w in said] == [1]
    assert "not text" in run.recording.meta["note"] and "content capture" not in run.recording.meta["note"]
    assert run.answer == "DECLINED"
