"""Each composition's semantics: who gets which message, what the answer is, what is recorded."""

from __future__ import annotations

import asyncio
import json

import pytest

from footprint_lab import (
    Agent,
    Conditional,
    Graph,
    Loop,
    Parallel,
    Recording,
    Run,
    Sequence,
    ToolContext,
    Workflow,
    merge_with_llm,
    step,
    tool,
)
from footprint_lab.core.member_run import open_run_count
from footprint_lab.flow.checkpoint import FlowCheckpointError
from footprint_lab.providers import LLMRequest, mock


def echo(tag: str) -> Agent:
    """An agent that answers ``tag(<its message>)``, so every answer shows the path it took."""
    return Agent(provider=mock(respond=lambda r: f"{tag}({r.messages[-1]['content']})"), name=tag)


def failing(tag: str) -> Agent:
    def respond(_request: LLMRequest) -> str:
        raise RuntimeError("provider down")

    return Agent(provider=mock(respond=respond), name=tag)


def barrier_agents(*tags: str) -> list[Agent]:
    """Agents whose model call waits until every one of them has started: they only finish if run concurrently."""
    started: set[str] = set()
    everyone = asyncio.Event()

    def make(tag: str) -> Agent:
        async def respond(request: LLMRequest) -> str:
            started.add(tag)
            if len(started) == len(tags):
                everyone.set()
            await asyncio.wait_for(everyone.wait(), timeout=2)
            return f"{tag}({request.messages[-1]['content']})"

        return Agent(provider=mock(respond=respond), name=tag)

    return [make(tag) for tag in tags]


# -- Sequence ----------------------------------------------------------------------------
async def test_sequence_hands_each_answer_to_the_next_step() -> None:
    run = await Sequence({"classify": echo("a"), "review": echo("b")}).run("hi")
    assert run.status == "finished"
    assert run.answer == "b(a(hi))"
    assert [c.answer for c in run.recording.children] == ["a(hi)", "b(a(hi))"]


async def test_sequence_accepts_pairs_and_records_the_chain_of_reads() -> None:
    run = await Sequence([("first", echo("a")), ("second", echo("b"))]).run("hi")
    rec = run.recording
    assert [s.stage for s in rec.steps] == ["seed", "sequence-step", "sequence-step", "final"]
    second = rec.steps[2].step_id
    reads = {r.step_id: r for r in rec.reads}
    assert reads[second].path == ["outputs", "first"]
    assert reads[second].writer == rec.steps[1].step_id
    assert reads[rec.steps[3].step_id].writer == second


async def test_member_runs_are_children_with_step_ids_joined_under_the_mounting_step() -> None:
    run = await Sequence({"one": echo("a"), "two": echo("b")}).run("hi")
    rec = run.recording
    mounts = [s.step_id for s in rec.steps if s.stage == "sequence-step"]
    assert [c.path for c in rec.children] == mounts
    for child, mount in zip(rec.children, mounts, strict=True):
        assert child.run_id == rec.run_id
        assert child.steps and all(s.step_id.startswith(mount + "/") for s in child.steps)
        assert any(s.step_id == f"{mount}/call-llm#3" for s in child.steps)


# -- Parallel ----------------------------------------------------------------------------
async def test_parallel_runs_branches_concurrently_and_merges_by_name() -> None:
    legal, ethics = barrier_agents("legal", "ethics")
    seen: dict[str, str] = {}

    def merge(answers: dict[str, str]) -> str:
        seen.update(answers)
        return " & ".join(f"{k}={v}" for k, v in answers.items())

    run = await Parallel({"legal": legal, "ethics": ethics}, merge=merge).run("case")
    assert seen == {"legal": "legal(case)", "ethics": "ethics(case)"}
    assert run.answer == "legal=legal(case) & ethics=ethics(case)"
    stages = [s.stage for s in run.recording.steps]
    assert stages == ["seed", "parallel-branch", "parallel-branch", "merge", "final"]


