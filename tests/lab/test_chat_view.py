"""A long chat's view: each turn lists what it added and folds what it carried, so the view stays small.

A turn of a chat is sent every earlier message again; its own view (``chat[k]``) lists them all,
piece by piece. The chat's view draws its last turns, each with its carried messages folded into one
line that names the turns they came from and ``chat[k]``.
"""

from __future__ import annotations

from golden_kit import dom

from footprint_lab import Agent, Chat
from footprint_lab.lab.chat_view import SHOWN_TURNS, spans
from footprint_lab.providers import mock


def grown(turns: int) -> Chat:
    chat = Chat(Agent(provider=mock(respond=lambda request: "Noted."), system="You are a support desk."))
    for number in range(turns):
        chat.send_sync(f"Message {number}: my order is A-{number}.")
    return chat


def test_a_chat_of_hundreds_of_turns_displays_in_well_under_a_megabyte_and_stops_growing():
    shorter = len(grown(100)._repr_mimebundle_()["text/html"])
    html = grown(300)._repr_mimebundle_()["text/html"]
    assert len(html) < 250_000  # 15 turns drawn, each well under 20 kB
    assert len(dom(html).find_all("details", "fl-chat-turn")) == SHOWN_TURNS
    assert len(html) - shorter < 1_000  # a few more digits, not more rows


def test_a_turn_lists_the_pieces_it_added_and_folds_the_messages_it_carried():
    chat = grown(300)
    view = dom(chat._repr_mimebundle_()["text/html"])
    last = view.find("details", "fl-chat-turn", data_fl_turn="299")
    listed = {row.attrs["data-fl-piece"] for row in last.find_all("details", "fl-piece")}
    assert not any(source.startswith("history#") for source in listed)
    assert "system" in {row.attrs["data-fl-slot"] for row in last.find_all("details", "fl-piece")}
    folded = last.find("p", "fl-folded")
    assert folded.attrs["data-fl-folded"] == "598"
    assert folded.text() == ("598 earlier message(s) carried from turns 0-298, not listed here: chat[299] shows "
                             "this turn's full view, each of them with its custody.")
    assert "carries turns 0-298" in last.find("div", "fl-chat-meta").text()


def test_the_folded_messages_are_still_there_in_the_turns_own_view():
    chat = grown(30)
    carried = {source for source, turn in chat.born_in(29).items() if turn != 29}
    assert len(carried) == 58
    sent = set(chat[29].context()["source_id"])
    assert carried <= sent
    own = dom(chat[29]._repr_mimebundle_()["text/html"])
    rows = {row.attrs["data-fl-piece"] for row in own.find_all("details", "fl-piece")}
    assert "history#0" in rows and "history#57" in rows
    assert own.find_all("p", "fl-folded") == []


def test_turns_are_named_as_runs_of_consecutive_numbers():
    assert spans({0, 1, 2, 3, 7, 9, 10}) == "0-3, 7, 9-10"
    assert spans({4}) == "4"
