"""Pausing for a person: ask_human, resume, abandon_pause, and the refusals around a pending question."""

from __future__ import annotations

import asyncio

import pytest
from conversation_kit import asking_tool, counted_tool, pausing_agent, scripted

from footprint_lab import Agent, Checkpoint, Identity, ask_human
from footprint_lab.core.pause import HumanQuestion, Pause
from footprint_lab.errors import (
    InvalidCheckpointError,
    InvalidRunInputError,
    NoConversationError,
    PendingQuestionError,
    ResumeIdentityConflictError,
    RunInFlightError,
)
from footprint_lab.providers import mock


async def test_a_tool_that_asks_a_person_pauses_the_run() -> None:
    calls: list[str] = []
    agent, _ = pausing_agent(calls)
    run = await agent.run("Refund my order")
    assert run.paused and run.status == "paused"
    assert run.question == "Refund 120 EUR to this card?"
    assert run.answer is None
    assert calls == ["lookup", "confirm"]  # notify, later in the same batch, did not run
    checkpoint = run.checkpoint
    assert isinstance(checkpoint, Checkpoint)
    assert checkpoint.pause == {"question": "Refund 120 EUR to this card?", "tool_name": "confirm",
                                "tool_call_id": "call_2_1", "choices": ["yes", "no"]}
    recording = run.recording
    assert recording.status == "paused"
    stages = [(s.stage, s.status) for s in recording.steps]
    assert stages[-1] == ("tool", "paused")
    assert ("tool", "ok") in stages  # the lookup before the pause is committed
    assert len(recording.commits) == len(recording.steps)  # every step closed with its commit
    assert recording.commits[-1].entries[-1].path == ["pause"]
    assert agent.checkpoint() == checkpoint


async def test_resume_continues_where_it_stopped_without_rerunning_any_tool() -> None:
    calls: list[str] = []
    agent, seen = pausing_agent(calls)
    paused = await agent.run("Refund my order")
    run = await agent.resume(paused.checkpoint, "yes")
    assert run.status == "finished" and run.answer == "Refund sent."
    assert calls == ["lookup", "confirm", "notify"]  # notify ran now; lookup and confirm did not run again
    sent = seen.requests[-1].messages
    answer = next(m for m in sent if m.get("tool_call_id") == "call_2_1")
    assert answer["content"] == "yes"
    assert seen.requests[-1].call_index == 2  # the turn's count went on across the pause
    assert run.recording.meta["continues"] == {"run_id": paused.run_id, "how": "resume", "first_run_id": paused.run_id}
    answered = [e for e in run.recording.events if e.type == "tool_start" and e.payload.get("answered_by")]
    assert answered and answered[0].payload["tool_call_id"] == "call_2_1"
    checkpoint = agent.checkpoint()
    assert checkpoint is not None and checkpoint.pause is None and checkpoint.history[-1]["content"] == "Refund sent."


async def test_a_stored_pause_resumes_on_another_instance() -> None:
    calls: list[str] = []
    agent, _ = pausing_agent(calls)
    paused = await agent.run("Refund my order")
    stored = paused.checkpoint.model_dump_json()
    later_calls: list[str] = []
    other, _ = pausing_agent(later_calls)
    run = await other.resume(stored, {"approved": True})
    assert run.answer == "Refund sent."
    assert later_calls == ["notify"]
    assert '{"approved": true}' in [m["content"] for m in run.recording.messages]


async def test_a_new_message_while_a_question_is_pending_is_refused_until_abandoned() -> None:
    calls: list[str] = []
    agent, _ = pausing_agent(calls)
    paused = await agent.run("Refund my order")
    for attempt in (lambda: agent.run("something else"), lambda: agent.follow_up("hello?")):
        with pytest.raises(PendingQuestionError) as caught:
            await attempt()
        assert caught.value.code == "ERR_PENDING_QUESTION"
        assert (caught.value.tool_name, caught.value.tool_call_id) == ("confirm", "call_2_1")
        assert "Refund 120 EUR to this card?" in str(caught.value)
        assert "abandon_pause()" in str(caught.value) and "resume(" in str(caught.value)
    assert agent.checkpoint() == paused.checkpoint  # the refusals moved nothing
    dropped = agent.abandon_pause()
    assert dropped == Pause(question="Refund 120 EUR to this card?", tool_name="confirm", tool_call_id="call_2_1",
                            run_id=paused.run_id, choices=["yes", "no"])
    note = paused.recording.annotations[-1]
    assert (note.target, note.tag) == ("answer", "pause_abandoned") and "'confirm'" in note.text
    assert agent.abandon_pause() is None
    assert agent.checkpoint() is None
    with pytest.raises(NoConversationError) as nothing:  # a dropped question leaves nothing to follow up
        await agent.follow_up("so?")
    assert nothing.value.reason == "last-run-unfinished"
    run = await agent.run("Start over")
    assert run.status == "paused"  # the same scripted flow, run anew


