"""An explainer's answer drawn with the ids it cites checked, and made clickable in the Lab's Ask box.

Rule kept here: what the analyst reads is :func:`footprint_lab.explain.ask`'s answer, escaped,
with every id it cites checked against the run. A cited id that names an LLM call or a piece
of declared context becomes a chip the widget opens (``data-fl-cite``, resolved in the kernel
by :func:`target`); a cited id of another step is marked; an id the explainer named that no
view showed it is flagged as unsupported, inline and in its own list. Pure functions of an
``Explanation`` and the run's recording, no JavaScript. Displayed on its own (an
``Explanation`` in a cell, without the run it explains) the same view draws every cited id as
text, since there is no run to open it in.

Role: lab layer, used by :mod:`footprint_lab.lab.widget` (through :mod:`footprint_lab.lab.ask_box`)
and registered as the ``explanation`` view.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from footprint_lab.core._run import explained
from footprint_lab.explain._asking import BRACKETED as _BRACKETED
from footprint_lab.explain._index import RecordingIndex
from footprint_lab.lab.views.page import ASK_CSS, attr, new_scope, wrap
from footprint_lab.lab.views.page import esc as text

if TYPE_CHECKING:
    from footprint_lab.engine._recording import Recording
    from footprint_lab.explain._asking import Explanation

#: what the Ask box says when the Lab was built without an explainer
HINT = ("Ask needs an explainer model: build the Lab with explainer=..., a provider such as "
        "footprint_lab.providers.openai('gpt-4o-mini') or a string such as 'openai:gpt-4o-mini'.")
NO_RUN = "Ask questions the latest run: press Run first."


def target(recording: Recording, cited: str) -> tuple[str, str | None, str] | None:
    """What a cited id opens: ``("call", step, "")`` for an LLM call; ``("piece", call, slot)`` for a
    piece of context, with the call it reached the answer through (``None``: the answering call);
    ``None`` for any other id."""
    if cited in RecordingIndex(recording).exchanges:
        return "call", cited, ""
    reached = next((c for c in explained(recording).backtrack() if c.source_id == cited and c.read_by), None)
    if reached is not None:
        return "piece", reached.read_by, reached.slot
    pending = [recording]
    while pending:
        current = pending.pop()
        if any(piece.source_id == cited for piece in current.context_pieces):
            return "piece", None, ""
        pending += current.children
    return None


def _chip(recording: Recording | None, cited: str) -> str:
    opens = target(recording, cited) if recording is not None else None
    if opens is None:
        return f'<code class="fl-ask-cited" title="cited, shown by a view">{text(cited)}</code>'
    return (f'<button type="button" class="fl-ask-cited fl-ask-open" data-fl-cite="{attr(cited)}" '
            f'title="open this {opens[0]}">{text(cited)}</button>')


def _flag(named: str) -> str:
    return (f'<code class="fl-ask-unsupported" title="named by the explainer, shown by no view: unsupported">'
            f"{text(named)} ?</code>")


def _answer(answer: str, chips: dict[str, str], flags: dict[str, str]) -> str:
    """The answer's text, escaped, each bracketed id replaced by its chip or its flag."""
    parts: list[str] = []
    at = 0
    for match in _BRACKETED.finditer(answer):
        inner = match.group(1).strip()
        shown = chips.get(inner) or flags.get(inner)
        if shown is None:
            continue
        parts += [text(answer[at:match.start()]), shown]
        at = match.end()
    parts.append(text(answer[at:]))
    return "".join(parts)


def answer_html(explanation: Explanation, recording: Recording | None = None) -> str:
    """The explainer's answer with its citations, as one HTML fragment for the widget (``recording``: the run
    it explains, whose calls and pieces a cited id opens; ``None`` draws every cited id as text)."""
    chips = {cited: _chip(recording, cited) for cited in explanation.cited}
    flags = {named: _flag(named) for named in explanation.unsupported}
    answer = explanation.answer
    body = (f'<p class="fl-ask-text">{_answer(answer, chips, flags)}</p>' if answer is not None else
            f'<p class="fl-ask-text fl-dim">No answer: {text(" ".join(explanation.notes))}</p>')
    cited = " ".join(chips.values()) or '<span class="fl-dim">none</span>'
    rows = [f'<div class="fl-ask-ids">Cited from the evidence: {cited}</div>']
    if flags:
        rows.append(f'<div class="fl-ask-ids fl-ask-warn">Named but shown by no view (unsupported): '
                    f'{" ".join(flags.values())}</div>')
    opened = ", ".join(explanation.opened) or "none"
    holder = "lab.explanation" if recording is not None else "explanation.run"
    rows.append(f'<div class="fl-ask-ids fl-dim">Views opened: {text(opened)} · '
                f"<code>{holder}</code> holds the explainer's own run</div>")
    return (f'<div class="fl-ask-answer" data-fl-ask-status="{attr(explanation.status)}">'
            f'<div class="fl-ask-q">Q: {text(explanation.question)}</div>{body}{"".join(rows)}</div>')


def explanation_html(explanation: Explanation) -> str:
    """An ``Explanation`` displayed on its own: the answer and its citations, in the views' style sheet."""
    return wrap(new_scope(), answer_html(explanation), extra=ASK_CSS)


def note_html(message: str) -> str:
    """A line in the Ask box (how to enable it, what to do first, what happened)."""
    return f'<div class="fl-ask-note">{text(message)}</div>'

