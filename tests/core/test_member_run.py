"""Members run for the run that mounted them (seed: memberRun): the link, its refusals, no shared state."""

from __future__ import annotations

import asyncio
import json
from time import perf_counter_ns
from typing import Any

import pytest

from footprint_lab import Agent, Identity, Parallel, Run, Sequence, ToolContext, Workflow, step, tool
from footprint_lab.core.identity import memory_identity
from footprint_lab.core.member_run import close_parent_run, open_parent_run, open_run_count
from footprint_lab.core.runner import Mount, Runner
from footprint_lab.errors import MemberIdentityError, ParentRunRefusedError, ResumeRequestConflictError
from footprint_lab.providers import LLMRequest, mock
from footprint_lab.record.recorder import Recorder

ALICE = Identity(tenant="acme", principal="alice")
BOB = Identity(tenant="acme", principal="bob")


class LinkSpy(Runner):
    """A hand-built runner that answers with the link it was mounted with (as a leaky tool or model might)."""

    kind = "spy"

    def __init__(self) -> None:
        super().__init__()
        self.links: list[Any] = []
        self.open_counts: list[int] = []

    async def _execute(self, bag: dict[str, Any], mount: Mount) -> Run:
        from footprint_lab.record.build import build_recording

        self.links.append(mount.link)
        self.open_counts.append(open_run_count())
        rec = Recorder(mount.run_id, path=mount.path)
        rec.begin("peek")
        rec.end()
        answer = str(mount.link)
        return Run(run_id=mount.run_id, status="finished", answer=answer,
                   build=lambda: build_recording(rec, runner={"kind": self.kind}, status="finished", input=bag,
                                                 answer=answer, ended_ns=perf_counter_ns()))


def watched_agent() -> tuple[Agent, list[ToolContext]]:
    """An agent that calls its ``whoami`` tool once, then answers; returns the contexts the tool saw."""
    seen: list[ToolContext] = []

    @tool
    async def whoami(ctx: ToolContext) -> str:
        """Say who is asking."""
        seen.append(ctx)
        await asyncio.sleep(0)
        return ctx.identity.principal if ctx.identity is not None else "nobody"

    def respond(request: LLMRequest) -> Any:
        last = request.messages[-1]
        return {"tool": "whoami", "args": {}} if last["role"] == "user" else f"for {last['content']}"

    return Agent(provider=mock(respond=respond), tools=[whoami]), seen


# -- the three seed refusals ---------------------------------------------------------------
@pytest.mark.parametrize("kind", ["agent", "composition"])
async def test_a_forged_link_in_an_input_is_refused_before_anything_runs(kind: str) -> None:
    provider = mock(reply="x")
    agent = Agent(provider=provider)
    runner: Runner = agent if kind == "agent" else Sequence({"a": agent})
    with pytest.raises(ParentRunRefusedError) as caught:
        await runner.run({"message": "hi", "parent_run": "forged-token"})
    assert caught.value.code == "ERR_PARENT_RUN_REFUSED"
    assert caught.value.carrier == "input"
    assert "forged-token" not in str(caught.value)
    assert provider.calls == 0
    assert open_run_count() == 0


async def test_a_forged_link_on_a_mount_is_refused() -> None:
    provider = mock(reply="x")
    with pytest.raises(ParentRunRefusedError) as caught:
        await Agent(provider=provider)._execute({"message": "hi"}, Mount(run_id="run-x", path="host#1", link="forged"))
    assert caught.value.carrier == "link"
    assert provider.calls == 0


async def test_a_link_from_a_finished_run_names_nobody() -> None:
    spy = LinkSpy()
    agent, seen = watched_agent()
    run = await Sequence({"spy": spy, "agent": agent}).run("hi", identity=ALICE)
    assert run.status == "finished" and [c.identity for c in seen] == [ALICE]
    stale = spy.links[0]
    assert isinstance(stale, str) and len(stale) >= 32
    assert open_run_count() == 0
    with pytest.raises(ParentRunRefusedError) as on_mount:
        await agent._execute({"message": "hi"}, Mount(run_id=run.run_id, path="host#1", link=stale))
    assert on_mount.value.carrier == "link"
    with pytest.raises(ParentRunRefusedError) as in_input:
        await agent.run({"message": "hi", "parent_run": stale})
    assert in_input.value.carrier == "input"
    assert len(seen) == 1
    assert stale not in str(on_mount.value) + str(in_input.value)


