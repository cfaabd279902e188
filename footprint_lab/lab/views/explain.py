"""HTML of the explanation objects and the checkpoints, with no JavaScript.

Rule kept here: each view is built from the object's own fields and its plain text (which
the explain layer writes once), every value escaped, wrapped in a scoped style sheet. A
backtrack opens per piece to its hops; a localization, a missing-context report, an
integrity report and a culprit search are tables (an absent value reads "-"); an explainer's
answer shows its citations; the rest show their summary above their full text.

Role: lab layer; registered as renderers by :mod:`footprint_lab.lab.views`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from footprint_lab.lab.views.page import (
    CORRELATIONAL,
    Html,
    answer_box,
    el,
    esc,
    flag,
    join,
    kind_style,
    new_scope,
    raw,
    shorten,
    table,
    wrap,
)
from footprint_lab.markup import words

if TYPE_CHECKING:
    from footprint_lab.explain.checks.integrity import IntegrityReport
    from footprint_lab.explain.provenance.custody import Backtrack
    from footprint_lab.explain.trials.ablation import Localization
    from footprint_lab.explain.trials.culprits import Culprits
    from footprint_lab.explain.trials.dropped import DroppedContext
    from footprint_lab.explain.trials.replay import Replay

#: how many candidates a displayed backtrack opens before pointing at the full text
SHOWN = 40


def text_view(summary: str, text: str) -> Html:
    """A headline and the full text beneath it."""
    scope = new_scope()
    return wrap(scope, join([headline(summary), el("pre", raw(esc(text, whole="str() of this report")))]))


def headline(summary: str) -> Html:
    """An explanation's summary, in bold, above its view."""
    return el("p", el("b", summary))


def text_bundle(summary: str, text: str) -> dict[str, Any]:
    """``text/plain`` and ``text/html`` of an object whose whole story is its text."""
    return {"text/plain": text, "text/html": text_view(summary, text)}


def backtrack_html(walked: Backtrack) -> Html:
    """Every candidate as a row that opens to its chain of custody."""
    from footprint_lab.lab.views.calls import _hops_html, piece_summary

    scope = new_scope()
    parts = [headline(walked.summary())]
    if walked.output:
        parts.append(answer_box("finished", el("b", f"Output of {walked.target}"),
                                el("pre", raw(esc(walked.output, whole="bt.output"))), data_fl_answer=True))
    if walked.decisions:
        parts += [el("h4", "Decisions on the path"),
                  el("ul", *(el("li", el("code", d.step_id), " decided ", el("b", d.rule), f": chose {d.chosen}")
                             for d in walked.decisions))]
    for candidate in walked.candidates[:SHOWN]:
        piece = candidate.piece
        proof = None if candidate.proven else words.NOT_PROVEN
        summary = piece_summary(piece, shorten(piece.content, 100), None, read_by=candidate.read_by, proof=proof)
        parts.append(el("details", el("summary", summary), _hops_html(candidate.hops, scope), class_="fl-piece",
                        style=kind_style(piece.source_kind), data_fl_piece=piece.source_id, data_fl_slot=piece.slot,
                        data_fl_call=candidate.read_by))
    if len(walked.candidates) > SHOWN:
        parts.append(el("p", f"… and {len(walked.candidates) - SHOWN} more: str(bt) or bt.to_frame() lists them all.",
                        class_="fl-note"))
    if walked.notes:
        parts += [el("h4", "What the walk could not follow or prove"),
                  el("ul", *(el("li", note) for note in walked.notes))]
    return wrap(scope, join(parts))


def _count(flips: int | None, samples: int | None) -> str:
    return f"{flips}/{samples}" if flips is not None and samples else "-"


def _p_value(p_value: float | None, level: float | None) -> str:
    if p_value is None:
        return "-"
    shown = f"{p_value:.2g}" if p_value >= 0.001 else f"{p_value:.1e}"
    return f"{shown} {'≤' if level is not None and p_value <= level else '>'} {level:.2g}" if level else shown


def localization_html(found: Localization) -> Html:
    """The verdict on each tested suspect, with the counts it rests on, under the trial's summary."""
    rows = [[s.rank, words.kind(s.source_kind), s.source_id, words.verdict(s.verdict), _count(s.flips, s.samples),
             _count(s.noise_flips, s.noise_samples), _p_value(s.p_value, s.level), s.reruns, s.failed or "-",
             f"{s.score:.2f}", s.reason] for s in found.suspects]
    # the sets removed together, as the text prints them (a cause that acts only with another)
    rows += [["-", "together", " + ".join(v.arm.exclude), words.verdict(v.verdict), _count(v.flips, v.samples),
              _count(v.noise_flips, v.noise_samples), _p_value(v.p_value, v.level), v.reruns, v.failed or "-", "-",
              v.reason + found.explained_by(v)] for v in found.together]
    verdicts = table(headings("rank", "source_kind", "source_id", "verdict", "flips", "noise", "p_value", "reruns",
                              "failed", "score", "reason"), rows)
    untested = [el("li", el("code", name), ": ", why) for name, why in found.untested]
    extra = join([el("h4", f"Not tested ({len(found.untested)}): no verdict, neither shown to matter nor not to"),
                  el("ul", *untested)]) if untested else None
    notes = (el("p", note, class_="fl-note") for note in [*found.notes, *found.advice()])
    how = el("p", f"Screening: {found.design}. A verdict tests the flips against the noise of unchanged reruns "
                  "(Boschloo's exact test, the rate shared by Wiens' fallback procedure): at most "
                  f"{found.alpha:.0%} of calls confirm a piece that has no effect.", class_="fl-note")
    return wrap(new_scope(), join([headline(found.summary()), verdicts, extra, *notes, how]))


