"""localize on the defaults an analyst types: every piece screened, nothing left untested quietly, verdicts that
say what was measured.

The cases are not tuned to pass: the answer is a bare label that shares no word with any piece
(every suspect scores 0, or the cause ranks last), the rerun factory builds a fresh agent and a
fresh provider per rerun, and the call is ``localize(run, rerun=...)`` with nothing else.
"""

from __future__ import annotations

from typing import Any

import pytest

from footprint_lab import Agent
from footprint_lab.context import define_fact
from footprint_lab.explain import bisect_culprits, localize
from footprint_lab.providers import LLMRequest, mock

BENIGN = ["Shipping is free over 50 EUR.", "Support answers within a day.", "The warehouse is in Rotterdam.",
          "Invoices go out monthly.", "Gift cards are not cash.", "Addresses change until dispatch.",
          "The store closes on holidays.", "Parcels are insured to 500 EUR.", "Phone support runs 9 to 17."]


def label_model(request: LLMRequest) -> str:
    """Approves only while the VIP override is sent; answers with the bare label."""
    return "APPROVED" if "VIP override." in request.system else "DECLINED"


def facts(count: int, cause_at: int, *, echo: bool = False) -> list[Any]:
    """``count`` benign facts with the cause ``vip`` at ``cause_at``; ``echo`` makes every benign fact share the
    answer's word, so the correlational ranking puts the cause last."""
    made = [define_fact(id=f"note-{n}", data=("Approved: " if echo else "") + BENIGN[n % len(BENIGN)] + f" ({n})")
            for n in range(count)]
    made.insert(cause_at, define_fact(id="vip", data="VIP override."))
    return made


def agent_of(count: int, cause_at: int, *, echo: bool = False, respond: Any = label_model) -> Agent:
    return Agent(provider=mock(respond=respond), system="Decide the refund.", context=facts(count, cause_at, echo=echo))


def fresh_factory(count: int, cause_at: int, *, echo: bool = False, respond: Any = label_model) -> Any:
    """What most people write: a new agent on a new provider for every rerun."""
    made: list[tuple[str, ...]] = []

    def factory(exclude: Any = (), seed: int | None = None) -> Agent:
        made.append(tuple(exclude))
        return agent_of(count, cause_at, echo=echo, respond=respond).without(list(exclude), seed=seed)

    factory.made = made  # type: ignore[attr-defined]
    return factory


async def test_the_cause_every_score_ties_at_zero_is_found_among_nine_with_the_defaults():
    agent = agent_of(8, 8)  # the case: the label shares no word with any piece, vip ranked 9th of 10
    run = await agent.run("Refund order A-1001?")
    assert run.answer == "APPROVED"
    scores = run.suspects().set_index("source_id")["score"]
    assert (scores == 0).all()
    report = await localize(run, rerun=agent)
    assert report.confirmed == ["vip"]
    tested = {s.source_id for s in report.suspects}
    assert tested == {"vip", "system-prompt", *(f"note-{n}" for n in range(8))}
    assert [name for name, _ in report.untested] == ["user-message"]   # the input itself: no rerun removes it
    first = report.summary()
    assert "1 not tested (named below)" in first and "0 undecided" in first
    assert "Not tested (1)" in str(report) and "'user-message'" in str(report)
    assert report.reruns <= 24


@pytest.mark.parametrize(("count", "cause_at"), [(2, 0), (9, 4), (39, 39), (79, 79)])
async def test_a_cause_the_ranking_puts_last_is_screened_and_confirmed_through_a_fresh_provider_per_rerun(
        count: int, cause_at: int):
    factory = fresh_factory(count, cause_at, echo=True)
    run = await agent_of(count, cause_at, echo=True).run("Refund order A-1001?")
    ranked = run.suspects()
    removable = ranked[ranked.removal_id.notna()]
    assert removable.iloc[-1].source_id == "vip" or count < 3   # ranked last of every removable piece
    report = await localize(run, rerun=factory)
    assert report.confirmed == ["vip"], str(report)
    assert [name for name, _ in report.untested] == ["user-message"]
    # the default budget: 48 for the search and the confirmation, and the screening's own reruns on top (two
    # unchanged reruns and one without each piece, or the group test's and 8 to narrow its flips when there are too
    # many pieces for that)
    pieces = count + 2   # the facts, the cause, the system prompt
    assert report.budget == (48 + 2 + pieces if count < 12 else 72 if count < 64 else 74)
    assert report.reruns <= (24 if count < 12 else 48)
    assert len(set(factory.made)) > 3   # a fresh agent for each kind of rerun


async def test_pieces_the_budget_cannot_reach_are_named_never_judged():
    agent = agent_of(9, 0)
    run = await agent.run("Refund order A-1001?")
    names = ["vip", *(f"note-{n}" for n in range(9))]
    report = await localize(run, rerun=agent, sources=names, samples=1, budget=6)
    untested = dict(report.untested)
    assert untested and all("budget (6 reruns) ran out" in why for why in untested.values())
    assert {s.source_id for s in report.suspects} | set(untested) == set(names)
    assert not set(untested) & {s.source_id for s in report.suspects}
    assert report.verdict(next(iter(untested))) is None          # no verdict, neither cause nor innocent
    assert report.together == [] and "TOGETHER" not in str(report)   # one-piece removals are no sets
    assert f"{len(untested)} not tested (named below)" in report.summary()
    for name in untested:
        assert f"'{name}': " in str(report)


async def test_top_is_an_explicit_choice_and_the_report_names_what_it_left_out():
    agent = agent_of(5, 5)
    run = await agent.run("Refund order A-1001?")
    report = await localize(run, rerun=agent, top=2)
    left_out = {name: why for name, why in report.untested if why.startswith("left out by top=2")}
    assert len(report.suspects) == 2 and len(left_out) == 5   # 7 removable pieces, 2 tested
    assert "vip" in left_out or report.verdict("vip") is not None


