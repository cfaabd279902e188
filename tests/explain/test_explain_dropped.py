"""Missing context: what was available but never reached the model, and restoration to test it."""

from __future__ import annotations

import pytest

from footprint_lab import Agent, define_tool
from footprint_lab.context import define_fact, define_instruction, define_rag
from footprint_lab.errors import ExplainConfigError, UnknownSourceError
from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent
from footprint_lab.explain import find_dropped_context
from footprint_lab.providers import LLMRequest, mock


def strict_model(request: LLMRequest) -> str:
    return "DECLINED" if "strict" in request.system else "APPROVED"


async def test_a_policy_dropped_by_the_budget_is_named_with_why():
    agent = planted_fact_agent(variant="budget")
    run = await agent.run(REFUND_REQUEST)
    report = await find_dropped_context(run)
    assert report.source_ids == ["refund-policy"]
    policy = report[0]
    assert (policy.source_kind, policy.verdict, policy.slot) == ("instruction", "dropped", "system")
    assert "over the system budget" in policy.why
    assert policy.detail["budget"] == agent._context.budgets["system"]
    answering = run.recording.exchanges[-1]
    assemble = [s.step_id for s in run.recording.steps if s.stage == "assemble" and s.iteration == answering.iteration]
    assert policy.decided_by == assemble[0] and policy.iteration == answering.iteration
    assert policy.status == "not_tested"
    assert "instruction 'refund-policy'" in str(report) and "not tested" in str(report)
    frame = report.to_frame()
    assert frame.iloc[0].source_id == "refund-policy" and frame.iloc[0].status == "not_tested"


async def test_restoration_forces_the_piece_in_and_keeps_every_other_fate():
    agent = planted_fact_agent(variant="budget")
    run = await agent.run(REFUND_REQUEST)
    report = await find_dropped_context(run, rerun=agent)
    policy = report[0]
    assert policy.status == "not_confirmed"  # the override still decides: restoring the policy changes nothing
    restored = policy.restoration.run.recording
    sent = {p.source_id: p.verdict for p in restored.call_pieces(restored.exchanges[-1], left_out=True)}
    assert sent["refund-policy"] == "admitted"
    assert all(sent[name] == "admitted" for name in ("customer", "vip-override", "tone"))
    assert "NOT CONFIRMED: restoring it flipped the outcome in 0/3 reruns against noise 0/3" in str(report)


async def test_a_skipped_instruction_that_matters_is_confirmed_by_restoration():
    agent = Agent(provider=mock(respond=strict_model), system="Decide.", context=[
        define_instruction(id="strict-mode", prompt="Be strict: decline.", active_when=lambda view: False),
        define_fact(id="harmless", data="Nothing to see.", active_when=lambda view: False),
    ])
    run = await agent.run("Refund?")
    assert run.answer == "APPROVED"
    report = await find_dropped_context(run, rerun=agent)
    by_id = {p.source_id: p for p in report}
    assert by_id["strict-mode"].verdict == "skipped" and by_id["strict-mode"].why == "rule did not match"
    assert by_id["strict-mode"].status == "confirmed"
    assert by_id["strict-mode"].restoration.answer == "DECLINED"
    assert by_id["harmless"].status == "not_confirmed"
    assert "CONFIRMED: restoring it flipped the outcome in 3/3 reruns against noise 0/3" in str(report)
    strict = by_id["strict-mode"].trial
    assert strict.p_value == pytest.approx(1 / 64) and report.trial.alpha == 0.05
    assert "was shown to change the outcome" in report.summary()


async def test_a_rag_chunk_below_its_threshold_is_listed_by_item():
    rag = define_rag(id="handbook", corpus={"refunds": "Refunds close after thirty days.",
                                            "shipping": "Shipping takes five days."}, threshold=1000.0)
    agent = Agent(provider=mock(reply="ok"), context=[rag])
    run = await agent.run("How long do refunds take?")
    report = await find_dropped_context(run)
    assert report.source_ids == ["handbook"]
    chunk = report[0]
    assert chunk.verdict == "skipped" and "below the threshold" in chunk.why and chunk.item is not None
    restored = await find_dropped_context(run, rerun=agent)
    again = restored[0].restoration.run.recording
    assert any(p.source_id == "handbook" and p.verdict == "admitted" for p in again.context_pieces)


async def test_a_source_that_reached_an_earlier_call_says_so():
    def respond(request: LLMRequest):
        return {"tool": "noop", "args": {}} if request.call_index == 0 else "done"

    noop = define_tool(name="noop", description="Does nothing.", input_schema={"type": "object"}, fn=lambda: "ok")
    agent = Agent(provider=mock(respond=respond), tools=[noop], context=[
        define_fact(id="first-only", data="Only on the first call.", active_when=lambda view: view.iteration == 1),
    ])
    run = await agent.run("go")
    report = await find_dropped_context(run)
    assert report[0].source_id == "first-only"
    assert report[0].reached_earlier == [run.recording.exchanges[0].step_id]


async def test_nothing_missing_and_refusals():
    agent = planted_fact_agent()
    run = await agent.run(REFUND_REQUEST)
    report = await find_dropped_context(run, rerun=agent)
    assert len(report) == 0 and "reached it" in report.summary()
    with pytest.raises(ExplainConfigError):
        await find_dropped_context(run, rerun=42)
    with pytest.raises(ExplainConfigError):
        await find_dropped_context(run, concurrency=0)
    with pytest.raises(UnknownSourceError) as caught:
        agent.with_forced(["lookup_order"])
    assert caught.value.function == "Agent.with_forced" and "force in" in caught.value.message


async def test_a_member_runs_missing_context_is_found_too(compose):
    recording, member, _ = await compose(planted_fact_agent(variant="budget"), REFUND_REQUEST)
    report = await find_dropped_context(recording)
    assert report.calls == [member.exchanges[-1].step_id]
    assert report.source_ids == ["refund-policy"] and report[0].call == report.calls[0]