async def test_a_live_link_smuggled_through_a_mapper_is_refused() -> None:
    spy = LinkSpy()
    provider = mock(reply="never")
    flow = Workflow([
        step("spy", spy),
        step("next", Agent(provider=provider), needs="spy", map=lambda v: {"message": "go", "parent_run": v["spy"]}),
    ])
    with pytest.raises(ParentRunRefusedError) as caught:
        await flow.run("hi", identity=ALICE)
    assert caught.value.carrier == "input"
    assert caught.value.door == "Workflow step 'next'"
    assert provider.calls == 0
    assert open_run_count() == 0


async def test_an_identity_smuggled_through_a_mapper_is_refused() -> None:
    agent, seen = watched_agent()
    flow = Workflow([
        step("first", Agent(provider=mock(reply="a"))),
        step("second", agent, map=lambda v: {"message": v["first"], "identity": {"principal": "mallory"}}),
    ])
    with pytest.raises(ParentRunRefusedError) as caught:
        await flow.run("hi", identity=ALICE)
    assert caught.value.carrier == "identity"
    assert "mallory" not in str(caught.value)
    assert seen == []


async def test_a_member_mounted_where_no_run_reaches_it_is_refused() -> None:
    provider = mock(reply="x")
    with pytest.raises(MemberIdentityError) as caught:
        await Agent(provider=provider)._execute({"message": "hi"}, Mount(run_id="run-x", path="host#1"))
    assert caught.value.code == "ERR_MEMBER_NO_IDENTITY"
    assert caught.value.evidence() == {"door": "Agent.run"}
    assert provider.calls == 0


async def test_a_hand_built_mount_with_an_identity_serves_that_identity() -> None:
    agent, seen = watched_agent()
    run = await agent._execute({"message": "hi"}, Mount(run_id="run-x", path="host#1", identity=BOB))
    assert run.answer == "for bob"
    assert seen[0].identity == BOB and seen[0].run_id == "run-x"


# -- whom members run for --------------------------------------------------------------------
async def test_overlapping_runs_of_one_composition_never_see_each_others_identity_or_memory() -> None:
    memory: dict[str, list[str]] = {}
    calls: list[tuple[str, str, str]] = []

    @tool
    async def remember(ctx: ToolContext, note: str) -> str:
        """Keep a note in this run's memory and return everything remembered so far."""
        namespace = memory_identity(ctx.identity, ctx.run_id).namespace()
        memory.setdefault(namespace, []).append(note)
        calls.append((ctx.identity.principal, ctx.run_id, note))
        await asyncio.sleep(0.001)  # let the other run interleave
        return json.dumps(memory[namespace])

    def respond(request: LLMRequest) -> Any:
        last = request.messages[-1]
        return {"tool": "remember", "args": {"note": last["content"]}} if last["role"] == "user" else last["content"]

    clerk = Agent(provider=mock(respond=respond), tools=[remember])
    flow = Sequence({"first": clerk, "second": clerk})
    alice_run, bob_run = await asyncio.gather(
        flow.run("alice's diagnosis", identity=ALICE), flow.run("bob's salary", identity=BOB),
    )
    assert alice_run.run_id != bob_run.run_id
    owner = {alice_run.run_id: "alice", bob_run.run_id: "bob"}
    assert len(calls) == 4
    for principal, run_id, note in calls:
        assert owner[run_id] == principal
        assert principal in note and ("bob" if principal == "alice" else "alice") not in note
    assert "bob" not in alice_run.answer and "alice" not in bob_run.answer
    assert len(memory) == 2
    assert open_run_count() == 0


async def test_without_an_identity_each_run_of_a_composition_has_its_own_memory_namespace() -> None:
    agent, seen = watched_agent()
    flow = Sequence({"only": agent})
    runs = await asyncio.gather(flow.run("one"), flow.run("two"))
    assert [c.identity for c in seen] == [None, None]
    assert sorted(c.run_id for c in seen) == sorted(r.run_id for r in runs)
    namespaces = {memory_identity(c.identity, c.run_id) for c in seen}
    assert namespaces == {Identity(conversation_id=r.run_id) for r in runs}
    assert all(child.identity is None for r in runs for child in r.recording.children)


