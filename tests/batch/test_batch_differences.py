"""Two arms of an evaluation, compared: which differences between what each arm's model was given explain the
inputs whose answers changed (RunSet.explain_differences, on explain_difference)."""

from __future__ import annotations

import pytest

from footprint_lab.batch import RunSet
from footprint_lab.errors import BatchConfigError
from footprint_lab.examples.scenarios import planted_fact_agent, refund_model
from footprint_lab.providers import mock

REQUESTS = ["Please refund order A-1001.", "Refund A-1001, please.", "I want my money back for A-1001."]


@pytest.fixture
async def arms():
    good = await RunSet.run(planted_fact_agent(), REQUESTS)
    bad = await RunSet.run(planted_fact_agent().without(["vip-override"]), REQUESTS)
    return good, bad


async def test_the_difference_that_changed_every_answer_is_confirmed_in_every_pair(arms):
    good, bad = arms
    frame = await good.explain_differences(bad, replay=mock(respond=refund_model))
    assert frame.attrs == {"pairs": 3, "changed": 3}
    top = frame.iloc[0]
    assert "vip-override" in top.difference and top.confirmed == 3 and top.share == 1.0
    assert (frame.iloc[1:].confirmed == 0).all()  # nothing else brought the good answer back


async def test_only_the_pairs_whose_answers_changed_are_explained(arms):
    good, _ = arms
    same = await RunSet.run(planted_fact_agent(), REQUESTS)
    frame = await good.explain_differences(same, replay=mock(respond=refund_model))
    assert frame.attrs == {"pairs": 3, "changed": 0} and len(frame) == 0


@pytest.mark.parametrize("given", [{}, {"replay": "x", "rerun": "y"}])
async def test_exactly_one_way_to_carry_the_differences_is_refused_otherwise(arms, given):
    good, bad = arms
    with pytest.raises(BatchConfigError) as refused:
        await good.explain_differences(bad, **given)
    assert refused.value.code and "replay=" in str(refused.value)


async def test_arms_of_different_inputs_are_refused_before_anything_runs(arms):
    good, _ = arms
    other = await RunSet.run(planted_fact_agent(), ["Something else entirely."])
    calls = []
    with pytest.raises(BatchConfigError):
        await good.explain_differences(other, replay=mock(respond=lambda r: calls.append(r) or "x"))
    assert calls == []
