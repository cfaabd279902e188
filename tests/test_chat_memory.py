"""A long chat holds each earlier message's recorded forms once, whatever the number of turns that carry it
(issue 46): turn ``k``'s ``history#i`` pieces, recorded messages and the conversation it leaves (each
message's text) are the very objects turn ``k-1`` holds, and each turn's recording is still the one a run
continuing the same conversation on its own would make (the same pieces, fields and saved JSON). Memory
itself is measured in bench/bench_chat.py."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conversation_kit import Seen, asking_tool

from footprint_lab import Agent, Chat, Redaction, define_tool
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
