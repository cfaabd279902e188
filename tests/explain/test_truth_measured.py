"""The planted-fact cases for a model nobody scripted: what the model does is measured, not assumed.

A stand-in model (a mock that answers from what it was sent, and from the request's seed) plays
the part of the real one, so each rule of ``footprint_lab.examples.truth`` is checked in
isolation: which cases the model can answer, which run is explained, and when a confirmed piece
other than the planted fact counts as a false confirmation. The real model runs the same code
in ``tests/providers/test_real_model_localize.py`` and ``bench/bench_truth.py``.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from footprint_lab.examples.truth import MEASURED_RUNS, MEASURED_SEED, case, evaluate, planted_fact
from footprint_lab.providers import LLMRequest, mock

#: Variant 0's planted fact names Lisbon; its benign facts are note-0, note-1 ("Gift cards cannot be exchanged for
#: cash.") and note-2.
VARIANT = 0


def sent(request: LLMRequest) -> str:
    return request.system + "\n" + "\n".join(str(m.get("content", "")) for m in request.messages)


def model(names: Callable[[str, int | None], bool]) -> object:
    """A mock that names Lisbon, in words that vary with the seed, when ``names(prompt, seed)`` says so."""

    def respond(request: LLMRequest) -> str:
        wording = random.Random(request.seed).choice(["It is", "Your order is", "The package is"])
        return f"{wording} in Lisbon." if names(sent(request), request.seed) else f"{wording} on its way."

    return mock(respond=respond)


@pytest.mark.parametrize(("named", "answerable"), [(3, False), (5, False), (6, True), (8, True)])
async def test_a_case_is_answerable_when_the_model_names_the_city_in_three_quarters_of_its_runs(
        named: int, answerable: bool) -> None:
    # with the fact, the city in ``named`` of the 8 measured runs: a lucky seed names it either way
    seeds = set(range(MEASURED_SEED, MEASURED_SEED + MEASURED_RUNS)[:named])
    found = await planted_fact(VARIANT, model(lambda prompt, seed: "Lisbon" in prompt and seed in seeds),
                               name=f"named-{named}")
    assert (found is not None) == answerable
    if found is not None:
        assert found.measured is not None and found.measured.baseline == named / MEASURED_RUNS


async def test_a_model_that_names_the_city_without_the_fact_cannot_answer() -> None:
    # the answer does not come from the planted fact, so no explanation could rightly point at it
    assert await planted_fact(VARIANT, model(lambda prompt, seed: True), name="knows") is None


async def test_the_run_explained_is_one_of_the_measured_runs_that_named_the_city() -> None:
    def names(prompt: str, seed: int | None) -> bool:
        return "Lisbon" in prompt and seed != MEASURED_SEED  # the first measured run strays
    found = await planted_fact(VARIANT, model(names), name="kept")
    assert found is not None and found.run is not None and found.measured is not None
    assert "Lisbon" in (found.run.answer or "")
    assert found.measured.runs.index(found.run) == 1  # the first that named it, kept: not run again
    assert found.measured.baseline == (MEASURED_RUNS - 1) / MEASURED_RUNS


async def test_a_benign_looking_piece_the_model_needs_is_a_cause_on_it_not_a_false_confirmation() -> None:
    found = await planted_fact(VARIANT, model(lambda prompt, seed: "Lisbon" in prompt and "Gift cards" in prompt),
                              name="needs")
    assert found is not None and found.measured is not None
    assert await found.measured.changes(["note-1"]) and not await found.measured.changes(["note-0"])
    scored = await evaluate(found)
    assert "note-1" in scored.confirmed and scored.fragile == 1 and scored.false == 0
    assert set(scored.confirmed) == {"where", "note-1"}


async def test_a_confirmed_piece_whose_removal_leaves_the_answer_is_a_false_confirmation() -> None:
    # the explanation's reruns (seeds below MEASURED_SEED) need note-1; the measuring runs do not: scored as false
    def names(prompt: str, seed: int | None) -> bool:
        return "Lisbon" in prompt and ("Gift cards" in prompt or (seed or 0) >= MEASURED_SEED)
    found = await planted_fact(VARIANT, model(names), name="fooled")
    assert found is not None
    scored = await evaluate(found)
    assert "note-1" in scored.confirmed and scored.false == 1 and scored.fragile == 0


async def test_scripted_cases_are_never_measured_so_every_other_confirmed_piece_is_false() -> None:
    planted = case("fact", 0)
    assert planted.measured is None and planted.run is None
    scored = await evaluate(planted)
    assert scored.top1 and scored.false == 0 and scored.fragile == 0


async def test_with_fresh_providers_every_rerun_of_the_explanation_gets_a_new_one() -> None:
    made: list[object] = []

    def fresh() -> object:
        made.append(model(lambda prompt, seed: "Lisbon" in prompt))
        return made[-1]

    found = await planted_fact(VARIANT, fresh(), name="fresh", fresh=fresh)
    assert found is not None and found.rerun is not None and found.rerunner is found.rerun
    before = len(made)
    rerun = found.rerun(exclude=["where"], seed=2)
    assert len(made) == before + 1 and rerun.provider.provider is made[-1]  # wrapped to stamp the seed
    assert "where" not in rerun.source_ids() and "note-1" in rerun.source_ids()
    scored = await evaluate(found)
    assert scored.top1 and len(made) >= before + scored.reruns  # one provider (at least) per rerun
