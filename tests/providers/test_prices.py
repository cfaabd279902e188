"""A run's cost in money: said from the price table when every model it used has a price, never guessed."""

from __future__ import annotations

import math

import pytest

from footprint_lab import Agent, LLMCall, Sequence
from footprint_lab.errors import ProviderConfigError
from footprint_lab.providers import mock, prices
from footprint_lab.providers.prices import PRICES, PriceError, cost, remove_price, set_price, unpriced_models
from footprint_lab.providers.types import LLMResponse, Usage


def reply(text: str, *, model: str, prompt: int, answer: int, cached: int = 0) -> LLMResponse:
    """A scripted reply whose provider reported its usage (as a real wire does) and the model that answered."""
    return LLMResponse(content=text, model=model, stop_reason="end_turn",
                       usage=Usage(input_tokens=prompt, output_tokens=answer, cache_read_tokens=cached))


def agent(model: str, *replies: LLMResponse) -> Agent:
    return Agent(provider=mock(replies=list(replies)), model=model)


def test_a_known_model_costs_its_tokens_at_its_list_price():
    run = agent("gpt-4o-mini", reply("ok", model="gpt-4o-mini-2024-07-18", prompt=1_000_000, answer=500_000)
                ).run_sync("hello")
    assert cost(run) == pytest.approx(0.15 + 0.30)  # $0.15 per million in, $0.60 per million out
    assert cost(run.recording) == cost(run)


def test_cached_prompt_tokens_are_charged_at_the_cached_price():
    run = agent("gpt-4o", reply("ok", model="gpt-4o-2024-08-06", prompt=1_000_000, answer=0, cached=400_000)
                ).run_sync("hello")
    assert cost(run) == pytest.approx(0.6 * 2.5 + 0.4 * 1.25)


def test_a_model_with_no_price_gives_no_cost_and_is_named():
    run = agent("acme-large", reply("ok", model="acme-large-0613", prompt=10, answer=5)).run_sync("hello")
    assert cost(run) is None
    assert unpriced_models(run) == ["acme-large"]


def test_no_prefix_is_guessed_from_a_priced_family():
    # a snapshot of a priced family, asked for by its own name: its price is not assumed to be the family's
    run = agent("gpt-4o-2024-05-13", reply("ok", model="gpt-4o-2024-05-13", prompt=10, answer=5)).run_sync("hi")
    assert cost(run) is None


def test_one_unpriced_call_makes_the_whole_run_unpriced():
    flow = Sequence({"known": LLMCall(provider=mock(replies=[reply("a", model="gpt-4o", prompt=100, answer=10)]),
                                      model="gpt-4o"),
                     "unknown": LLMCall(provider=mock(replies=[reply("b", model="acme", prompt=100, answer=10)]),
                                        model="acme")})
    run = flow.run_sync("go")
    assert cost(run) is None and unpriced_models(run) == ["acme"]


def test_a_composition_costs_the_sum_of_its_member_runs():
    first = reply("a", model="gpt-4o-mini", prompt=2_000_000, answer=0)
    second = reply("b", model="claude-haiku-4-5-20251001", prompt=0, answer=1_000_000)
    flow = Sequence({"draft": LLMCall(provider=mock(replies=[first]), model="gpt-4o-mini"),
                     "review": LLMCall(provider=mock(replies=[second]), model="claude-haiku-4-5")})
    run = flow.run_sync("go")
    assert run.recording.exchanges == [] and len(run.recording.children) == 2  # the calls are the members'
    assert cost(run) == pytest.approx(2 * 0.15 + 5.0)


def test_the_mock_model_costs_nothing():
    run = Agent(provider=mock(reply="ok")).run_sync("hello")
    assert run.recording.exchanges[0].model == "mock-model" and cost(run) == 0


def test_a_user_price_prices_a_model_and_overrides_a_listed_one():
    run = agent("acme-large", reply("ok", model="acme-large", prompt=1_000_000, answer=1_000_000)).run_sync("hi")
    set_price("acme-large", input=1, output=2)
    assert cost(run) == pytest.approx(3.0)
    set_price("acme-large", input=0.5, output=0.5)
    assert cost(run) == pytest.approx(1.0) and PRICES["acme-large"].input == 0.5
    remove_price("acme-large")
    assert cost(run) is None


@pytest.mark.parametrize(("settings", "setting"), [
    ({"input": -1, "output": 1}, "input"),
    ({"input": "2.50", "output": 1}, "input"),
    ({"input": 1, "output": math.nan}, "output"),
    ({"input": 1, "output": 1e9}, "output"),  # per token, or in cents: a unit mistake
    ({"input": True, "output": 1}, "input"),
    ({"input": 1, "output": 1, "cache_read": -0.1}, "cache_read"),
])
def test_a_malformed_price_is_refused_by_name_and_the_table_is_unchanged(settings, setting):
    before = dict(PRICES)
    with pytest.raises(PriceError) as refused:
        set_price("acme", **settings)
    assert refused.value.code == "ERR_PROVIDER_CONFIG" and refused.value.setting == setting
    assert isinstance(refused.value, ProviderConfigError) and isinstance(refused.value, ValueError)
    assert "USD per million tokens" in str(refused.value) and "2.50" not in str(refused.value).split("e.g.")[0]
    assert dict(PRICES) == before


@pytest.mark.parametrize("model", ["", "  ", None, 42])
def test_a_model_name_that_is_no_name_is_refused(model):
    with pytest.raises(PriceError) as refused:
        set_price(model, input=1, output=1)
    assert refused.value.setting == "model"


def test_removing_a_price_the_table_does_not_hold_names_the_near_one():
    with pytest.raises(PriceError) as refused:
        remove_price("gpt-4o-minni")
    assert "did you mean 'gpt-4o-mini'?" in str(refused.value) and "minni" not in str(refused.value)


def test_the_table_is_read_only_and_changed_through_set_price():
    with pytest.raises(TypeError):
        PRICES["gpt-4o"] = prices.Price(0, 0)  # type: ignore[index]


@pytest.mark.parametrize("thing", ["run-123", 42, None])
def test_cost_of_what_is_no_run_is_refused(thing):
    with pytest.raises(PriceError) as refused:
        cost(thing)
    assert refused.value.setting == "run"
