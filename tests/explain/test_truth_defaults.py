"""The defaults and traceback benchmark cases are built as they say (``footprint_lab.examples.truth_defaults``,
``footprint_lab.examples.traceback``), and scored as they say.

No real model: the scripted model answers in microseconds, so every rank position, piece count
and answer form is checked on the run the benchmark explains. Whether ``localize`` then finds the
cause is what ``bench/bench_truth.py`` measures; here only the scoring of what it returns.
"""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest

from footprint_lab.examples import traceback, truth_defaults
from footprint_lab.examples.traceback import QUESTIONS, SCRIPTED_SHAPES, precision_recall, scripted_case
from footprint_lab.examples.truth import scripted
from footprint_lab.examples.truth_defaults import (
    FORM,
    FORMS,
    PIECE_COUNTS,
    RANKS,
    defaults_case,
    explain,
    placed,
    removable,
)
from footprint_lab.explain.compare import Mentions


@pytest.mark.parametrize("pieces", PIECE_COUNTS)
@pytest.mark.parametrize("rank", RANKS)
async def test_the_cause_ranks_where_the_case_says(rank: str, pieces: int) -> None:
    for form in FORMS:
        for variant in range(2):
            case = defaults_case(rank, pieces, form, noise=0.25, variant=variant)
            run = await case.factory().run(case.message)
            position, of, where = placed(run, case.cause)
            assert of == pieces + 1  # the context pieces and the system prompt
            assert where == rank, (case.name, position, of)
            scores = [score for _, score in removable(run)]
            if rank == "first":
                assert position == 1 and scores[0] > 0 and not any(scores[1:])
            elif rank == "last":
                assert position == of
            elif rank == "middle":
                assert 1 < position < of and scores[0] > 0 and scores[position - 1] == 0
            else:
                assert not any(scores) and position > 2  # never the first piece sent, nor the system prompt


@pytest.mark.parametrize("form", FORMS)
async def test_the_answer_takes_its_form_and_turns_on_the_cause_alone(form: str) -> None:
    case = defaults_case("zero", 10, form, noise=0.0)
    with_cause = (await case.factory().run(case.message)).answer
    without = (await case.factory(exclude=[case.cause], seed=3).run(case.message)).answer
    other = next(name for name, _ in removable(await case.factory().run(case.message)) if name != case.cause)
    kept = (await case.factory(exclude=[other], seed=3).run(case.message)).answer
    first, second, _ = FORM[form].outcomes
    if form == "text":
        assert isinstance(case.comparator, Mentions)
        assert with_cause == "Your parcel waits in Lisbon." and "Lisbon" in (kept or "")
        assert "on its way" in (without or "")
    else:  # a bare answer, and no comparator: the analyst passes none
        assert case.comparator is None
        assert (with_cause, without, kept) == (first, second, first)


async def test_every_rerun_gets_a_new_agent_on_a_new_provider() -> None:
    case = defaults_case("first", 3, "label")
    one, two = case.factory(exclude=["note-0"], seed=1), case.factory(exclude=["note-0"], seed=1)
    assert one is not two and one.provider.provider is not two.provider.provider  # each seeded over its own
    assert "note-0" not in one.source_ids() and case.cause in one.source_ids()


async def test_noise_strays_only_on_seeded_reruns() -> None:
    case = defaults_case("first", 3, "label", noise=0.25)
    assert {(await case.factory().run(case.message)).answer for _ in range(5)} == {"APPROVED"}
    seeded = {(await case.factory(seed=seed).run(case.message)).answer for seed in range(60)}
    assert seeded == {"APPROVED", "DECLINED", "ESCALATED"}


