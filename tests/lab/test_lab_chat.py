"""A chat in the notebook: it displays as its turns, each opening to its answer view, and %fp_why takes chat[k]."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from notebook_kit import Executed

from footprint_lab import Agent, Chat, Redaction
from footprint_lab.context import define_fact
from footprint_lab.providers import mock

SETUP = """
from footprint_lab import Agent, Chat
from footprint_lab.context import define_fact
from footprint_lab.providers import mock

def respond(request):
    asked = [m for m in request.messages if m["role"] == "user"][-1]["content"]
    return "In 5 days." if "Refunds take 5 days" in request.system and "refund" in asked else "Noted."

policy = define_fact(id="refund-policy", data="Refunds take 5 days.")
chat = Chat(Agent(provider=mock(respond=respond), context=[policy]))
chat.send_sync("Order A-1 <b>broke</b>.")
chat.send_sync("When is my refund?")
"""
CELLS = [
    "%load_ext footprint_lab",
    SETUP,
    "%fp_why chat[1]",  # 2
    "%fp_why chat[7]",  # 3: a turn the chat does not have
    "setup_text = 'x'\n%fp_why setup_text[0]",  # 4: not a chat
    "chat",  # 5: the chat displays as its turns
    "%fp_context chat[-1]",  # 6
]


@cache
def executed() -> Executed:
    return Executed(CELLS)


def outputs(cell: int) -> list[Any]:
    return executed().outputs(cell)


def data(cell: int) -> dict[str, Any]:
    return executed().data(cell)


def test_fp_why_takes_a_turn_of_a_chat():
    html = data(2)["text/html"]
    assert 'data-fl-piece="refund-policy"' in html and 'data-fl-piece="history#0"' in html


def test_a_turn_the_chat_does_not_have_is_refused_by_name():
    errors = executed().errors(3)
    assert len(errors) == 1 and errors[0].ename == "UnknownTurnError" and executed().error_outputs(3) == []


def test_a_variable_that_is_no_chat_is_refused_with_the_chats_that_exist():
    errors = executed().errors(4)
    assert len(errors) == 1 and errors[0].ename == "MagicInputError" and executed().error_outputs(4) == []
    cards = "".join(o.data.get("text/html", "") for o in outputs(4) if o.output_type == "display_data")
    assert "chat" in cards and "ERR_MAGIC_INPUT" in cards


def test_the_chat_displays_as_its_turns_each_opening_to_its_answer_view():
    html = data(5)["text/html"]
    assert html.count('class="fl-chat-turn"') == 2
    assert html.count("data-fl-answer") >= 2  # each turn holds its answer view
    assert "&lt;b&gt;broke&lt;/b&gt;" in html and "<b>broke</b>" not in html
    assert "carries turns 0" in html
    assert "Chat(2 turn(s): finished, finished)" in data(5)["text/plain"]


def test_fp_context_takes_a_turn_too():
    assert 'data-slot="system"' in data(6)["text/html"]


async def test_a_chat_view_shows_what_the_policy_covers_masked() -> None:
    agent = Agent(provider=mock(reply="Card 4111-2222-3333-4444 noted."),
                  context=[define_fact(id="f", data="x")], redact=Redaction(patterns={"card": r"\d{4}(?:-\d{4}){3}"}))
    chat = Chat(agent)
    await chat.send("My card is 4111-2222-3333-4444.")
    await chat.send("Thanks.")
    bundle = chat._repr_mimebundle_()
    assert "4111" not in bundle["text/html"] and "4111" not in bundle["text/plain"]
    assert re.search(r"turn 1</span>", bundle["text/html"])
    assert "No turn yet." in Chat(agent)._repr_mimebundle_()["text/html"]
