"""Backtrack: every piece that reached an output, with a chain of custody the recording proves."""

from __future__ import annotations

import html

import pytest
from saved_kit import saved_run

from footprint_lab import Agent, Recording, Run
from footprint_lab.errors import ExplainConfigError, UnknownStepError
from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent
from footprint_lab.explain import backtrack, suspects
from footprint_lab.providers import mock
from footprint_lab.record import Recorder
from footprint_lab.record.build import build_recording


@pytest.fixture
def planted_run():
    """The planted-fact run, read from its saved recording (no agent runs for a pure explanation)."""
    return saved_run("planted_fact")


def synthetic(chain: int, *, decide: bool = False) -> Recording:
    """A recording of ``chain`` steps, each reading what the step before it wrote, with no LLM call."""
    rec = Recorder("run-synthetic")
    rec.begin("seed")
    rec.write(("value",), "set", 0)
    rec.end()
    for number in range(1, chain):
        rec.begin("work")
        value = rec.read(("value",))
        if decide and number == chain - 1:
            rec.decide("route", [("big", {"value": value}, value > 2)], "big" if value > 2 else "small")
        rec.write(("value",), "set", value + 1)
        rec.end()
    rec.begin("final")
    rec.write(("answer",), "set", str(rec.read(("value",))))
    rec.end()
    return build_recording(rec, runner={"kind": "test"}, status="finished", input={"message": "go"},
                           answer=str(chain - 1), ended_ns=rec.started_ns)


async def test_the_planted_fact_has_all_five_hops_each_proven(planted_run):
    bt = planted_run.backtrack()
    vip = bt.candidate("vip-override")
    assert vip is not None
    assert [hop.kind for hop in vip.hops] == ["ANSWER", "READ", "LANDED", "ALLOWED", "BORN"]
    assert vip.proven
    final_call = planted_run.recording.exchanges[-1].step_id
    assemble = vip.piece.landed_by
    assert vip.hops[0].step_id == bt.target and bt.target.startswith("final#")
    assert vip.hops[1].step_id == final_call
    assert vip.hops[2].step_id == assemble and assemble.startswith("assemble#")
    assert vip.hops[3].step_id == assemble
    assert "define_fact('vip-override')" in vip.hops[4].text
    text = str(bt)
    for kind in ("ANSWER", "READ", "LANDED", "ALLOWED", "BORN"):
        assert f"{kind:<8} " in text
    assert "fact 'vip-override'" in text
    assert "[not proven]" not in text


async def test_candidates_are_exactly_what_the_answering_call_was_sent(planted_run):
    recording = planted_run.recording
    bt = planted_run.backtrack()
    sent = [p.index for p in recording.call_pieces(recording.exchanges[-1])]
    assert [c.piece.index for c in bt.candidates] == sent  # the first call was sent the same sources: none twice
    first, answering = (exchange.step_id for exchange in recording.exchanges)
    assert bt.calls == [answering, first]  # the first asked for the tool whose result the answering call was sent
    assert "reached call-llm#6 and 1 earlier call(s) whose output it was sent" in bt.summary()
    assert {c.source_id for c in bt.candidates} >= {"system-prompt", "customer", "vip-override", "tone",
                                                     "user-message", "lookup_order"}


async def test_a_tool_result_traces_to_its_tool_call_and_the_llm_call_that_asked(planted_run):
    bt = planted_run.backtrack()
    result = next(c for c in bt.candidates if c.source_kind == "tool_result")
    kinds = [hop.kind for hop in result.hops]
    assert kinds == ["ANSWER", "READ", "LANDED", "ALLOWED", "BORN", "ASKED"]
    born, asked = result.hops[4], result.hops[5]
    assert born.step_id.startswith("tool#") and "lookup_order" in born.text
    first_call = planted_run.recording.exchanges[0].step_id
    assert asked.step_id == first_call
    assert 'lookup_order({"order_id": "A-1001"})' in asked.text
    assert result.proven


async def test_backtrack_from_an_earlier_llm_call(planted_run):
    first_call = planted_run.recording.exchanges[0].step_id
    bt = planted_run.backtrack(at=first_call)
    assert bt.target == first_call
    assert "replied" in bt.answer.text and "lookup_order" in bt.answer.text
    assert not any(c.source_kind == "tool_result" for c in bt.candidates)
    assert all(c.read_by == first_call for c in bt.candidates)


