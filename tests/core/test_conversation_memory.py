"""A conversation keeps one memory namespace across its turns, and two conversations never share one.

Without a named identity, the namespace is the conversation of the run that opened it
(``{conversation_id: first_run_id}``): a follow-up, a stored conversation continued, a resume
and a resume after a failure all read what the earlier turns wrote. A new ``run()`` is a new
conversation, and so a new namespace.
"""

from __future__ import annotations

from typing import Any

import pytest
from conversation_kit import asking_tool, scripted

from footprint_lab import Agent, Identity, Sequence, ToolContext, define_tool
from footprint_lab.context import InMemoryStore, define_memory
from footprint_lab.errors import InvalidCheckpointError, RunCheckpointError
from footprint_lab.providers import LLMRequest, mock


def remembering(store: InMemoryStore, seen_system: list[str]) -> Agent:
    """Answers ``noted: <message>``, with declared memory; keeps the system prompt each call was sent."""

    def respond(request: LLMRequest) -> str:
        seen_system.append(request.system)
        return f"noted: {request.messages[-1]['content']}"

    return Agent(provider=mock(respond=respond), context=[define_memory(id="notes", store=store)])


def whoami_tool(seen: list[ToolContext]) -> Any:
    def whoami(ctx: ToolContext) -> str:
        seen.append(ctx)
        return "checked"

    return define_tool(name="whoami", description="Who is asking.", fn=whoami)


async def test_a_follow_up_reads_the_memory_its_first_turn_wrote() -> None:
    store = InMemoryStore()
    systems: list[str] = []
    agent = remembering(store, systems)
    first = await agent.run("my locker is 42")
    follow = await agent.follow_up("which locker?")
    assert "my locker is 42" in systems[-1]  # the first turn's note reached the follow-up's prompt
    assert follow.recording.meta["continues"]["first_run_id"] == first.run_id
    namespace = Identity(conversation_id=first.run_id).namespace()
    assert [item["content"] for item in store.recall(namespace, limit=10)] == [
        "my locker is 42", "noted: my locker is 42", "which locker?", "noted: which locker?",
    ]
    third = await agent.follow_up("and again?")
    assert third.recording.meta["continues"] == {"run_id": follow.run_id, "how": "follow_up",
                                                 "first_run_id": first.run_id}
    checkpoint = agent.checkpoint()
    assert checkpoint is not None and (checkpoint.run_id, checkpoint.first_run_id) == (third.run_id, first.run_id)


async def test_a_new_run_is_a_new_conversation_with_its_own_memory() -> None:
    store = InMemoryStore()
    systems: list[str] = []
    agent = remembering(store, systems)
    first = await agent.run("my locker is 42")
    second = await agent.run("which locker?")
    assert "my locker is 42" not in systems[-1]
    assert [m["content"] for m in second.recording.messages] == ["which locker?", "noted: which locker?"]
    assert "continues" not in second.recording.meta
    assert agent.checkpoint().first_run_id == second.run_id != first.run_id  # type: ignore[union-attr]


async def test_a_stored_conversation_continued_elsewhere_keeps_its_namespace() -> None:
    store = InMemoryStore()
    agent = remembering(store, [])
    first = await agent.run("my locker is 42")
    stored = agent.checkpoint().model_dump_json()  # type: ignore[union-attr]
    systems: list[str] = []
    other = remembering(store, systems)
    continued = await other.run("which locker?", continue_from=stored)
    assert "my locker is 42" in systems[-1]
    assert continued.recording.meta["continues"]["first_run_id"] == first.run_id


async def test_tools_see_one_memory_identity_across_a_pause_and_a_follow_up() -> None:
    contexts: list[ToolContext] = []
    seen = scripted({"tool": "whoami", "args": {}}, [{"tool": "confirm", "args": {}}, {"tool": "whoami", "args": {}}],
                    "done")
    agent = Agent(provider=seen.provider, tools=[whoami_tool(contexts), asking_tool()])
    paused = await agent.run("go")
    resumed = await agent.resume(paused.checkpoint, "yes")
    other = Agent(provider=scripted({"tool": "whoami", "args": {}}, "ok").provider, tools=[whoami_tool(contexts)])
    follow = await other.run("more", continue_from=agent.checkpoint())
    assert [c.run_id for c in contexts] == [paused.run_id, resumed.run_id, follow.run_id]  # three runs
    conversation = Identity(conversation_id=paused.run_id)
    assert [c.memory_identity for c in contexts] == [conversation] * 3  # one conversation
    assert all(c.identity is None for c in contexts)


async def test_a_resume_after_a_failure_keeps_the_namespace() -> None:
    contexts: list[ToolContext] = []
    failed = []

    def respond(request: LLMRequest) -> Any:
        if request.call_index == 0:
            return {"tool": "whoami", "args": {}}
        if not failed:
            failed.append(True)
            raise ConnectionError("reset")
        return {"tool": "whoami", "args": {}} if request.call_index == 1 else "done"

    agent = Agent(provider=mock(respond=respond), tools=[whoami_tool(contexts)])
    with pytest.raises(RunCheckpointError) as caught:
        await agent.run("go")
    first_run_id = caught.value.checkpoint.first_run_id
    resumed = await agent.resume_on_error(caught.value.checkpoint)
    assert resumed.answer == "done" and len(contexts) == 2
    assert contexts[0].run_id != contexts[1].run_id
    assert {c.memory_identity for c in contexts} == {Identity(conversation_id=first_run_id)}


async def test_a_named_identity_is_the_namespace_whatever_the_conversation() -> None:
    contexts: list[ToolContext] = []
    agent = Agent(provider=scripted({"tool": "whoami", "args": {}}, "ok").provider, tools=[whoami_tool(contexts)])
    ana = Identity(principal="ana", tenant="acme")
    await agent.run("hi", identity=ana)
    await Agent(provider=scripted({"tool": "whoami", "args": {}}, "ok").provider,
                tools=[whoami_tool(contexts)]).run("hi again", identity=ana)
    assert [c.memory_identity for c in contexts] == [ana, ana]


async def test_a_member_keeps_the_namespace_of_the_run_it_serves_not_of_its_checkpoint() -> None:
    contexts: list[ToolContext] = []
    member = Agent(provider=scripted({"tool": "whoami", "args": {}}, "ok").provider, tools=[whoami_tool(contexts)])
    flow = Sequence({"a": member, "b": member})
    run = await flow.run("go")
    assert {c.memory_identity for c in contexts} == {Identity(conversation_id=run.run_id)}
    again = await flow.run("go")
    assert contexts[-1].memory_identity == Identity(conversation_id=again.run_id) != contexts[0].memory_identity


@pytest.mark.parametrize(("change", "field"), [
    (lambda d: d.pop("first_run_id"), "first_run_id"),
    (lambda d: d.update(first_run_id="  "), "first_run_id"),
    (lambda d: d.update(first_run_id=7), "first_run_id"),
])
async def test_a_checkpoint_without_a_usable_first_run_id_is_refused(change: Any, field: str) -> None:
    agent = Agent(provider=mock(reply="ok"))
    await agent.run("hello")
    data = agent.checkpoint().model_dump(mode="json")  # type: ignore[union-attr]
    change(data)
    with pytest.raises(InvalidCheckpointError) as caught:
        await agent.run("next", continue_from=data)
    assert caught.value.field == field
