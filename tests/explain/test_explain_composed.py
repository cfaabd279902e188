"""Issue 14's acceptance: a composed run is walked back across members, ranked, and proven on the whole composition."""

from __future__ import annotations

import pytest

from footprint_lab import Agent, Conditional, Graph, Loop, Sequence, Workflow, step
from footprint_lab.context import define_fact
from footprint_lab.errors import UnknownSourceError
from footprint_lab.examples.pipelines import refund_pipeline, review_panel
from footprint_lab.examples.scenarios import APPROVED, DECLINED, REFUND_REQUEST, planted_fact_agent
from footprint_lab.explain import find_dropped_context, localize, rerun_without
from footprint_lab.providers import mock

BENIGN = ("customer", "triage/customer", "refunds/customer", "tone", "form", "lookup_order",
          "triage/system-prompt", "refunds/system-prompt")


async def test_a_fact_planted_in_the_first_member_is_followed_upstream_ranked_first_and_confirmed():
    pipeline = refund_pipeline(planted_in="triage")
    run = await pipeline.run(REFUND_REQUEST)
    assert run.answer == APPROVED

    planted = run.backtrack().candidate("vip-status")
    assert planted.member.path == "triage" and planted.member.name == "triage"
    assert [hop.kind for hop in planted.hops] == ["ANSWER", "CARRIED", "READ", "LANDED", "ALLOWED", "BORN"]
    assert planted.proven
    carried = planted.hops[1].text
    assert "the answer of member 'triage'" in carried and "to member 'refunds'" in carried

    ranked = run.suspects()
    top = ranked.iloc[0]
    assert (top.source_id, top.member, top.member_name) == ("vip-status", "triage", "triage")
    assert "answer of member 'triage'" in top.carried_by
    carrier = ranked[(ranked.member == "refunds") & (ranked.source_kind == "user")].iloc[0]
    assert carrier.score == 0 and "carrier" in carrier.evidence

    report = await localize(run, rerun=pipeline, samples=3, top=6)
    verdicts = {s.source_id: s for s in report.suspects}
    assert (verdicts["vip-status"].verdict, verdicts["vip-status"].flips) == ("confirmed", 3)
    assert (verdicts["vip-status"].member, verdicts["vip-status"].member_name) == ("triage", "triage")
    assert report.confirmed == ["vip-status"] and report.baseline_stable
    assert all(s.verdict != "confirmed" for name, s in verdicts.items() if name in BENIGN)
    assert "removing 'vip-status' in member 'triage' flipped the outcome in 3/3 reruns" in str(report)


async def test_the_same_fact_planted_in_the_second_member_is_confirmed_there():
    pipeline = refund_pipeline(planted_in="refunds")
    run = await pipeline.run(REFUND_REQUEST)
    assert run.answer == APPROVED
    assert run.suspects().iloc[0][["source_id", "member"]].tolist() == ["vip-override", "refunds"]
    report = await localize(run, rerun=pipeline, samples=3, top=6)
    assert report.confirmed == ["vip-override"]
    assert next(s for s in report.suspects if s.source_id == "vip-override").member == "refunds"


async def test_a_parallel_branch_that_sways_the_merge_is_confirmed():
    panel = review_panel()
    run = await panel.run(REFUND_REQUEST)
    assert run.answer == APPROVED
    planted = run.backtrack().candidate("vip-status")
    assert planted.member.path == "account"
    assert "the answer of member 'account'" in planted.carried_by and "to member 'merge'" in planted.carried_by
    report = await localize(run, rerun=panel, samples=3, top=6)
    assert report.confirmed == ["vip-status"]
    assert next(s for s in report.suspects if s.source_id == "vip-status").member == "account"


async def test_an_id_two_members_declare_is_qualified_by_member_and_removed_there_only():
    pipeline = refund_pipeline(planted_in="triage")
    run = await pipeline.run(REFUND_REQUEST)
    ids = set(run.suspects().removal_id.dropna())
    assert {"triage/customer", "refunds/customer", "triage/system-prompt", "refunds/system-prompt"} <= ids
    assert "customer" not in ids
    rebuilt = pipeline.without(["triage/customer"])
    triage, refunds = (runner for _, runner in rebuilt.members)
    assert "customer" not in triage.source_ids() and "customer" in refunds.source_ids()
    both = pipeline.without(["customer"])  # a bare id: every member that declares it
    assert all("customer" not in runner.source_ids() for _, runner in both.members)
    with pytest.raises(UnknownSourceError) as caught:
        pipeline.without(["billing/customer"])
    assert caught.value.unknown == 1 and "triage/customer" in caught.value.known
    report = await rerun_without(run, ["vip-status"], rerun=pipeline)
    assert report.changed and report.after == DECLINED
    assert "fact 'vip-status' of member 'triage'" in report.gone


