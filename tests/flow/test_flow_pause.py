"""A pause inside a member pauses the whole composition; resume continues inside that member."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from footprint_lab import Agent, Conditional, Identity, Loop, Parallel, Sequence, ToolContext, ask_human, tool
from footprint_lab.core.member_run import open_run_count
from footprint_lab.errors import (
    InvalidCheckpointError,
    ResumeDivergedError,
    ResumeIdentityConflictError,
    ResumeRequestConflictError,
)
from footprint_lab.flow import FlowCheckpoint
from footprint_lab.providers import LLMRequest, mock

ALICE = Identity(principal="alice")


def approver(seen: list[ToolContext] | None = None, gate: asyncio.Event | None = None) -> Agent:
    """Asks a person before answering; answers with what the person said."""

    @tool
    def ask(ctx: ToolContext) -> str:
        """Ask a person to approve the refund."""
        if seen is not None:
            seen.append(ctx)
        ask_human("Refund 120 EUR?")

    async def respond(request: LLMRequest) -> Any:
        last = request.messages[-1]
        if last["role"] == "user":
            return {"tool": "ask", "args": {}}
        if gate is not None:
            await gate.wait()
        return f"approved: {last['content']}"

    return Agent(provider=mock(respond=respond), tools=[ask], name="approver")


def counted(tag: str) -> tuple[Agent, Any]:
    provider = mock(respond=lambda r: f"{tag}({r.messages[-1]['content']})")
    return Agent(provider=provider, name=tag), provider


async def test_a_member_that_asks_a_person_pauses_the_composition_and_resume_continues_inside_it() -> None:
    triage, triage_calls = counted("triage")
    after, after_calls = counted("after")
    seen: list[ToolContext] = []
    flow = Sequence({"triage": triage, "approve": approver(seen), "after": after})
    paused = await flow.run("refund please", identity=ALICE)
    assert paused.paused and paused.question == "Refund 120 EUR?"
    assert isinstance(paused.checkpoint, FlowCheckpoint)
    assert paused.checkpoint.answers == {"triage": "triage(refund please)"}
    assert after_calls.calls == 0
    assert open_run_count() == 0
    assert [s.status for s in paused.recording.steps] == ["ok", "ok", "paused"]
    assert paused.recording.children[1].status == "paused"
    assert seen[0].identity == ALICE and seen[0].run_id == paused.run_id

    resumed = await flow.resume(paused.checkpoint, "yes")
    assert resumed.status == "finished"
    assert resumed.answer == "after(approved: yes)"
    assert resumed.run_id == paused.run_id
    assert resumed.recording.identity == ALICE.as_dict()
    assert triage_calls.calls == 1  # replayed, not run again
    assert len(seen) == 1  # the asking tool did not run again: the answer is its result
    steps = resumed.recording.steps
    assert [s.status for s in steps if s.stage == "sequence-step"] == ["replayed", "ok", "ok"]
    approve_leg = resumed.recording.children[0]
    assert approve_leg.path == steps[2].step_id and approve_leg.status == "finished"
    assert open_run_count() == 0


async def test_resume_reaches_a_member_paused_inside_a_nested_composition() -> None:
    side, side_calls = counted("side")
    flow = Sequence({
        "first": counted("first")[0],
        "fan": Parallel({"side": side, "approve": approver()}, merge=lambda a: a["side"] + " | " + a["approve"]),
    })
    paused = await flow.run("go")
    assert paused.paused and paused.question == "Refund 120 EUR?"
    fan_checkpoint = paused.checkpoint.paused["fan"]
    assert isinstance(fan_checkpoint, FlowCheckpoint) and fan_checkpoint.answers == {"side": "side(first(go))"}
    resumed = await flow.resume(paused.checkpoint, "fine")
    assert resumed.answer == "side(first(go)) | approved: fine"
    assert side_calls.calls == 1
    fan = resumed.recording.children[0]
    assert [s.status for s in fan.steps if s.stage == "parallel-branch"] == ["replayed", "ok"]


async def test_a_member_asking_on_every_pass_can_be_resumed_pass_after_pass() -> None:
    loop = Loop(approver(), times=2)
    first = await loop.run("go")
    second = await loop.resume(first.checkpoint, "one")
    assert second.paused and second.checkpoint.answers == {"pass-1": "approved: one"}
    done = await loop.resume(second.checkpoint, "two")
    assert done.answer == "approved: two"
    assert [s.status for s in done.recording.steps if s.stage == "loop-pass"] == ["replayed", "ok"]


async def test_two_resumes_of_one_paused_run_at_once_are_refused() -> None:
    gate = asyncio.Event()
    flow = Sequence({"approve": approver(gate=gate)})
    paused = await flow.run("go", identity=ALICE)
    first = asyncio.create_task(flow.resume(paused.checkpoint, "yes"))
    await asyncio.sleep(0.01)
    assert open_run_count() == 1
    with pytest.raises(ResumeRequestConflictError) as caught:
        await flow.resume(paused.checkpoint, "no")
    assert caught.value.code == "ERR_RESUME_REQUEST_CONFLICT"
    gate.set()
    assert (await first).answer == "approved: yes"
    assert open_run_count() == 0
    again = await flow.resume(paused.checkpoint, "later")  # once the open leg returned, a resume is fine
    assert again.answer == "approved: later"


async def test_a_resume_that_no_longer_reaches_the_paused_member_is_refused() -> None:
    flips = iter([True, False])
    fallback, fallback_calls = counted("fallback")
    router = Conditional([("approve", lambda m: next(flips), approver())], otherwise=("fallback", fallback))
    paused = await router.run("go")
    with pytest.raises(ResumeDivergedError) as caught:
        await router.resume(paused.checkpoint, "yes")
    assert caught.value.evidence() == {"composition": "Conditional", "member": "approve"}
    assert fallback_calls.calls == 0
    assert open_run_count() == 0


async def test_a_tampered_member_checkpoint_cannot_move_the_run_to_someone_else() -> None:
    seen: list[ToolContext] = []
    flow = Sequence({"approve": approver(seen)})
    paused = await flow.run("go", identity=ALICE)
    member = paused.checkpoint.paused["approve"]
    forged = member.model_copy(update={"identity": {"principal": "mallory"}})
    with pytest.raises(ResumeIdentityConflictError):
        await flow.resume(paused.checkpoint.model_copy(update={"paused": {"approve": forged}}), "yes")
    assert seen and len(seen) == 1
    assert open_run_count() == 0


async def test_members_paused_side_by_side_are_answered_one_resume_at_a_time() -> None:
    left_seen: list[ToolContext] = []
    right_seen: list[ToolContext] = []
    fan = Parallel({"left": approver(left_seen), "right": approver(right_seen)},
                   merge=lambda a: a["left"] + " / " + a["right"])
    paused = await fan.run("go")
    assert set(paused.checkpoint.paused) == {"left", "right"}
    first = paused.checkpoint.asking
    still = await fan.resume(paused.checkpoint, "A")
    assert still.paused and list(still.checkpoint.paused) == [k for k in ("left", "right") if k != first]
    assert still.checkpoint.answers == {first: "approved: A"}
    done = await fan.resume(still.checkpoint, "B")
    assert sorted(done.answer.split(" / ")) == ["approved: A", "approved: B"]
    assert len(left_seen) == len(right_seen) == 1  # neither asking tool ran twice


async def test_a_composition_resume_for_someone_else_is_refused() -> None:
    flow = Sequence({"approve": approver()})
    paused = await flow.run("go", identity=ALICE)
    with pytest.raises(ResumeIdentityConflictError):
        await flow.resume(paused.checkpoint, "yes", identity={"principal": "mallory"})
    assert (await flow.resume(paused.checkpoint, "yes", identity=ALICE)).answer == "approved: yes"
    with pytest.raises(InvalidCheckpointError):
        await Loop(approver(), times=1).resume(paused.checkpoint, "yes")