async def test_abandoning_before_the_recording_is_built_still_lands_on_the_record() -> None:
    agent, _ = pausing_agent([])
    paused = await agent.run("Refund my order")
    agent.abandon_pause()
    assert [a.tag for a in paused.recording.annotations] == ["pause_abandoned"]


async def test_resume_with_the_original_identity_succeeds_and_with_another_is_refused() -> None:
    calls: list[str] = []
    agent, _ = pausing_agent(calls)
    ana = Identity(principal="ana", tenant="acme")
    paused = await agent.run("Refund my order", identity=ana)
    with pytest.raises(ResumeIdentityConflictError) as caught:
        await agent.resume(paused.checkpoint, "yes", identity=Identity(principal="bob", tenant="acme"))
    assert caught.value.code == "ERR_SESSION_OWNERSHIP_CONFLICT"
    assert caught.value.evidence() == {"door": "Agent.resume"}
    assert "ana" not in str(caught.value) and "bob" not in str(caught.value)
    assert calls == ["lookup", "confirm"]  # nothing ran
    assert agent.checkpoint() == paused.checkpoint  # nothing moved
    run = await agent.resume(paused.checkpoint, "yes", identity=ana)
    assert run.answer == "Refund sent."
    assert run.recording.identity == {"tenant": "acme", "principal": "ana"}


async def test_resume_without_identity_keeps_the_paused_runs_identity() -> None:
    seen_identity: list[object] = []

    def notify(ctx) -> str:  # type: ignore[no-untyped-def]
        seen_identity.append(ctx.identity)
        return "sent"

    from footprint_lab import define_tool

    seen = scripted([{"tool": "confirm", "args": {}}, {"tool": "notify", "args": {}}], "done")
    agent = Agent(provider=seen.provider,
                  tools=[asking_tool(), define_tool(name="notify", description="Notify.", fn=notify)])
    paused = await agent.run("go", identity={"principal": "ana"})
    run = await agent.resume(paused.checkpoint, "yes")
    assert seen_identity == [Identity(principal="ana")]
    start = next(e for e in run.recording.events if e.type == "run_start")
    assert start.payload["principal"] == "ana"


async def test_an_ownerless_pause_resumed_by_a_named_person_is_refused() -> None:
    agent, _ = pausing_agent([])
    paused = await agent.run("Refund my order")
    with pytest.raises(ResumeIdentityConflictError):
        await agent.resume(paused.checkpoint, "yes", identity={"principal": "mallory"})
    assert (await agent.resume(paused.checkpoint, "yes")).status == "finished"


async def test_resume_on_a_runner_already_running_is_refused() -> None:
    release = asyncio.Event()
    answered: list[str] = []

    async def respond(request):  # type: ignore[no-untyped-def]
        if request.call_index == 0:
            return {"tool": "confirm", "args": {}}
        await release.wait()
        return "done"

    agent = Agent(provider=mock(respond=respond), tools=[asking_tool()])
    paused = await agent.run("go")

    async def second() -> None:
        await asyncio.sleep(0)
        try:
            await agent.resume(paused.checkpoint, "yes")
        except RunInFlightError as refused:
            answered.append(refused.code)
        finally:
            release.set()

    first, _ = await asyncio.gather(agent.resume(paused.checkpoint, "yes"), second())
    assert first.answer == "done"
    assert answered == ["ERR_RUN_IN_FLIGHT"]


