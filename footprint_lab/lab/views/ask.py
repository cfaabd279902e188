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

from footprint_lab.core.run import explained
from footprint_lab.explain.asking.explainer import BRACKETED as _BRACKETED
from footprint_lab.explain.provenance.index import RecordingIndex
from footprint_lab.lab.views.page import ASK_CSS, Html, el, join, new_scope, wrap

if TYPE_CHECKING:
    from footprint_lab.explain.asking.explainer import Explanation
    from footprint_lab.record.recording import Recording

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


def _chip(recording: Recording | None, cited: str) -> Html:
    opens = target(recording, cited) if recording is not None else None
    if opens is None:
        return el("code", cited, class_="fl-ask-cited", title="cited, shown by a view")
    return el("button", cited, type="button", class_="fl-ask-cited fl-ask-open", data_fl_cite=cited,
              title=f"open this {opens[0]}")


def _flag(named: str) -> Html:
    return el("code", f"{named} ?", class_="fl-ask-unsupported",
              title="named by the explainer, shown by no view: unsupported")


def _answer(answer: str, chips: dict[str, Html], flags: dict[str, Html]) -> Html:
    """The answer's text, escaped, each bracketed id replaced by its chip or its flag."""
    parts: list[str] = []
    at = 0
    for match in _BRACKETED.finditer(answer):
        inner = match.group(1).strip()
        shown = chips.get(inner) or flags.get(inner)
        if shown is None:
            continue
        parts += [answer[at:match.start()], shown]
        at = match.end()
    parts.append(answer[at:])
    return join(parts)


def answer_html(explanation: Explanation, recording: Recording | None = None) -> Html:
    """The explainer's answer with its citations, as one HTML fragment for the widget (``recording``: the run
    it explains, whose calls and pieces a cited id opens; ``None`` draws every cited id as text)."""
    chips = {cited: _chip(recording, cited) for cited in explanation.cited}
    flags = {named: _flag(named) for named in explanation.unsupported}
    answer = explanation.answer
    body = (el("p", _answer(answer, chips, flags), class_="fl-ask-text") if answer is not None else
            el("p", f"No answer: {' '.join(explanation.notes)}", class_="fl-ask-text fl-dim"))
    cited = join(chips.values(), " ") or el("span", "none", class_="fl-dim")
    rows = [el("div", "Cited from the evidence: ", cited, class_="fl-ask-ids")]
    if flags:
        rows.append(el("div", "Named but shown by no view (unsupported): ", join(flags.values(), " "),
                       class_="fl-ask-ids fl-ask-warn"))
    opened = ", ".join(explanation.opened) or "none"
    holder = "lab.explanation" if recording is not None else "explanation.run"
    rows.append(el("div", f"Views opened: {opened} · ", el("code", holder), " holds the explainer's own run",
                   class_="fl-ask-ids fl-dim"))
    return el("div", el("div", f"Q: {explanation.question}", class_="fl-ask-q"), body, *rows,
              class_="fl-ask-answer", data_fl_ask_status=explanation.status)


def explanation_html(explanation: Explanation) -> Html:
    """An ``Explanation`` displayed on its own: the answer and its citations, in the views' style sheet."""
    return wrap(new_scope(), answer_html(explanation), extra=ASK_CSS)


def note_html(message: str) -> Html:
    """A line in the Ask box (how to enable it, what to do first, what happened)."""
    return el("div", message, class_="fl-ask-note")
