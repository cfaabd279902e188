"""The Lab's turns are a Chat: listed, opened, rerun without a source (only that turn is called), forked; and the
synced state is versioned data, the selection included."""

from __future__ import annotations

import json

from conversation_kit import Seen

from footprint_lab import Agent, Chat, Lab, Redaction
from footprint_lab.context import define_fact
from footprint_lab.providers import LLMRequest

POLICY = "Refunds take 5 days."


def by_policy(request: LLMRequest) -> str:
    asked = [m for m in request.messages if m["role"] == "user"][-1]["content"]
    if "refund" in asked.lower():
        return "In 5 days." if POLICY in request.system else "I cannot say."
    return f"Noted: {asked}"


def support(**keywords: object) -> tuple[Lab, Seen]:
    seen = Seen(by_policy)
    policy = define_fact(id="refund-policy", data=POLICY)
    agent = Agent(provider=seen.provider, system="Support desk.", context=[policy], **keywords)
    return Lab(agent), seen


async def press(lab: Lab, handler: str, **content: object) -> None:
    lab._handle(Lab._HANDLERS[handler], content)   # as a message from the browser arrives
    if lab._task is not None:
        await lab._task


async def three_turns(lab: Lab) -> None:
    for message in ("Order A-1.", "It broke.", "When is my refund?"):
        await press(lab, "run", message=message)


async def test_the_widgets_turns_are_one_chat_listed_under_the_box():
    lab, seen = support()
    await three_turns(lab)
    assert isinstance(lab.chat, Chat) and len(lab.chat) == 3 and lab.chat[-1] is lab.run and lab.turn == 3
    assert [(row["turn"], row["status"], row["message"]) for row in lab.turns] == [
        (0, "finished", "Order A-1."), (1, "finished", "It broke."), (2, "finished", "When is my refund?")]
    assert lab.turns[2]["answer"] == "In 5 days."
    assert lab.sources == ["system-prompt", "refund-policy"]
    assert len(seen.requests[-1].messages) == 5                       # turn 2 was sent the two before it
    lab.press_new()
    assert (lab.chat, lab.turns) == (None, [])
    await press(lab, "run", message="Hello again.")
    assert len(lab.chat) == 1 and "continues" not in lab.run.recording.meta


async def test_a_turn_opens_in_the_views_and_is_selected():
    lab, _ = support()
    await three_turns(lab)
    await press(lab, "turn", action="open", turn=0)
    assert lab.run is lab.chat[0] and "Noted: Order A-1." in lab.answer_html
    assert lab.selection == {"turn": 0}
    lab.press_click({"answer": True})
    assert lab.selection == {"turn": 0, "panel": "answer", "call": lab.chat[0].recording.exchanges[-1].step_id}


async def test_rerun_a_turn_without_a_source_calls_the_provider_for_that_turn_only():
    lab, seen = support()
    await three_turns(lab)
    before = len(seen.requests)
    await press(lab, "turn", action="rerun", turn=2, source="refund-policy")
    assert len(seen.requests) == before + 1
    assert "Turn 2" in lab.panel_html and "Rerun without 'refund-policy': the outcome changed" in lab.panel_html
    assert "I cannot say." in lab.panel_html
    assert lab.selection == {"turn": 2, "panel": "rerun", "source": "refund-policy"}
    assert len(lab.chat) == 3                                         # a rerun is no turn of the chat


async def test_a_piece_of_an_earlier_turn_reruns_inside_that_turns_conversation():
    lab, seen = support()
    await three_turns(lab)
    await press(lab, "turn", action="open", turn=2)
    call = lab.run.recording.exchanges[-1].step_id
    lab.press_click({"piece": "refund-policy", "slot": "system", "call": call})
    assert lab.selection["piece"] == "refund-policy" and lab.selection["turn"] == 2
    await press(lab, "click", action="rerun", source="refund-policy")
    assert "the outcome changed" in lab.panel_html and "fl-card" not in lab.panel_html
    assert [m["content"] for m in seen.requests[-1].messages][:2] == ["Order A-1.", "Noted: Order A-1."]


async def test_fork_here_goes_on_in_a_new_chat_and_leaves_the_first_as_it_was():
    lab, seen = support()
    await three_turns(lab)
    first = lab.chat
    await press(lab, "turn", action="fork", turn=1)
    fork = lab.chat
    assert fork is not first and fork.forked_from == (first, 1) and len(fork) == 1 and len(first) == 3
    assert [row["turn"] for row in lab.turns] == [0] and lab.follows and lab.run is first[0]
    await press(lab, "run", message="When is my refund?")
    assert len(fork) == 2 and len(first) == 3
    assert [m["content"] for m in seen.requests[-1].messages] == ["Order A-1.", "Noted: Order A-1.",
                                                                  "When is my refund?"]


async def test_turn_buttons_naming_no_turn_do_nothing():
    lab, seen = support()
    await three_turns(lab)
    version, calls = lab.state_version, len(seen.requests)
    for content in ({"action": "open", "turn": 9}, {"action": "fork", "turn": "1"}, {"action": "rerun", "turn": 0},
                    {"action": "explode", "turn": 0}, {"turn": True, "action": "open"}):
        await press(lab, "turn", **content)
    assert (lab.state_version, len(seen.requests), len(lab.chat)) == (version, calls, 3)


async def test_every_change_of_what_the_widget_shows_moves_the_state_version():
    lab, _ = support()
    assert lab.state_schema == 2 and lab.state_version == 0
    states: list[int] = []
    lab.observe(lambda change: states.append(change["new"]), names="state_version")
    await press(lab, "run", message="Order A-1.")
    assert states == list(range(1, len(states) + 1)) and lab.state_version == states[-1] > 0
    moved = lab.state_version
    lab.press_click({"answer": True})
    assert lab.state_version > moved and lab.selection["panel"] == "answer"
    saved = lab.get_state()
    assert {"state_version", "state_schema", "selection", "turns", "sources"} <= set(saved)


async def test_the_turn_rows_hold_what_the_policy_covers_masked():
    lab, _ = support(redact=Redaction(patterns={"card": r"4111-\d{4}"}))
    await press(lab, "run", message="Card 4111-2222 was charged.")
    await press(lab, "run", message="Refund 4111-2222 please.")
    state = json.dumps(lab.get_state())
    assert "4111-2222" not in state and "[redacted:card]" in state
    await press(lab, "turn", action="rerun", turn=1, source="refund-policy")
    assert "the outcome changed" in lab.panel_html and "4111-2222" not in lab.panel_html
