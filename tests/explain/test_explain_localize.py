"""Proof by ablation: localize, rerun_without and agent.without."""

from __future__ import annotations

import asyncio

import pytest

from footprint_lab import Agent
from footprint_lab.context import define_fact, define_instruction
from footprint_lab.errors import ExplainConfigError, NothingToLocalizeError, UnknownSourceError
from footprint_lab.examples.scenarios import APPROVED, DECLINED, REFUND_REQUEST, planted_fact_agent, refund_model
from footprint_lab.explain import TextDifference, localize, rerun_without
from footprint_lab.providers import LLMRequest, mock


@pytest.fixture
def agent() -> Agent:
    return planted_fact_agent()


@pytest.fixture
async def planted_run(agent):
    return await agent.run(REFUND_REQUEST)


async def test_localize_confirms_the_planted_fact_and_nothing_benign(agent, planted_run):
    report = await localize(planted_run, rerun=agent, samples=3)
    assert report.baseline_stable
    by_id = {s.source_id: s for s in report.suspects}
    vip = by_id["vip-override"]
    assert (vip.verdict, vip.flips, vip.samples) == ("confirmed", 3, 3)
    assert by_id["customer"].verdict == "not_confirmed" and by_id["customer"].flips == 0
    assert by_id["lookup_order"].verdict == "not_confirmed" and by_id["lookup_order"].source_kind == "tool"
    assert report.confirmed == ["vip-override"]
    assert report.suspects[0].source_id == "vip-override"
    assert len(report.suspects) == 5
    assert (vip.noise_flips, vip.noise_samples, vip.phase) == (0, 3, "confirmation")
    assert vip.p_value == pytest.approx(1 / 64) and vip.p_value <= vip.level
    assert ("CONFIRMED: removing 'vip-override' flipped the outcome in 3/3 reruns against noise 0/3 (p = 0.016 <= "
            in str(report))
    assert "NOT CONFIRMED: removing 'customer' flipped the outcome in 0/1 screening reruns" in str(report)
    assert any(name == "user-message" for name, _ in report.untested)
    # a deterministic model: two unchanged reruns and one rerun per suspect screen, 3 + 3 confirm
    assert report.reruns == 2 + 5 + 3 + 3 and report.reruns <= report.budget
    frame = report.to_frame()
    assert list(frame.columns) == ["rank", "source_id", "source_kind", "verdict", "flips", "samples", "flip_rate",
                                   "noise_flips", "noise_samples", "noise_rate", "p_value", "level", "reruns",
                                   "failed", "phase", "score", "reason", "member", "member_name"]
    assert frame.iloc[0].verdict == "confirmed" and frame.iloc[0].p_value < 0.05
    assert frame.reruns.sum() + 2 + 3 == report.reruns  # every rerun is counted once: arms, then the baselines


async def test_localize_with_a_factory_called_with_exclude_and_seed(planted_run):
    calls: list[tuple[tuple[str, ...], int]] = []

    def factory(*, exclude, seed):
        calls.append((tuple(exclude), seed))
        return planted_fact_agent().without(exclude)

    report = await localize(planted_run, rerun=factory, samples=2, top=2)
    assert report.verdict("vip-override") == "confirmed"
    other = report.suspects[1].source_id
    # two suspects need no screening; 2 a side cannot decide (p = 1/16), so a second look of 4 a side does;
    # the other suspect flipped no more than noise at the first look and stopped there
    assert len(calls) == len(set(calls))  # one runner per rerun, the one built to check the factory reused
    expected = [*(((), seed) for seed in range(6)), *((("vip-override",), seed) for seed in range(4)),
                ((other,), 0), ((other,), 1)]  # the baseline of the second look is half again the arm's
    assert sorted(calls) == sorted(expected)
    assert report.suspects[0].trial.look == 2 and report.verdict(other) == "not_confirmed"


