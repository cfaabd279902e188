"""MessagesView: what one call sends, as a view over the conversation plus that call's injections."""

from __future__ import annotations

import pytest

from footprint_lab.providers import MessagesView


def conversation(n: int) -> list[dict[str, str]]:
    return [{"role": "user" if k % 2 == 0 else "assistant", "content": f"turn {k}"} for k in range(n)]


def test_a_prefix_view_stays_what_was_sent_while_the_conversation_grows():
    history = conversation(3)
    sent = MessagesView(history)
    history.append({"role": "user", "content": "later"})
    assert len(sent) == 3 and sent == conversation(3) and list(sent) == conversation(3)
    assert sent[-1] is history[2] and sent[0] is history[0]  # the turns themselves, never copies
    with pytest.raises(IndexError):
        sent[3]


def test_a_tail_follows_the_prefix_in_every_way_of_reading():
    history = conversation(2)
    tail = ({"role": "user", "content": "reminder"},)
    view = MessagesView(history, tail=tail)
    expected = [*conversation(2), tail[0]]
    assert len(view) == 3 and list(view) == expected and view == expected
    assert view[2] is tail[0] and view[-1] is tail[0] and view[-3] is history[0]
    assert view[1:] == expected[1:] and view[::-1] == expected[::-1]
    history.append({"role": "assistant", "content": "later"})
    assert list(view) == expected  # a turn appended afterwards is not part of what was sent
    for bad in (3, -4):
        with pytest.raises(IndexError):
            view[bad]
    assert view != [*expected, tail[0]] and view != "not messages"
    assert MessagesView(history, 0, tail) == list(tail)
