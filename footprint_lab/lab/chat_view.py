"""How a ``Chat`` shows itself in a notebook: its turns in order, each opening to its answer view.

Rule kept here: a chat's view is made of its turns' own views and adds only what a chat knows:
the turn number, its status, what changed in its context since the turn before, and which
earlier turns its conversation carried. Each turn is a closed ``<details>`` whose body is the
run's answer view (:func:`footprint_lab.lab.views.answer_view`), so a long chat stays one line
per turn until a turn is opened. Every value is written through the engine's one door for
values (``engine.markup``), as recorded (a redaction policy's masks included); no JavaScript.

Role: lab layer; importing it registers the ``chat`` renderer with the display registry
(``engine._display``), which the package root loads the first time a chat is displayed.
"""

from __future__ import annotations

from typing import Any

from footprint_lab.core._chat import Chat
from footprint_lab.engine import _display as display
from footprint_lab.engine.markup import attr, esc
from footprint_lab.lab.views import answer_view
from footprint_lab.lab.views.page import new_scope

_STATUS_COLOURS = {"finished": "#1a7f37", "paused": "#9a6700", "failed": "#cf222e", "cancelled": "#6e7781",
                   "abandoned": "#6e7781"}
_CSS = ("§{font-family:system-ui,sans-serif;font-size:13px}§ .fl-chat-turn{border:1px solid #d0d7de;"
        "border-radius:6px;margin:.3rem 0;padding:.2rem .6rem}§ .fl-chat-turn>summary{cursor:pointer}"
        "§ .fl-chat-k{font:600 12px monospace;margin-right:.5rem}§ .fl-chat-said{color:#57606a}"
        "§ .fl-chat-meta{font-size:11px;color:#6e7781;margin:.2rem 0}")


def chat_html(chat: Chat) -> str:
    """The chat as HTML: a header, then one closed block per turn holding its answer view."""
    scope = new_scope()
    frame = chat.frame()
    rows = []
    for row in frame.to_dict("records"):
        number = int(row["turn"])
        run = chat[number]
        colour = _STATUS_COLOURS.get(str(row["status"]), "#6e7781")
        carried = sorted(set(chat.born_in(number).values()) - {number})
        from_turns = f" · carries turns {', '.join(map(str, carried))}" if carried else ""
        rows.append(
            f'<details class="fl-chat-turn" data-fl-turn="{attr(str(number))}">'
            f'<summary><span class="fl-chat-k">turn {number}</span>'
            f'<span style="color:{colour}">{esc(row["status"])}</span> · '
            f'<span class="fl-chat-said">{esc(row["message"] or "", limit=120)}</span> → '
            f'{esc(row["answer"] or "", limit=160)}</summary>'
            f'<div class="fl-chat-meta">{esc(row["changed"])} · {int(row["tokens"])} tokens{esc(from_turns)}</div>'
            f"{answer_view(run.recording)}</details>")
    head = (f'<div class="fl-section-title"><b>Chat</b> · {len(chat)} turn(s)'
            + (f" · forked at turn {chat.forked_from[1]}" if chat.forked_from is not None else "") + "</div>")
    style = "<style>" + _CSS.replace("§", f"#{scope}") + "</style>"
    return f'<div id="{scope}" class="fl-chat">{style}{head}{"".join(rows) or "<p>No turn yet.</p>"}</div>'


def chat_text(chat: Chat) -> str:
    """The chat as text: one line per turn."""
    lines = [repr(chat)]
    for row in chat.frame().to_dict("records"):
        lines.append(f"  turn {row['turn']} [{row['status']}] {str(row['message'] or '')[:60]!r} -> "
                     f"{str(row['answer'] or '')[:60]!r}")
    return "\n".join(lines)


def chat_bundle(chat: Any) -> dict[str, Any]:
    return {"text/plain": chat_text(chat), "text/html": chat_html(chat)}


display.register("chat", chat_bundle)