async def test_to_frame_has_one_row_per_hop(planted_run):
    bt = planted_run.backtrack()
    frame = bt.to_frame()
    assert list(frame.columns) == ["candidate", "source_kind", "source_id", "slot", "position", "read_by", "hop",
                                   "step_id", "proven", "evidence", "member", "member_name"]
    assert len(frame) == sum(len(c.hops) for c in bt.candidates)
    vip_rows = frame[frame.source_id == "vip-override"]
    assert list(vip_rows.hop) == ["ANSWER", "READ", "LANDED", "ALLOWED", "BORN"]
    assert vip_rows.proven.all()


async def test_an_unknown_step_is_refused_by_name_without_quoting_it(planted_run):
    for bad in ("call-llm#999", "no such step", 12345):
        with pytest.raises(UnknownStepError) as caught:
            planted_run.backtrack(at=bad)
        assert caught.value.code == "ERR_UNKNOWN_STEP"
        assert caught.value.steps == len(planted_run.recording.steps)
        assert "run.steps" in caught.value.message
        assert str(bad) not in caught.value.message


async def test_bad_limits_are_refused(planted_run):
    with pytest.raises(ExplainConfigError) as caught:
        planted_run.backtrack(max_depth=0)
    assert caught.value.setting == "max_depth"
    with pytest.raises(ExplainConfigError):
        backtrack("not a run")


async def test_a_hop_the_recording_cannot_prove_is_marked_and_explained(planted_run):
    edited = planted_run.recording.model_copy(deep=True)
    vip = next(p for p in edited.context_pieces if p.source_id == "vip-override" and p.verdict == "admitted"
               and p.iteration == edited.exchanges[-1].iteration)
    commit = next(c for c in edited.commits if c.step_id == vip.landed_by)
    commit.entries = [e for e in commit.entries if e.path != ["slots", "system"]]
    bt = backtrack(edited)
    landed = bt.candidate("vip-override").hops[2]
    assert not landed.proven
    assert "does not write the system slot" in landed.text
    assert "[not proven]" in str(bt)
    assert "could not be proven" in bt.summary()


async def test_a_value_from_outside_the_tracked_state_is_reported(planted_run):
    edited = planted_run.recording.model_copy(deep=True)
    final = edited.steps[-1].step_id
    for read in edited.reads:
        if read.step_id == final:
            read.writer = None
    bt = backtrack(edited)
    assert bt.candidates == []
    assert any("outside the tracked state" in note for note in bt.notes)
    assert any("no LLM call was reached" in note for note in bt.notes)


def test_the_slice_reports_the_depth_limit_it_hit():
    recording = synthetic(12)
    complete = backtrack(recording)
    assert complete.slice.complete and len(complete.slice.depths) == 13
    cut = backtrack(recording, max_depth=4)
    assert not cut.slice.complete
    assert any("stopped at depth 4" in note and "max_depth" in note for note in cut.notes)
    assert max(cut.slice.depths.values()) == 4
    small = backtrack(recording, max_steps=5)
    assert any("stopped at 5 steps" in note for note in small.notes)
    assert len(small.slice.depths) == 5


def test_a_decision_step_traces_to_the_writers_of_what_it_read():
    recording = synthetic(6, decide=True)
    decision = recording.decisions[0]
    bt = backtrack(recording, at=decision.step_id)
    assert bt.answer.text.endswith(f"decided 'route': chose {decision.chosen}")
    assert [d.step_id for d in bt.decisions] == [decision.step_id]
    edges = [(e.reader, e.writer) for e in bt.slice.edges]
    assert edges[0] == (decision.step_id, recording.steps[-3].step_id)
    assert recording.steps[0].step_id in bt.slice.depths


async def test_backtrack_never_changes_the_recording_and_works_after_a_json_round_trip(planted_run):
    recording = planted_run.recording
    before = recording.model_dump_json()
    text = str(planted_run.backtrack())
    planted_run.suspects()
    assert recording.model_dump_json() == before
    loaded = Run.from_recording(Recording.model_validate_json(before))
    assert str(loaded.backtrack()) == text


