"""Proof by ablation: localize, rerun_without and agent.without."""

from __future__ import annotations

import asyncio

import pytest

from footprint_lab import Agent
from footprint_lab.context import define_fact, define_instruction
from footprint_lab.errors import ExplainConfigError, NothingToLocalizeError, UnknownSourceError
from footprint_lab.explain import TextDifference, localize, rerun_without
from footprint_lab.explain.ablation import judge
from footprint_lab.lab.scenarios import APPROVED, DECLINED, REFUND_REQUEST, planted_fact_agent, refund_model
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
    assert "CAUSAL: removing 'vip-override' flipped the outcome in 3/3 reruns" in str(report)
    assert "NOT CONFIRMED: removing 'customer' flipped the outcome in 0/3 reruns" in str(report)
    assert any(name == "user-message" for name, _ in report.untested)
    frame = report.to_frame()
    assert list(frame.columns) == ["rank", "source_id", "source_kind", "verdict", "flips", "samples", "failed",
                                   "score", "reason", "member", "member_name"]
    assert frame.iloc[0].verdict == "confirmed"


async def test_localize_with_a_factory_called_with_exclude_and_seed(planted_run):
    calls: list[tuple[tuple[str, ...], int]] = []

    def factory(*, exclude, seed):
        calls.append((tuple(exclude), seed))
        return planted_fact_agent().without(exclude)

    report = await localize(planted_run, rerun=factory, samples=2, top=2)
    assert report.verdict("vip-override") == "confirmed"
    assert sorted(calls) == sorted([((), 0), ((), 1), (("vip-override",), 0), (("vip-override",), 1),
                                    ((report.suspects[1].source_id,), 0), ((report.suspects[1].source_id,), 1)])


async def test_reruns_are_seeded_like_the_baseline(planted_run):
    seeds: list[int | None] = []

    def respond(request: LLMRequest):
        seeds.append(request.seed)
        return refund_model(request)

    agent = planted_fact_agent(provider=mock(respond=respond))
    await localize(planted_run, rerun=agent, samples=3, top=1)
    assert sorted(set(seeds)) == [0, 1, 2]


async def test_an_unstable_baseline_makes_every_verdict_inconclusive(planted_run):
    runs = {"count": 0}

    def moody(request: LLMRequest):
        if request.tools and not any(m.get("role") == "tool" for m in request.messages):
            runs["count"] += 1
            return {"tool": "lookup_order", "args": {"order_id": "A-1001"}}
        return APPROVED if runs["count"] % 2 else DECLINED

    agent = planted_fact_agent(provider=mock(respond=moody))
    report = await localize(planted_run, rerun=agent, samples=3, top=2, concurrency=1)
    assert not report.baseline_stable
    assert {s.verdict for s in report.suspects} == {"inconclusive"}
    assert "UNSTABLE" in report.summary()


async def test_a_minority_of_flips_is_inconclusive(planted_run):
    def seed_sensitive(request: LLMRequest):
        reply = refund_model(request)
        if reply == DECLINED and request.seed != 0:
            return APPROVED  # only the seed-0 rerun notices the override is gone
        return reply

    agent = planted_fact_agent(provider=mock(respond=seed_sensitive))
    report = await localize(planted_run, rerun=agent, samples=3, sources=["vip-override"])
    only = report.suspects[0]
    assert (only.flips, only.verdict) == (1, "inconclusive")


