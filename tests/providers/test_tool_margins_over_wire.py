"""How close a tool choice was: log-probabilities read off the real OpenAI and Ollama wires, recorded per call,
kept through a saved recording and its seal, and shown in the answer view; without them, the lint's twins."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from wire_server import Reply, WireServer

from footprint_lab import Agent, define_tool, load_recording, verify
from footprint_lab.explain.checks.tool_choice import choice_margins
from footprint_lab.lab.views.answer import answer_view
from footprint_lab.providers.types import TokenChoice

LIVE, HISTORY = math.log(0.55), math.log(0.40)
#: the generated text of a model that writes its call as JSON, split into tokens as a tokenizer would;
#: the model hesitated at "live" (0.55) against "history" (0.40)
TOKENS = [('{"', -0.01, []), ("name", -0.01, []), ('":', -0.01, []), (' "', -0.01, []),
          ("get", -0.02, [("get", -0.02), ("list", -4.1)]), ("_order", -0.01, []),
          ("_live", LIVE, [("_live", LIVE), ("_history", HISTORY), ("_status", math.log(0.03))]),
          ('",', -0.01, [])]


def order_tools() -> list[Any]:
    """Two tools that say what they return but not when to use which: twins by the lint."""
    def tool(name: str, kind: str) -> Any:
        return define_tool(name=name, description=f"Returns the {kind} order records for an order id.",
                           input_schema={"type": "object", "properties": {"order": {"type": "string"}}},
                           fn=lambda order: {"order": order, "state": "shipped"})
    return [tool("get_order_live", "live"), tool("get_order_history", "time-series")]


def wire_tokens() -> list[dict[str, Any]]:
    return [{"token": t, "logprob": lp, "bytes": list(t.encode()),
             "top_logprobs": [{"token": a, "logprob": b, "bytes": list(a.encode())} for a, b in top]}
            for t, lp, top in TOKENS]


def openai_body(*, streamed: bool) -> Reply:
    call = {"id": "call_1", "type": "function",
            "function": {"name": "get_order_live", "arguments": '{"order": "A-1"}'}}
    if not streamed:
        return Reply(body={"id": "c1", "object": "chat.completion", "model": "local", "choices": [{
            "index": 0, "finish_reason": "tool_calls", "logprobs": {"content": wire_tokens(), "refusal": None},
            "message": {"role": "assistant", "content": None, "tool_calls": [call]}}]})
    tokens = wire_tokens()
    chunks = [{"choices": [{"index": 0, "delta": {}, "logprobs": {"content": tokens[:4]}}]},
              {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, **call}]},
                            "logprobs": {"content": tokens[4:]}}]},
              {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}]
    events = [f"data: {json.dumps({'id': 'c1', 'object': 'chat.completion.chunk', 'model': 'local', **c})}\n\n"
              for c in chunks] + ["data: [DONE]\n\n"]
    return Reply(chunks=events, content_type="text/event-stream")


def openai_final(*, streamed: bool = False) -> Reply:
    if streamed:
        chunks = [{"choices": [{"index": 0, "delta": {"content": "A-1 has shipped."}}]},
                  {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]
        return Reply(chunks=[f"data: {json.dumps({'object': 'chat.completion.chunk', 'model': 'local', **c})}\n\n"
                             for c in chunks] + ["data: [DONE]\n\n"], content_type="text/event-stream")
    return Reply(body={"id": "c2", "object": "chat.completion", "model": "local", "choices": [{
        "index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "A-1 has shipped."}}]})


def ollama_body() -> Reply:
    return Reply(body={"model": "llama3.2", "done": True, "done_reason": "stop", "logprobs": wire_tokens(),
                       "message": {"role": "assistant", "content": "", "tool_calls": [
                           {"function": {"name": "get_order_live", "arguments": {"order": "A-1"}}}]}})


def ollama_final() -> Reply:
    return Reply(body={"model": "llama3.2", "done": True, "done_reason": "stop",
                       "message": {"role": "assistant", "content": "A-1 has shipped."}})


@pytest.mark.parametrize(("kind", "streamed"), [("openai", False), ("openai", True), ("ollama", False)])
async def test_the_margin_of_a_tool_choice_is_recorded_output_sealed_and_shown(
        build: Any, server: WireServer, kind: str, streamed: bool) -> None:
    if kind == "openai":
        server.queue(openai_body(streamed=streamed), openai_final(streamed=streamed))
    else:
        server.queue(ollama_body(), ollama_final())
    provider = build(kind, stream=streamed, logprobs=3)
    run = await Agent(provider=provider, tools=order_tools(), seal=True).run("Where is order A-1?")
    assert run.answer == "A-1 has shipped."
    assert server.received[0].body["logprobs"] is True and server.received[0].body["top_logprobs"] == 3
    margin = run.recording.exchanges[0].response.tool_margins[0]
    assert (margin.tool, margin.runner_up, margin.runner_up_tool) == ("get_order_live", "_history",
                                                                     "get_order_history")
    assert margin.margin == pytest.approx(LIVE - HISTORY) and margin.margin < math.log(2)
    assert run.recording.exchanges[1].response.tool_margins == []  # the final answer chose no tool
    saved = load_recording(run.recording.model_dump_json())
    assert saved.exchanges[0].response.tool_margins == run.recording.exchanges[0].response.tool_margins
    assert verify(saved).holds
    html = answer_view(run.recording)
    assert "close call, chose between twins" in html and "margin 0.32 nats" in html
    assert "<code>get_order_history</code> p=0.40" in html


async def test_without_log_probabilities_the_view_falls_back_to_the_lints_twins(
        build: Any, server: WireServer) -> None:
    plain = openai_body(streamed=False)
    plain.body["choices"][0].pop("logprobs")
    server.queue(plain, openai_final())
    run = await Agent(provider=build("openai", stream=False), tools=order_tools()).run("Where is order A-1?")
    assert run.recording.exchanges[0].response.tool_margins == []
    html = answer_view(run.recording)
    assert "<code>get_order_live</code> chose between twins: <code>get_order_history</code>" in html
    assert "nats" not in html


def test_the_deciding_token_is_where_the_name_parts_from_the_others() -> None:
    tokens = [TokenChoice(t, lp, tuple(top)) for t, lp, top in TOKENS]
    call = {"id": "c", "name": "get_order_live"}
    [margin] = choice_margins(tokens, [call], ["get_order_live", "get_order_history", "get_order_status"])
    assert margin["logprob"] == LIVE and margin["runner_up_tool"] == "get_order_history"
    # offered alone beside an unrelated tool, the name parts at its first token
    [margin] = choice_margins(tokens, [call], ["get_order_live", "list_orders"])
    assert (margin["runner_up"], margin["runner_up_tool"]) == ("list", "list_orders")
    assert margin["margin"] == pytest.approx(-0.02 + 4.1)
    # no alternatives listed: the chosen token's probability only; a name never written: nothing
    bare = [TokenChoice(t, lp) for t, lp, _ in TOKENS]
    [margin] = choice_margins(bare, [call], ["get_order_live", "get_order_history"])
    assert margin["margin"] is None and margin["runner_up"] is None
    assert choice_margins(tokens, [{"id": "d", "name": "cancel_order"}], ["cancel_order"]) == []


def test_logprobs_is_checked_at_the_door_and_refused_where_the_wire_has_none(build: Any) -> None:
    from footprint_lab.providers.errors import ProviderConfigError

    for odd in (True, -1, 21, "3", 2.5):
        with pytest.raises(ProviderConfigError) as refused:
            build("openai", logprobs=odd)
        assert refused.value.code == "ERR_PROVIDER_CONFIG" and "0 to 20" in str(refused.value)
    with pytest.raises(ProviderConfigError) as refused:
        build("anthropic", logprobs=3)
    assert "not reported by the anthropic API" in str(refused.value)


def test_malformed_log_probabilities_are_left_out_not_fatal() -> None:
    from footprint_lab.providers.types import token_choices

    raw = [{"token": "a", "logprob": -0.1, "top_logprobs": [{"token": "b", "logprob": "x"}, 5]}, "junk",
           {"token": 3, "logprob": -1}, {"token": "\udcff", "logprob": True}, {"token": "c", "logprob": -2}]
    assert token_choices(raw) == [TokenChoice("a", -0.1, ()), TokenChoice("c", -2.0, ())]
    assert token_choices(None) == [] and token_choices({"content": []}) == []