async def test_a_failed_run_walks_from_its_last_call():
    calls = []

    def respond(request):
        calls.append(request.call_index)
        if request.call_index == 0:
            return {"tool": "missing_tool", "args": {}}
        raise RuntimeError("provider down")

    agent = Agent(provider=mock(respond=respond), system="Be brief.")
    with pytest.raises(Exception, match=r"failed|provider down"):
        await agent.run("hello")
    bt = agent.last_run.backtrack()
    assert any("wrote no answer" in note for note in bt.notes)
    assert bt.target == agent.last_run.recording.exchanges[-1].step_id


async def test_html_escapes_everything_recorded():
    agent = Agent(provider=mock(reply="<script>alert(1)</script>"), system="<b>bold</b> prompt")
    run = await agent.run("<img src=x>")
    bundle = run.backtrack()._repr_mimebundle_()
    assert "<script>" not in bundle["text/html"] and "<img" not in bundle["text/html"]
    assert html.escape("<script>alert(1)</script>") in bundle["text/html"]
    assert "<script>alert(1)</script>" in bundle["text/plain"]


async def test_the_walk_follows_a_mounted_member_run_to_its_llm_call(compose):
    recording, member, mount = await compose(planted_fact_agent(), REFUND_REQUEST)
    bt = backtrack(recording)
    member_call = member.exchanges[-1].step_id
    assert member_call.startswith(f"{mount}/call-llm#")
    assert bt.calls == [e.step_id for e in reversed(member.exchanges)]  # the answering call, then the one before
    assert any(e.path[0] == "member" and e.reader == mount for e in bt.slice.edges)
    vip = bt.candidate("vip-override")
    assert vip.proven and vip.read_by == member_call and vip.depth == 3
    assert [d.step_id for d in bt.decisions] == [mount]
    frame = suspects(recording)
    assert frame.iloc[0].source_id == "vip-override"
    route = frame[frame.source_kind == "decision"].iloc[0]
    assert route.source_id == mount and route.score == 0
    assert route["rank"] > frame[frame.content_score > 0]["rank"].max()


async def test_a_notebook_display_of_a_long_backtrack_is_capped(planted_run):
    bt = planted_run.backtrack()
    short = bt.render(limit=2)
    assert short.count("\n  ANSWER ") == 2
    assert f"and {len(bt.candidates) - 2} more candidates" in short
    assert bt.render() == str(bt) and "more candidates" not in str(bt)


async def test_a_routing_decision_is_walked_back_to_what_it_read_not_to_the_branch_it_chose(compose):
    recording, member, mount = await compose(planted_fact_agent(), REFUND_REQUEST)
    bt = backtrack(recording, at=mount)
    assert bt.answer.text == f"{mount} decided 'route': chose member"
    seed = recording.steps[0].step_id
    assert [(e.reader, e.path, e.writer) for e in bt.slice.edges] == [(mount, ("input", "message"), seed)]
    assert bt.candidates == [] and bt.calls == []
    assert any("before member 'refunds' ran" in note for note in bt.notes)
    assert "no LLM call was reached" in bt.summary()
    # From the answer, the same mount step does lead on into the member that answered.
    assert backtrack(recording).calls == [e.step_id for e in reversed(member.exchanges)]


async def test_a_loop_decision_taken_after_its_pass_is_walked_into_that_pass():
    from footprint_lab import Loop

    loop = Loop(Agent(provider=mock(replies=["draft", "better", "done"]), name="writer"), times=3,
                until=lambda answer: answer == "done")
    recording = (await loop.run("write")).recording
    second = recording.decisions[1]
    bt = backtrack(recording, at=second.step_id)
    assert bt.output == "continue"
    calls = [child.exchanges[-1].step_id for child in recording.children[:2]]
    assert sorted(bt.calls) == sorted(calls)
    assert not any("before member" in note for note in bt.notes)
    assert {c.read_by for c in bt.candidates} == set(calls)
    cut = backtrack(recording, at=second.step_id, max_depth=1)
    assert any("stopped at depth 1" in note for note in cut.notes)
    assert len(cut.calls) < len(bt.calls)