async def test_reruns_are_seeded_like_the_baseline(planted_run):
    seeds: list[int | None] = []

    def respond(request: LLMRequest):
        seeds.append(request.seed)
        return refund_model(request)

    agent = planted_fact_agent(provider=mock(respond=respond))
    await localize(planted_run, rerun=agent, samples=3, top=1)
    assert sorted(set(seeds)) == [0, 1, 2]


async def test_a_coin_model_confirms_nothing_and_says_a_verdict_short_of_confirmed_clears_nothing(planted_run):
    import random

    def coin(request: LLMRequest):  # a model that ignores its context and answers either way at random
        if request.tools and not any(m.get("role") == "tool" for m in request.messages):
            return {"tool": "lookup_order", "args": {"order_id": "A-1001"}}
        chooser = random.Random(f"{request.seed}|{request.system}")
        return APPROVED if chooser.random() < 0.5 else DECLINED

    agent = planted_fact_agent(provider=mock(respond=coin))
    report = await localize(planted_run, rerun=agent, samples=3, top=2)
    assert not report.baseline_stable and report.confirmed == [] and report.confirmed_together == []
    assert {s.verdict for s in report.suspects} <= {"undecided", "not_confirmed"}
    flips, finished = report.noise
    assert flips > 0 and f"noise: {flips}/{finished} unchanged reruns" in report.summary()
    # the unchanged reruns that flipped all gave the other label: the report says the model does not reliably give
    # this answer, so nothing short of confirmed clears a piece (a comparator of outcomes is named for wording only)
    noted = [note for note in report.notes if "the same one each time" in note]
    assert len(noted) == 1 and "does not clear a piece" in noted[0] and "Label(choices=['APPROVED'" in noted[0]
    assert report.notes[0] in str(report)


async def test_free_text_that_differs_from_rerun_to_rerun_names_a_comparator_of_outcomes(planted_run):
    """Unchanged reruns that each word the same outcome differently read as changed under the default comparator:
    the report names a comparator that reads the outcome."""
    import random

    def wordy(request: LLMRequest):
        if request.tools and not any(m.get("role") == "tool" for m in request.messages):
            return {"tool": "lookup_order", "args": {"order_id": "A-1001"}}
        words = random.Random(f"{request.seed}|{request.system}").sample(["quick", "plain", "short", "final",
                                                                            "clear", "sure", "fair", "noted"], 4)
        return f"{refund_model(request).split(':')[0]}: " + " ".join(words) + " reply about the order."

    agent = planted_fact_agent(provider=mock(respond=wordy))
    run = await agent.run(REFUND_REQUEST)
    report = await localize(run, rerun=agent, samples=3, top=2)
    assert any("free text differs from rerun to rerun" in note and "Label(choices=['APPROVED'" in note
               for note in report.notes)
    assert not any("the same one each time" in note for note in report.notes)


async def test_a_rare_flip_is_undecided_after_every_look(planted_run):
    def seed_sensitive(request: LLMRequest):
        reply = refund_model(request)
        if reply == DECLINED and request.seed != 0:
            return APPROVED  # only the seed-0 rerun notices the override is gone
        return reply

    agent = planted_fact_agent(provider=mock(respond=seed_sensitive))
    report = await localize(planted_run, rerun=agent, samples=3, sources=["vip-override"])
    only = report.suspects[0]
    assert (only.verdict, only.flips, only.samples, only.trial.look) == ("undecided", 1, 12, 3)
    assert only.p_value > only.level and "more reruns could decide" in only.reason
    assert report.reruns == 12 + 18  # the third look: 12 reruns without it, 18 unchanged; then no more looks


async def test_a_single_sample_starts_small_and_looks_again(agent, planted_run):
    one = await localize(planted_run, rerun=agent, samples=1, sources=["vip-override"])
    only = one.suspects[0]
    # 1 against 1 (p = 0.25) cannot decide at any level, so the first look's share of alpha passes to the second:
    # 2 flips of 2 against a stable 3 (p = 0.035) are within its 0.0325 + 0.01 (the level is the largest p-value
    # within that a test of 2 against 3 can give: that p-value itself)
    assert (only.verdict, only.flips, only.samples, only.trial.look) == ("confirmed", 2, 2, 2)
    assert only.p_value == pytest.approx(0.03456) and only.level == only.p_value
    two = await localize(planted_run, rerun=agent, samples=2, sources=["vip-override"])
    assert (two.suspects[0].verdict, two.suspects[0].flips, two.suspects[0].trial.look) == ("confirmed", 4, 2)


