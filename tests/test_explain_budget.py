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
