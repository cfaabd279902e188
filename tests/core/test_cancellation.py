"""A cancelled run keeps what it did, and the cancellation still reaches the caller.

The scene from issue 17: the first tool round completed (an email went out), the second
call to the model hangs, and the caller gives up (``asyncio.wait_for`` or ``task.cancel()``,
the Stop button of a notebook). The work done must stay on the agent and on the cancelled
run, resumable without sending the email again.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from conversation_kit import counted_tool
from hypothesis import given, settings
from hypothesis import strategies as st

from footprint_lab import Agent, LLMCall, Sequence
from footprint_lab.errors import RunCheckpointError
from footprint_lab.providers import mock
from footprint_lab.providers.types import LLMRequest


class Hanging:
    """A model that asks for ``send_email`` first, then hangs on its next call while ``hang`` is set."""

    def __init__(self) -> None:
        self.hang = True
        self.calls = 0

    async def __call__(self, request: LLMRequest) -> Any:
        self.calls += 1
        if request.messages[-1]["role"] == "user" and request.messages[-1]["content"] == "Send the email":
            return {"tool": "send_email", "args": {}}
        if self.hang:
            await asyncio.sleep(60)
        return "Sent, and done."


def email_agent() -> tuple[Agent, list[str], Hanging]:
    sent: list[str] = []
    model = Hanging()
    return Agent(provider=mock(respond=model), tools=[counted_tool("send_email", sent)]), sent, model


async def test_a_timed_out_run_keeps_its_finished_tool_round_and_still_times_out() -> None:
    agent, sent, model = email_agent()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(agent.run("Send the email"), 0.3)
    assert sent == ["send_email"]
    held = agent.checkpoint()
    assert held is not None
    assert [m["role"] for m in held.history] == ["user", "assistant", "tool"]

    cancelled = agent.last_run
    assert cancelled is not None and cancelled.status == "cancelled"
    assert cancelled.recording.status == "cancelled"
    assert cancelled.checkpoint == held  # reachable from the cancelled run itself
    assert cancelled.recording.meta["kept"] == {"tool_rounds": 1, "messages": 3, "resume_with": "resume_on_error"}
    stages = {s.stage: s.status for s in cancelled.recording.steps}
    assert stages["tool"] == "ok" and stages["call-llm"] == "cancelled"
    assert cancelled.recording.error == {"type": "CancelledError", "code": None,
                                         "step_id": cancelled.recording.steps[-1].step_id}

    model.hang = False
    resumed = await agent.resume_on_error(held)
    assert resumed.answer == "Sent, and done."
    assert sent == ["send_email"]  # the finished tool did not run again


async def test_task_cancel_propagates_and_the_agent_is_free_to_run_again() -> None:
    agent, sent, model = email_agent()
    task = asyncio.ensure_future(agent.run("Send the email"))
    while model.calls < 2:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert agent.checkpoint() is not None and agent.last_run is not None
    assert agent.last_run.status == "cancelled"
    model.hang = False
    follow = await agent.follow_up("And now?")  # the conversation goes on from the finished round
    assert follow.answer == "Sent, and done."
    assert [m["role"] for m in follow.recording.messages][:4] == ["user", "assistant", "tool", "user"]
    assert sent == ["send_email"]


async def test_a_cancel_before_any_tool_round_keeps_the_run_but_no_conversation() -> None:
    async def hang(request: LLMRequest) -> str:
        await asyncio.sleep(60)
        return "never"

    for agent in (Agent(provider=mock(respond=hang)), LLMCall(provider=mock(respond=hang))):
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(agent.run("Hello"), 0.2)
        assert agent.checkpoint() is None
        assert agent.last_run is not None and agent.last_run.recording.status == "cancelled"
        assert agent.last_run.checkpoint is None
        assert "kept" not in agent.last_run.recording.meta


async def test_a_plain_failure_keeps_the_checkpoint_on_the_failed_run_too() -> None:
    agent, _, model = email_agent()

    async def fail(request: LLMRequest) -> Any:
        if request.messages[-1]["role"] == "tool":
            raise ConnectionError("gone")
        return await model(request)

    agent.provider = mock(respond=fail)
    with pytest.raises(RunCheckpointError) as caught:
        await agent.run("Send the email")
    assert agent.last_run is not None and agent.last_run.checkpoint == caught.value.checkpoint


async def test_a_cancelled_composition_records_each_member_as_it_stood() -> None:
    first, _, _ = email_agent()
    second, sent, _ = email_agent()
    first.provider = mock(reply="Send the email")
    pipeline = Sequence([("draft", first), ("send", second)])
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(pipeline.run("go"), 0.3)
    cancelled = pipeline.last_run
    assert cancelled is not None and cancelled.status == "cancelled"
    recording = cancelled.recording
    assert recording.status == "cancelled"
    assert [(child.runner.kind, child.status) for child in recording.children] == [("agent", "finished"),
                                                                                  ("agent", "cancelled")]
    assert sent == ["send_email"]


@settings(max_examples=40, deadline=None)
@given(cut_after=st.integers(min_value=1, max_value=80))
def test_a_cancel_at_any_event_keeps_every_finished_round_and_never_repeats_one(cut_after: int) -> None:
    """Cancel from a listener after ``cut_after`` events; resuming then finishes with each tool run once."""

    async def scene() -> None:
        ran: list[str] = []

        def respond(request: LLMRequest) -> Any:
            rounds = sum(1 for m in request.messages if m["role"] == "tool")
            return {"tool": "step", "args": {}} if rounds < 3 else "All three done."

        agent = Agent(provider=mock(respond=respond), tools=[counted_tool("step", ran)])
        seen: list[Any] = []
        task = asyncio.ensure_future(agent.run("Do the three steps", on_event=lambda event: (
            seen.append(event), len(seen) == cut_after and task.cancel())))
        await asyncio.wait([task])
        if task.cancelled() and agent.last_run is None:
            # Cancelled as it returned: asyncio reports the cancel, yet the run had finished; its caller
            # never held it, so only its conversation remains, complete.
            held = agent.checkpoint()
            assert held is not None and held.history[-1]["content"] == "All three done."
            assert ran == ["step"] * 3
            return
        if task.cancelled():
            cancelled = agent.last_run
            assert cancelled is not None and cancelled.status == "cancelled"
            held = agent.checkpoint()
            assert held == cancelled.checkpoint
            if held is None:
                assert ran == []  # a tool that ran finished its round: the round is kept
                return
            assert held.history[-1]["role"] == "tool" and len(ran) == len(
                [m for m in held.history if m["role"] == "tool"])
            finished = await agent.resume_on_error(held)
        else:
            finished = task.result()
        assert finished.answer == "All three done." and ran == ["step"] * 3

    asyncio.run(scene())