async def test_parallel_fails_the_run_when_a_branch_fails() -> None:
    events: list = []
    with pytest.raises(FlowCheckpointError) as caught:  # the branch that answered is kept for resume_on_error
        await Parallel({"ok": echo("ok"), "bad": failing("bad")}, merge=lambda a: "x").run("q", on_event=events.append)
    assert isinstance(caught.value.cause, RuntimeError) and "provider down" in str(caught.value.cause)
    assert any(e.type == "run_end" and e.payload == {"status": "failed"} and e.step_id == "" for e in events)
    assert open_run_count() == 0


async def test_tolerant_parallel_merges_the_survivors_and_records_the_failure() -> None:
    run = await Parallel({"ok": echo("ok"), "bad": failing("bad")}, merge=lambda a: ",".join(a), tolerant=True).run("q")
    assert run.answer == "ok"
    rec = run.recording
    branch_steps = [s for s in rec.steps if s.stage == "parallel-branch"]
    assert [s.status for s in branch_steps] == ["ok", "error"]
    failure = next(c for c in rec.commits if c.step_id == branch_steps[1].step_id)
    assert failure.entries[0].path == ["failures", "bad"]
    assert failure.entries[0].value == {"type": "RuntimeError", "code": None}
    assert [c.status for c in rec.children] == ["finished", "failed"]


async def test_merge_with_llm_hands_every_answer_to_the_model_and_records_that_call() -> None:
    merger = mock(respond=lambda r: "merged")
    merge = merge_with_llm(provider=merger, model="m", prompt="Synthesize:")
    run = await Parallel({"a": echo("a"), "b": echo("b")}, merge=merge).run("q")
    assert run.answer == "merged"
    merge_child = run.recording.children[-1]
    assert merge_child.runner.kind == "llm_call"
    assert merge_child.path.startswith("merge#")
    sent = merge_child.messages[0]["content"]
    assert sent.startswith("Synthesize:") and "[a]\na(q)" in sent and "[b]\nb(q)" in sent


# -- Conditional -------------------------------------------------------------------------
async def test_conditional_runs_the_first_branch_whose_predicate_holds_and_records_why() -> None:
    router = Conditional(
        [("urgent", lambda m: "urgent" in m, echo("U")), ("billing", lambda m: "bill" in m, echo("B"))],
        otherwise=("normal", echo("N")),
    )
    run = await router.run("urgent bill")
    assert run.answer == "U(urgent bill)"
    decision = run.recording.decisions[0]
    assert decision.chosen == "urgent"
    assert [(e.rule, e.result) for e in decision.evidence] == [("urgent", True), ("billing", True), ("normal", False)]
    assert decision.evidence[0].reads == {"message": "urgent bill"}
    assert decision.step_id == run.recording.children[0].path


async def test_conditional_falls_to_otherwise_when_no_predicate_holds() -> None:
    router = Conditional([("urgent", lambda m: "urgent" in m, echo("U"))], otherwise=("normal", echo("N")))
    run = await router.run("hello")
    assert run.answer == "N(hello)"
    assert run.recording.decisions[0].chosen == "normal"


# -- Loop --------------------------------------------------------------------------------
async def test_loop_feeds_each_answer_back_and_stops_when_until_holds() -> None:
    run = await Loop(echo("x"), until=lambda a: a.count("x(") >= 3, times=10).run("s")
    assert run.answer == "x(x(x(s)))"
    assert run.stopped_early is None
    decisions = run.recording.decisions
    assert [d.chosen for d in decisions] == ["continue", "continue", "stop"]
    assert decisions[-1].evidence[0].rule == "until" and decisions[-1].evidence[0].result is True


async def test_loop_that_spends_its_budget_says_so() -> None:
    run = await Loop(echo("x"), until=lambda a: False, times=2).run("s")
    assert run.answer == "x(x(s))"
    assert run.stopped_early is not None and run.stopped_early["reason"] == "times"
    assert run.recording.stopped_early == run.stopped_early


async def test_loop_without_until_runs_exactly_its_budget() -> None:
    run = await Loop(echo("x"), times=3).run("s")
    assert run.answer == "x(x(x(s)))"
    assert run.stopped_early is None
    assert [s.iteration for s in run.recording.steps if s.stage == "loop-pass"] == [1, 2, 3]


