"""Chats on one agent are independent: a paused or running turn of one never blocks a fork or a sibling,
``overlap="queue"`` waits instead of refusing, a fork holds only what it needs, and a long chat's view and
messages do not grow with the square of its turns (issue 46)."""

from __future__ import annotations

import asyncio
import gc
import threading
import weakref
from typing import Any

import pytest
from conversation_kit import Seen, asking_tool

from footprint_lab import Agent, Chat
from footprint_lab.errors import PendingQuestionError, RunInFlightError
from footprint_lab.lab.chat_view import SHOWN_TURNS
from footprint_lab.providers.types import LLMRequest


def asks_on_refund(request: LLMRequest) -> Any:
    last = list(request.messages)[-1]
    if last["role"] == "user" and "refund" in last["content"].lower():
        return {"tool": "confirm", "args": {}}
    return f"Noted: {last['content']}"


class Gate:
    """A model that holds each reply until released, to keep a turn in flight."""

    def __init__(self) -> None:
        self.open = asyncio.Event()
        self.name = "gate"

    async def complete(self, request: LLMRequest, on_token: Any = None) -> Any:
        from footprint_lab.providers.types import LLMResponse

        await self.open.wait()
        return LLMResponse(content=f"Noted: {list(request.messages)[-1]['content']}", stop_reason="end_turn")


async def test_a_paused_turn_blocks_neither_its_fork_nor_a_sibling_chat_nor_the_agent() -> None:
    agent = Agent(provider=Seen(asks_on_refund).provider, tools=[asking_tool()])
    chat = Chat(agent)
    await chat.send("Hello.")
    assert (await chat.send("Refund my order.")).paused
    fork, sibling = chat.fork(1), Chat(agent)
    assert (await fork.send("Actually, an exchange.")).answer == "Noted: Actually, an exchange."
    assert (await sibling.send("Hi.")).status == "finished"
    assert (await agent.run("A turn of the agent's own.")).status == "finished"
    with pytest.raises(PendingQuestionError):  # the paused chat itself still waits for its answer
        await chat.send("Anything new?")
    assert (await chat.answer("yes")).status == "finished"
    assert [m["content"] for m in fork[-1].recording.messages][:2] == ["Hello.", "Noted: Hello."]


@pytest.mark.parametrize("overlap", ["refuse", "queue"])
async def test_a_fork_runs_while_its_parent_runs(overlap: str) -> None:
    gate = Gate()
    chat = Chat(Agent(provider=gate), overlap=overlap)
    gate.open.set()
    await chat.send("Hello.")
    gate.open.clear()
    fork = chat.fork(1)
    parent = asyncio.ensure_future(chat.send("Parent's turn."))
    await asyncio.sleep(0.01)
    child = asyncio.ensure_future(fork.send("Fork's turn."))
    await asyncio.sleep(0.01)
    gate.open.set()
    assert (await parent).status == "finished" and (await child).status == "finished"
    assert len(chat) == 2 and len(fork) == 2


async def test_queued_sends_from_another_thread_wait_instead_of_refusing() -> None:
    gate = Gate()
    chat = Chat(Agent(provider=gate), overlap="queue")
    first = asyncio.ensure_future(chat.send("First."))
    await asyncio.sleep(0.01)
    done: list[Any] = []
    worker = threading.Thread(target=lambda: done.append(chat.send_sync("Second, from a thread.")))
    worker.start()
    await asyncio.sleep(0.05)
    assert not done  # waiting in line, not refused
    gate.open.set()
    await first
    await asyncio.to_thread(worker.join, 10)
    assert [run.answer for run in chat.turns] == ["Noted: First.", "Noted: Second, from a thread."]
    assert [m["content"] for m in chat[1].recording.messages][:2] == ["First.", "Noted: First."]


async def test_a_sync_send_that_would_wait_on_its_own_loop_is_refused() -> None:
    gate = Gate()
    chat = Chat(Agent(provider=gate), overlap="queue")
    first = asyncio.ensure_future(chat.send("First."))
    await asyncio.sleep(0.01)
    with pytest.raises(RunInFlightError) as refused:
        chat.send_sync("Second.")
    assert "await chat.send" in str(refused.value) and "Second." not in str(refused.value)
    gate.open.set()
    await first
    assert len(chat) == 1


async def test_a_cancelled_queued_send_leaves_the_line_in_order() -> None:
    gate = Gate()
    chat = Chat(Agent(provider=gate), overlap="queue")
    first = asyncio.ensure_future(chat.send("First."))
    await asyncio.sleep(0.01)
    second = asyncio.ensure_future(chat.send("Second."))
    third = asyncio.ensure_future(chat.send("Third."))
    await asyncio.sleep(0.01)
    second.cancel()
    gate.open.set()
    await first
    assert (await third).answer == "Noted: Third."
    assert [run.answer for run in chat.turns] == ["Noted: First.", "Noted: Third."]


async def test_a_fork_keeps_neither_its_parent_nor_the_parents_later_turns() -> None:
    chat = Chat(Agent(provider=Seen(asks_on_refund).provider))
    for message in ("One.", "Two.", "Three."):
        await chat.send(message)
    later = weakref.ref(chat[2])
    fork = chat.fork(1)
    assert fork.forked_from == (chat, 1)
    parent = weakref.ref(chat)
    del chat
    gc.collect()
    assert parent() is None and later() is None
    assert fork.forked_from == (None, 1)
    assert (await fork.send("Two, again.")).recording.messages[0]["content"] == "One."


async def test_the_turns_share_the_conversations_messages() -> None:
    chat = Chat(Agent(provider=Seen(asks_on_refund).provider))
    for number in range(6):
        await chat.send(f"Message {number}.")
    assert all(chat.turn(k).start == 2 * k for k in range(6))
    assert all(chat.turn(k).summary.carried == 2 * k for k in range(6))
    first = chat[5].recording.messages[0]
    assert first["content"] == "Message 0." and all(chat[k].recording.messages[0] is first for k in range(1, 5))
    fork = chat.fork(3)
    forked = await fork.send("Message 3, forked.")
    assert forked.recording.messages[0] is first and forked.recording.messages[6]["content"] == "Message 3, forked."
    again = await chat.send("Again.")
    assert again.recording.messages[0] is first  # a new turn adds its own messages; the earlier ones stay the ones held
    assert again.recording.messages[6]["content"] == "Message 3."


async def test_a_long_chats_view_draws_the_last_turns_and_says_how_many_are_folded() -> None:
    chat = Chat(Agent(provider=Seen(asks_on_refund).provider))
    for number in range(SHOWN_TURNS + 7):
        await chat.send(f"Message {number}.")
    mime = chat._repr_mimebundle_()
    html, text = mime["text/html"], mime["text/plain"]
    assert html.count('data-fl-turn="') == SHOWN_TURNS and 'data-fl-turn="6"' not in html
    assert 'data-fl-turn="7"' in html and f'data-fl-turn="{SHOWN_TURNS + 6}"' in html
    assert "7 earlier turn(s) folded" in html and "chat.frame()" in html and "7 earlier turn(s) folded" in text
    assert len(chat.frame()) == SHOWN_TURNS + 7
    short = Chat(Agent(provider=Seen(asks_on_refund).provider))
    await short.send("Hi.")
    assert "folded" not in short._repr_mimebundle_()["text/html"]