async def test_half_the_reruns_flipping_is_an_effect_beyond_a_stable_baseline(planted_run):
    def even_seeds_notice(request: LLMRequest):
        reply = refund_model(request)
        return APPROVED if reply == DECLINED and request.seed % 2 else reply

    agent = planted_fact_agent(provider=mock(respond=even_seeds_notice))
    report = await localize(planted_run, rerun=agent, samples=4, sources=["vip-override"])
    only = report.suspects[0]
    assert report.baseline_stable
    assert (only.verdict, only.flips, only.samples, only.flip_rate) == ("confirmed", 4, 8, 0.5)
    assert "flipped the outcome in 4/8 reruns against noise 0/12" in str(report)


async def test_a_failed_baseline_rerun_is_neither_noise_nor_a_flip(planted_run):
    def first_baseline_fails(request: LLMRequest):
        if request.seed == 0 and "VIP override" in request.system and request.call_index == 0:
            raise RuntimeError("provider down")
        return refund_model(request)

    agent = planted_fact_agent(provider=mock(respond=first_baseline_fails))
    report = await localize(planted_run, rerun=agent, samples=3, sources=["customer"])
    assert report.baseline[0].error == "RuntimeError" and report.noise == (0, 2)
    assert report.baseline_stable and report.suspects[0].verdict == "not_confirmed"
    # removing 'customer' keeps the override in the prompt, so that arm's seed-0 rerun fails too
    assert (report.suspects[0].failed, report.suspects[0].samples) == (1, 2)
    assert "2 failed (RuntimeError x2)" in report.summary()


async def test_a_rerun_that_fails_for_a_passing_reason_is_tried_again(planted_run):
    from footprint_lab.providers.errors import ProviderUnavailableError

    tries: dict[tuple[int | None, str], int] = {}

    def flaky(request: LLMRequest):  # the first try of every rerun fails
        if request.call_index == 0:
            key = (request.seed, request.system)
            tries[key] = tries.get(key, 0) + 1
            if tries[key] == 1:
                raise ProviderUnavailableError("the server cut its reply", provider="mock", status=None, attempts=1)
        return refund_model(request)

    agent = planted_fact_agent(provider=mock(respond=flaky))
    report = await localize(planted_run, rerun=agent, samples=3, sources=["vip-override"], retries=1)
    assert report.failed == 0 and report.confirmed == ["vip-override"]
    assert all(outcome.attempts == 2 for outcome in report.suspects[0].outcomes)
    never = planted_fact_agent(provider=mock(respond=lambda r: (_ for _ in ()).throw(
        ProviderUnavailableError("down", provider="mock", status=None, attempts=1))))
    down = await localize(planted_run, rerun=never, samples=2, sources=["vip-override"], retries=1)
    assert down.confirmed == [] and down.suspects[0].verdict == "undecided"
    assert down.suspects[0].outcomes[0].attempts == 2 and "ProviderUnavailableError x" in down.summary()


async def test_reruns_of_different_suspects_run_concurrently(planted_run):
    state = {"in_flight": 0, "most": 0}

    async def slow(request: LLMRequest):
        state["in_flight"] += 1
        state["most"] = max(state["most"], state["in_flight"])
        await asyncio.sleep(0.001)
        state["in_flight"] -= 1
        return refund_model(request)

    agent = planted_fact_agent(provider=mock(respond=slow))
    await localize(planted_run, rerun=agent, samples=2, top=3)
    assert state["most"] > 2


