"""A composition that fails mid-run keeps what its members did: FlowCheckpointError and resume_on_error."""

from __future__ import annotations

from typing import Any

import pytest
from conversation_kit import counted_tool
from flow_kit import approver

from footprint_lab import Agent, Parallel, Sequence
from footprint_lab.errors import InvalidCheckpointError
from footprint_lab.flow import FlowCheckpoint
from footprint_lab.flow.checkpoint import FlowCheckpointError
from footprint_lab.providers import LLMRequest, mock


class Outage(Exception):
    """Shaped like a provider failure that a later call gets past."""

    status = 503


def counted(tag: str, calls: list[str]) -> Agent:
    def respond(request: LLMRequest) -> str:
        calls.append(tag)
        return f"{tag}({request.messages[-1]['content']})"

    return Agent(provider=mock(respond=respond), name=tag)


def flaky_after_a_tool_round(tools_ran: list[str], outages: list[int], *, times: int = 1) -> Agent:
    """Looks an order up, then fails ``times`` times calling the model, then answers with what it read."""

    def respond(request: LLMRequest) -> Any:
        if not any(m["role"] == "tool" for m in request.messages):
            return {"tool": "lookup", "args": {}}
        if len(outages) < times:
            outages.append(request.call_index)
            raise Outage("the upstream said: secret-token-123")
        return f"refunds saw: {request.messages[0]['content']}"

    return Agent(provider=mock(respond=respond), tools=[counted_tool("lookup", tools_ran)], name="refunds")


def pipeline(calls: list[str], tools_ran: list[str], outages: list[int]) -> Sequence:
    return Sequence({"triage": counted("triage", calls), "refunds": flaky_after_a_tool_round(tools_ran, outages)})


async def test_a_member_failing_after_a_tool_round_is_picked_up_without_rerunning_finished_members() -> None:
    calls: list[str] = []
    tools_ran: list[str] = []
    outages: list[int] = []
    flow = pipeline(calls, tools_ran, outages)
    with pytest.raises(FlowCheckpointError) as caught:
        await flow.run("refund A-1001")
    err = caught.value
    assert err.code == "ERR_FLOW_CHECKPOINT" and err.member == "refunds" and err.resumable
    assert isinstance(err.cause, Outage) and "secret-token-123" not in str(err)
    assert err.checkpoint.answers == {"triage": "triage(refund A-1001)"}
    assert [m["role"] for m in err.checkpoint.failed["refunds"].history] == ["user", "assistant", "tool"]
    assert err._footprint_run.status == "failed"
    assert flow.last_run is err._footprint_run and flow.last_run.checkpoint is err.checkpoint  # kept on the run too

    # Stored as text, picked up by a composition built the same way in another process.
    stored = err.checkpoint.model_dump_json()
    fresh = pipeline(calls, tools_ran, outages)
    done = await fresh.resume_on_error(stored)
    assert done.status == "finished" and done.answer == "refunds saw: triage(refund A-1001)"
    assert calls == ["triage"] and tools_ran == ["lookup"]  # neither the triage call nor the tool ran again
    assert done.run_id == err.checkpoint.run_id
    steps = [s.status for s in done.recording.steps]
    assert steps[:2] == ["ok", "replayed"]


async def test_a_nested_member_failure_is_named_by_its_path_and_resumed_inside() -> None:
    calls: list[str] = []
    tools_ran: list[str] = []
    outages: list[int] = []
    inner = Sequence({"check": counted("check", calls), "refunds": flaky_after_a_tool_round(tools_ran, outages)})
    flow = Sequence({"triage": counted("triage", calls), "desk": inner})
    with pytest.raises(FlowCheckpointError) as caught:
        await flow.run("refund A-1001")
    assert caught.value.member == "desk/refunds" and isinstance(caught.value.cause, Outage)
    inner_kept = caught.value.checkpoint.failed["desk"]
    assert isinstance(inner_kept, FlowCheckpoint) and inner_kept.answers == {"check": "check(triage(refund A-1001))"}
    done = flow.resume_on_error_sync(caught.value.checkpoint)
    assert done.answer == "refunds saw: check(triage(refund A-1001))"
    assert calls == ["triage", "check"] and tools_ran == ["lookup"]


async def test_a_failed_parallel_branch_runs_again_while_the_branch_that_answered_is_replayed() -> None:
    calls: list[str] = []
    down: list[bool] = []

    def shaky(request: LLMRequest) -> str:
        if not down:
            down.append(True)
            raise Outage("down")
        return "legal: fine"

    flow = Parallel({"ethics": counted("ethics", calls), "legal": Agent(provider=mock(respond=shaky))},
                    merge=lambda answers: " | ".join(answers.values()))
    with pytest.raises(FlowCheckpointError) as caught:
        await flow.run("ship?")
    assert caught.value.checkpoint.failed == {"legal": None}  # it failed before keeping anything
    done = await flow.resume_on_error(caught.value.checkpoint)
    assert done.answer == "ethics(ship?) | legal: fine" and calls == ["ethics"]


async def test_a_failure_that_kept_nothing_is_raised_as_it_is() -> None:
    def broken(request: LLMRequest) -> str:
        raise Outage("down")

    with pytest.raises(Outage):
        await Sequence({"first": Agent(provider=mock(respond=broken)), "second": counted("b", [])}).run("go")


async def test_resume_and_resume_on_error_each_refuse_the_other_kind_of_checkpoint() -> None:
    calls: list[str] = []
    flow = pipeline(calls, [], [])
    with pytest.raises(FlowCheckpointError) as caught:
        await flow.run("refund A-1001")
    with pytest.raises(InvalidCheckpointError) as refused:
        await flow.resume(caught.value.checkpoint, "yes")
    assert refused.value.field == "paused" and "resume_on_error" in str(refused.value)
    waiting = Sequence({"approve": approver()})
    paused = await waiting.run("refund please")
    with pytest.raises(InvalidCheckpointError) as refused:
        await waiting.resume_on_error(paused.checkpoint)
    assert refused.value.field == "failed"
    assert calls == ["triage"]  # nothing ran on either refusal
