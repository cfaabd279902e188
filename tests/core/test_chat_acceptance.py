"""Acceptance for issue 28, on a conversation of its own: a travel desk chat, from its first turn to the bug report.

The desk looks a booking up, asks the traveller before changing a seat, and answers what they will pay. A
spring promotion fact makes it quote a discounted price no evidence holds: the integrity check catches the
number, a rerun of that turn alone (the provider called for it only) flips it, localize confirms the fact, a
fork goes another way, and the bug report carries the whole chat without the traveller's passport number.
"""

from __future__ import annotations

import asyncio
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from conversation_kit import Seen

from footprint_lab import Agent, Chat, Redaction, ask_human, define_tool
from footprint_lab.context import define_fact
from footprint_lab.errors import PendingQuestionError, RunInFlightError
from footprint_lab.providers.types import LLMRequest

PASSPORT = "X9K-5512-778"
BOOKING = {"booking": "BK-2207", "traveller": "Ines Duarte", "date": "2026-05-02", "price": "480 EUR",
           "passport": PASSPORT}
PROMO = "Spring promotion: every booking is 10% off."


def desk_model(request: LLMRequest) -> Any:
    """The desk's model: a lookup on the first question, a confirmation before a seat change, prices on request."""
    messages = list(request.messages)
    last = messages[-1]
    asked = [m for m in messages if m["role"] == "user"][-1]["content"].lower()
    if last["role"] == "tool" and last["name"] == "lookup_booking":
        return "Booking BK-2207 for Ines Duarte on 2 May 2026 costs 480 EUR."
    if last["role"] == "tool" and last["name"] == "confirm_change":
        return f"Seat changed to the window ({last['content']})."
    if "booking" in asked:
        return {"tool": "lookup_booking", "args": {"booking": "BK-2207"}}
    if "seat" in asked:
        return {"tool": "confirm_change", "args": {"change": "window seat"}}
    if "pay" in asked:
        return "With the spring promotion you pay 432 EUR." if PROMO in request.system else "You pay 480 EUR."
    return "Anything else?"


def confirm_change(change: str) -> str:
    ask_human(f"Change to a {change}?", choices=["yes", "no"])
    return "unreachable"


def travel_desk() -> tuple[Agent, Seen]:
    seen = Seen(desk_model)
    tools = [define_tool(name="lookup_booking", description="Look a booking up.", fn=lambda booking: BOOKING,
                         input_schema={"type": "object", "properties": {"booking": {"type": "string"}}}),
             define_tool(name="confirm_change", description="Ask the traveller to confirm a change.", fn=confirm_change,
                         input_schema={"type": "object", "properties": {"change": {"type": "string"}}})]
    agent = Agent(provider=seen.provider, system="You are a travel desk.", tools=tools,
                  context=[define_fact(id="spring-promo", data=PROMO)], redact=Redaction(keys=["passport"]))
    return agent, seen


async def test_a_travel_desk_chat_from_first_turn_to_bug_report(tmp_path: Path) -> None:
    agent, seen = travel_desk()
    chat = Chat(agent)

    # turn 0: quoted faithfully from the tool, so no value is unsupported
    first = await chat.send("Hi, I am Ines. My booking is BK-2207.")
    assert first.answer == "Booking BK-2207 for Ines Duarte on 2 May 2026 costs 480 EUR."
    assert first.integrity().disposition("unsupported_value") == "passed"

    # turn 1 pauses for the traveller: the chat is held, an overlapping send is refused, the answer goes on
    paused = await chat.send("Please move me to a window seat.")
    assert paused.paused
    with pytest.raises(PendingQuestionError):
        await chat.send("What will I pay?")
    answered = await chat.answer("yes")
    assert answered.answer == "Seat changed to the window (yes)." and len(chat) == 2

    # turn 2: the promotion makes it quote a price nothing it was sent holds
    calls = len(seen.requests)
    sending = asyncio.ensure_future(chat.send("What will I pay?"))
    await asyncio.sleep(0)
    with pytest.raises(RunInFlightError):
        await chat.send("Hello?")
    wrong = await sending
    assert wrong.answer == "With the spring promotion you pay 432 EUR." and len(seen.requests) == calls + 1
    (finding,) = wrong.integrity().of_kind("unsupported_value")
    assert "432 EUR (amount)" in finding.what
    assert "the result of tool 'lookup_booking' (an earlier turn) said 480 EUR" in finding.what
    assert chat.born_in(2)["history#0"] == 0 and 1 in chat.born_in(2).values()
    frame = chat.frame()
    assert frame["status"].tolist() == ["finished", "finished", "finished"]
    assert frame["message"][2] == "What will I pay?" and (frame["tokens"] > 0).all()

    # the cause, proven on turn 2 alone: the turns before it come from the recording
    calls = len(seen.requests)
    rerun = await chat.rerun(2, without=["spring-promo"])
    assert rerun.flipped and rerun.answer == "You pay 480 EUR." and len(seen.requests) == calls + 1
    found = await chat.localize(2, samples=3, top=3, progress=False)
    assert found.confirmed == ["spring-promo"]
    reruns = seen.requests[calls:]
    assert all(next(iter(r.messages))["content"] == "Hi, I am Ines. My booking is BK-2207." for r in reruns)
    assert not any(r.messages[-1]["role"] == "tool" for r in reruns)  # no earlier turn's tool round was redone

    # another way from turn 2, the chat left as it was
    fork = chat.fork(2)
    other = await fork.send("Can I add a bag?")
    assert other.answer == "Anything else?" and len(fork) == 3 and len(chat) == 3
    assert chat[2] is wrong and fork[2] is other

    # the bug report: every turn, masked, with a manifest, and no passport number anywhere in it
    with zipfile.ZipFile(chat.bug_report(tmp_path / "travel-desk.zip")) as bundle:
        files = {name: bundle.read(name) for name in bundle.namelist()}
    assert {f"recordings/run-{n}.json" for n in range(3)} <= set(files)
    assert all(PASSPORT.encode() not in data for data in files.values())
    manifest = json.loads(files["manifest.json"])
    assert {entry["name"] for entry in manifest["files"]} == set(files)
    assert manifest["redaction"]["keys"] == ["passport"]


async def test_an_earlier_turn_a_turn_rests_on_is_named_as_such_not_as_this_turns_input() -> None:
    """The refund turn is approved because an earlier user message said "VIP". localize on the turn cannot remove
    that message (a rerun of the turn continues the same conversation); the report called it "the user's message,
    the input every rerun answers", and the earlier reply "what a rerun produces again". Each now says it is an
    earlier turn, kept by every rerun of this one, and how to test it."""
    from footprint_lab.providers import mock

    def desk(request: LLMRequest) -> str:
        users = [m["content"] for m in request.messages if m["role"] == "user"]
        if "refund" not in users[-1]:
            return "Noted."
        return "APPROVED" if any("VIP" in text for text in users[:-1]) else "DECLINED"

    chat = Chat(Agent(provider=mock(respond=desk), system="Support desk.",
                      context=[define_fact(id="policy", data="Refunds within 30 days.")]))
    await chat.send("I am a VIP customer.")
    await chat.send("Please refund order A-1.")
    report = await chat.localize(1)
    untested = dict(report.untested)
    earlier = {name: why for name, why in untested.items() if name.startswith("history#")}
    assert len(earlier) == 2 and all(why.startswith("an earlier turn of the conversation") and "new Chat" in why
                                     for why in earlier.values())
    assert untested["user-message"] == "the user's message is the input every rerun answers"