async def test_a_failing_rerun_is_reported_not_raised(planted_run):
    def broken(request: LLMRequest):
        if "VIP override" not in request.system:
            raise RuntimeError("provider down")
        return refund_model(request)

    agent = planted_fact_agent(provider=mock(respond=broken))
    report = await localize(planted_run, rerun=agent, samples=2, sources=["vip-override"])
    only = report.suspects[0]
    assert (only.failed, only.flips, only.samples, only.verdict) == (2, 0, 0, "undecided")
    assert only.reason == "could not be judged: every rerun failed (RuntimeError x2)"
    assert report.unjudged == ["vip-override"]
    assert report.reruns == 4  # an arm whose every rerun failed is not looked at again


async def test_a_run_whose_first_call_failed_is_refused_by_its_status_not_as_one_that_made_no_call():
    """Its provider was called and failed: "made no LLM call" would send the analyst looking for a missing call."""
    def down(request: LLMRequest):
        raise RuntimeError("provider down")

    agent = Agent(provider=mock(respond=down), system="Be brief.")
    with pytest.raises(RuntimeError):
        await agent.run("hello")
    with pytest.raises(NothingToLocalizeError) as caught:
        await localize(agent.last_run, rerun=agent)
    assert caught.value.code == "ERR_NOTHING_TO_LOCALIZE" and caught.value.reason == "no_answer"
    assert "its status is failed" in caught.value.message and "no LLM call" not in caught.value.message


async def test_a_finished_run_without_an_answer_is_refused_by_what_its_last_call_did() -> None:
    """An imported run can finish on a call that asked for a tool: "Localize a finished run" would contradict it."""
    run = Agent(provider=mock(reply="Fine.")).run_sync("hello")
    recording = run.recording.model_copy(update={"answer": None})
    with pytest.raises(NothingToLocalizeError) as caught:
        await localize(recording, rerun=lambda exclude: None)
    assert caught.value.reason == "no_answer" and "finished without an answer" in caught.value.message
    assert "Localize a finished run" not in caught.value.message


async def test_localize_refuses_bad_settings_before_any_rerun(planted_run):
    provider_calls = {"n": 0}

    def counting(request: LLMRequest):
        provider_calls["n"] += 1
        return refund_model(request)

    agent = planted_fact_agent(provider=mock(respond=counting))
    bad = [{"rerun": "agent"}, {"rerun": agent, "samples": 0}, {"rerun": agent, "top": -1},
           {"rerun": agent, "comparator": "strict"}, {"rerun": lambda exclude: "not a runner"},
           {"rerun": agent, "sources": ["no-such-source"]}, {"rerun": agent, "sources": ["user-message"]},
           {"rerun": agent, "alpha": 0}, {"rerun": agent, "alpha": 0.9}, {"rerun": agent, "alpha": "5%"},
           {"rerun": agent, "budget": 5}, {"rerun": agent, "budget": 2.5}, {"rerun": agent, "retries": -1}]
    for settings in bad:
        with pytest.raises((ExplainConfigError, UnknownSourceError)):
            await localize(planted_run, **settings)
    assert provider_calls["n"] == 0


async def test_a_custom_comparator_decides_what_a_flip_is(agent, planted_run):
    report = await localize(planted_run, rerun=agent, samples=2, top=2,
                            comparator=lambda original, rerun: original.split(":")[0] != rerun.split(":")[0])
    assert report.verdict("vip-override") == "confirmed"
    never = await localize(planted_run, rerun=agent, samples=2, top=1, comparator=lambda a, b: False)
    assert never.confirmed == []


def test_text_difference_ignores_case_and_punctuation():
    compare = TextDifference(threshold=0.2)
    assert not compare("APPROVED: yes.", "approved yes")
    assert compare(APPROVED, DECLINED)
    assert TextDifference.difference("a b c d", "a b c d") == 0.0
    with pytest.raises(ExplainConfigError):
        TextDifference(threshold=3)


