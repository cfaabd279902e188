"""Issue 6's acceptance scenario, end to end: the planted fact is walked back, ranked first, and proven."""

from __future__ import annotations

from footprint_lab.explain import find_dropped_context, localize
from footprint_lab.lab.scenarios import APPROVED, REFUND_REQUEST, planted_fact_agent


async def test_the_planted_fact_scenario():
    agent = planted_fact_agent()
    run = await agent.run(REFUND_REQUEST)
    assert run.answer == APPROVED  # wrong: the order is 47 days old and the policy allows 30

    chain = run.backtrack().candidate("vip-override")
    assert [hop.kind for hop in chain.hops] == ["ANSWER", "READ", "LANDED", "ALLOWED", "BORN"] and chain.proven

    assert run.suspects().iloc[0].source_id == "vip-override"

    report = await localize(run, rerun=agent, samples=3)
    verdicts = {s.source_id: (s.verdict, s.flips, s.samples) for s in report.suspects}
    assert verdicts["vip-override"] == ("confirmed", 3, 3)
    assert verdicts["customer"][0] != "confirmed" and verdicts["lookup_order"][0] != "confirmed"

    budgeted = planted_fact_agent(variant="budget")
    dropped = await find_dropped_context(await budgeted.run(REFUND_REQUEST), rerun=budgeted)
    assert "refund-policy" in dropped.source_ids
    assert next(p for p in dropped if p.source_id == "refund-policy").verdict == "dropped"