# -- Workflow ----------------------------------------------------------------------------
async def test_workflow_maps_inputs_from_named_earlier_outputs() -> None:
    flow = Workflow([
        step("draft", echo("w")),
        step("critique", echo("c")),
        step("final", echo("f"), needs=["input", "draft", "critique"],
             map=lambda v: {"message": f"{v['input']}|{v['draft']}|{v['critique']}"}),
    ])
    run = await flow.run("topic")
    assert run.answer == "f(topic|w(topic)|c(w(topic)))"
    rec = run.recording
    final_step = rec.steps[3].step_id
    reads = [(r.path, r.writer) for r in rec.reads if r.step_id == final_step]
    assert reads == [
        (["input", "message"], rec.steps[0].step_id),
        (["outputs", "draft"], rec.steps[1].step_id),
        (["outputs", "critique"], rec.steps[2].step_id),
    ]


# -- Graph -------------------------------------------------------------------------------
async def test_graph_runs_ready_nodes_concurrently_and_joins_them() -> None:
    left, right = barrier_agents("left", "right")
    graph = Graph([
        step("left", left),
        step("right", right),
        step("join", echo("j"), needs=["left", "right"], map=lambda v: v["left"] + "+" + v["right"]),
    ])
    run = await graph.run("q")
    assert run.answer == "j(left(q)+right(q))"
    stages = [s.stage for s in run.recording.steps]
    assert stages == ["seed", "graph-node", "graph-node", "graph-node", "final"]


async def test_graph_node_waits_for_its_inputs() -> None:
    order: list[str] = []

    def tracked(tag: str) -> Agent:
        def respond(request: LLMRequest) -> str:
            order.append(tag)
            return f"{tag}({request.messages[-1]['content']})"

        return Agent(provider=mock(respond=respond))

    graph = Graph([step("late", tracked("late"), needs="early"), step("early", tracked("early"))])
    run = await graph.run("q")
    assert order == ["early", "late"]
    assert run.answer == "late(early(q))"


# -- every composition is a runner ---------------------------------------------------------
def test_run_sync_returns_the_same_kind_of_run() -> None:
    run = Sequence({"a": echo("a")}).run_sync("hi")
    assert isinstance(run, Run)
    assert str(run) == "a(hi)"


async def test_run_sync_works_inside_a_running_loop() -> None:
    run = Loop(echo("a"), times=1).run_sync({"message": "hi"})
    assert run.answer == "a(hi)"


async def test_composition_input_goes_through_the_run_input_door() -> None:
    from footprint_lab.errors import InvalidRunInputError

    with pytest.raises(InvalidRunInputError):
        await Sequence({"a": echo("a")}).run({"text": "hi"})


async def test_a_member_answer_the_next_member_cannot_take_is_refused_at_its_step() -> None:
    from footprint_lab.errors import InvalidRunInputError

    silent = Agent(provider=mock(reply="   "))
    downstream = mock(reply="never")
    with pytest.raises(InvalidRunInputError, match="Sequence step 'next'"):
        await Sequence({"silent": silent, "next": Agent(provider=downstream)}).run("hi")
    assert downstream.calls == 0


async def test_nested_compositions_three_deep_join_step_ids_and_deliver_events() -> None:
    seen: list = []

    @tool
    def whoami(ctx: ToolContext) -> str:
        """Reports who is asking."""
        seen.append(ctx)
        return "checked"

    inner = Agent(provider=mock(replies=[{"tool": "whoami", "args": {}}, "inner done"]), tools=[whoami], name="inner")
    tree = Sequence({
        "first": echo("a"),
        "fan": Parallel({"deep": Loop(inner, times=1), "side": echo("s")}, merge=lambda a: a["deep"]),
    })
    events: list = []
    run = await tree.run("go", identity={"principal": "ada"}, on_event=events.append)
    assert run.answer == "inner done"
    fan = run.recording.children[1]
    loop = fan.children[0]
    agent_run = loop.children[0]
    assert agent_run.path == f"{loop.path}/loop-pass#2" and loop.path.startswith(f"{fan.path}/parallel-branch#")
    assert any(s.step_id == f"{agent_run.path}/tool#4" for s in agent_run.steps)
    assert len(seen) == 1 and seen[0].identity.as_dict() == run.recording.identity == {"principal": "ada"}
    assert seen[0].run_id == run.run_id
    member_events = [e for e in events if e.step_id.startswith(agent_run.path)]
    assert {e.type for e in member_events} >= {"run_start", "tool_start", "llm_end", "run_end"}
    assert all(e.run_id == run.run_id for e in events)
    start = next(e for e in member_events if e.type == "run_start")
    assert start.step_id == agent_run.path and start.payload["name"] == "inner"


