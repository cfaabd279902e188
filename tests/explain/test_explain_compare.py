"""Comparators that know answers: a flip is a changed outcome, not merely other words."""

from __future__ import annotations

import random

import pytest

from footprint_lab import Agent
from footprint_lab.context import define_fact
from footprint_lab.errors import ComparatorError
from footprint_lab.explain import localize
from footprint_lab.explain.compare import JsonField, Judge, Label, Mentions, Number, suggest
from footprint_lab.providers import LLMRequest, mock


def test_label_reads_the_earliest_choice_as_a_whole_word_in_any_case():
    label = Label(choices=["APPROVED", "DECLINED"])
    assert label.label("Declined: the order is 47 days old.") == "DECLINED"
    assert label.label("I have APPROVED it, not declined it.") == "APPROVED"
    assert label.label("It was unapproved.") is None
    assert not label("APPROVED, refund sent.", "approved - we refund you today")
    assert label("APPROVED.", "DECLINED.") and label("APPROVED.", "I cannot say.")
    by_pattern = Label(pattern=r"verdict:\s*(\w+)")
    assert by_pattern.label("Verdict: yes (because...)") == "YES"
    assert not by_pattern("verdict: no", "VERDICT:   No!") and by_pattern("verdict: no", "verdict: yes")


def test_number_reads_separators_and_holds_a_tolerance():
    number = Number()
    assert number.number("Refund 1,250.50 EUR today") == 1250.5
    assert not number("135 EUR", "That is 135.0 euros") and number("135 EUR", "120 EUR")
    assert number("135 EUR", "no amount given") and not number("nothing", "still nothing")
    assert not Number(tolerance=5)("100", "104") and Number(tolerance=5)("100", "106")
    assert not Number(tolerance=0.01, relative=True)("1000", "1009") and Number(tolerance=0.01, relative=True)(
        "1000", "1011")
    assert Number(pattern=r"total:?\s*([\d.,]+)")("total 10, 3 items", "total 10, 4 items") is False


def test_mentions_compares_whether_a_term_is_named():
    lisbon = Mentions("Lisbon")
    assert not lisbon("The parcel is in Lisbon.", "It waits in LISBON now")
    assert lisbon("The parcel is in Lisbon.", "The parcel is in Porto.")
    assert not lisbon("Lisbonne", "Paris")  # whole words: neither names Lisbon
    both = Mentions("refund", "today", every=True)
    assert both("A refund today.", "A refund tomorrow.") and not both("refund today", "today a refund")


def test_json_field_reads_a_dotted_path_inside_prose_or_a_fence():
    decision = JsonField("refund.approved")
    fenced = 'Here it is:\n```json\n{"refund": {"approved": true, "amount": 12}}\n```'
    assert not decision(fenced, '{"refund": {"approved": true, "amount": 99}}')
    assert decision(fenced, '{"refund": {"approved": false}}') and decision(fenced, "no JSON at all")
    assert not JsonField("items.1")('{"items": [1, 2]}', 'x {"items": [0, 2]} y')


@pytest.mark.parametrize("build", [
    lambda: Label(), lambda: Label(choices=["ONLY"]), lambda: Label(choices=["A", "B"], pattern="x"),
    lambda: Label(pattern="("), lambda: Number(tolerance=-1), lambda: Number(tolerance=float("nan")),
    lambda: Mentions(), lambda: Mentions(""), lambda: JsonField(""), lambda: JsonField("a..b"),
    lambda: Judge(None), lambda: Judge(mock(reply="SAME"), question=""), lambda: Judge(mock(reply="SAME"),
                                                                                       concurrency=0),
])
def test_settings_no_comparator_can_use_are_refused_by_name(build):
    with pytest.raises(ComparatorError) as refused:
        build()
    assert refused.value.code == "ERR_COMPARATOR" and refused.value.setting


@pytest.mark.parametrize(("terms", "received"), [(("",), "an empty or blank string"), (("  ",), "an empty or blank "
                         "string"), ((42,), "a term that is an int"), (("Lisbon", None), "a term that is None")])
def test_a_term_mentions_cannot_use_is_named_for_what_it_is(terms: tuple[object, ...], received: str) -> None:
    """A blank term was told "received a list of 1", though the caller passed one string."""
    with pytest.raises(ComparatorError) as refused:
        Mentions(*terms)
    assert f"(received {received})" in str(refused.value)


def test_mentions_given_a_list_reads_it_as_its_terms() -> None:
    assert Mentions(["Lisbon", "Porto"]).terms == Mentions("Lisbon", "Porto").terms == ["Lisbon", "Porto"]
    assert Mentions(["Lisbon"])("Paris it is.", "Lisbon it is.")


