"""A long chat holds each earlier message's recorded forms once, whatever the number of turns that carry it
(issue 46): turn ``k``'s ``history#i`` pieces, recorded messages and the conversation it leaves (each
message's text) are the very objects turn ``k-1`` holds, read through lists the turns share (no turn keeps
anything per earlier message), and each turn's recording is still the one a run continuing the same
conversation on its own would make (the same pieces, fields and saved JSON). Memory is measured in
bench/bench_chat.py; a test here holds its growth linear."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conversation_kit import Seen, asking_tool

from footprint_lab import Agent, Chat, Redaction, define_tool
from footprint_lab.providers import mock
from footprint_lab.providers.types import LLMRequest
from footprint_lab.record import build as _build
from footprint_lab.record.recorder import Recorder

SECRET = "hunter2-Correct-Horse"


def reply(request: LLMRequest) -> Any:
    """Looks an order up when asked to (a tool round: carried assistant turns then hold tool calls), asks a person
    before a refund, and otherwise repeats the last message."""
    last = list(request.messages)[-1]
    if last["role"] == "user" and last["content"].startswith("look up"):
        return {"tool": "lookup", "args": {"order": last["content"].split()[-1], "flag": True}}
    if last["role"] == "user" and "refund" in last["content"]:
        return {"tool": "confirm", "args": {}}
    return f"Noted: {last['content']}"


def desk(**keywords: Any) -> Agent:
    lookup = define_tool(name="lookup", description="Finds an order.", fn=lambda order, flag: {"order": order},
                         input_schema={"type": "object", "properties": {"order": {"type": "string"},
                                                                        "flag": {"type": "boolean"}}})
    return Agent(provider=Seen(reply).provider, system="You are a support desk.", tools=[lookup, asking_tool()],
                 **keywords)


@pytest.fixture
def recorders(monkeypatch: pytest.MonkeyPatch) -> dict[str, Recorder]:
    """Each run's recorder, by run id, as its recording is built."""
    seen: dict[str, Recorder] = {}
    build = _build.build_recording

    def keep(recorder: Recorder, **keywords: Any) -> Any:
        seen[recorder.run_id] = recorder
        return build(recorder, **keywords)

    monkeypatch.setattr(_build, "build_recording", keep)
    return seen


MESSAGES = ["Hello.", "look up A-17", "My password is hunter2-Correct-Horse.", "Thanks.", "look up B-2", "Bye."]


async def grown(chat: Chat, messages: list[str] = MESSAGES) -> Chat:
    for message in messages:
        await chat.send(message)
    return chat


@pytest.mark.parametrize("redact", [None, Redaction(keys=["order"])])
async def test_each_turn_holds_the_earlier_turns_pieces_and_messages_themselves(
        recorders: dict[str, Recorder], redact: Redaction | None) -> None:
    chat = await grown(Chat(desk(redact=redact)))
    for k in range(2, len(chat)):
        before, now = recorders[chat[k - 1].run_id], recorders[chat[k].run_id]
        carried = chat.turn(k - 1).start  # what turn k-1 carried in, turn k carries again
        assert carried > 0
        assert all(now.pieces[i] is before.pieces[i] for i in range(carried))
        assert all(now.message_pieces[i] is before.message_pieces[i] for i in range(carried))
        left, earlier = chat[k]._conversation, chat[k - 1]._conversation  # the conversation each turn left
        assert left is not None and earlier is not None and left.history is not None and earlier.history is not None
        assert all(left.history[i] is earlier.history[i] for i in range(carried))
        if redact is None:  # a policy's recordings hold their masked copies
            assert all(mine is theirs for mine, theirs in zip(chat[k].recording.messages[:carried],
                                                              chat[k - 1].recording.messages[:carried],
                                                              strict=True))


def saved(recording: Any, run_id: str, renamed: str) -> Any:
    """A recording's saved JSON, its own run id named ``renamed`` and its clock readings left out."""
    data = json.loads(recording.model_dump_json().replace(run_id, renamed))

    def timeless(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: 0 if key in ("started_at", "started_ms", "duration_ms") else timeless(item)
                    for key, item in value.items()}
        return [timeless(item) for item in value] if isinstance(value, list) else value

    return timeless(data)


@pytest.mark.parametrize("redact", [None, Redaction(keys=["order"])])
@pytest.mark.parametrize("forked", [False, True])
async def test_every_turn_records_what_a_run_continuing_its_conversation_alone_records(
        redact: Redaction | None, forked: bool) -> None:
    chat = await grown(Chat(desk(redact=redact)))
    if forked:  # a fork goes another way from turn 3: its turns and its parent's share what they still share
        fork = await grown(chat.fork(3), ["look up C-9", "Bye."])
        await chat.send("One more thing.")
        chat = fork
    alone = desk(redact=redact)
    for k in range(1, len(chat)):
        message, checkpoint, _ = chat.rerun_start(chat[k].recording)  # as the turn sent them
        again = await alone.run(message, continue_from=checkpoint)  # the same history, thawed afresh
        assert saved(again.recording, again.run_id, chat[k].run_id) == saved(chat[k].recording, chat[k].run_id,
                                                                              chat[k].run_id)