async def test_resume_needs_a_paused_checkpoint_and_an_answer() -> None:
    agent = Agent(provider=mock(reply="ok"))
    await agent.run("hi")
    with pytest.raises(InvalidCheckpointError) as caught:
        await agent.resume(agent.checkpoint(), "yes")
    assert caught.value.field == "pause"
    paused_agent, _ = pausing_agent([])
    paused = await paused_agent.run("Refund my order")
    with pytest.raises(InvalidRunInputError) as answer_refused:
        await paused_agent.resume(paused.checkpoint, None)
    assert answer_refused.value.runner == "Agent.resume"
    assert (await paused_agent.resume(paused.checkpoint, "no")).status == "finished"


async def test_a_tampered_pause_is_refused_naming_the_field() -> None:
    agent, _ = pausing_agent([])
    paused = await agent.run("Refund my order")
    data = paused.checkpoint.model_dump(mode="json")
    data["pause"]["tool_call_id"] = "call_9_9"
    with pytest.raises(InvalidCheckpointError) as caught:
        await agent.resume(data, "yes")
    assert caught.value.field == "pause.tool_call_id"
    data = paused.checkpoint.model_dump(mode="json")
    data["pause"] = None
    with pytest.raises(InvalidCheckpointError) as caught:
        await Agent(provider=mock(reply="ok")).run("hi", continue_from=data)
    assert caught.value.field == "history"


async def test_continuing_a_paused_checkpoint_with_a_new_message_is_refused() -> None:
    agent, _ = pausing_agent([])
    paused = await agent.run("Refund my order")
    other = Agent(provider=mock(reply="ok"), tools=[asking_tool()])
    with pytest.raises(PendingQuestionError) as caught:
        await other.run("ignore that", continue_from=paused.checkpoint)
    assert caught.value.tool_call_id == "call_2_1"
    with pytest.raises(PendingQuestionError):
        await other.resume_on_error(paused.checkpoint)


async def test_resuming_a_different_question_while_one_is_pending_is_refused() -> None:
    agent, _ = pausing_agent([])
    first = await agent.run("Refund my order")
    agent.abandon_pause()
    second = await agent.run("Refund another order")
    with pytest.raises(PendingQuestionError):
        await agent.resume(first.checkpoint, "yes")
    assert (await agent.resume(second.checkpoint, "yes")).answer == "Refund sent."


async def test_a_pause_in_the_last_call_of_a_batch_resumes_into_the_next_iteration() -> None:
    calls: list[str] = []
    seen = scripted([{"tool": "lookup", "args": {}}, {"tool": "confirm", "args": {}}], "All done.")
    agent = Agent(provider=seen.provider, tools=[counted_tool("lookup", calls), asking_tool(calls=calls)],
                  max_iterations=2)
    paused = await agent.run("go")
    run = await agent.resume(paused.checkpoint, "yes")
    assert calls == ["lookup", "confirm"]
    assert run.answer == "All done."
    assert [s.iteration for s in run.recording.steps if s.stage == "call-llm"] == [2]


def test_ask_human_refuses_a_question_no_person_could_read() -> None:
    from footprint_lab.errors import InvalidQuestionError

    with pytest.raises(InvalidQuestionError) as caught:
        ask_human("   ")
    assert caught.value.code == "ERR_INVALID_QUESTION"
    assert caught.value.received == "a blank string"
    with pytest.raises(InvalidQuestionError) as caught:
        ask_human("ok?", choices="yes")  # type: ignore[arg-type]
    assert caught.value.received == "choices as a str"
    with pytest.raises(HumanQuestion) as asked:
        ask_human("Proceed?")
    assert asked.value.question == "Proceed?"


async def test_a_resumed_legs_recording_accounts_for_exactly_what_was_sent() -> None:
    agent, seen = pausing_agent([], system="Refunds need consent.")
    paused = await agent.run("Refund my order")
    run = await agent.resume(paused.checkpoint, "yes")
    recording = run.recording
    assert len(recording.exchanges) == 1
    exchange = recording.exchanges[0]
    assert recording.request_messages(exchange) == list(seen.requests[-1].messages)
    pieces = recording.exchange_pieces(exchange)["messages"]
    assert [recording.context_pieces[i].position for i in pieces] == list(range(len(pieces)))
    assert recording.context_pieces[pieces[-1]].source_id == "call_2_2"  # notify's result, run in this leg
