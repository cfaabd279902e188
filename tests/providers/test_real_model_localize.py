"""Localization on a real model: llama.cpp's server on SmolLM2-135M, greedy and sampled.

A planted fact ("the package for order A-4411 is in Lisbon") sits among benign pieces; the
model is asked where the order is. What must hold whatever the model's words: the planted fact
is confirmed, no benign piece is, and the verdicts carry the counts they rest on. At temperature
0.8 the original answer is one the model gave with the fact (a seeded run that names Lisbon),
and unchanged reruns stray, which is what the statistics are for.
"""

from __future__ import annotations

from typing import Any

import pytest
from real_model_kit import MODEL, ModelServers

from footprint_lab import Agent
from footprint_lab.context import define_fact
from footprint_lab.examples.truth import ANSWERED_SHARE, evaluate, real_case
from footprint_lab.explain import localize
from footprint_lab.explain.compare import Mentions
from footprint_lab.providers import openai
from footprint_lab.providers.seeded import seeded

pytestmark = pytest.mark.real_model

QUESTION = "Where is order A-4411?"
BENIGN = {"hours", "returns", "tone"}
LISBON = Mentions("Lisbon")


def agent_on(url: str, temperature: float, seed: int | None = None, **settings: Any) -> Agent:
    provider: Any = openai(MODEL, base_url=url, options={"temperature": temperature}, max_tokens=32, timeout=120.0,
                           **settings)
    if seed is not None:
        provider = seeded(provider, seed)
    return Agent(provider=provider, system="Answer the customer in one short sentence.", context=[
        define_fact(id="where", data="The package for order A-4411 is in Lisbon."),
        define_fact(id="hours", data="Support is open from 9 to 17."),
        define_fact(id="returns", data="Returns are free within 30 days."),
        define_fact(id="tone", data="Be friendly."),
    ])


def holds(report: Any) -> None:
    """What every localization of this run must say, whatever the model's words."""
    assert "where" in report.confirmed, str(report)
    assert not BENIGN & set(report.confirmed), str(report)
    where = next(s for s in report.suspects if s.source_id == "where")
    assert where.p_value <= where.level
    assert where.flips * max(where.noise_samples, 1) > where.noise_flips * where.samples
    assert report.reruns <= report.budget


async def test_greedy_replies_confirm_the_planted_fact_and_nothing_benign(model_server: ModelServers) -> None:
    agent = agent_on(model_server("patient").url, 0.0)
    run = await agent.run(QUESTION)
    assert "lisbon" in (run.answer or "").lower()
    report = await localize(run, rerun=agent, comparator=LISBON)
    holds(report)
    assert report.failed == 0


async def test_the_stock_server_gives_the_same_verdicts_as_one_that_never_cuts_a_reply(
        model_server: ModelServers) -> None:
    verdicts = []
    for variant in ("patient", "stock"):
        agent = agent_on(model_server(variant).url, 0.0)
        run = await agent.run(QUESTION)
        report = await localize(run, rerun=agent, comparator=LISBON, sources=["where", "hours", "tone"])
        assert report.failed == 0, report.summary()  # one request at a time: the stock server cuts nothing
        verdicts.append({s.source_id: s.verdict for s in report.suspects})
    assert verdicts[0] == verdicts[1] and verdicts[0]["where"] == "confirmed"


async def test_sampled_replies_stray_and_the_planted_fact_is_still_confirmed(model_server: ModelServers) -> None:
    url = model_server("patient").url
    found = None
    for seed in range(16):  # an answer the model gave with the fact: the one an analyst would ask about
        agent = agent_on(url, 0.8, seed=seed)
        run = await agent.run(QUESTION)
        if "lisbon" in (run.answer or "").lower():
            found = agent, run
            break
    assert found is not None, "in 16 seeded runs at temperature 0.8 the model never named Lisbon"
    agent, run = found
    report = await localize(run, rerun=agent, comparator=LISBON)
    holds(report)
    assert all(s.noise_samples for s in report.suspects if s.phase == "confirmation")


async def test_the_truth_bench_case_is_measured_on_the_model_and_its_fact_confirmed_first(
        model_server: ModelServers) -> None:
    # what bench/bench_truth.py scores on this model: the run kept is one that named the city, the planted fact is
    # confirmed first, and any other confirmed piece is, measured on fresh runs, a cause of the answer on this model
    found = await real_case(0, model_server("patient").url, temperature=0.0)
    assert found is not None and found.run is not None and found.measured is not None, "the greedy model lost Lisbon"
    assert LISBON.mentions(found.run.answer or "") and found.measured.baseline >= ANSWERED_SHARE
    scored = await evaluate(found)
    assert scored.top1 and scored.false == 0, scored
