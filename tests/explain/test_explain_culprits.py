"""Causes that only act together: bisect_culprits finds the sets whose joint removal flips the outcome."""

from __future__ import annotations

import pytest

from footprint_lab import Agent
from footprint_lab.context import define_fact
from footprint_lab.errors import ExplainConfigError
from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent
from footprint_lab.explain import bisect_culprits, localize
from footprint_lab.providers import LLMRequest, mock


@pytest.fixture
def redundant() -> Agent:
    return planted_fact_agent(variant="redundant")


async def test_two_redundant_facts_neither_alone_and_the_pair_together_3_of_3(redundant):
    run = await redundant.run(REFUND_REQUEST)
    alone = await localize(run, rerun=redundant, samples=3)
    assert alone.confirmed == []
    assert {s.source_id for s in alone.suspects} >= {"vip-override", "manager-exception"}
    assert alone.nothing_alone
    # no removal flipped it alone, removing all at once did: the group test found the pair, and it was confirmed
    assert [set(found) for found in alone.confirmed_together] == [{"vip-override", "manager-exception"}]
    assert "CONFIRMED TOGETHER: removing" in str(alone) and "bisect_culprits(run, rerun=...)" not in str(alone)

    found = await bisect_culprits(run, rerun=redundant, samples=3)
    culprit, = found.culprits
    assert set(culprit.sources) == {"vip-override", "manager-exception"}
    assert (culprit.flips, culprit.samples, culprit.minimal) == (3, 3, True)
    assert found.baseline_stable and not found.exhausted
    assert found.reruns <= found.budget == 40
    # the search's baseline and probes, then the pair confirmed on fresh reruns beside a fresh baseline
    assert found.reruns == 3 + sum(p.samples for p in found.probes) + 3 + 3
    assert (culprit.verdict, culprit.noise_samples) == ("confirmed", 3) and culprit.p_value == pytest.approx(1 / 64)
    assert found.confirmed == [culprit.sources]
    assert f"CULPRITS {' + '.join(repr(n) for n in culprit.sources)} (minimal): CONFIRMED: removing them together " \
        "flipped the outcome in 3/3 reruns against noise 0/3" in str(found)
    assert list(found.to_frame().columns) == ["removed", "flips", "samples", "flipped"]


async def test_localize_does_not_point_to_bisect_when_a_single_removal_flips():
    agent = planted_fact_agent()
    alone = await localize(await agent.run(REFUND_REQUEST), rerun=agent, samples=3)
    assert not alone.nothing_alone and "bisect_culprits" not in str(alone)


def facts_agent(needed: list[set[str]], count: int = 8):
    """A factory of agents over facts f0..f{count-1}: approve while every group in ``needed`` keeps one fact."""

    def factory(*, exclude=(), seed=None):
        calls = {"n": 0}

        def respond(request: LLMRequest) -> str:
            calls["n"] += 1
            present = {f"f{n}" for n in range(count) if f"<f{n}>" in request.system}
            return "APPROVED" if all(group & present for group in needed) else "DECLINED"

        facts = [define_fact(id=f"f{n}", data=f"<f{n}>") for n in range(count)]
        agent = Agent(provider=mock(respond=respond), system="Decide.", context=facts)
        return agent.without(list(exclude)) if exclude else agent

    return factory


async def test_two_independent_minimal_sets_are_both_found():
    # approve needs (f1 or f6) and (f3 or f6): removing {f1, f6} flips it, and so does removing {f3, f6}
    factory = facts_agent([{"f1", "f6"}, {"f3", "f6"}])
    run = await factory().run("Decide")
    found = await bisect_culprits(run, rerun=factory, samples=3, budget=200, sources=[f"f{n}" for n in range(8)])
    assert sorted(sorted(c.sources) for c in found.culprits) == [["f1", "f6"], ["f3", "f6"]]
    assert all(c.minimal and c.flips == 3 for c in found.culprits)


async def test_removing_every_suspect_without_a_flip_ends_the_search_early():
    factory = facts_agent([])
    run = await factory().run("Decide")
    found = await bisect_culprits(run, rerun=factory, sources=["f0", "f1", "f2"])
    assert found.culprits == []
    assert found.reruns == 3 + 2
    assert "no set of them can" in str(found)


async def test_a_small_budget_cuts_the_search_short_and_says_so():
    factory = facts_agent([{"f2", "f5"}])
    run = await factory().run("Decide")
    found = await bisect_culprits(run, rerun=factory, budget=15, sources=[f"f{n}" for n in range(8)])
    assert found.exhausted and found.reruns <= 15
    assert "budget cut the search short" in found.summary()
    assert all(not c.minimal for c in found.culprits)


async def test_an_unstable_baseline_searches_nothing():
    answers = iter(["APPROVED", "DECLINED"] * 20)  # the original approves; two of three unchanged reruns decline
    agent = Agent(provider=mock(respond=lambda request: next(answers)), context=[define_fact(id="a", data="x")])
    run = await agent.run("Decide")
    found = await bisect_culprits(run, rerun=agent)
    assert not found.baseline_stable and found.culprits == [] and found.reruns == 3
    assert "unstable" in str(found)


@pytest.mark.parametrize(("setting", "value"), [("samples", 1), ("budget", 11), ("budget", "40"), ("top", 0),
                                               ("alpha", 0.0), ("alpha", 1), ("retries", 11)])
async def test_settings_no_search_can_use_are_refused_before_any_rerun(setting, value):
    agent = planted_fact_agent()
    run = await agent.run(REFUND_REQUEST)
    calls_before = agent.provider.calls
    with pytest.raises(ExplainConfigError) as refused:
        await bisect_culprits(run, rerun=agent, **{setting: value})
    assert refused.value.setting == setting
    assert agent.provider.calls == calls_before