async def test_rerun_without_reports_what_changed(agent, planted_run):
    report = await rerun_without(planted_run, ignore=["vip-override"], rerun=agent)
    assert report.changed and report.after == DECLINED and report.before == APPROVED
    assert report.gone == ["fact 'vip-override'"] and report.appeared == []
    assert "the outcome changed" in str(report)
    assert report.run.recording.answer == DECLINED
    same = await rerun_without(planted_run, ignore="customer", rerun=agent)
    assert not same.changed and same.gone == ["fact 'customer'"] and same.verdict is None
    assert "samples=3 tests it" in str(same)


async def test_rerun_without_over_several_samples_is_tested_like_a_suspect(agent, planted_run):
    report = await rerun_without(planted_run, ignore=["vip-override"], rerun=agent, samples=3)
    assert report.verdict == "confirmed" and report.changed and report.after == DECLINED
    assert (report.trial.flips, report.trial.samples, report.trial.noise_samples) == (3, 3, 3)
    assert report.summary().startswith("Rerun without 'vip-override': CONFIRMED: removing them flipped the outcome")
    same = await rerun_without(planted_run, ignore=["customer"], rerun=agent, samples=3)
    assert same.verdict == "not_confirmed" and same.trial.reruns == 3


async def test_rerun_without_refuses_an_unknown_source_by_name(agent, planted_run):
    with pytest.raises(UnknownSourceError) as caught:
        await rerun_without(planted_run, ignore=["social-sentiment"], rerun=agent)
    assert caught.value.code == "ERR_UNKNOWN_SOURCE" and caught.value.unknown == 1
    assert "social-sentiment" not in caught.value.message
    assert "vip-override" in caught.value.known and "lookup_order" in caught.value.known
    with pytest.raises(UnknownSourceError):
        await rerun_without(planted_run, ignore=["user-message"], rerun=agent)
    with pytest.raises(ExplainConfigError):
        await rerun_without(planted_run, ignore=[3], rerun=agent)


async def test_without_removes_a_tool_by_name_and_leaves_the_original_alone(agent):
    slimmer = agent.without(["lookup_order", "customer"])
    assert [t.name for t in slimmer.tools] == []
    run = await slimmer.run(REFUND_REQUEST)
    sources = {p.source_id for p in run.recording.context_pieces}
    assert "customer" not in sources and "lookup_order" not in sources
    assert all(x.tools == [] for x in run.recording.exchanges)
    assert [t.name for t in agent.tools] == ["lookup_order"]
    original = await agent.run(REFUND_REQUEST)
    assert "customer" in {p.source_id for p in original.recording.context_pieces}
    no_prompt = agent.without("system-prompt")
    assert no_prompt.system == "" and no_prompt.model == agent.model and no_prompt.name == agent.name


async def test_without_drops_a_removed_fact_from_the_instructions_citing_it():
    seen: list[str] = []

    def respond(request: LLMRequest):
        seen.append(request.system)
        return "ok"

    agent = Agent(provider=mock(respond=respond), context=[
        define_fact(id="plan", data="PLAN-GOLD"),
        define_instruction(id="rules", template="Serve the customer on {fact:plan} terms."),
    ])
    await agent.without(["plan"]).run("hi")
    assert "PLAN-GOLD" not in seen[-1] and "Serve the customer on  terms." in seen[-1]


async def test_without_refuses_unknown_ids():
    agent = planted_fact_agent()
    with pytest.raises(UnknownSourceError) as caught:
        agent.without(["nope", "vip-override"])
    assert caught.value.unknown == 1 and caught.value.function == "Agent.without"
    with pytest.raises(ExplainConfigError):
        agent.without([1, 2])