async def test_a_turn_answered_after_a_question_and_the_turns_after_it_record_as_alone(
        recorders: dict[str, Recorder]) -> None:
    """The answered leg carries the paused one's history read back from its checkpoint: it records what a resume
    alone records, and the turns after it share the conversation's forms again."""
    chat = await grown(Chat(desk()), ["Hello.", "look up A-17"])
    paused = await chat.send("refund it")
    answered = await chat.answer("yes")
    await grown(chat, ["Thanks.", "Bye."])
    again = await desk().resume(paused.checkpoint, "yes")
    assert saved(again.recording, again.run_id, answered.run_id) == saved(answered.recording, answered.run_id,
                                                                           answered.run_id)
    before, last = recorders[chat[-2].run_id], recorders[chat[-1].run_id]
    carried = chat.turn(-2).start
    assert all(last.pieces[i] is before.pieces[i] for i in range(carried))
    assert [p.detail for p in chat[-1].recording.context_pieces[:carried]] == [{"from_run": chat[-2].run_id}] * carried


async def test_a_fork_going_another_way_leaves_its_parents_turns_as_they_were() -> None:
    """The turns share lists that only grow; a fork that parts from them gets lists of its own, so nothing a fork
    (or a later turn) records changes what an earlier turn's recording reads."""
    chat = await grown(Chat(desk()))
    before = [chat[k].recording.model_dump_json() for k in range(len(chat))]
    fork = await grown(chat.fork(2), ["look up C-9", "Something else entirely.", "Bye."])
    await grown(chat, ["One more thing.", "look up D-4"])
    assert [chat[k].recording.model_dump_json() for k in range(len(before))] == before
    assert [fork[k].recording.model_dump_json() for k in range(2)] == before[:2]
    said = [message["content"] for message in fork[4].recording.messages if message["role"] == "user"]
    assert said == [*MESSAGES[:2], "look up C-9", "Something else entirely.", "Bye."]


async def test_changing_one_turns_transcript_changes_no_other_turn() -> None:
    chat = await grown(Chat(desk()))
    later = chat[-1].recording.model_dump_json()
    earlier = chat[2].recording
    earlier.messages.append({"role": "user", "content": "added by hand"})
    earlier.messages[0] = {"role": "user", "content": "changed by hand"}
    earlier.message_pieces.append(0)
    assert chat[-1].recording.model_dump_json() == later
    assert chat[-1].recording.messages[0]["content"] == "Hello."


def kept_per_turn(turns: int, redact: Redaction | None = None, first: str = "Hello.", *, door: str = "chat") -> float:
    """Bytes a conversation of ``turns`` short turns keeps, per turn (tracemalloc, after a collection): a chat,
    its frame read, or (``door="follow_up"``) an agent's own runs continued with ``follow_up``, each run held;
    ``first`` is the first turn's message."""
    import gc
    import tracemalloc

    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        # a provider that keeps nothing (a test's Seen keeps every request, each a view of its whole conversation)
        agent = Agent(provider=mock(respond=lambda request: "Noted."), system="You are a support desk.",
                      redact=redact)
        if door == "chat":
            chat = Chat(agent)
            chat.send_sync(first)
            for number in range(1, turns):
                chat.send_sync(f"Message {number}: my order is A-{number}.")
            chat.frame()
        else:
            runs = [agent.run_sync(first)]
            for number in range(1, turns):
                runs.append(agent.follow_up_sync(f"Message {number}: my order is A-{number}."))
        gc.collect()
        return (tracemalloc.get_traced_memory()[0] - start) / turns
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(("redact", "first"), [
    (None, "Hello."),
    (Redaction(keys=["password"]), "Hello."),  # a policy that masks nothing here
    (Redaction(patterns={"pin": r"PIN-\d{4}"}), "My card's PIN-1234 is lost."),  # the first turn's message masked
], ids=["no policy", "a policy, nothing masked", "the first message masked"])
def test_what_a_chat_keeps_per_turn_does_not_grow_with_the_turns_it_carries(redact: Redaction | None,
                                                                            first: str) -> None:
    """Memory linear in the turns: turn 240 carries four times the messages turn 60 does, and keeps about as much
    (1.1 times; held per carried message, it kept 1.7 times as much per turn at 240 turns as at 60, 2.3 times with
    a policy, which masked each turn's transcript anew, and 1.23 times when each turn's transcript was a list)."""
    kept_per_turn(5, redact, first)  # imports and one-off caches are no chat's
    assert kept_per_turn(240, redact, first) <= 1.15 * kept_per_turn(60, redact, first)


def test_an_agent_continued_with_follow_up_keeps_per_turn_what_a_chat_does() -> None:
    """A chat is the agent's own conversation model: an agent's runs continued with ``follow_up`` share the
    earlier messages the same way: each run keeps about 15 kB at 60 turns and at 240 (it kept 52 kB and 174 kB,
    3.3 times as much, when each follow-up read the whole conversation back as new messages)."""
    kept_per_turn(5, door="follow_up")
    assert kept_per_turn(240, door="follow_up") <= 1.15 * kept_per_turn(60, door="follow_up")


async def test_a_turns_transcript_is_shared_until_read_and_then_a_list_of_its_own() -> None:
    """A turn's ``recording.messages`` and ``message_pieces`` are held shared until read, then lists of its own:
    whatever a user does with a list works (``json.dumps`` included)."""
    import copy
    import pickle

    chat = await grown(Chat(desk()))
    recording = chat[-1].recording
    assert type(recording.__dict__["messages"]) is not list  # shared until read
    saved = recording.model_dump_json()
    for values in (recording.messages, recording.message_pieces):
        assert type(values) is list and json.loads(json.dumps(values)) == values
        assert pickle.loads(pickle.dumps(values)) == values and copy.deepcopy(values) == values
    assert recording.messages is recording.messages and recording.model_dump_json() == saved
    assert pickle.loads(pickle.dumps(chat[-2].recording)) == chat[-2].recording  # pickled while still shared