def judging_provider(calls: list[str]):
    def respond(request: LLMRequest) -> str:
        text = request.messages[-1]["content"]
        calls.append(text)
        first, second = text.split("Answer B:")
        return "SAME" if ("yes" in first.lower()) == ("yes" in second.lower()) else "DIFFERENT"

    return mock(respond=respond)


async def test_a_judge_reads_both_answers_records_each_call_and_asks_once_per_pair():
    calls: list[str] = []
    judge = Judge(judging_provider(calls), question="Is the refund granted?")
    assert await judge("Yes, refunded.", "yes - we refund it") is False
    assert await judge("Yes, refunded.", "No refund, sorry.") is True
    assert await judge("Yes, refunded.", "No refund, sorry.") is True  # the same pair is not judged again
    assert await judge("Yes, refunded.", "yes, REFUNDED") is False      # same words: no call at all
    assert len(calls) == 2 and len(judge.runs) == 2
    recorded = judge.runs[0].recording
    assert recorded.runner.kind == "llm_call" and recorded.exchanges
    assert "Is the refund granted?" in recorded.exchanges[0].system
    assert repr(judge) == "Judge(mock, question='Is the refund granted?')"


def noisy_agent(noise: float):
    """Always the same outcome while the planted fact is there, in freshly sampled words every rerun."""
    openings = ["Good news:", "Update:", "Hello!", "Dear customer,", "Thanks for waiting."]

    def respond(request: LLMRequest) -> str:
        chooser = random.Random(f"{request.seed}|{request.system}")
        where = "Lisbon" if "is in Lisbon" in request.system else "Porto"
        if chooser.random() < noise:
            where = "Porto" if where == "Lisbon" else "Lisbon"
        return f"{chooser.choice(openings)} the package for order A-4411 is in {where}. " + \
            " ".join(chooser.choice(["It", "moves", "soon", "today", "we", "think"]) for _ in range(6))

    facts = [define_fact(id="lisbon", data="The package for order A-4411 is in Lisbon."),
             define_fact(id="hours", data="Support answers within a day."),
             define_fact(id="tone", data="Be warm and brief.")]
    return Agent(provider=mock(respond=respond), system="Answer where a parcel is.", context=facts)


async def test_free_text_reruns_defeat_the_default_comparator_and_a_mention_settles_it():
    agent = noisy_agent(0.0)
    run = await agent.run("Where is order A-4411?")
    default = await localize(run, rerun=agent)
    assert default.confirmed == [] and not default.baseline_stable
    assert any("Mentions('...')" in note or "Label(" in note for note in default.notes)
    told = await localize(run, rerun=agent, comparator=Mentions("Lisbon"))
    assert told.confirmed == ["lisbon"] and told.baseline_stable


async def test_a_judge_as_comparator_confirms_the_cause_and_its_calls_are_kept():
    agent = noisy_agent(0.0)
    run = await agent.run("Where is order A-4411?")

    def lisbon_judge(request: LLMRequest) -> str:
        text = request.messages[-1]["content"]
        first, second = text.split("Answer B:")
        return "SAME" if ("Lisbon" in first) == ("Lisbon" in second) else "DIFFERENT"

    judge = Judge(mock(respond=lisbon_judge), question="Where is the package?")
    report = await localize(run, rerun=agent, comparator=judge)
    assert report.confirmed == ["lisbon"]
    assert judge.runs and all(r.status == "finished" for r in judge.runs)
    assert report.comparator == "Judge(mock, question='Where is the package?')"


async def test_a_judge_that_gives_no_verdict_fails_the_rerun_instead_of_flipping_it():
    agent = noisy_agent(0.0)
    run = await agent.run("Where is order A-4411?")
    report = await localize(run, rerun=agent, comparator=Judge(mock(reply="Hard to say.")), sources=["lisbon"])
    assert report.confirmed == [] and report.suspects[0].verdict == "undecided"
    assert report.suspects[0].flips == 0 and "comparator RuntimeError" in report.summary()


def test_suggest_names_a_comparator_that_fits_the_answer():
    assert "Label(choices=['APPROVED', ...])" in suggest("APPROVED: the refund is on its way.")
    assert "JsonField('decision')" in suggest('{"decision": "approve", "amount": 10}')
    assert "Number()" in suggest("Total: 135 EUR.")
    assert "Mentions('...')" in suggest("The package for order A-4411 is in Lisbon, it moves today.")
    assert "Mentions('...')" in suggest("the parcel waits in the depot")