def dropped_html(found: DroppedContext) -> Html:
    """Every piece left out of an answering call, as a table, with what restoring it did when tested."""
    rows = [[words.kind(p.source_kind), p.source_id, p.call, p.slot, words.term(p.verdict, "span"), p.why,
             words.verdict(p.status),
             _count(p.trial.flips, p.trial.samples) if p.trial else "-",
             _count(p.trial.noise_flips, p.trial.noise_samples) if p.trial else "-",
             _p_value(p.trial.p_value, p.trial.level) if p.trial else "-",
             shorten(p.restoration.answer or "", 60) if p.restoration is not None else "-"] for p in found.pieces]
    pieces = table(headings("source_kind", "source_id", "call", "slot", "admission", "why", "status", "flips", "noise",
                            "p_value", "restored_answer"), rows)
    return wrap(new_scope(), join([headline(found.summary()), pieces if rows else None]))


def ranking_html(summary: str, reason: str) -> Html:
    return wrap(new_scope(), join([headline(summary), el("p", reason), el("p", CORRELATIONAL, class_="fl-note")]))


def checkpoint_html(title: str, facts: list[tuple[str, Any]]) -> Html:
    """A checkpoint: its kind and the facts that say where it stands (never the conversation's text)."""
    rows = [[name, value] for name, value in facts]
    return wrap(new_scope(), join([headline(title), table(["field", "value"], rows),
                                   el("p", "Plain JSON: checkpoint.model_dump_json() stores it; resume() continues it "
                                           "here or in another process.", class_="fl-note")]))


def replay_table(found: Replay) -> Html:
    """A replay's answers, one row each: the recorded one, each replay's and each unchanged replay's, with whether
    it changed."""
    rows = [("recorded", found.original, "")]
    rows += [(f"replay {k + 1}", answer, "changed" if found.flipped(answer) else "same")
             for k, answer in enumerate(found.answers)]
    rows += [(f"unchanged {k + 1}", r.answer, "changed" if found.flipped(r.answer) else "same")
             for k, r in enumerate(found.unchanged)]
    return el("table", el("tr", *(el("th", name) for name in ("which", "answer", "vs recorded"))),
              *(el("tr", el("td", name), el("td", el("pre", str(answer))), el("td", verdict))
                for name, answer, verdict in rows))


#: what a replay's view says under its answers
REPLAY_NOTE = ("A replay tests this call only; a few replays are an observation: Localize by replay tests every piece "
               "with the statistics of a proof.")


def replay_html(found: Replay) -> Html:
    """``replay(run, provider, ...)`` displayed: its summary, then its answers (:func:`replay_table`)."""
    return wrap(new_scope(), join([headline(found.summary()), replay_table(found), el("p", REPLAY_NOTE,
                                                                                       class_="fl-note")]))


#: a column whose name is a word of its own elsewhere, and the entry that says what the column means
_HEADED = {"failed": "failed reruns"}


def headings(*columns: str) -> list[Html]:
    """A table's column headings, named as its ``to_frame()`` names them, each with its meaning on hover."""
    return [words.term(_HEADED.get(column, column), "span", shown=column) for column in columns]


def integrity_html(report: IntegrityReport) -> Html:
    """Each finding (its kind as a flag, what contradicts what, the steps, why it matters), then every check."""
    findings = el("ul", *(el("li", flag(f.kind), " ", f.what, " (steps: ", ", ".join(f.steps), "). ",
                             el("span", "Why it matters: ", f.why, class_="fl-note")) for f in report.findings))
    checks = table(["check", "status", "note"],
                   [[d.check, words.disposition(d.status), d.note] for d in report.dispositions])
    body = join([headline(report.summary()), findings if report.findings else None,
                 el("h4", "Every check"), checks])
    return wrap(new_scope(), body)


def culprits_html(found: Culprits) -> Html:
    """The sets whose joint removal flipped the outcome, with the counts their confirmation rests on."""
    rows = [[" + ".join(c.sources), "yes" if c.minimal else "no (budget spent)", words.verdict(c.verdict),
             _count(c.flips, c.samples), _count(c.noise_flips, c.noise_samples),
             _p_value(c.p_value, c.trial.level)] for c in found.culprits]
    parts = [headline(found.summary())]
    if rows:
        parts.append(table(["sources removed together", "minimal", words.term("verdict", "span"), "flips", "noise",
                            "p_value"], rows))
    if found.note:
        parts.append(el("p", found.note, class_="fl-note"))
    if found.untested:
        parts += [el("h4", "Not tested"), el("ul", *(el("li", el("code", name), ": ", why)
                                                   for name, why in found.untested))]
    return wrap(new_scope(), join(parts))
