"""How a ``Chat`` shows itself in a notebook: its turns in order, each opening to its answer view.

Rule kept here: a chat's view is made of its turns' own views and adds only what a chat knows:
the turn number, its status, what changed in its context since the turn before, and which
earlier turns its conversation carried. Each turn is a closed ``<details>`` whose body is the
run's answer view (:func:`footprint_lab.lab.views.answer_view`), so a long chat stays one line
per turn until a turn is opened. Only the last :data:`SHOWN_TURNS` turns are drawn: a long chat
says how many earlier turns are folded and how to see them (``chat.frame()``, ``chat[k]``), so
its view stays the same size however long the chat grows. A turn's view lists the pieces that
turn added and folds the messages it carried from earlier turns (sent again with every turn)
into one line naming those turns and ``chat[k]``, whose full view lists them: each turn drawn
stays a few kB however many messages it carries. Every value is written through the
engine's one door for values (``markup.elements``), as the chat masks it now (a redaction policy's
masks included, a value a later turn learned too); no JavaScript.

Role: lab layer; importing it registers the ``chat`` renderer with the display registry
(``base.display``), which the package root loads the first time a chat is displayed.
"""

from __future__ import annotations

from typing import Any

from footprint_lab.base import display
from footprint_lab.core.chat import Chat
from footprint_lab.lab.views import answer_view
from footprint_lab.lab.views.calls import Folded
from footprint_lab.lab.views.page import new_scope
from footprint_lab.markup import theme
from footprint_lab.markup.elements import css, el, esc, join, raw

#: how many turns, the last ones, a chat's view draws; the earlier ones are folded into one line
SHOWN_TURNS = 15

_CSS = (f"§{{font-family:{theme.FONT};font-size:{theme.TEXT};color:{theme.INK}}}"
        f"§ .fl-chat-turn{{border:1px solid {theme.LINE};border-radius:{theme.RADIUS};margin:{theme.SPACE[1]} 0;"
        f"padding:{theme.SPACE[0]} {theme.SPACE[2]}}}§ .fl-chat-turn>summary{{cursor:pointer}}"
        f"§ .fl-chat-k{{font:600 {theme.SMALL} {theme.MONO};margin-right:{theme.SPACE[1]}}}"
        f"§ .fl-chat-said,§ .fl-chat-meta{{color:{theme.GREY}}}§ .fl-chat-meta{{font-size:{theme.TINY};"
        f"margin:{theme.SPACE[0]} 0}}")


def _turn(chat: Chat, row: dict[Any, Any]) -> str:
    """One turn: a closed block whose summary says number, status (symbol and word), message and answer."""
    number = int(row["turn"])
    status = str(row["status"])
    born = chat.born_in(number)
    carried = {source for source, turn in born.items() if turn != number}
    earlier = spans({born[source] for source in carried})
    meta = [str(row["changed"]), f"{int(row['tokens'])} tokens"]
    if carried:
        meta.append(f"carries turns {earlier}")
    summary = el("summary", el("span", f"turn {number}", class_="fl-chat-k"),
                 el("span", theme.status_mark(status), style=css(color=theme.status_colour(status))), " · ",
                 el("span", raw(esc(row["message"] or "", limit=120)), class_="fl-chat-said"), " → ",
                 raw(esc(row["answer"] or "", limit=160)))
    # a turn's view without its timeline and its call's messages, and with the messages it carried from earlier
    # turns folded into one line: the chat stays small however long it grows (chat[k] lists them all)
    said = (f"{len(carried)} earlier message(s) carried from turns {earlier}, "
            f"not listed here: chat[{number}] shows this turn's full view, each of them with its custody.")
    view = answer_view(chat[number].recording, messages=False, timeline=False,
                       folded=Folded(carried, said) if carried else None)
    return el("details", summary, el("div", " · ".join(meta), class_="fl-chat-meta"), raw(view),
              class_="fl-chat-turn", data_fl_turn=str(number))


def spans(turns: set[int]) -> str:
    """Turn numbers as runs of consecutive ones (``0-4, 7``), so a line naming them stays short in a long chat."""
    ordered = sorted(turns)
    runs: list[list[int]] = []
    for turn in ordered:
        if runs and turn == runs[-1][-1] + 1:
            runs[-1].append(turn)
        else:
            runs.append([turn])
    return ", ".join(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)


def _shown(chat: Chat) -> tuple[list[dict[Any, Any]], str | None]:
    """The rows of the turns the view draws (the last :data:`SHOWN_TURNS`), and the line saying what is folded."""
    rows = chat.frame().to_dict("records")
    folded = max(len(rows) - SHOWN_TURNS, 0)
    note = (f"{folded} earlier turn(s) folded (turns 0 to {folded - 1}): chat.frame() lists every turn, and "
            "chat[k] (or chat.turn(k)) shows turn k." if folded else None)
    return rows[folded:], note


def chat_html(chat: Chat) -> str:
    """The chat as HTML: a header, a line for the folded turns, then one closed block per turn shown."""
    scope = new_scope()
    rows, folded = _shown(chat)
    turns = [_turn(chat, row) for row in rows]
    forked = f" · forked at turn {chat.forked_from[1]}" if chat.forked_from is not None else ""
    head = el("div", el("b", "Chat"), f" · {len(chat)} turn(s){forked}", class_="fl-section-title")
    style = el("style", raw(_CSS.replace("§", f"#{scope}")))
    body = join(turns) if turns else el("p", "No turn yet.")
    note = el("p", folded, class_="fl-chat-meta") if folded else ""
    return el("div", style, head, note, body, id=scope, class_="fl-chat")


def chat_text(chat: Chat) -> str:
    """The chat as text: one line per turn shown, after a line for the folded ones."""
    rows, folded = _shown(chat)
    lines = [repr(chat), *([f"  {folded}"] if folded else [])]
    for row in rows:
        lines.append(f"  turn {row['turn']} [{row['status']}] {str(row['message'] or '')[:60]!r} -> "
                     f"{str(row['answer'] or '')[:60]!r}")
    return "\n".join(lines)


def chat_bundle(chat: Any) -> dict[str, Any]:
    return {"text/plain": chat_text(chat), "text/html": chat_html(chat)}


display.register("chat", chat_bundle)