class Refused(Exception):
    """A non-passing failure: every rerun that removes the tone note fails."""


async def test_a_piece_whose_every_rerun_failed_is_undecided_and_counted_never_not_confirmed():
    def respond(request: LLMRequest) -> str:
        if "Support answers within a day." not in request.system:
            raise Refused("no tone")
        return label_model(request)

    agent = agent_of(3, 3, respond=respond)
    run = await agent.run("Refund order A-1001?")
    report = await localize(run, rerun=agent)
    failing = next(s for s in report.suspects if s.source_id == "note-1")
    assert failing.verdict == "undecided" and failing.reason.startswith("could not be judged: every rerun failed")
    assert report.unjudged == ["note-1"] and "(1 could not be judged: every rerun failed)" in report.summary()
    assert report.confirmed == ["vip"]
    assert report.to_frame().set_index("source_id").loc["note-1", "verdict"] == "undecided"


async def test_bisect_culprits_searches_every_piece_by_default():
    def either(request: LLMRequest) -> str:
        return "APPROVED" if "VIP override." in request.system or "Ledger Q7." in request.system else "DECLINED"

    context = facts(12, 12)
    context.insert(0, define_fact(id="ledger", data="Ledger Q7."))
    agent = Agent(provider=mock(respond=either), system="Decide the refund.", context=context)
    run = await agent.run("Refund order A-1001?")
    found = await bisect_culprits(run, rerun=agent)
    assert found.confirmed == [("ledger", "vip")], str(found)
    assert "vip" in found.suspects and len(found.suspects) == 15   # 13 facts, the second cause, the system prompt


def test_a_cause_whose_one_screening_rerun_strayed_is_confirmed_alone_not_hidden_in_a_pair():
    """At 25% noise, with the one screening rerun without the cause forced to keep the outcome: the search weighs
    "a pair acting together" against "one cause", and must not let the pair hide the cause it holds."""
    import asyncio
    import random

    from footprint_lab.explain.trials._budget import SCREEN_BASELINE
    from footprint_lab.explain.trials.arms import Arm
    from footprint_lab.explain.trials.rerun import Outcome
    from footprint_lab.explain.trials.trial import SCREEN_SEED, decide

    names = ["vip", *(f"n{k}" for k in range(5))]
    strayed = SCREEN_SEED + SCREEN_BASELINE  # the seed of each arm's one screening rerun

    def straying(trial: int):
        chooser = random.Random(trial)

        async def draw(jobs):
            outcomes = []
            for arm, seed in jobs:
                removed = set(arm.exclude) if arm is not None else set()
                flipped = "vip" in removed
                if chooser.random() < 0.25:
                    flipped = chooser.randrange(3) != 0
                if removed == {"vip"} and seed == strayed:
                    flipped = False
                outcomes.append(Outcome(seed, "answer", flipped=flipped))
            return outcomes

        return draw

    alone = hidden = 0
    for trial in range(40):
        result = asyncio.run(decide([Arm(name, (name,)) for name in names], straying(trial), samples=3, alpha=0.05,
                                    budget=48))
        confirmed = {verdict.arm.key for verdict in result.arms if verdict.verdict == "confirmed"}
        alone += "vip" in confirmed
        hidden += "vip" not in confirmed and any("vip" in key for key in confirmed)
    # 38 of 40 and none hidden; with every kind of explanation equally likely before any rerun: 35, and 1 hidden
    assert alone >= 37 and hidden == 0, (alone, hidden)


async def test_a_factory_that_ignores_exclude_is_refused_before_any_rerun():
    from footprint_lab.errors import ExplainConfigError

    calls: list[Any] = []

    def respond(request: LLMRequest) -> str:
        calls.append(request)
        return label_model(request)

    def careless(exclude: Any = (), seed: int | None = None) -> Agent:
        return agent_of(4, 1, respond=respond)  # the same agent whatever it is told to leave out

    run = await agent_of(4, 1).run("Refund order A-1001?")
    with pytest.raises(ExplainConfigError) as refused:
        await localize(run, rerun=careless)
    assert refused.value.setting == "rerun" and "exclude" in str(refused.value) and calls == []
    assert "vip" not in str(refused.value)


async def test_a_comparator_that_returns_none_fails_its_reruns_it_never_reads_as_no_flip():
    agent = agent_of(3, 0)
    run = await agent.run("Refund order A-1001?")
    report = await localize(run, rerun=agent, comparator=lambda original, rerun: None)
    assert report.confirmed == [] and {s.verdict for s in report.suspects} == {"undecided"}
    assert set(report.unjudged) == {s.source_id for s in report.suspects}
    assert "comparator returned None" in report.summary()


async def test_a_missing_rerun_or_a_factory_without_exclude_is_refused_with_the_fix():
    from footprint_lab.errors import ExplainConfigError
    from footprint_lab.explain import rerun_without

    agent = agent_of(3, 0)
    run = await agent.run("Refund order A-1001?")
    for call in (localize(run), bisect_culprits(run), rerun_without(run, ["vip"])):
        with pytest.raises(ExplainConfigError) as refused:
            await call
        assert refused.value.setting == "rerun" and "rerun=agent" in str(refused.value)
        assert "def factory(exclude=(), seed=None)" in str(refused.value)
    with pytest.raises(ExplainConfigError) as refused:
        await localize(run, rerun=lambda: agent)
    assert "takes no exclude= keyword" in str(refused.value) and "return agent.without(exclude)" in str(refused.value)
