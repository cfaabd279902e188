"""Chat: a conversation turn by turn, with overlap and pause guarded, reruns of one turn, and forks."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from conversation_kit import Seen, asking_tool, counted_tool

from footprint_lab import Agent, Chat, Redaction, TurnRerun
from footprint_lab.context import define_fact
from footprint_lab.errors import (
    ChatConfigError,
    InvalidRunInputError,
    ListenerError,
    PendingQuestionError,
    RunInFlightError,
    UnknownSourceError,
    UnknownTurnError,
)
from footprint_lab.explain import localize
from footprint_lab.providers import mock
from footprint_lab.providers.types import LLMRequest

POLICY = "Refunds take 5 days."


def by_policy(request: LLMRequest) -> str:
    """Answers the last user message; knows the refund time only when the policy fact was sent."""
    asked = next(m["content"] for m in reversed(list(request.messages)) if m["role"] == "user")
    if "refund" in asked.lower():
        return "Your refund arrives in 5 days." if POLICY in request.system else "I cannot say when refunds arrive."
    return f"Noted: {asked}"


def policy_chat(**keywords: Any) -> tuple[Chat, Seen]:
    seen = Seen(by_policy)
    agent = Agent(provider=seen.provider, system="You are a support desk.",
                  context=[define_fact(id="refund-policy", data=POLICY)])
    return Chat(agent, **keywords), seen


async def test_each_send_is_a_turn_that_continues_the_one_before() -> None:
    chat, seen = policy_chat()
    first = await chat.send("My order is A-1.")
    second = await chat.send("When does my refund arrive?")
    assert chat.turns == [first, second] and chat[0] is first and chat[-1] is second and len(chat) == 2
    assert second.answer == "Your refund arrives in 5 days."
    sent = [(m["role"], m["content"]) for m in seen.requests[-1].messages]
    assert sent == [("user", "My order is A-1."), ("assistant", "Noted: My order is A-1."),
                    ("user", "When does my refund arrive?")]
    assert second.recording.meta["continues"]["run_id"] == first.run_id


async def test_the_frame_has_a_row_per_turn_with_what_changed() -> None:
    chat, _ = policy_chat()
    await chat.send("My order is A-1.")
    await chat.send("When does my refund arrive?")
    frame = chat.frame()
    assert list(frame.columns) == ["turn", "message", "answer", "status", "tokens", "changed", "run_id"]
    assert frame["message"].tolist() == ["My order is A-1.", "When does my refund arrive?"]
    assert frame["answer"].tolist() == ["Noted: My order is A-1.", "Your refund arrives in 5 days."]
    assert frame["status"].tolist() == ["finished", "finished"]
    assert (frame["tokens"] > 0).all()
    assert frame["changed"][0].startswith("first turn")
    assert frame["changed"][1] == "2 earlier message(s) carried; same sources"


async def test_what_changed_names_a_source_that_joined_a_later_turn() -> None:
    fact = define_fact(id="holiday", data="The shop is closed on Monday.", active_when=lambda ctx: "monday" in str(
        getattr(ctx, "message", "")).lower())
    agent = Agent(provider=mock(respond=by_policy), context=[fact])
    chat = Chat(agent)
    await chat.send("Hello.")
    await chat.send("Are you open on Monday?")
    assert "new: fact 'holiday'" in chat.frame()["changed"][1]


async def test_a_piece_born_in_an_earlier_turn_says_which() -> None:
    chat, _ = policy_chat()
    for message in ("My order is A-1.", "It came broken.", "When does my refund arrive?"):
        await chat.send(message)
    context = chat.context(2)
    carried = context[context["source_id"].str.startswith("history#")]
    assert carried["turn"].tolist() == [0, 0, 1, 1]
    own = context[~context["source_id"].str.startswith("history#")]
    assert set(own["turn"]) == {2}
    assert chat.born_in(2) == {"history#0": 0, "history#1": 0, "history#2": 1, "history#3": 1}


async def test_each_turn_explains_like_any_run() -> None:
    chat, _ = policy_chat()
    await chat.send("My order is A-1.")
    turn = await chat.send("When does my refund arrive?")
    sources = {c.source_id for c in chat[1].backtrack().candidates}
    assert {"refund-policy", "history#0", "user-message"} <= sources
    assert chat[1].suspects()["source_id"].iloc[0] == "refund-policy"
    assert chat[1].integrity().disposition("duplicate_tool_call") == "not_applicable"
    assert turn is chat[1]


async def test_an_overlapping_send_is_refused_before_anything_runs() -> None:
    chat, seen = policy_chat()
    first = asyncio.ensure_future(chat.send("My order is A-1."))
    await asyncio.sleep(0)
    with pytest.raises(RunInFlightError) as refused:
        await chat.send("Second message while the first runs")
    assert refused.value.code == "ERR_RUN_IN_FLIGHT"
    assert refused.value.active_run_id.startswith("run-")
    assert "Second message" not in str(refused.value)
    await first
    assert len(chat) == 1 and len(seen.requests) == 1  # the refused send called nothing and left no turn


async def test_queued_sends_wait_their_turn_and_continue_in_order() -> None:
    chat, seen = policy_chat(overlap="queue")
    runs = await asyncio.gather(chat.send("My order is A-1."), chat.send("It came broken."),
                                chat.send("When does my refund arrive?"))
    assert chat.turns == list(runs)
    assert [len(r.messages) for r in seen.requests] == [1, 3, 5]
    assert runs[2].answer == "Your refund arrives in 5 days."


def confirm_then_answer(request: LLMRequest) -> Any:
    last = list(request.messages)[-1]
    if last["role"] == "user" and "refund" in last["content"].lower():
        return {"tool": "confirm", "args": {}}
    if last["role"] == "tool":
        return f"Done ({last['content']})."
    return f"Noted: {last['content']}"


async def test_a_turn_that_asks_a_person_holds_the_chat_until_answered() -> None:
    seen = Seen(confirm_then_answer)
    chat = Chat(Agent(provider=seen.provider, tools=[asking_tool()]))
    await chat.send("Hello.")
    paused = await chat.send("Refund my order.")
    assert paused.paused and chat.pending is paused
    calls = len(seen.requests)
    with pytest.raises(PendingQuestionError) as refused:
        await chat.send("Anything new?")
    assert refused.value.code == "ERR_PENDING_QUESTION" and refused.value.tool_name == "confirm"
    assert "chat.answer" in str(refused.value) and "chat.abandon" in str(refused.value)
    assert len(seen.requests) == calls and len(chat) == 2
    answered = await chat.answer("yes")
    assert answered.status == "finished" and answered.answer == "Done (yes)."
    assert chat[1] is answered and len(chat) == 2 and chat.pending is None
    assert len(chat.turn(1).legs) == 2
    after = await chat.send("Thanks.")
    assert [m["content"] for m in after.recording.messages][:2] == ["Hello.", "Noted: Hello."]
    assert "Done (yes)." in [m["content"] for m in after.recording.messages]


async def test_an_abandoned_question_frees_the_chat_and_adds_nothing_to_the_conversation() -> None:
    seen = Seen(confirm_then_answer)
    agent = Agent(provider=seen.provider, tools=[asking_tool()])
    chat = Chat(agent)
    await chat.send("Hello.")
    await chat.send("Refund my order.")
    pause = chat.abandon()
    assert pause is not None and pause.tool_name == "confirm"
    assert chat.frame()["status"].tolist() == ["finished", "abandoned"]
    assert any(note.tag == "pause_abandoned" for note in chat[1].recording.annotations)
    following = await chat.send("Never mind.")
    assert [m["content"] for m in following.recording.messages] == ["Hello.", "Noted: Hello.", "Never mind.",
                                                                    "Noted: Never mind."]
    assert chat.abandon() is None


async def test_a_refused_message_or_listener_leaves_no_turn() -> None:
    chat, seen = policy_chat()
    with pytest.raises(InvalidRunInputError):
        await chat.send("   ")
    with pytest.raises(ListenerError):
        await chat.send("Hello.", on_event="print")
    assert len(chat) == 0 and not seen.requests


@pytest.mark.parametrize("runner", [object(), "an agent", mock(reply="x"), None])
def test_a_runner_that_cannot_hold_a_conversation_is_refused_by_name(runner: Any) -> None:
    with pytest.raises(ChatConfigError) as refused:
        Chat(runner)
    assert refused.value.code == "ERR_CHAT_CONFIG" and refused.value.setting == "runner"


@pytest.mark.parametrize("overlap", ["serialize-please", "", 1, None, ["queue"]])
def test_an_unknown_overlap_is_refused_by_name(overlap: Any) -> None:
    with pytest.raises(ChatConfigError) as refused:
        Chat(Agent(provider=mock(reply="x")), overlap=overlap)
    assert refused.value.setting == "overlap"
    assert "serialize-please" not in str(refused.value)


@pytest.mark.parametrize("k", [2, -3, "0", 1.0, True])
async def test_a_turn_that_does_not_exist_is_refused_by_name(k: Any) -> None:
    chat, _ = policy_chat()
    await chat.send("Hello.")
    await chat.send("Again.")
    with pytest.raises(UnknownTurnError) as refused:
        chat[k]
    assert refused.value.code == "ERR_UNKNOWN_TURN" and refused.value.turns == 2
    with pytest.raises(UnknownTurnError):
        await chat.rerun(k, without=["refund-policy"])


async def test_rerunning_a_turn_without_a_source_calls_the_provider_only_for_that_turn() -> None:
    chat, seen = policy_chat()
    for message in ("My order is A-1.", "It came broken.", "When does my refund arrive?"):
        await chat.send(message)
    before = len(seen.requests)
    result = await chat.rerun(2, without=["refund-policy"])
    assert isinstance(result, TurnRerun) and result.turn == 2
    assert result.flipped and result.answer == "I cannot say when refunds arrive."
    assert len(seen.requests) == before + 1
    rerun_request = seen.requests[-1]
    assert [m["content"] for m in rerun_request.messages][:4] == [
        "My order is A-1.", "Noted: My order is A-1.", "It came broken.", "Noted: It came broken."]
    assert POLICY not in rerun_request.system
    held = await chat.rerun(1, without=["refund-policy"])
    assert not held.flipped and "Turn 1" in str(held)
    assert len(chat) == 3  # a rerun is not a turn of the chat


async def test_rerunning_an_unknown_source_is_refused_before_any_call() -> None:
    chat, seen = policy_chat()
    await chat.send("When does my refund arrive?")
    before = len(seen.requests)
    with pytest.raises(UnknownSourceError):
        await chat.rerun(0, without=["no-such-source"])
    assert len(seen.requests) == before


async def test_localize_confirms_the_cause_of_one_turn_by_reruns_of_it() -> None:
    chat, seen = policy_chat()
    await chat.send("My order is A-1.")
    await chat.send("When does my refund arrive?")
    found = await chat.localize(1, samples=3, sources=["refund-policy"], progress=False)
    assert found.verdict("refund-policy") == "confirmed"
    same = await localize(chat[1], rerun=chat, samples=3, sources=["refund-policy"], progress=False)
    assert same.verdict("refund-policy") == "confirmed"
    # every rerun request carried turn 0 as recorded: the earlier turn was never asked again
    reruns = seen.requests[2:]
    assert reruns and all(next(iter(r.messages))["content"] == "My order is A-1." for r in reruns)
    assert all(len(r.messages) == 3 for r in reruns)


async def test_a_redacted_turn_reruns_with_the_message_it_answered() -> None:
    seen = Seen(by_policy)
    agent = Agent(provider=seen.provider, context=[define_fact(id="refund-policy", data=POLICY)],
                  redact=Redaction(patterns={"card": r"4111-\d{4}"}))
    chat = Chat(agent)
    await chat.send("Card 4111-2222 was charged.")
    await chat.send("When does my refund arrive for 4111-2222?")
    assert "4111-2222" not in chat.frame().to_string()
    result = await chat.rerun(1, without=["refund-policy"])
    assert result.flipped


def refund_by_policy(request: LLMRequest) -> Any:
    """Asks a person before refunding; once answered, says when the refund arrives only with the policy."""
    last = list(request.messages)[-1]
    if last["role"] == "user":
        return {"tool": "confirm", "args": {}} if "refund" in last["content"].lower() else "Noted."
    if last["content"] != "yes":
        return "Nothing was refunded."
    return "Refunded; it arrives in 5 days." if POLICY in request.system else "Refunded."


def answered_chat() -> tuple[Chat, Seen]:
    seen = Seen(refund_by_policy)
    agent = Agent(provider=seen.provider, tools=[asking_tool()], system="Support desk.",
                  context=[define_fact(id="refund-policy", data=POLICY), define_fact(id="opening-hours",
                                                                                       data="We open at 9.")])
    return Chat(agent), seen


async def test_a_turn_a_person_answered_reruns_with_the_same_answer() -> None:
    chat, seen = answered_chat()
    await chat.send("My order is A-1.")
    assert (await chat.send("Please refund my order.")).paused
    assert (await chat.answer("yes")).answer == "Refunded; it arrives in 5 days."
    before = len(seen.requests)
    # the rerun stops at the same question and is given the same answer: a benign piece does not flip it
    held = await chat.rerun(1, without=["opening-hours"], samples=2)
    assert not held.flipped and held.answer == "Refunded; it arrives in 5 days."
    assert all(request.messages[-1]["content"] in ("Please refund my order.", "yes")
               for request in seen.requests[before:])
    # the cause still shows, after the same answer
    cause = await chat.rerun(1, without=["refund-policy"])
    assert cause.flipped and cause.answer == "Refunded."
    found = await chat.localize(1, samples=3, sources=["refund-policy", "opening-hours"], progress=False)
    assert found.verdict("refund-policy") == "confirmed" and found.verdict("opening-hours") != "confirmed"
    assert len(chat) == 2 and chat.pending is None  # reruns are no turns, and leave nothing waiting
    fork = chat.fork(2)  # a fork keeps the answers too: its turn reruns the same way
    assert not (await fork.rerun(1, without=["opening-hours"])).flipped


async def test_a_rerun_that_asks_another_question_is_not_given_the_answer() -> None:
    chat, _ = answered_chat()
    await chat.send("Please refund my order.")
    await chat.answer("yes")
    # without the asking tool the rerun cannot ask at all; it answers from what it has
    result = await chat.rerun(0, without=["confirm"])
    assert result.flipped


async def test_a_fork_keeps_the_turns_before_k_and_the_two_chats_never_meet() -> None:
    chat, _ = policy_chat()
    for message in ("My order is A-1.", "It came broken.", "When does my refund arrive?"):
        await chat.send(message)
    fork = chat.fork(1)
    assert fork.turns == chat.turns[:1] and fork.forked_from == (chat, 1)
    branched = await fork.send("Actually, I want an exchange.")
    assert [m["content"] for m in branched.recording.messages][:2] == ["My order is A-1.", "Noted: My order is A-1."]
    assert "It came broken." not in [m["content"] for m in branched.recording.messages]
    assert len(chat) == 3 and len(fork) == 2
    assert chat.frame()["message"].tolist()[1] == "It came broken."
    later = await chat.send("Thanks.")
    assert "Actually, I want an exchange." not in [m["content"] for m in later.recording.messages]
    assert len(fork) == 2
    assert len(chat.fork(0)) == 0 and len(chat.fork(4)) == 4
    with pytest.raises(UnknownTurnError):
        chat.fork(5)


async def test_a_fork_that_would_hold_a_pending_question_is_refused() -> None:
    chat = Chat(Agent(provider=mock(respond=confirm_then_answer), tools=[asking_tool()]))
    await chat.send("Refund my order.")
    with pytest.raises(PendingQuestionError):
        chat.fork(1)
    assert len(chat.fork(0)) == 0


def test_send_sync_drives_a_turn_from_synchronous_code() -> None:
    calls: list[str] = []
    chat = Chat(Agent(provider=mock(replies=[{"tool": "lookup", "args": {}}, "Looked it up."]),
                      tools=[counted_tool("lookup", calls)]))
    run = chat.send_sync("Look it up.")
    assert run.answer == "Looked it up." and calls == ["lookup"] and len(chat) == 1
    assert repr(chat) == "Chat(1 turn(s): finished)"


async def test_answering_when_no_turn_waits_is_refused() -> None:
    from footprint_lab.errors import InvalidCheckpointError

    chat, seen = policy_chat()
    await chat.send("Hello.")
    with pytest.raises(InvalidCheckpointError) as refused:
        await chat.answer("yes")
    assert refused.value.field == "pause" and "chat.send" in str(refused.value)
    assert len(seen.requests) == 1 and len(chat.turn(0).legs) == 1