@pytest.mark.parametrize(
    ("flips", "samples", "failed", "stable", "verdict"),
    [
        (3, 3, 0, True, "confirmed"), (2, 3, 0, True, "confirmed"), (2, 2, 0, True, "confirmed"),
        (3, 5, 0, True, "confirmed"),  # the smallest majority of five
        (2, 4, 0, True, "inconclusive"),  # exactly half is no majority
        (1, 3, 0, True, "inconclusive"), (1, 2, 0, True, "inconclusive"),
        (1, 1, 0, True, "not_confirmed"),  # one rerun, even flipped, cannot confirm
        (0, 3, 0, True, "not_confirmed"), (0, 1, 0, True, "not_confirmed"),
        (2, 3, 1, True, "confirmed"),  # 2 of 3 asked flipped; the failure does not matter
        (2, 5, 3, True, "inconclusive"),  # 2 of the 2 that finished, but 2 of 5 asked: failures never confirm
        (1, 3, 2, True, "inconclusive"), (0, 3, 3, True, "not_confirmed"),
        (3, 3, 0, False, "inconclusive"), (0, 3, 0, False, "inconclusive"), (1, 1, 0, False, "inconclusive"),
    ],
)
def test_verdicts_follow_the_rules(flips, samples, failed, stable, verdict):
    assert judge(flips, samples, failed, stable)[0] == verdict


async def test_a_single_sample_never_confirms_and_two_flips_of_two_do(agent, planted_run):
    one = await localize(planted_run, rerun=agent, samples=1, sources=["vip-override"])
    assert (one.suspects[0].flips, one.suspects[0].samples, one.suspects[0].verdict) == (1, 1, "not_confirmed")
    assert "single rerun" in one.suspects[0].reason
    two = await localize(planted_run, rerun=agent, samples=2, sources=["vip-override"])
    assert (two.suspects[0].flips, two.suspects[0].verdict) == (2, "confirmed")
    assert "CAUSAL: removing 'vip-override' flipped the outcome in 2/2 reruns" in str(two)


async def test_half_the_reruns_flipping_is_inconclusive(planted_run):
    def even_seeds_notice(request: LLMRequest):
        reply = refund_model(request)
        return APPROVED if reply == DECLINED and request.seed % 2 else reply

    agent = planted_fact_agent(provider=mock(respond=even_seeds_notice))
    report = await localize(planted_run, rerun=agent, samples=4, sources=["vip-override"])
    only = report.suspects[0]
    assert report.baseline_stable and (only.flips, only.samples, only.verdict) == (2, 4, "inconclusive")
    assert "INCONCLUSIVE: removing 'vip-override' flipped the outcome in 2/4 reruns" in str(report)


async def test_a_failed_baseline_rerun_makes_the_baseline_unstable(planted_run):
    def first_baseline_fails(request: LLMRequest):
        if request.seed == 0 and "VIP override" in request.system and request.call_index == 0:
            raise RuntimeError("provider down")
        return refund_model(request)

    agent = planted_fact_agent(provider=mock(respond=first_baseline_fails))
    report = await localize(planted_run, rerun=agent, samples=3, sources=["customer"])
    assert not report.baseline_stable and report.baseline[0].error == "RuntimeError"
    assert report.suspects[0].verdict == "inconclusive"


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
    assert (only.failed, only.flips, only.verdict) == (2, 0, "not_confirmed")
    assert "failed" in only.reason


async def test_localize_refuses_a_run_with_no_llm_call():
    def down(request: LLMRequest):
        raise RuntimeError("provider down")

    agent = Agent(provider=mock(respond=down), system="Be brief.")
    with pytest.raises(RuntimeError):
        await agent.run("hello")
    with pytest.raises(NothingToLocalizeError) as caught:
        await localize(agent.last_run, rerun=agent)
    assert caught.value.code == "ERR_NOTHING_TO_LOCALIZE" and caught.value.reason == "no_llm_call"
    assert "made no LLM call" in caught.value.message


async def test_localize_refuses_bad_settings_before_any_rerun(planted_run):
    provider_calls = {"n": 0}

    def counting(request: LLMRequest):
        provider_calls["n"] += 1
        return refund_model(request)

    agent = planted_fact_agent(provider=mock(respond=counting))
    bad = [{"rerun": "agent"}, {"rerun": agent, "samples": 0}, {"rerun": agent, "top": -1},
           {"rerun": agent, "comparator": "strict"}, {"rerun": lambda exclude: "not a runner"},
           {"rerun": agent, "sources": ["no-such-source"]}, {"rerun": agent, "sources": ["user-message"]}]
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
    assert not same.changed and same.gone == ["fact 'customer'"]


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
    from footprint_lab.engine.redaction import Redaction

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