# -- the recording of a composed run ---------------------------------------------------------
async def test_a_composed_recording_round_trips_through_json_and_keeps_its_tree() -> None:
    router = Conditional([("yes", lambda m: "y" in m, echo("Y"))], otherwise=("no", echo("N")))
    run = await Sequence({"route": router, "finish": echo("F")}).run("y?")
    text = run.recording.model_dump_json()
    loaded = Recording.model_validate_json(text)
    assert loaded == run.recording
    assert Run.from_recording(loaded).tree() == run.tree()
    assert json.loads(text)["children"][0]["children"][0]["path"].endswith("/branch#2")


async def test_run_tree_lists_every_run_with_the_decision_on_its_edge() -> None:
    router = Conditional([("urgent", lambda m: "!" in m, echo("U"))], otherwise=("normal", echo("N")))
    run = await Sequence({"route": router, "finish": echo("F")}, name="desk").run("help!")
    tree = run.tree()
    assert [(n.kind, n.depth) for n in tree.nodes] == [("sequence", 0), ("conditional", 1), ("agent", 2), ("agent", 1)]
    root = tree.nodes[0]
    assert root.name == "desk" and root.status == "finished" and root.answer_preview == "F(U(help!))"
    leaves = [n for n in tree.nodes if n.kind == "agent"]
    assert root.tokens == sum(n.tokens for n in leaves) > 0
    chosen = next(e for e in tree.edges if e.rule == "route")
    assert chosen.chosen == "urgent" and chosen.child == tree.nodes[2].path
    assert len(tree.edges) == len(tree.nodes) - 1
    frame = tree.to_frame()
    assert list(frame["kind"]) == ["sequence", "conditional", "agent", "agent"]
    assert frame.loc[2, "chosen"] == "urgent"
    assert {"path", "parent", "status", "duration_ms", "tokens", "answer_preview", "rule"} <= set(frame.columns)


async def test_a_tolerant_parallel_whose_branches_all_fail_fails() -> None:
    with pytest.raises(RuntimeError, match="provider down"):
        await Parallel({"a": failing("a"), "b": failing("b")}, merge=lambda a: "x", tolerant=True).run("q")
    assert open_run_count() == 0


async def test_a_failing_graph_node_stops_its_dependents_and_fails_the_run() -> None:
    downstream = mock(reply="never")
    events: list = []
    graph = Graph([
        step("bad", failing("bad")),
        step("fine", echo("fine")),
        step("after", Agent(provider=downstream), needs=["bad", "fine"], map=lambda v: "x"),
    ])
    with pytest.raises(FlowCheckpointError) as caught:  # the node that finished is kept for resume_on_error
        await graph.run("q", on_event=events.append)
    assert isinstance(caught.value.cause, RuntimeError) and "provider down" in str(caught.value.cause)
    assert downstream.calls == 0
    ends = {e.step_id: e.payload["status"] for e in events if e.type == "step_end" and "/" not in e.step_id}
    assert sorted(ends.values()) == ["error", "ok", "ok"]  # seed, the failed node, the node that finished


async def test_a_members_own_run_never_runs() -> None:
    member = echo("m")

    async def forbidden(*args: object, **kwargs: object) -> Run:
        raise AssertionError("a member's run() was called")

    member.run = forbidden  # type: ignore[method-assign]
    run = await Sequence({"one": member, "two": Parallel({"x": member}, merge=lambda a: a["x"])}).run("hi")
    assert run.answer == "m(m(hi))"
