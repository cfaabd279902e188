"""The views of two runs compared (``compare_runs``) and of a difference explained (``explain_difference``).

Rule kept here: each view is built with the escaping element builder (:func:`el`, :func:`table`)
from the object's own fields; every text from a model, a tool, a user or a declaration goes
through it, attributes included. A word diff reads with every style stripped: a removed run is
``[-…-]`` inside ``<del>``, an added one ``{+…+}`` inside ``<ins>`` (the words themselves say it,
the tint only helps), and every colour sits on its element beside a dark ink of its own, so the
view reads the same in a light or a dark notebook. It stays small however long the runs: at most
:data:`ROWS` differences drawn (the calls that answered first), each text cut at :data:`CELL`
characters, and a note naming what is left out and ``to_frame()``, which has all of it.

Role: lab layer; registered as renderers by :mod:`footprint_lab.lab.views`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from footprint_lab.explain.trials.comparison import word_diff
from footprint_lab.lab.views.explain import _count, _p_value, headings
from footprint_lab.lab.views.page import css, el, join, new_scope, shorten, table, wrap
from footprint_lab.markup import theme, words
from footprint_lab.markup.elements import Html

if TYPE_CHECKING:
    from footprint_lab.explain.trials.comparison import CallPair, Difference, PieceChange
    from footprint_lab.explain.trials.difference import DifferenceExplanation

#: the most differences (rows) the view draws, and the most characters of one text it draws
ROWS = 80
CELL = 300
_DEL = css(background_color=theme.RED_TINT, color=theme.INK, text_decoration="line-through")
_INS = css(background_color=theme.GREEN_TINT, color=theme.INK, text_decoration="none")


def diff_cell(a: str, b: str, limit: int = CELL * 2, changes: int = 12) -> Html:
    """A changed text as its word diff: removed words in ``<del>[-…-]</del>``, added in ``<ins>{+…+}</ins>``, the
    words both share shortened around them; at most ``limit`` characters and ``changes`` changed runs drawn."""
    parts: list[Any] = []
    left = limit
    for op, text in word_diff(a, b):
        if left <= 0 or changes <= 0:
            parts.append(" … (to_frame() has the whole diff)")
            break
        changes -= op != "="
        shown = text if op != "=" or len(text) <= 60 else f"{text[:25]} … {text[-25:]}"
        shown = shown[:left]
        left -= len(shown)
        if op == "=":
            parts.append(shown)
        else:
            wrapped = f"[-{shown}-]" if op == "-" else f"{{+{shown}+}}"
            parts.append(el("del" if op == "-" else "ins", wrapped, style=_DEL if op == "-" else _INS))
    return join(parts)


def _piece_row(change: PieceChange) -> list[Any]:
    if change.change == "changed" and change.a is not None and change.b is not None:
        text: Any = diff_cell(change.a, change.b)
    else:
        text = shorten((change.a if change.change == "removed" else change.b) or "", CELL)
    return [change.change, change.what, text, change.why]


def _pair_block(pair: CallPair, rows: list[list[Any]]) -> Html:
    member = f" in member '{pair.member}'" if pair.member else ""
    head = (f"Call {pair.step_a or '(none)'} (a) / {pair.step_b or '(none)'} (b){member}: "
            f"tokens {_or(pair.tokens_a)} / {_or(pair.tokens_b)}, "
            f"{_ms(pair.ms_a)} / {_ms(pair.ms_b)}")
    columns = ["change", "what", "text (a → b)", words.term("came_from", "span", shown="where it came from")]
    return el("details", el("summary", head), table(columns, rows),
              class_="fl-box", open=True)


def _or(value: Any) -> str:
    return "-" if value is None else str(value)


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} ms"


def _side_rows(pair: CallPair) -> list[list[Any]]:
    rows: list[list[Any]] = []
    if pair.a is None or pair.b is None:
        rows.append(["call only in " + ("b" if pair.a is None else "a"), "LLM call", "-",
                     "no call of the other run aligns with it"])
    if pair.tool_calls_a != pair.tool_calls_b:
        rows.append(["tool calls", "asked for", f"a: {_calls(pair.tool_calls_a)} | b: {_calls(pair.tool_calls_b)}",
                     "-"])
    if pair.reply_a != pair.reply_b and pair.a is not None and pair.b is not None:
        rows.append(["reply", "the call's reply", f"a: {shorten(pair.reply_a or '-', CELL // 2)} | "
                                                  f"b: {shorten(pair.reply_b or '-', CELL // 2)}", "-"])
    return rows


def _calls(calls: Sequence[str] | None) -> str:
    return "-" if calls is None else shorten(", ".join(calls) or "none", CELL // 2)


def difference_html(found: Difference) -> str:
    """Two runs compared: the answers side by side, then each differing pair of calls (the latest first)."""
    answers = table(["", "run a", "run b"], [
        ["run", found.run_a, found.run_b], ["answer", shorten(found.answer_a or "-", CELL),
                                            shorten(found.answer_b or "-", CELL)],
        ["tokens", found.tokens[0], found.tokens[1]], ["time", _ms(found.ms[0]), _ms(found.ms[1])]])
    blocks: list[Any] = []
    drawn = left_out = 0
    for pair in reversed(found.differing):
        rows = [_piece_row(change) for change in pair.pieces] + _side_rows(pair)
        room = ROWS - drawn
        if room <= 0:
            left_out += len(rows)
            continue
        left_out += max(len(rows) - room, 0)
        drawn += min(len(rows), room)
        blocks.append(_pair_block(pair, rows[:room]))
    parts: list[Any] = [el("p", el("b", found.summary())), answers]
    if not found.differing:
        parts.append(el("p", "Every aligned call was sent the same pieces and answered alike.", class_="fl-note"))
    parts.append(el("p", "Calls, the latest first; a word diff reads [-removed-] {+added+} from run a to run b.",
                    class_="fl-note"))
    parts += blocks
    if left_out:
        parts.append(el("p", f"… and {left_out} more difference(s) not drawn: difference.to_frame() lists every one.",
                        class_="fl-note"))
    return wrap(new_scope(), join(parts))


def difference_explanation_html(found: DifferenceExplanation) -> str:
    """The verdict on each carried difference with the counts it rests on, what was left untested and why."""
    rows = [[d.name, d.call, words.verdict(d.verdict), _count(d.flips, d.samples), d.other or "-",
             _count(d.noise_flips, d.noise_samples), _p_value(d.p_value, d.level), d.reruns, d.failed or "-",
             d.reason] for d in found.tested]
    verdicts = table(headings("difference", "call", "verdict", "flips", "other", "noise", "p_value", "reruns", "failed",
                              "reason"), rows)
    parts: list[Any] = [el("p", el("b", found.summary())),
                        table(["", "answer"], [["good", shorten(found.good, CELL)], ["bad", shorten(found.bad, CELL)]]),
                        verdicts if rows else None]
    if found.untested:
        parts += [el("h4", f"Not tested ({len(found.untested)}): no verdict, neither shown to matter nor not to"),
                  el("ul", *(el("li", el("code", name), ": ", why) for name, why in found.untested[:ROWS]))]
        if len(found.untested) > ROWS:
            parts.append(el("p", f"… and {len(found.untested) - ROWS} more: str() of this report names them all.",
                            class_="fl-note"))
    parts += [el("p", note, class_="fl-note") for note in found.notes]
    parts.append(el("p", "A difference is confirmed when carrying it into the bad run gives the good answer more often "
                         "than unchanged reruns do (Boschloo's exact test, the rate shared by Wiens' fallback "
                         f"procedure): at most {found.alpha:.0%} of calls confirm one that has no effect.",
                    class_="fl-note"))
    return wrap(new_scope(), join(parts))
