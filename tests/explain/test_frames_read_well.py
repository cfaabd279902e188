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


async def test_a_localizations_view_shows_a_set_confirmed_together_as_its_text_does():
    """The notebook view of the same report listed every single suspect as not confirmed and had no row for the pair
    the text prints as CONFIRMED TOGETHER: a reader of the view saw nothing confirmed. Its table now has the set."""
    import re

    from footprint_lab.explain import localize
    from footprint_lab.lab.views.explain import localization_html

    agent = planted_fact_agent(variant="redundant")
    report = await localize(await agent.run(REFUND_REQUEST), rerun=agent)
    html = str(localization_html(report))
    row = next(r for r in re.findall(r"<tr[^>]*>.*?</tr>", html, flags=re.S) if "vip-override + manager-exception" in r)
    assert "CONFIRMED" in row and "NOT CONFIRMED" not in row and "together" in row