async def test_a_redacted_input_must_be_given_again_and_the_policy_carries_over():
    from footprint_lab.redact.policy import Redaction

    agent = planted_fact_agent()
    guarded = Agent(provider=agent.provider, system=agent.system, tools=agent.tools,
                    context=[d for d, _, _ in agent._context.entries], redact=Redaction(builtins=["email"]))
    message = "Please refund order A-1001 for dana@example.com."
    run = await guarded.run(message)
    assert "[redacted:email]" in run.recording.input["message"]
    with pytest.raises(ExplainConfigError) as caught:
        await localize(run, rerun=guarded)
    assert caught.value.setting == "input" and "dana@example.com" not in caught.value.message
    report = await rerun_without(run, ["vip-override"], rerun=guarded, input=message)
    assert report.changed and report.run.recording.redaction is not None
    assert "dana@example.com" not in report.run.recording.model_dump_json()


async def test_a_follow_up_is_rerun_within_the_conversation_it_continued():
    def polite(request: LLMRequest):
        if request.messages[-1].get("content") == "Hello, I have an order question.":
            return "Hello! Which order?"
        return refund_model(request)

    agent = planted_fact_agent(provider=mock(respond=polite))
    await agent.run("Hello, I have an order question.")
    before = agent.checkpoint()
    run = await agent.follow_up(REFUND_REQUEST)
    with pytest.raises(ExplainConfigError) as caught:
        await rerun_without(run, ["vip-override"], rerun=agent)
    assert caught.value.setting == "continue_from"
    report = await rerun_without(run, ["vip-override"], rerun=agent, continue_from=before)
    assert report.changed
    rerun_messages = report.run.recording.messages
    assert rerun_messages[0]["content"] == "Hello, I have an order question."
    located = await localize(run, rerun=agent, continue_from=before, samples=2, top=1)
    assert located.confirmed == ["vip-override"]


async def test_localize_reruns_a_composition_through_a_factory():
    from footprint_lab import Conditional

    def flow(exclude=()):
        return Conditional([("refunds", lambda text: "refund" in text, planted_fact_agent().without(exclude))],
                           otherwise=("chat", Agent(provider=mock(reply="Hello!"))))

    run = await flow().run(REFUND_REQUEST)
    assert run.suspects().iloc[0].source_id == "vip-override"
    report = await localize(run, rerun=flow, samples=2, top=3)
    assert report.confirmed == ["vip-override"] and report.baseline_stable


async def test_reruns_read_memory_but_never_write_to_it():
    from footprint_lab import Agent
    from footprint_lab.context import InMemoryStore, define_fact, define_memory
    from footprint_lab.explain import localize
    from footprint_lab.providers import mock

    store = InMemoryStore()
    agent = Agent(provider=mock(respond=lambda r: "APPROVED" if "VIP" in r.system else "DECLINED"),
                  context=[define_fact(id="vip", data="The customer is VIP."),
                           define_memory(id="history", store=store)])
    identity = {"tenant": "acme", "principal": "ana"}
    run = await agent.run("Refund please", identity=identity)
    from footprint_lab.core.identity import coerce_identity

    namespace = coerce_identity(identity, "test").namespace()
    before = list(store.recall(namespace, limit=1000))
    assert len(before) == 2  # the original run wrote its turn back
    report = await localize(run, rerun=agent, samples=2)
    assert any(s.source_id == "vip" and s.verdict == "confirmed" for s in report.suspects)
    assert list(store.recall(namespace, limit=1000)) == before


async def test_an_answer_the_reruns_never_reproduce_says_a_verdict_short_of_confirmed_clears_nothing() -> None:
    """The run shows an answer the model gives only now and then: every unchanged rerun gives another, the same one.
    Nothing can be confirmed, and the report says why, instead of blaming the answer's wording."""
    def seldom(request: LLMRequest):
        return APPROVED if request.seed is None else DECLINED  # the recorded run, never a rerun

    agent = planted_fact_agent(provider=mock(respond=seldom))
    run = await agent.run(REFUND_REQUEST)
    assert run.answer == APPROVED
    report = await localize(run, rerun=agent)
    assert report.confirmed == [] and not report.baseline_stable
    noted = [note for note in report.notes if "the same one each time" in note]
    assert len(noted) == 1 and "does not clear a piece" in noted[0]
    assert not any("free text differs" in note for note in report.notes) and noted[0] in str(report)