async def test_a_member_never_run_on_its_own_does_not_fall_back_to_a_shared_placeholder() -> None:
    agent, seen = watched_agent()
    assert agent.last_run is None
    first = await Sequence({"a": agent}).run("hi")
    second = await Sequence({"a": agent}).run("hi")
    assert [c.run_id for c in seen] == [first.run_id, second.run_id]
    assert seen[0].run_id != seen[1].run_id
    assert agent.last_run is None  # the member's run() never ran
    with pytest.raises(MemberIdentityError):
        await agent._execute({"message": "hi"}, Mount(run_id="run-x", path="host#1"))


async def test_a_member_serves_compositions_while_its_own_run_is_in_flight() -> None:
    release = asyncio.Event()

    async def respond(request: LLMRequest) -> str:
        if request.messages[-1]["content"] == "hold":
            await release.wait()
        return "done"

    agent = Agent(provider=mock(respond=respond))
    own = asyncio.create_task(agent.run("hold"))
    await asyncio.sleep(0)
    runs = await asyncio.gather(*(Parallel({"a": agent, "b": agent}, merge=lambda a: "ok").run("go")
                                  for _ in range(20)))
    assert all(r.answer == "ok" for r in runs)
    release.set()
    assert (await own).answer == "done"
    assert agent.last_run is not None and agent.last_run.run_id == (await own).run_id


# -- the registry ------------------------------------------------------------------------------
async def test_one_run_is_open_while_a_composition_runs_and_none_after_however_it_ends() -> None:
    spy = LinkSpy()
    await Sequence({"outer": spy, "nested": Sequence({"inner": spy})}).run("hi")
    assert spy.open_counts == [1, 1]
    assert spy.links[0] == spy.links[1]  # nesting hands the same link down
    assert open_run_count() == 0

    def boom(_request: LLMRequest) -> str:
        raise RuntimeError("down")

    with pytest.raises(RuntimeError):
        await Sequence({"a": Agent(provider=mock(respond=boom))}).run("hi")
    assert open_run_count() == 0


def test_reopening_a_run_that_is_still_open_is_a_second_request() -> None:
    opened = open_parent_run("run-same", ALICE, door="Sequence.resume")
    try:
        with pytest.raises(ResumeRequestConflictError) as caught:
            open_parent_run("run-same", ALICE, door="Sequence.resume")
        assert caught.value.code == "ERR_RESUME_REQUEST_CONFLICT"
        assert caught.value.door == "Sequence.resume"
    finally:
        close_parent_run(opened)
    reopened = open_parent_run("run-same", ALICE, door="Sequence.resume")
    assert reopened.link != opened.link
    close_parent_run(reopened)
    assert open_run_count() == 0


async def test_a_member_agents_memory_is_namespaced_by_the_run_it_serves() -> None:
    from footprint_lab.context import InMemoryStore, define_memory

    store = InMemoryStore()
    prompts: dict[str, str] = {}

    def respond(request: LLMRequest) -> str:
        message = request.messages[-1]["content"]
        prompts[message] = request.system
        return f"noted: {message}"

    clerk = Agent(provider=mock(respond=respond), context=[define_memory(id="notes", store=store)])
    flow = Sequence({"clerk": clerk})
    await asyncio.gather(flow.run("alice's diagnosis", identity=ALICE), flow.run("bob's salary", identity=BOB))
    await asyncio.gather(flow.run("alice again", identity=ALICE), flow.run("bob again", identity=BOB))
    assert "alice's diagnosis" in prompts["alice again"] and "bob's salary" not in prompts["alice again"]
    assert "bob's salary" in prompts["bob again"] and "alice's diagnosis" not in prompts["bob again"]
    anonymous = await flow.run("nobody's note")
    later = await flow.run("nobody again")
    assert "nobody's note" not in prompts["nobody again"]  # each run without an identity is its own conversation
    assert anonymous.run_id != later.run_id
