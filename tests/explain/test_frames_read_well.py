"""Tables an analyst reads: whole numbers as whole numbers, an absent value as missing (never a float NaN)."""

from __future__ import annotations

from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent


def test_a_runs_steps_number_their_iterations_as_whole_numbers():
    steps = planted_fact_agent().run_sync(REFUND_REQUEST).steps
    assert str(steps.iteration.dtype) == "Int64"
    assert list(steps.iteration.dropna()) == [1, 1, 1, 2, 2]
    assert steps.iteration.isna().tolist() == [True, False, False, False, False, False, True]  # seed and final
    assert "NaN" not in steps.to_string() and "1.0" not in steps[["iteration"]].to_string()


async def test_a_localizations_frame_holds_every_verdict_its_text_prints():
    """The printed report of two facts that each keep the answer says CONFIRMED TOGETHER and names two pieces not
    tested; the frame held only the single suspects (every one not confirmed). It now has the set, the untested
    pieces and the notes, as a run set's frame of the same run does (one piece of code makes both)."""
    from footprint_lab.explain import localize

    agent = planted_fact_agent(variant="redundant")
    run = await agent.run(REFUND_REQUEST)
    report = await localize(run, rerun=agent)
    frame = report.to_frame()
    together = frame[frame.source_kind == "together"]
    assert list(together.source_id) == ["vip-override + manager-exception"] and list(together.verdict) == ["confirmed"]
    assert "CONFIRMED TOGETHER: removing 'vip-override' + 'manager-exception'" in str(report)
    untested = frame[frame.verdict == "not_tested"]
    assert list(untested.source_id) == [name for name, _ in report.untested] and len(untested) == 2
    assert list(untested.reason) == [why for _, why in report.untested]
    assert str(frame["rank"].dtype) == "Int64" and frame["rank"].isna().sum() == 3
    assert frame.attrs["notes"] == list(report.notes)
