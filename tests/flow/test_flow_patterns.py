"""The patterns are plain compositions: what each one runs, in what order, and what it answers."""

from __future__ import annotations

import itertools

import pytest

from footprint_lab import Agent, Graph, Loop, Parallel, Sequence, Workflow
from footprint_lab.errors import CompositionConfigError
from footprint_lab.flow import debate, handoff_target, majority_vote, map_reduce, reflection, self_consistency, swarm
from footprint_lab.providers import LLMRequest, mock


def echo(tag: str) -> Agent:
    return Agent(provider=mock(respond=lambda r: f"{tag}({r.messages[-1]['content']})"), name=tag)


async def test_reflection_drafts_then_critiques_and_revises_each_round() -> None:
    pattern = reflection(echo("w"), echo("c"), rounds=2)
    assert isinstance(pattern, Sequence) and isinstance(pattern.members[1][1], Loop)
    run = await pattern.run("topic")
    reflect = run.recording.children[1]
    assert [p.runner.kind for p in reflect.children] == ["workflow", "workflow"]
    last_revision = reflect.children[1].children[1]
    sent = last_revision.messages[0]["content"]
    assert sent.startswith("Revise the draft using the critique.") and "Critique:\nc(" in sent
    assert run.answer == last_revision.answer


async def test_reflection_stops_when_until_holds() -> None:
    run = await reflection(echo("w"), echo("c"), rounds=5, until=lambda a: True).run("topic")
    assert len(run.recording.children[1].children) == 1


async def test_debate_lets_each_side_read_the_debate_so_far_and_the_judge_read_all_of_it() -> None:
    pattern = debate(echo("pro"), echo("con"), echo("judge"), rounds=2)
    assert isinstance(pattern, Workflow)
    assert [s.name for s in pattern.steps] == ["for-1", "against-1", "for-2", "against-2", "verdict"]
    run = await pattern.run("Is tea better than coffee?")
    verdict_input = run.recording.children[-1].messages[0]["content"]
    assert verdict_input.startswith("Question:\nIs tea better than coffee?")
    positions = [verdict_input.index(f"[{name}]") for name in ("for-1", "against-1", "for-2", "against-2")]
    assert positions == sorted(positions)
    assert verdict_input.endswith("Judge the debate and give the verdict.")


async def test_self_consistency_samples_concurrently_and_takes_the_majority() -> None:
    answers = itertools.cycle(["42", "41", " 42 "])
    sampler = Agent(provider=mock(respond=lambda r: next(answers)))
    pattern = self_consistency(sampler, samples=3)
    assert isinstance(pattern, Parallel)
    run = await pattern.run("6 x 7?")
    assert run.answer == "42"
    assert len(run.recording.children) == 3


def test_majority_vote_breaks_a_tie_in_favour_of_the_earliest_answer() -> None:
    assert majority_vote({"a": "x", "b": "y", "c": "y", "d": "x"}) == "x"


async def test_map_reduce_answers_each_part_then_reduces() -> None:
    pattern = map_reduce(echo("m"), echo("r"), split=lambda text: text.split(";"), shards=2)
    assert isinstance(pattern, Graph)
    run = await pattern.run("alpha;beta")
    assert run.answer == "r(Combine these partial answers:\n\n[map-1]\nm(alpha)\n\n[map-2]\nm(beta))"


async def test_map_reduce_refuses_a_split_that_does_not_fit_the_shards() -> None:
    mapper = mock(reply="never")
    pattern = map_reduce(Agent(provider=mapper), echo("r"), split=lambda text: text.split(";"), shards=3)
    with pytest.raises(CompositionConfigError) as caught:
        await pattern.run("alpha;beta")
    assert caught.value.setting == "split"
    assert "alpha" not in str(caught.value)
    assert mapper.calls == 0


async def test_swarm_hands_over_by_name_until_an_answer_hands_over_to_nobody() -> None:
    def triage_reply(request: LLMRequest) -> str:
        return "This is about money.\nHANDOFF: billing"

    billing = Agent(provider=mock(reply="Refund issued."), name="billing")
    pattern = swarm({"triage": Agent(provider=mock(respond=triage_reply)), "billing": billing}, entry="triage")
    assert isinstance(pattern, Loop)
    run = await pattern.run("I was charged twice")
    assert run.answer == "Refund issued."
    routes = [d.chosen for p in run.recording.children for d in p.decisions]
    assert routes == ["triage", "billing"]


def test_handoff_target_reads_the_last_marker_line() -> None:
    assert handoff_target("hi\nHANDOFF: billing\n") == "billing"
    assert handoff_target("no handover here") is None
    assert handoff_target("HANDOFF:") is None


def test_pattern_settings_are_refused_at_build_time() -> None:
    with pytest.raises(CompositionConfigError):
        debate(echo("a"), echo("b"), echo("c"), rounds=0)
    with pytest.raises(CompositionConfigError):
        self_consistency(echo("a"), samples=0)
    with pytest.raises(CompositionConfigError):
        swarm({"a": echo("a")}, entry="b")


@pytest.mark.parametrize("count", [0, -3, 101, 10**9, 2**63])
def test_a_fan_out_no_plan_would_want_is_refused_before_any_member_is_built(count: int) -> None:
    with pytest.raises(CompositionConfigError) as caught:
        self_consistency(echo("a"), samples=count)
    assert "from 1 to 100" in str(caught.value) and (count < 1000 or str(count) not in str(caught.value))
    with pytest.raises(CompositionConfigError):
        map_reduce(echo("a"), echo("b"), split=lambda text: [text], shards=count)