async def test_a_removable_piece_neither_tested_nor_named_is_counted_unnoticed(monkeypatch: Any) -> None:
    case = defaults_case("zero", 3, "label")  # the cause is never note-0, the first piece sent
    reported = SimpleNamespace(suspects=[SimpleNamespace(source_id="note-0")], untested=[(case.cause, "left out")],
                               confirmed=["note-0"], confirmed_together=[("note-0", case.cause)], reruns=7, failed=0)

    async def localize(run: Any, **settings: Any) -> Any:
        assert set(settings) == {"rerun"}  # the defaults: nothing but the factory (a comparator for free text)
        return reported

    monkeypatch.setattr(truth_defaults, "localize", localize)
    scored = await explain(case)
    assert set(scored.unnoticed) == {"system-prompt", "note-0", "note-1", "note-2"} - {"note-0", case.cause}
    assert scored.untested == 1 and scored.reruns == 7 and not scored.confirmed
    # the cause acts alone: a set confirmed together claims what is false of its other member, even holding it
    assert scored.false == ["note-0", ("note-0", case.cause)]


def test_the_scripted_traceback_cases_cover_each_question_in_each_shape() -> None:
    made = [scripted_case(variant) for variant in range(len(QUESTIONS) * len(SCRIPTED_SHAPES))]
    pairs = {(case.question.question, case.rule, len(case.poisoned), case.question.correct in case.passages.values())
             for case in made}
    assert len(pairs) == len(made)
    assert {(rule, poisoned, correct) for _, rule, poisoned, correct in pairs} == \
        {(rule, poisoned, correct) for poisoned, correct, rule in SCRIPTED_SHAPES}


@pytest.mark.parametrize("variant", range(len(QUESTIONS) * len(SCRIPTED_SHAPES)))
async def test_a_scripted_traceback_case_poisons_what_it_says(variant: int) -> None:
    case = scripted_case(variant)
    poisoned, correct, rule = SCRIPTED_SHAPES[(variant + variant // len(QUESTIONS)) % len(SCRIPTED_SHAPES)]
    question = case.question
    assert len(case.passages) == traceback.PASSAGES and len(case.poisoned) == poisoned
    for key, text in case.passages.items():
        if key in case.poisoned:  # PoisonedRAG's shape: the question, then the wrong answer stated
            assert text.startswith(question.question) and question.wrong in text and question.right not in text
        else:
            assert question.wrong not in text
    assert (question.correct in case.passages.values()) == correct

    async def answer(exclude: list[str]) -> str:
        return (await case.factory(exclude=exclude, seed=1).run(case.message)).answer or ""

    assert question.wrong in await answer([])
    assert question.wrong not in await answer(list(case.poisoned))
    clean = next(key for key in case.passages if key not in case.poisoned)
    assert question.wrong in await answer([clean])
    if poisoned == 2:  # "any": either poisoned passage keeps the wrong answer; "majority": each is needed
        alone = await answer([case.poisoned[0]])
        assert (question.wrong in alone) == (rule == "any")


async def test_a_scripted_traceback_case_is_attacked_and_traced_to_its_poison() -> None:
    found = await traceback.trace(scripted_case(0))  # one poisoned passage, the right answer's passage beside it
    assert found.attacked and found.baseline == 1.0
    assert found.traced == list(scripted_case(0).poisoned)
    assert (found.precision, found.recall, found.survives) == (1.0, 1.0, False)


def test_precision_and_recall_are_tracllms() -> None:
    assert precision_recall(set(), {"a"}) == (0.0, 0.0)
    assert precision_recall({"a", "b"}, {"a"}) == (0.5, 1.0)
    assert precision_recall({"a"}, {"a", "b"}) == (1.0, 0.5)


async def test_a_clean_passage_the_model_needs_counts_against_precision_and_is_measured_as_fragile() -> None:
    question = QUESTIONS[0]
    marked = traceback.retrieved(question, poisoned=1, correct=False, chooser=random.Random("needs"))
    clean = next(key for key in marked if not key.endswith("*"))

    def decide(sent: str, _: Any) -> str:  # the poison wins only beside one clean passage's wording
        return question.wrong if question.wrong in sent and marked[clean] in sent else question.right

    def model() -> Any:
        return scripted(decide, 0.0, outcomes=(question.wrong, question.right, "unknown"),
                        say=lambda outcome, _: f"The answer is {outcome}.")

    case = traceback._case("needs", question, marked, model)
    found = await traceback.trace(case)
    assert found.attacked and found.traced == sorted([*case.poisoned, clean])
    assert (found.precision, found.recall, found.survives) == (0.5, 1.0, False)
    assert found.fragile == [clean]
