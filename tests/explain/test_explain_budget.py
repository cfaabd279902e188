"""A rerun budget for many pieces: a cause no ranking points at, found among forty within 48 reruns."""

from __future__ import annotations

import pytest

from footprint_lab import Agent
from footprint_lab.context import define_fact
from footprint_lab.explain import localize
from footprint_lab.explain.compare import Label
from footprint_lab.providers import LLMRequest, mock

WORDS = [
    "amber", "basalt", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper", "kelp",
    "lumen", "meadow", "nectar", "onyx", "prism", "quartz", "raven", "sable", "tundra", "umber", "velvet",
    "willow", "xenon", "yarrow", "zephyr"
]


def forty_facts(cause: int):
    """Forty facts of unrelated words; the model approves only while fact ``cause`` ("ledger mark Q7") is sent."""
    facts = [define_fact(id=f"f{n}", data=f"{WORDS[n % 26]} {WORDS[(n * 7 + 3) % 26]} register {n}")
             for n in range(40)]
    facts[cause] = define_fact(id=f"f{cause}", data="ledger mark Q7")

    def respond(request: LLMRequest) -> str:
        return ("APPROVED: the refund goes out today." if "ledger mark Q7" in request.system
                else "DECLINED: the refund cannot go out.")

    return Agent(provider=mock(respond=respond), system="Decide refunds.", context=facts)


@pytest.mark.parametrize("cause", [0, 17, 39])
async def test_a_cause_sharing_no_word_with_the_answer_is_found_among_forty_within_48_reruns(cause):
    agent = forty_facts(cause)
    run = await agent.run("Refund my order?")
    ranked = run.suspects()
    assert ranked.set_index("source_id").loc[f"f{cause}", "score"] == 0  # no ranking points at it
    report = await localize(run, rerun=agent, budget=48, comparator=Label(choices=["APPROVED", "DECLINED"]))
    assert report.confirmed == [f"f{cause}"] and report.reruns <= 48
    assert report.design.startswith("group test") and len(report.suspects) == 41  # 40 facts and the system prompt
    assert all(s.verdict == "not_confirmed" for s in report.suspects if s.source_id != f"f{cause}")


async def test_without_a_budget_every_piece_is_still_tested_and_top_is_an_explicit_cut_the_report_names():
    agent = forty_facts(17)
    run = await agent.run("Refund my order?")
    report = await localize(run, rerun=agent)
    assert report.confirmed == ["f17"] and len(report.suspects) == 41 and report.reruns <= 48
    cut = await localize(run, rerun=agent, top=5)
    assert len(cut.suspects) == 5 and "f17" not in {s.source_id for s in cut.suspects}
    left_out = dict(cut.untested)
    assert left_out["f17"].startswith("left out by top=5: ranked ") and len(left_out) == 1 + 36  # the input too
    assert "37 not tested (named below)" in cut.summary()


@pytest.mark.parametrize("pieces", [3, 10, 40])
@pytest.mark.parametrize("rank", ["first", "middle", "last"])
async def test_a_small_explicit_budget_never_calls_a_piece_it_could_not_test_not_confirmed(pieces, rank):
    """A budget too small to finish the screening or the proof leaves the cause undecided and says what the default
    would give; ``not confirmed`` stays for pieces the reruns actually set aside."""
    from footprint_lab.examples.truth_defaults import defaults_case

    case = defaults_case(rank, pieces, "label", noise=0.1)
    run = await case.factory().run(case.message)
    for budget in (6, 9, 12, 15):
        report = await localize(run, rerun=case.factory, budget=budget)
        verdicts = {s.source_id: s for s in report.suspects}
        assert report.reruns <= budget
        cause = verdicts.get(case.cause)
        assert cause is None or cause.verdict in ("confirmed", "undecided"), (budget, str(report))
        if cause is None:  # never reached: named among the untested
            assert case.cause in dict(report.untested)
        for suspect in report.suspects:
            if suspect.verdict == "not_confirmed":  # set aside on reruns that removed it, never for want of them
                assert suspect.trial.judged_on > 0, (budget, suspect.source_id, str(report))
                assert "ran out" not in suspect.trial.reason and "cut" not in suspect.trial.reason
        if cause is None or cause.verdict == "undecided":
            assert f"budget={budget} is below the" in str(report) and "leave budget= out" in str(report)


@pytest.mark.parametrize("budget", [1, 2, 5])
async def test_a_budget_too_small_names_one_least_and_why_whatever_it_is(budget):
    """budget=1 was refused "from 2", then budget=2 "from 6": the first check read samples as 1, the call's own
    check as the 3 localize takes. Both now name the call's least and where it comes from, and say the number given
    is below it without quoting it."""
    from footprint_lab.explain.arguments import ExplainConfigError

    agent = forty_facts(3)
    run = await agent.run("Refund my order?")
    with pytest.raises(ExplainConfigError) as refused:
        await localize(run, rerun=agent, budget=budget)
    text = str(refused.value)
    assert "from 6 (two reruns for each of samples=3)" in text and "received a whole number below that" in text
    assert f" {budget} " not in text.replace("from 6", "") and f"={budget}" not in text
