"""LLMCall with declared context: facts, instructions, memory and RAG in one call; tool-bound context refused."""

from __future__ import annotations

import pytest

from footprint_lab import LLMCall, Recording, define_tool
from footprint_lab.context import (
    InMemoryStore,
    define_fact,
    define_instruction,
    define_memory,
    define_rag,
    define_skill,
    define_steering,
    on_tool_return,
)
from footprint_lab.core.agent import turn_text
from footprint_lab.errors import ContextConfigError, LLMCallContextError, Refusal
from footprint_lab.providers import LLMRequest, mock


def keeping(reply: str = "ok"):
    seen: list[LLMRequest] = []

    def respond(request: LLMRequest) -> str:
        seen.append(request)
        return reply

    return mock(respond=respond), seen


async def test_declared_context_lands_in_the_one_call_and_adds_up_to_what_was_sent():
    provider, seen = keeping("summary")
    call = LLMCall(provider=provider, system="Summarize.", budgets={"system": 80}, context=[
        define_steering(id="tone", prompt="Be brief."),
        define_fact(id="audience", data={"reader": "cfo"}),
        define_instruction(id="cite", template="Write for {fact:audience}.",
                           active_when=lambda view: "report" in view.message),
        define_fact(id="too-long", data="x" * 80),
        define_fact(id="closing", data="Answer in English.", slot="messages", role="user"),
    ])
    run = await call.run("Summarize the report.")
    [request] = seen
    assert request.system == 'Summarize.\n\nBe brief.\n\n{"reader": "cfo"}\n\nWrite for {"reader": "cfo"}.'
    assert [m["content"] for m in request.messages] == ["Summarize the report.", "Answer in English."]
    assert request.tools == []
    recording = run.recording
    [exchange] = recording.exchanges
    slots = recording.exchange_pieces(exchange)
    pieces = recording.context_pieces
    assert "\n\n".join(pieces[i].content for i in slots["system"]) == exchange.system == request.system
    assert [pieces[i].content for i in slots["messages"]] == [turn_text(m) for m in request.messages]
    assert recording.request_messages(exchange) == list(request.messages)
    [dropped] = [p for p in pieces if p.verdict == "dropped"]
    assert dropped.source_id == "too-long" and dropped.detail["budget"] == 80
    assert Recording.model_validate_json(recording.model_dump_json()) == recording
    assert list(run.context()["source_id"]) == ["system-prompt", "tone", "audience", "cite", "user-message",
                                                 "closing"]


async def test_memory_recalls_and_writes_back_through_an_llm_call():
    store = InMemoryStore()
    provider, seen = keeping("Noted: teal.")
    call = LLMCall(provider=provider, context=[define_memory(id="notes", store=store)])
    await call.run("My colour is teal.", identity={"principal": "ana"})
    await call.run("Which colour?", identity={"principal": "ana"})
    await call.run("Which colour?", identity={"principal": "bob"})
    assert seen[1].system == "user: My colour is teal.\n\nassistant: Noted: teal."
    assert seen[2].system == ""


async def test_retrieval_feeds_the_call():
    provider, seen = keeping()
    corpus = {"refunds": "Refunds take 30 days.", "shipping": "Shipping takes five days."}
    run = await LLMCall(provider=provider, context=[define_rag(id="docs", corpus=corpus, top_k=1)]).run(
        "How long do refunds take?")
    assert seen[0].system == "Refunds take 30 days."
    [piece] = [p for p in run.recording.context_pieces if p.source_id == "docs"]
    assert (piece.detail["document"], piece.detail["rank"]) == ("refunds", 1)


def test_a_skill_is_refused_by_name_when_the_call_is_built():
    provider = mock(reply="never")
    helper = define_tool(name="refund", description="Refund.", input_schema={"type": "object"}, fn=lambda: "ok")
    with pytest.raises(LLMCallContextError) as caught:
        LLMCall(provider=provider, context=[define_fact(id="plan", data="pro"),
                                            define_skill(id="billing", description="d", body="B", tools=[helper])])
    error = caught.value
    assert isinstance(error, Refusal) and error.code == "ERR_LLM_CALL_CONTEXT"
    assert (error.context_id, error.kind) == ("billing", "skill")
    assert "'billing'" in str(error) and "read_skill" in str(error) and "Agent(" in str(error)
    assert provider.calls == 0


@pytest.mark.parametrize("declaration", [
    define_fact(id="after", data="Looked up.", trigger=on_tool_return("lookup")),
    define_instruction(id="after", prompt="Check it.", trigger=on_tool_return("lookup")),
    define_memory(id="after", store=InMemoryStore(), trigger=on_tool_return("lookup")),
])
def test_context_waiting_for_a_tool_is_refused_by_name(declaration):
    with pytest.raises(LLMCallContextError) as caught:
        LLMCall(provider=mock(reply="never"), context=[declaration])
    assert (caught.value.context_id, caught.value.kind) == ("after", declaration.kind)
    assert "after a tool returns" in str(caught.value)


def test_a_tools_budget_is_refused_and_context_is_checked_as_for_an_agent():
    with pytest.raises(ContextConfigError) as caught:
        LLMCall(provider=mock(reply="x"), budgets={"tools": 100}, context=[define_fact(id="a", data="b")])
    assert caught.value.setting == "budgets" and "'system' and 'messages'" in str(caught.value)
    with pytest.raises(ContextConfigError):
        LLMCall(provider=mock(reply="x"), context="not a list")


async def test_an_llm_call_is_rebuilt_for_reruns_with_its_context():
    provider, seen = keeping()
    call = LLMCall(provider=provider, system="Summarize.", budgets={"system": 20}, context=[
        define_fact(id="audience", data="For the CFO."),
        define_fact(id="tone", data="Plain words only."),
    ])
    await call.run("Q3 was flat.")
    await call.without("tone").run("Q3 was flat.")
    await call.with_forced("tone").run("Q3 was flat.")
    assert [r.system for r in seen] == ["Summarize.", "Summarize.", "Summarize.\n\nPlain words only."]
    rebuilt = call.without("audience")
    assert type(rebuilt) is LLMCall and rebuilt.max_iterations == 1
    run = await rebuilt.run("Q3 was flat.")
    assert seen[-1].tools == []
    declared = {p.source_id: p.verdict for p in run.recording.context_pieces if p.source_kind == "fact"}
    assert declared == {"tone": "dropped"}  # the budget came along, the removed fact did not
