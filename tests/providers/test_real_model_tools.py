"""A tool round with a real model: llama.cpp's ``chatml-function-calling`` format on SmolLM2-135M.

That chat format lists the tools in the system message (so the agent has one) and decides
between a call and prose only when asked to (``tool_choice: "auto"``, through ``options``).
A 135M model may still answer in prose; the test then checks that the prose is what was
recorded. Either way it checks the wire, not the model's judgement.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from real_model_kit import MODEL, ModelServers

from footprint_lab import Agent, define_tool
from footprint_lab.providers import openai
from footprint_lab.providers.errors import ProviderResponseError

pytestmark = pytest.mark.real_model

ORDERS_SCHEMA = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}


def lookup_tool(calls: list[dict[str, Any]]) -> Any:
    def lookup_order(order_id: str) -> str:
        calls.append({"order_id": order_id})
        return f"Order {order_id}: shipped on 2 May."

    return define_tool(name="lookup_order", description="Look up an order by its id and return its status.",
                       input_schema=ORDERS_SCHEMA, fn=lookup_order)


def tool_provider(url: str, **settings: Any) -> Any:
    # room for the arguments JSON whole (a cut one would be refused as unreadable)
    return openai(MODEL, base_url=url, timeout=120.0, max_tokens=40,
                  options={"temperature": 0, "seed": 7, "tool_choice": "auto"}, **settings)


async def test_a_plainly_asked_tool_call_runs_the_tool_with_the_arguments_on_the_wire(
    model_server: ModelServers,
) -> None:
    ran: list[dict[str, Any]] = []
    agent = Agent(provider=tool_provider(model_server("tools").url, stream=False), tools=[lookup_tool(ran)],
                  system="You are a helpful assistant.", max_iterations=1)
    run = await agent.run("Look up order A-4411.")
    first = run.recording.exchanges[0]
    assert first.wire is not None
    message = first.wire["response"]["body"]["choices"][0]["message"]
    sent_tools = first.wire["request"]["body"]["tools"]
    assert [t["function"]["name"] for t in sent_tools] == ["lookup_order"]
    wire_calls = message.get("tool_calls") or []
    if not wire_calls:  # the model answered in prose: that prose is the answer recorded, and no tool ran
        assert ran == [] and run.answer == message["content"] and first.response.tool_calls == []
        return
    recorded = first.response.tool_calls
    assert [(c.id, c.name, c.args) for c in recorded] == [
        (w["id"], w["function"]["name"], json.loads(w["function"]["arguments"])) for w in wire_calls]
    assert first.response.stop_reason == "tool_use" and ran == [c.args for c in recorded]
    assert all(isinstance(args["order_id"], str) for args in ran)
    # The iteration budget is spent, so the next call goes out with the tools withheld; it carries
    # the round just made: the call (content "", which this server needs) and the tool's result.
    second = run.recording.exchanges[1]
    assert second.wire is not None
    history = second.wire["request"]["body"]["messages"]
    assert "tools" not in second.wire["request"]["body"]
    assistant = next(m for m in history if m["role"] == "assistant")
    assert assistant["content"] == (first.response.content or "")
    assert [c["id"] for c in assistant["tool_calls"]] == [c.id for c in recorded]
    results = [m for m in history if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in results] == [
        (c.id, f"Order {c.args['order_id']}: shipped on 2 May.") for c in recorded]
    assert run.recording.status == "finished" and run.answer == second.response.content


async def test_a_reply_that_may_call_a_tool_cannot_be_streamed_by_this_server_and_says_so(
    model_server: ModelServers,
) -> None:
    # llama.cpp's Python server answers 200 and then fails ("Automatic streaming tool choice is not
    # supported"): the run fails with a typed error that points at stream=False, and no tool runs.
    ran: list[dict[str, Any]] = []
    agent = Agent(provider=tool_provider(model_server("tools").url), tools=[lookup_tool(ran)],
                  system="You are a helpful assistant.")
    with pytest.raises(ProviderResponseError) as caught:
        await agent.run("Look up order A-4411.")
    error = caught.value
    assert (error.status, error.retryable) == (200, False) and "stream=False" in str(error)
    assert ran == [] and error.wire is not None and error.wire["response"]["body"] == []
