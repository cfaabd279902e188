"""Conversations: checkpoint(), follow_up(), continue_from=, and the refusals that guard them."""

from __future__ import annotations

import asyncio
import json

import pytest
from conversation_kit import Seen, counted_tool, scripted

from footprint_lab import Agent, Checkpoint, Identity
from footprint_lab.errors import (
    ConversationMismatchError,
    InvalidCheckpointError,
    MockScriptError,
    NoConversationError,
    ResumeIdentityConflictError,
    RunInFlightError,
)
from footprint_lab.providers import mock


def tool_then_answer(calls: list[str]) -> tuple[Agent, Seen]:
    seen = scripted({"tool": "lookup", "args": {}}, "Paris.")
    return Agent(provider=seen.provider, system="Be brief.", tools=[counted_tool("lookup", calls)]), seen


async def test_checkpoint_is_none_before_any_run() -> None:
    assert Agent(provider=mock(reply="hi")).checkpoint() is None


async def test_checkpoint_holds_the_conversation_with_the_answer_and_no_system_prompt() -> None:
    agent, _ = tool_then_answer([])
    run = await agent.run("Capital of France?")
    checkpoint = agent.checkpoint()
    assert isinstance(checkpoint, Checkpoint)
    assert checkpoint.schema_version == 1
    assert checkpoint.run_id == run.run_id
    assert [m["role"] for m in checkpoint.history] == ["user", "assistant", "tool", "assistant"]
    assert checkpoint.history[0]["content"] == "Capital of France?"
    assert checkpoint.history[-1]["content"] == "Paris."
    assert all("Be brief." not in json.dumps(m) for m in checkpoint.history)
    assert checkpoint.identity is None and checkpoint.agent_id is None
    assert checkpoint.redaction is None
    assert checkpoint.redaction_marks == {"keys": [], "patterns": [], "matched": []}
    assert checkpoint.pause is None


async def test_checkpoint_carries_identity_and_agent_id_only_when_set_explicitly() -> None:
    agent = Agent(provider=mock(reply="ok"), id="support")
    await agent.run("hi", identity=Identity(conversation_id="c-1", principal="ana"))
    checkpoint = agent.checkpoint()
    assert checkpoint is not None
    assert checkpoint.identity == {"conversation_id": "c-1", "principal": "ana"}
    assert checkpoint.agent_id == "support"


async def test_checkpoint_is_a_copy() -> None:
    agent = Agent(provider=mock(reply="ok"))
    await agent.run("hi")
    first = agent.checkpoint()
    assert first is not None
    first.history.append({"role": "user", "content": "injected"})
    again = agent.checkpoint()
    assert again is not None and len(again.history) == 2


async def test_follow_up_continues_the_last_finished_run() -> None:
    calls: list[str] = []
    agent, seen = tool_then_answer(calls)
    first = await agent.run("Capital of France?")
    run = await agent.follow_up("And of Spain?")
    sent = seen.requests[-1].messages
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "assistant", "user", "assistant", "tool"]
    assert sent[0]["content"] == "Capital of France?" and sent[4]["content"] == "And of Spain?"
    assert seen.requests[-1].system == "Be brief."
    assert run.recording.meta["continues"] == {"run_id": first.run_id, "how": "follow_up", "first_run_id": first.run_id}
    assert calls == ["lookup", "lookup"]
    checkpoint = agent.checkpoint()
    assert checkpoint is not None and len(checkpoint.history) == 8


async def test_follow_up_records_the_earlier_turns_as_context_pieces() -> None:
    agent = Agent(provider=mock(reply="ok"))
    first = await agent.run("one")
    run = await agent.follow_up("two")
    pieces = [p for p in run.recording.context_pieces if p.slot == "messages"]
    assert [p.source_id for p in pieces[:2]] == ["history#0", "history#1"]
    assert pieces[0].detail == {"from_run": first.run_id}
    assert run.recording.meta["continues"] == {"run_id": first.run_id, "how": "follow_up", "first_run_id": first.run_id}


async def test_follow_up_before_any_run_is_refused_as_never_run() -> None:
    agent = Agent(provider=mock(reply="ok"))
    with pytest.raises(NoConversationError) as caught:
        await agent.follow_up("hello?")
    assert caught.value.code == "ERR_NO_CONVERSATION"
    assert caught.value.reason == "never-run"
    assert "continue_from" in str(caught.value)


async def test_follow_up_after_a_failed_run_is_refused_as_last_run_unfinished() -> None:
    agent = Agent(provider=mock(replies=[]))
    with pytest.raises(MockScriptError):
        await agent.run("hi")
    with pytest.raises(NoConversationError) as caught:
        await agent.follow_up("again")
    assert caught.value.reason == "last-run-unfinished"
    assert agent.checkpoint() is None


