"""Each convention read per span, and hostile attributes of the indexed conventions refused by name.

OpenInference and OpenLLMetry flatten messages into indexed attributes; what a user relies on: indices
in any order or with gaps keep the messages in order, thousands of attributes import in bounded time,
an index or a value of the wrong kind is refused by the convention's name without quoting anything,
and the older OpenLLMetry attributes give the same request as the current ones.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from test_otel_hostile import SECRET, bounded, otlp, refused, span

from footprint_lab.otel import ContentCaptureWarning, OtelSpanFieldError, from_spans


def attrs(**values: Any) -> list[dict[str, Any]]:
    """OTLP JSON attributes; keys spelt with ``__`` for dots."""
    out = []
    for key, value in values.items():
        kind = ("boolValue" if isinstance(value, bool) else "intValue" if isinstance(value, int) else
                "doubleValue" if isinstance(value, float) else "stringValue")
        out.append({"key": key.replace("__", "."), "value": {kind: value}})
    return out


def oi_messages(family: str, messages: list[tuple[str, str]], order: list[int] | None = None,
                step: int = 1) -> dict[str, Any]:
    """OpenInference message attributes, index ``n * step`` for the n-th message, written in ``order``."""
    found: dict[str, Any] = {}
    for n in order if order is not None else range(len(messages)):
        role, content = messages[n]
        found[f"{family}.{n * step}.message.role"] = role
        found[f"{family}.{n * step}.message.content"] = content
    return found


def oi_call(span_id: str, messages: dict[str, Any], parent: str | None = "root", **extra: Any) -> dict[str, Any]:
    values = {"openinference.span.kind": "LLM", "llm.model_name": "gpt-test", **messages, **extra}
    return span(span_id, parent, name="ChatOpenAI", attributes=[{"key": k, "value": {
        "intValue" if isinstance(v, int) else "stringValue": v}} for k, v in values.items()])


def root() -> dict[str, Any]:
    return span("root", name="RunnableSequence", attributes=attrs(openinference__span__kind="CHAIN"))


CONVERSATION = [("system", "Be brief."), ("user", "Refund?"), ("assistant", "Which order?"), ("user", "A-1.")]


@pytest.mark.parametrize("step", [1, 7])
def test_indices_in_any_order_and_with_gaps_keep_the_messages_in_order(step: int) -> None:
    order = list(range(len(CONVERSATION)))
    random.Random(step).shuffle(order)
    out = oi_messages("llm.output_messages", [("assistant", "DECLINED")])
    (run,) = from_spans(otlp(root(), oi_call("c1", {**oi_messages("llm.input_messages", CONVERSATION, order, step),
                                                     **out})))
    (exchange,) = run.recording.exchanges
    assert exchange.system == "Be brief."
    assert [(m["role"], m["content"]) for m in run.recording.request_messages(exchange)] == CONVERSATION[1:]
    assert run.answer == "DECLINED"


def test_thousands_of_attributes_import_in_bounded_time_with_every_message() -> None:
    many = [("user" if n % 2 == 0 else "assistant", f"turn {n}") for n in range(3_000)]
    call = oi_call("c1", {**oi_messages("llm.input_messages", many),
                          **oi_messages("llm.output_messages", [("assistant", "done")])})
    (run,) = bounded(lambda: from_spans(otlp(root(), call)))
    (exchange,) = run.recording.exchanges
    assert len(run.recording.request_messages(exchange)) == 3_000


def test_a_huge_value_is_kept_whole() -> None:
    text = "policy " * 500_000
    (run,) = from_spans(otlp(root(), oi_call("c1", {**oi_messages("llm.input_messages", [("user", text)]),
                                                    **oi_messages("llm.output_messages", [("assistant", "ok")])})))
    assert run.recording.input["message"] == text


@pytest.mark.parametrize("key", [f"llm.input_messages.x{SECRET}.message.role",
                                 "llm.input_messages.1234567890.message.role", "llm.input_messages.3",
                                 "llm.tools.-1.tool.json_schema", "retrieval.documents.¹.x"])
def test_an_index_that_is_not_a_position_is_refused_by_its_family(key: str) -> None:
    call = oi_call("c1", {key: "user"})
    error = refused(otlp(root(), call))
    family = ".".join(key.split(".")[:2])
    assert isinstance(error, OtelSpanFieldError) and error.field.endswith(f"['{family}.*']")
    assert SECRET not in str(error) and "1234567890" not in str(error)


@pytest.mark.parametrize(("extra", "where"), [
    ({"llm.input_messages.0.message.content": 5}, None),  # a number reads as its text: not refused
    ({"llm.token_count.prompt": "ten"}, "llm.token_count.prompt"),
    ({"llm.model_name": 7}, "llm.model_name"),
])
def test_a_value_of_the_wrong_kind_is_refused_by_its_convention_name(extra: dict[str, Any], where: str | None) -> None:
    call = oi_call("c1", {"llm.input_messages.0.message.role": "user", **extra})
    if where is None:
        (run,) = from_spans(otlp(root(), call))
        assert run.recording.input["message"] == "5"
        return
    error = refused(otlp(root(), call))
    assert isinstance(error, OtelSpanFieldError) and where in error.field


def test_a_list_where_message_text_belongs_is_refused_without_quoting_it() -> None:
    listed = {"key": "llm.input_messages.0.message.content",
              "value": {"arrayValue": {"values": [{"stringValue": SECRET}]}}}
    call = span("c1", "root", name="ChatOpenAI", attributes=[*attrs(openinference__span__kind="LLM"), listed])
    error = refused(otlp(root(), call))
    assert isinstance(error, OtelSpanFieldError) and "llm.input_messages[0].message.content" in error.field


def test_openinference_spans_without_content_import_with_a_note_naming_the_setting() -> None:
    call = oi_call("c1", {}, **{"llm.token_count.prompt": 12, "llm.token_count.completion": 3})
    with pytest.warns(ContentCaptureWarning, match="OPENINFERENCE_HIDE_INPUTS"):
        (run,) = from_spans(otlp(root(), call))
    assert run.recording.exchanges[0].response.usage.input_tokens == 12


def openllmetry_call(span_id: str, parent: str | None, prompt: list[dict[str, Any]], completion: dict[str, Any],
                     **extra: Any) -> dict[str, Any]:
    values: dict[str, Any] = {"llm.request.type": "chat", "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o",
                              "gen_ai.response.model": "gpt-4o-2024", "gen_ai.request.temperature": 0.3,
                              "gen_ai.usage.prompt_tokens": 40, "gen_ai.usage.completion_tokens": 9, **extra}
    for n, message in enumerate(prompt):
        values.update({f"gen_ai.prompt.{n}.{k}": v for k, v in message.items()})
    values.update({f"gen_ai.completion.0.{k}": v for k, v in completion.items()})
    return span(span_id, parent, name="openai.chat", attributes=attrs(**{k.replace(".", "__"): v
                                                                         for k, v in values.items()}))


def test_openllmetry_attributes_give_a_complete_request() -> None:
    schema = {"type": "object", "properties": {"order_id": {"type": "string"}}}
    tools = {"llm.request.functions.0.name": "lookup_order", "llm.request.functions.0.description": "Find an order.",
             "llm.request.functions.0.parameters": json.dumps(schema)}
    first = openllmetry_call("c1", "w", [{"role": "system", "content": "Refunds within 30 days."},
                                         {"role": "user", "content": "Refund A-1?"}],
                             {"role": "assistant", "finish_reason": "tool_calls", "tool_calls.0.id": "call_9",
                              "tool_calls.0.name": "lookup_order", "tool_calls.0.arguments": '{"order_id": "A-1"}'},
                             **tools)
    tool = span("t1", "w", name="lookup_order.tool", start=1_020, attributes=attrs(
        traceloop__span__kind="tool", traceloop__entity__name="lookup_order",
        traceloop__entity__input=json.dumps({"args": [], "kwargs": {"order_id": "A-1"}}),
        traceloop__entity__output='{"age_days": 47}'))
    second = openllmetry_call("c2", "w", [{"role": "system", "content": "Refunds within 30 days."},
                                          {"role": "user", "content": "Refund A-1?"},
                                          {"role": "assistant", "tool_calls.0.id": "call_9",
                                           "tool_calls.0.name": "lookup_order",
                                           "tool_calls.0.arguments": '{"order_id": "A-1"}'},
                                          {"role": "tool", "tool_call_id": "call_9", "content": '{"age_days": 47}'}],
                              {"role": "assistant", "content": "DECLINED", "finish_reason": "stop"}, **tools)
    second["startTimeUnixNano"] = "1040"
    workflow = span("w", name="refunds.workflow", attributes=attrs(traceloop__span__kind="workflow"))
    (run,) = from_spans(otlp(workflow, first, tool, second))
    recording = run.recording
    assert run.answer == "DECLINED"
    assert [s.stage for s in recording.steps] == ["seed", "assemble", "call-llm", "tool", "assemble", "call-llm",
                                                  "final"]
    one, two = recording.exchanges
    assert one.system == "Refunds within 30 days." and one.model == "gpt-4o"
    assert one.response.model == "gpt-4o-2024" and one.response.usage.input_tokens == 40
    calls = [(c.id, c.name, c.args) for c in one.response.tool_calls]
    assert calls == [("call_9", "lookup_order", {"order_id": "A-1"})]
    assert one.tools == [{"name": "lookup_order", "description": "Find an order.", "input_schema": schema}]
    assert one.wire["request"]["options"] == {"temperature": 0.3}
    assert [m["role"] for m in recording.request_messages(two)] == ["user", "assistant", "tool"]
    assert two.injected_messages == [] and two.response.stop_reason == "stop"
    (result,) = [p for p in recording.context_pieces if p.source_kind == "tool_result"]
    assert result.source_id == "call_9" and result.detail["requested_by"] == one.step_id


async def test_a_call_sent_as_several_system_messages_is_replayed_as_it_was_sent() -> None:
    """Frameworks send a system prompt in parts (pydantic-ai's system_prompt list): a replay must send the same
    messages, each part in its own system message, and one removed part takes only its own message."""
    from footprint_lab.explain import replay
    from footprint_lab.providers import LLMRequest, mock

    parts = [("system", "You answer in one sentence."), ("system", "The package for order A-1 is in Lisbon."),
             ("system", "Shipping is free over 50 EUR."), ("user", "Where is order A-1?")]
    out = oi_messages("llm.output_messages", [("assistant", "It is in Lisbon.")])
    (run,) = from_spans(otlp(root(), oi_call("c1", {**oi_messages("llm.input_messages", parts), **out})))
    sent: list[LLMRequest] = []

    def model(request: LLMRequest) -> str:
        sent.append(request)
        return "It is in Lisbon." if "Lisbon" in request.system + str(list(request.messages)) else "I do not know."

    same = await replay(run, mock(respond=model))
    wire = [("system", sent[0].system), *((m["role"], m["content"]) for m in sent[0].messages)]
    assert wire == parts                                       # the request as it was sent, message by message
    assert same.answers == ["It is in Lisbon."]
    removed = await replay(run, mock(respond=model), without=["system-part-2"], baseline=0)
    wire = [("system", sent[-1].system), *((m["role"], m["content"]) for m in sent[-1].messages)]
    assert wire == [parts[0], parts[2], parts[3]] and removed.answers == ["I do not know."]
    recorded = removed.replays[0].recording.exchanges[0]
    assert recorded.wire["request"]["system_messages"] == [len(parts[0][1]), len(parts[2][1])]