async def test_a_decision_whose_order_against_its_member_is_not_recorded_says_so(compose):
    recording, member, mount = await compose(planted_fact_agent(), REFUND_REQUEST)
    edited = recording.model_copy(deep=True)
    edited.events = [e for e in edited.events if e.type != "decision"]
    bt = backtrack(edited, at=mount)
    assert any("does not order" in note and "member 'refunds'" in note for note in bt.notes)
    assert "What the walk could not follow or prove:" in str(bt)
    assert bt.calls == [e.step_id for e in reversed(member.exchanges)]


async def test_the_text_of_a_huge_backtrack_is_summarised_and_render_gives_every_candidate():
    from footprint_lab import define_tool

    noop = define_tool(name="noop", description="Does nothing.", input_schema={"type": "object", "properties": {}},
                       fn=lambda: "ok")
    rounds = 150
    agent = Agent(provider=mock(replies=[{"tool": "noop", "args": {}}] * rounds + ["done"]), tools=[noop],
                  max_iterations=rounds + 1)
    bt = (await agent.run("go")).backtrack()
    assert len(bt.candidates) > 200
    text, full = str(bt), bt.render()
    assert text.count("\n  ANSWER ") == 200 and full.count("\n  ANSWER ") == len(bt.candidates)
    assert f"and {len(bt.candidates) - 200} more candidates: bt.render() or bt.to_frame()" in text
    assert text.splitlines()[0] == full.splitlines()[0] == bt.summary()


@pytest.mark.parametrize("batch", [2, 3])
async def test_every_tool_call_of_one_reply_traces_to_the_call_that_asked_for_it(batch):
    from footprint_lab import define_tool

    def respond(request):
        if any(m.get("role") == "tool" for m in request.messages):
            return "All looked up."
        return [{"tool": "order", "args": {"id": f"A-{n}"}} for n in range(batch)]

    order = define_tool(name="order", description="Look up an order.", fn=lambda id: f"order {id} shipped")
    run = await Agent(provider=mock(respond=respond), system="Look orders up.", tools=[order]).run("Look them up.")
    asking = run.recording.exchanges[0].step_id
    results = [c for c in run.backtrack().candidates if c.source_kind == "tool_result"]
    assert len(results) == batch
    for result in results:
        asked = result.hops[-1]
        assert (asked.kind, asked.step_id, asked.proven) == ("ASKED", asking, True)


async def test_a_tool_result_from_an_earlier_turn_ends_its_chain_where_it_was_carried_in():
    from footprint_lab import Chat, define_tool

    def by(request):
        last = list(request.messages)[-1]
        if last["role"] == "user" and "A-1" in last["content"]:
            return {"tool": "lookup", "args": {}}
        return "It is in Lisbon." if last["role"] == "tool" else "Still in Lisbon."

    tool = define_tool(name="lookup", description="Look up the order.", fn=lambda: "The parcel is in Lisbon.")
    chat = Chat(Agent(provider=mock(respond=by), tools=[tool], system="Support."))
    first = await chat.send("Where is A-1?")
    later = await chat.send("And now?")
    found = later.backtrack()
    assert "could not be proven" not in str(found)
    carried = next(c for c in found.candidates if c.source_kind == "tool_result")
    hops = [hop.kind for hop in carried.hops]
    assert hops[-1] == "BORN" and "ASKED" not in hops
    assert carried.hops[-1].proven and f"carried in from run {first.run_id}" in carried.hops[-1].text
    # in the turn that made it, the same result still traces to the call that asked for it
    own = next(c for c in first.backtrack().candidates if c.source_kind == "tool_result")
    assert own.hops[-1].kind == "ASKED" and own.hops[-1].proven


async def test_a_walk_cut_by_max_steps_counts_each_step_it_did_not_follow_once():
    """Each earlier call is named by a model turn and by the tool result it asked for: it was counted twice."""
    from footprint_lab import define_tool

    noop = define_tool(name="noop", description="Does nothing.", input_schema={"type": "object", "properties": {}},
                       fn=lambda: "ok")
    agent = Agent(provider=mock(respond=lambda request: {"tool": "noop", "args": {}} if request.call_index < 60
                                else "done"), tools=[noop], max_iterations=61)
    recording = (await agent.run("go")).recording
    cut = backtrack(recording, max_steps=20)
    missed = len(recording.exchanges) - len(cut.calls)
    assert missed > 0 and any(f"stopped at 20 steps: {missed} more were not followed" in note for note in cut.notes)