async def test_follow_up_after_a_refused_input_is_refused_as_last_input_refused() -> None:
    seen = scripted("fine")
    agent = Agent(provider=seen.provider, input_guard=lambda m: "I can't help with that." if "hack" in m else None)
    accepted = await agent.run("hello")
    earlier = agent.checkpoint()
    refused = await agent.run("hack the bank")
    assert refused.answer == "I can't help with that."
    assert refused.stopped_early is not None and refused.stopped_early["reason"] == "input_refused"
    assert len(seen.requests) == 1  # the model was never called for the refused message
    assert refused.recording.decisions[-1].chosen == "refused"
    assert agent.checkpoint() is None
    with pytest.raises(NoConversationError) as caught:
        await agent.follow_up("more")
    assert caught.value.reason == "last-input-refused"
    continued = await agent.run("more", continue_from=earlier)
    assert continued.recording.meta["continues"]["run_id"] == accepted.run_id


async def test_continue_from_a_stored_checkpoint_on_another_instance() -> None:
    agent, _ = tool_then_answer([])
    await agent.run("Capital of France?")
    stored = agent.checkpoint().model_dump_json()  # type: ignore[union-attr]
    seen = scripted("Madrid.")
    other = Agent(provider=seen.provider, tools=[counted_tool("lookup", [])])
    for form in (stored, json.loads(stored), Checkpoint.model_validate_json(stored)):
        run = await other.run("And Spain?", continue_from=form)
        assert run.answer == "Madrid."
        assert [m["content"] for m in seen.requests[-1].messages][::4] == ["Capital of France?", "And Spain?"]


async def test_continue_from_also_arrives_in_the_input_mapping() -> None:
    agent = Agent(provider=mock(reply="ok"))
    await agent.run("one")
    checkpoint = agent.checkpoint()
    run = await agent.run({"message": "two", "continue_from": checkpoint})
    assert run.recording.input == {"message": "two"}
    assert len(run.recording.messages) == 4


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d.update(schema_version=2), "schema_version"),
        (lambda d: d.pop("run_id"), "run_id"),
        (lambda d: d["history"][1].update(role=7), "history[1].role"),
        (lambda d: d["history"][0].update(content=["not", "text"]), "history[0].content"),
        (lambda d: d["history"].insert(0, {"role": "assistant", "content": "x"}), "history[0].role"),
        (lambda d: d.update(history="not a list"), "history"),
        (lambda d: d.update(identity={"principal": ""}), "identity.principal"),
        (lambda d: d.update(redaction_marks=[]), "redaction_marks"),
        (lambda d: d.update(extra=1), "checkpoint"),
    ],
)
async def test_a_malformed_checkpoint_is_refused_naming_the_field(change, field) -> None:  # type: ignore[no-untyped-def]
    agent = Agent(provider=mock(reply="ok"))
    first = await agent.run("hello there")
    data = agent.checkpoint().model_dump(mode="json")  # type: ignore[union-attr]
    change(data)
    with pytest.raises(InvalidCheckpointError) as caught:
        await agent.run("next", continue_from=data)
    assert caught.value.code == "ERR_INVALID_CHECKPOINT"
    assert caught.value.field == field
    assert caught.value.door == "Agent.run"
    assert "hello there" not in str(caught.value)
    assert agent.last_run is first  # nothing ran
    assert (await agent.follow_up("still fine")).status == "finished"  # nothing moved


async def test_a_checkpoint_that_is_not_json_is_refused() -> None:
    agent = Agent(provider=mock(reply="ok"))
    with pytest.raises(InvalidCheckpointError) as caught:
        await agent.run("next", continue_from="{not json")
    assert caught.value.field == "checkpoint"
    with pytest.raises(InvalidCheckpointError) as caught:
        await agent.run("next", continue_from=42)
    assert caught.value.received == "an int"


async def test_another_agents_conversation_is_refused_when_both_ids_are_explicit() -> None:
    billing = Agent(provider=mock(reply="ok"), id="billing")
    await billing.run("hi")
    checkpoint = billing.checkpoint()
    with pytest.raises(ConversationMismatchError) as caught:
        await Agent(provider=mock(reply="ok"), id="support").run("hi", continue_from=checkpoint)
    assert caught.value.code == "ERR_CONVERSATION_MISMATCH"
    assert (caught.value.agent_id, caught.value.checkpoint_agent_id) == ("support", "billing")
    assert (await Agent(provider=mock(reply="ok")).run("hi", continue_from=checkpoint)).status == "finished"