async def test_every_composition_is_rebuilt_with_each_member_rebuilt_the_same_way():
    def agent(name: str) -> Agent:
        return Agent(provider=mock(respond=lambda r: "VIP" if "VIP" in r.system else "plain"),
                     context=[define_fact(id="vip", data="VIP")], name=name)

    shapes = [
        Sequence({"a": agent("a"), "b": agent("b")}),
        Conditional([("a", lambda m: True, agent("a"))], otherwise=("b", agent("b"))),
        Loop(Sequence({"a": agent("a")}), times=2),
        Workflow([step("a", agent("a")), step("b", agent("b"))]),
        Graph([step("a", agent("a")), step("b", agent("b"), needs="a")]),
    ]
    for shape in shapes:
        assert (await shape.run("go")).answer == "VIP"
        assert (await shape.without(["vip"], seed=1).run("go")).answer == "plain", type(shape).__name__
        assert type(shape.without([])) is type(shape)
    loop = shapes[2]
    assert "a/vip" in loop.source_ids()  # a Loop's passes share one body: no pass in the path
    assert (await loop.without(["a/vip"]).run("go")).answer == "plain"


async def test_a_dropped_piece_in_a_member_is_forced_back_through_the_composition():
    budgeted = planted_fact_agent(variant="budget")
    pipeline = Sequence({"triage": refund_pipeline().members[0][1], "refunds": budgeted})
    run = await pipeline.run(REFUND_REQUEST)
    dropped = await find_dropped_context(run, rerun=pipeline)
    policy = next(p for p in dropped if p.source_id == "refund-policy")
    assert (policy.member, policy.member_name) == ("refunds", "refunds")
    assert policy.status in ("confirmed", "not_confirmed") and policy.restoration.error is None
    assert "of member 'refunds'" in str(dropped)


async def test_a_fact_two_hand_offs_upstream_is_followed_through_both_and_confirmed():
    def says_what_it_read(request):
        return f"Relayed: {request.messages[-1]['content']}"

    relay = Agent(provider=mock(respond=says_what_it_read), system="Pass the summary on.", name="relay")
    pipeline = Sequence({"intake": refund_pipeline().members[0][1],
                         "desk": Sequence({"relay": relay, "refunds": planted_fact_agent().without(["vip-override"])})})
    run = await pipeline.run(REFUND_REQUEST)
    assert run.answer == APPROVED
    planted = run.backtrack().candidate("vip-status")
    kinds = [hop.kind for hop in planted.hops]
    assert kinds[:3] == ["ANSWER", "CARRIED", "CARRIED"] and planted.proven
    nearest, farthest = planted.carried
    assert nearest.downstream.path == "desk/refunds" and farthest.upstream.path == "intake"
    assert planted.carried_by.index("member 'intake'") < planted.carried_by.index("member 'desk/refunds'")
    assert run.suspects().iloc[0][["source_id", "member"]].tolist() == ["vip-status", "intake"]
    report = await localize(run, rerun=pipeline, samples=2, top=4)
    assert report.confirmed == ["vip-status"]


async def test_a_pattern_names_sources_the_way_its_rebuild_reads_them():
    from footprint_lab.flow import reflection

    def write(request):
        return "A formal draft." if "formal" in request.system else "A casual draft."

    writer = Agent(provider=mock(respond=write), context=[define_fact(id="style", data="Write formal prose.")],
                   name="writer")
    critic = Agent(provider=mock(reply="Fine."), name="critic")
    pattern = reflection(writer, critic, rounds=1)
    run = await pattern.run("Write a note.")
    named = set(run.suspects().removal_id.dropna())
    # The writer drafts and revises: its fact is named per place, and a Loop's pass is not part of the name.
    assert {"draft/style", "reflect/revise/style"} <= named
    assert named <= set(pattern.source_ids())
    rebuilt = pattern.without(["reflect/revise/style"])
    assert (await rebuilt.run("Write a note.")).answer == "A casual draft."
    report = await localize(run, rerun=pattern, sources=["reflect/revise/style", "draft/style"], samples=2)
    assert report.confirmed == ["reflect/revise/style"]
    # the member path says which pass it was; the id names the body every pass runs
    assert next(s for s in report.suspects if s.source_id == "reflect/revise/style").member == "reflect/pass-1/revise"
