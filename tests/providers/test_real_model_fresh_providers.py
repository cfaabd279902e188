"""Localization through a factory that builds a fresh agent and provider for every rerun, on the stock server.

This is how most people write a rerun factory, and llama.cpp's stock Python server cuts a
streamed reply short when a second request arrives. The concurrency limit is kept per
endpoint in the process, not per provider object, so the reruns still reach the server one
at a time: none fails, and the planted fact is confirmed as it is through one shared agent.
The scenario (and the agent builder) is that of ``test_real_model_localize``: a planted fact
("the package for order A-4411 is in Lisbon") among benign pieces; the model is asked where
the order is. Only the comparator is chosen; every other setting of ``localize`` is its default.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from real_model_kit import ModelServers
from test_real_model_localize import LISBON, QUESTION
from test_real_model_localize import agent_on as fresh_agent  # a new agent on a new provider at every call

from footprint_lab import Agent
from footprint_lab.explain import localize

pytestmark = pytest.mark.real_model


def factory_on(url: str, temperature: float, built: list[Any]) -> Callable[..., Agent]:
    def factory(exclude: Sequence[str] = (), seed: int | None = None) -> Agent:
        agent = fresh_agent(url, temperature).without(list(exclude), seed=seed)
        built.append(agent.provider)
        return agent

    return factory


async def localized_through_fresh_providers(url: str, temperature: float, run: Any) -> tuple[Any, list[Any]]:
    built: list[Any] = []
    report = await localize(run, rerun=factory_on(url, temperature, built), comparator=LISBON)
    return report, built


def no_rerun_failed_and_the_fact_is_confirmed(report: Any, built: list[Any]) -> None:
    assert report.failed == 0, report.summary()
    assert "where" in report.confirmed, str(report)
    wires = [getattr(provider, "provider", provider) for provider in built]  # a seeded rerun wraps its provider
    assert len({id(wire) for wire in wires}) == len(wires) > 1  # a provider of its own for every rerun


async def test_greedy_reruns_through_fresh_providers_on_the_stock_server_all_finish(
    model_server: ModelServers,
) -> None:
    url = model_server("stock").url
    run = await fresh_agent(url, 0.0).run(QUESTION)
    assert LISBON.mentions(run.answer or ""), run.answer
    report, built = await localized_through_fresh_providers(url, 0.0, run)
    no_rerun_failed_and_the_fact_is_confirmed(report, built)


async def test_sampled_reruns_through_fresh_providers_on_the_stock_server_all_finish(
    model_server: ModelServers,
) -> None:
    url = model_server("stock").url
    run = None
    for seed in range(16):  # an answer the model gave with the fact: the one an analyst would ask about
        candidate = await fresh_agent(url, 0.8, seed=seed).run(QUESTION)
        if LISBON.mentions(candidate.answer or ""):
            run = candidate
            break
    assert run is not None, "in 16 seeded runs at temperature 0.8 the model never named Lisbon"
    report, built = await localized_through_fresh_providers(url, 0.8, run)
    no_rerun_failed_and_the_fact_is_confirmed(report, built)