async def test_continuing_a_conversation_as_someone_else_is_refused() -> None:
    agent = Agent(provider=mock(reply="ok"))
    await agent.run("hi", identity={"principal": "ana", "tenant": "acme"})
    with pytest.raises(ResumeIdentityConflictError) as caught:
        await agent.follow_up("more", identity={"principal": "bob", "tenant": "acme"})
    assert caught.value.code == "ERR_SESSION_OWNERSHIP_CONFLICT"
    assert "ana" not in str(caught.value) and "bob" not in str(caught.value)
    run = await agent.follow_up("more")
    assert run.recording.identity == {"tenant": "acme", "principal": "ana"}


async def test_two_overlapping_runs_on_one_instance_are_refused() -> None:
    release = asyncio.Event()

    async def slow(_request: object) -> str:
        await release.wait()
        return "first"

    agent = Agent(provider=mock(respond=slow), id="desk")

    async def second() -> object:
        await asyncio.sleep(0)
        try:
            return await agent.run("b")
        finally:
            release.set()

    first, refused = await asyncio.gather(agent.run("a"), second(), return_exceptions=True)
    assert isinstance(refused, RunInFlightError)
    assert refused.code == "ERR_RUN_IN_FLIGHT"
    assert refused.agent_id == "desk" and refused.active_run_id == first.run_id  # type: ignore[union-attr]
    checkpoint = agent.checkpoint()
    assert checkpoint is not None and checkpoint.run_id == first.run_id  # type: ignore[union-attr]
    assert checkpoint.history[0]["content"] == "a"


async def test_events_carry_principal_and_tenant_only_when_an_identity_was_named() -> None:
    seen_ctx: list[object] = []

    def whoami(ctx) -> str:  # type: ignore[no-untyped-def]
        seen_ctx.append(ctx.identity)
        return "done"

    from footprint_lab import define_tool

    tool = define_tool(name="whoami", description="Who is asking.", fn=whoami)
    agent = Agent(provider=mock(replies=[{"tool": "whoami", "args": {}}, "ok"]), tools=[tool])
    named = await agent.run("hi", identity=Identity(principal="ana", tenant="acme", conversation_id="c"))
    anonymous = await agent.run("hi")
    for run, expected in ((named, {"principal": "ana", "tenant": "acme"}), (anonymous, {})):
        events = [e for e in run.recording.events if e.type in ("run_start", "tool_start", "tool_end")]
        assert len(events) == 3
        for event in events:
            assert {k: event.payload[k] for k in ("principal", "tenant") if k in event.payload} == expected
    assert seen_ctx[0] == Identity(principal="ana", tenant="acme", conversation_id="c")
    assert seen_ctx[1] is None


async def test_a_continued_conversation_keeps_its_declared_context() -> None:
    from footprint_lab.context import InMemoryStore, define_fact, define_memory

    store = InMemoryStore()
    seen = scripted("first answer")  # each turn is call 0 of its own run
    agent = Agent(provider=seen.provider, system="Be brief.",
                  context=[define_fact(id="plan", data="The plan is pro."), define_memory(id="notes", store=store)])
    await agent.run("hello", identity={"principal": "ana"})
    run = await agent.follow_up("and then?")
    assert "The plan is pro." in seen.requests[-1].system
    sources = [(p.source_kind, p.source_id) for p in run.context_pieces()]
    assert ("user", "history#0") in sources and ("fact", "plan") in sources
    refusing = Agent(provider=mock(reply="x"), input_guard=lambda m: "no",
                     context=[define_memory(id="notes", store=store)])
    namespace = Identity(principal="ana").namespace()
    remembered = store.recall(namespace, limit=100)
    assert [item["content"] for item in remembered] == ["hello", "first answer", "and then?", "first answer"]
    await refusing.run("secret plans", identity={"principal": "ana"})
    assert store.recall(namespace, limit=100) == remembered  # a refused message is written to no memory


async def test_an_empty_reply_still_leaves_a_checkpoint_that_continues() -> None:
    from footprint_lab.providers.types import LLMResponse

    agent = Agent(provider=mock(replies=[LLMResponse(content=None, stop_reason="end_turn")]))
    run = await agent.run("say nothing")
    assert run.answer == ""
    checkpoint = agent.checkpoint()
    assert checkpoint is not None and checkpoint.history[-1] == {"role": "assistant", "content": ""}
    assert (await Agent(provider=mock(reply="ok")).run("and now?", continue_from=checkpoint)).answer == "ok"
