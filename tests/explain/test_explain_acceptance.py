"""Issue 6's acceptance scenario, end to end: the planted fact is walked back, ranked first, and proven."""

from __future__ import annotations

from footprint_lab.examples.scenarios import APPROVED, REFUND_REQUEST, planted_fact_agent
from footprint_lab.explain import find_dropped_context, localize


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


def _loaded(run):
    from footprint_lab import Recording, Run

    return Run.from_recording(Recording.model_validate_json(run.recording.model_dump_json()))


async def test_every_explanation_is_the_same_on_a_recording_loaded_from_json():
    from footprint_lab.explain import ranking_confidence, rerun_without

    agent = planted_fact_agent()
    run = await agent.run(REFUND_REQUEST)
    loaded = _loaded(run)
    assert str(loaded.backtrack()) == str(run.backtrack())
    assert loaded.backtrack().to_frame().equals(run.backtrack().to_frame())
    first_call = run.recording.exchanges[0].step_id
    assert str(loaded.backtrack(at=first_call)) == str(run.backtrack(at=first_call))
    assert loaded.suspects().equals(run.suspects())
    assert str(ranking_confidence(loaded)) == str(ranking_confidence(run))
    assert str(await localize(loaded, rerun=agent, samples=3)) == str(await localize(run, rerun=agent, samples=3))
    assert str(await rerun_without(loaded, ["vip-override"], rerun=agent)) == str(
        await rerun_without(run, ["vip-override"], rerun=agent))
    budgeted = planted_fact_agent(variant="budget")
    dropped_run = await budgeted.run(REFUND_REQUEST)
    live = await find_dropped_context(dropped_run, rerun=budgeted)
    again = await find_dropped_context(_loaded(dropped_run), rerun=budgeted)
    assert str(again) == str(live) and again.to_frame().equals(live.to_frame())


async def test_a_composed_run_explains_the_same_after_a_json_round_trip(compose):
    from footprint_lab import Recording, Run

    recording, _, mount = await compose(planted_fact_agent(), REFUND_REQUEST)
    live = Run.from_recording(recording)
    loaded = Run.from_recording(Recording.model_validate_json(recording.model_dump_json()))
    for at in (None, mount):
        assert str(loaded.backtrack(at)) == str(live.backtrack(at))
    assert loaded.suspects().equals(live.suspects())
    assert loaded.suspects().iloc[0].source_id == "vip-override"
