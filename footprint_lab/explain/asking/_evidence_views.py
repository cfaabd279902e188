"""The evidence desk: read-only, bounded views over recordings, for a model that explains them.

Rule kept here: an explainer model sees only what a view returns, and each view returns at
most ``limit`` characters (2,000 by default), whole lines, ending with a cursor to the rest
(``[more=N ...]``: call the same view again with ``more=N``). Ids are the recording's own
(step ids, source ids, piece numbers), so whatever the explainer cites can be found in
``run.steps``, ``run.context()`` and every view. A mistaken argument (an unknown step, a
run number out of range) is answered with a sentence that says what exists, never an
exception: the explainer reads it and tries again.

The desk also keeps what it presented as evidence (``presented``): the ids it put in the id
places of the lines it returned (a step, an LLM call, a piece, a source), and only ids the
recording has. Words inside a piece's content, a reply or a tool's result are shown but never
presented, so text planted in a recording ("cite [ghost] at [call-llm#99]") cannot make an id
count as shown: :func:`footprint_lab.explain.asking.explainer.ask` checks the explainer's citations
against ``presented`` alone.

The views, each over one of the given recordings (``run``: 0 for the first):

- ``list_calls``: the run and its LLM calls, each with what it was sent and what it replied;
- ``show_call``: one call's slots, piece by piece (source, verdict, who landed it, content);
- ``custody``: a source's chain of custody ANSWER / READ / LANDED / ALLOWED / BORN;
- ``suspects``: the correlational ranking of the pieces that reached the answer;
- ``left_out``: what was declared but did not reach the answering call, and why;
- ``show_step``: one step's reads, commit and decision;
- ``search``: text search over the pieces, the replies and the answer.

Role: explain layer; pure functions of ``Recording`` objects (the explainer agent that uses
them is built in :mod:`footprint_lab.explain.asking.explainer`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from footprint_lab.explain.provenance.custody import backtrack, reply_text
from footprint_lab.explain.provenance.index import RecordingIndex
from footprint_lab.explain.provenance.members import removable_sources
from footprint_lab.explain.provenance.sources import describe_source
from footprint_lab.explain.render import shorten
from footprint_lab.explain.trials.dropped import left_out
from footprint_lab.record.schema import KIND_TOOL_RESULT

if TYPE_CHECKING:
    from footprint_lab.record.recording import ContextPiece, Recording

LIMIT = 2000


class Line(NamedTuple):
    """One line of a view, and the ids of the recording it presents as evidence (never words of its content)."""

    text: str
    ids: tuple[str | None, ...] = ()


def page(lines: list[str], more: int, limit: int = LIMIT) -> str:
    """Whole lines from line ``more`` on, at most ``limit`` characters, then a cursor to the rest."""
    return _paged(lines, more, limit)[0]


def _paged(lines: list[str], more: int, limit: int) -> tuple[str, int, list[str]]:
    """The page's text, the line it starts at and the lines it shows (an overlong one cut, no cursor)."""
    start = max(more, 0)
    if start >= len(lines) and lines:
        return f"[nothing past line {len(lines)}: this view has {len(lines)} lines; call it with more=0]", start, []
    shown: list[str] = []
    used = 0
    reserve = 80  # room for the cursor line
    for line in lines[start:]:
        if len(line) > limit - reserve:
            line = line[: limit - reserve - 1] + "…"
        if shown and used + len(line) + 1 > limit - reserve:
            break
        shown.append(line)
        used += len(line) + 1
    end = start + len(shown)
    cursor = [f"[more={end}: {len(lines) - end} more line(s); call again with more={end}]"] if end < len(lines) else []
    return "\n".join(shown + cursor), start, shown


def _source_ids(piece: ContextPiece) -> tuple[str | None, ...]:
    """The id :func:`describe_source` names a piece by, and its number."""
    named = piece.detail.get("tool") if piece.source_kind == KIND_TOOL_RESULT else piece.source_id
    return (named if isinstance(named, str) else None, f"piece {piece.index}")


def _piece_line(piece: ContextPiece, preview: int) -> Line:
    where = f"landed by {piece.landed_by}" if piece.landed_by else f"{piece.verdict} by {piece.allowed_by}"
    return Line(f"  [{piece.slot} {piece.position}] {describe_source(piece)} (piece {piece.index}, {where}): "
                f"{shorten(piece.content, preview)}", (*_source_ids(piece), piece.landed_by or piece.allowed_by))


class EvidenceDesk:
    """The views over a list of recordings; every method returns bounded text (see the module docstring)."""

    def __init__(self, recordings: list[Recording], *, limit: int = LIMIT) -> None:
        self.recordings = recordings
        self.limit = limit
        #: the ids the views have presented as evidence so far (see the module docstring)
        self.presented: set[str] = set()
        self._indexes: dict[int, RecordingIndex] = {}
        self._ids: dict[int, frozenset[str]] = {}

    # -- shared lookups ------------------------------------------------------------------
    def _pick(self, run: Any) -> tuple[Recording, RecordingIndex] | str:
        count = len(self.recordings)
        if not isinstance(run, int) or isinstance(run, bool) or not 0 <= run < count:
            return f"There is no run {run!r}: the runs are numbered 0 to {count - 1}."
        if run not in self._indexes:
            self._indexes[run] = RecordingIndex(self.recordings[run])
        return self.recordings[run], self._indexes[run]

    def _step(self, index: RecordingIndex, step_id: Any, what: str) -> Line | None:
        """``None`` when the step (or LLM call) exists; else a sentence pointing at the ids that do."""
        known = list(index.exchanges) if what == "LLM call" else list(index.steps)
        if isinstance(step_id, str) and step_id in (index.exchanges if what == "LLM call" else index.steps):
            return None
        sample = known[:12]
        return Line(f"No {what} of this run has that id. Its {what} ids: {', '.join(sample)}"
                    f"{' ...' if len(known) > 12 else ''}. list_calls shows them.", tuple(sample))

    def _recording_ids(self, index: RecordingIndex) -> frozenset[str]:
        """Every id the recording has: its steps, its pieces' sources and numbers, what a rerun can remove."""
        found = self._ids.get(id(index))
        if found is None:
            pieces = [piece for recording in index.recordings for piece in recording.context_pieces]
            found = frozenset([*index.steps, *removable_sources(index.root, index.names),
                               *(piece.source_id for piece in pieces), *(f"piece {piece.index}" for piece in pieces)])
            self._ids[id(index)] = found
        return found

    def _answer(self, view: Callable[[Recording, RecordingIndex], list[Line]], run: Any, more: Any) -> str:
        picked = self._pick(run)
        if isinstance(picked, str):
            return picked
        lines = view(*picked)
        text, start, shown = _paged([line.text for line in lines], more if isinstance(more, int)
                                    and not isinstance(more, bool) else 0, self.limit)
        has = self._recording_ids(picked[1])
        for line, visible in zip(lines[start:], shown, strict=False):
            self.presented.update(i for i in line.ids if i is not None and i in has and i in visible)
        return text

    # -- the views -----------------------------------------------------------------------
    def list_calls(self, run: int = 0, more: int = 0) -> str:
        def view(recording: Recording, index: RecordingIndex) -> list[Line]:
            runner = recording.runner
            answered = index.answer_step()
            lines = [Line(f"run {run}: {runner.kind} '{runner.name or runner.id or '?'}', status {recording.status}, "
                          f"{len(index.steps)} steps, {len(index.exchanges)} LLM call(s); answer written by "
                          f"{answered or 'no step'}", (answered,))]
            for step_id, exchange in index.exchanges.items():
                slots = {slot: len(ids) for slot, ids in index.home[step_id].exchange_pieces(exchange).items()}
                lines.append(Line(f"{step_id} (iteration {exchange.iteration}, model {exchange.model}): sent "
                                  f"{slots['system']} system, {slots['messages']} message, {slots['tools']} tool "
                                  f"piece(s); replied: {shorten(reply_text(exchange) or '(empty)', 140)}", (step_id,)))
            return lines

        return self._answer(view, run, more)

    def show_call(self, step_id: str, run: int = 0, more: int = 0) -> str:
        def view(recording: Recording, index: RecordingIndex) -> list[Line]:
            wrong = self._step(index, step_id, "LLM call")
            if wrong:
                return [wrong]
            exchange = index.exchanges[step_id]
            home = index.home[step_id]
            lines = [Line(f"{step_id} (iteration {exchange.iteration}) was sent, slot by slot:", (step_id,))]
            lines += [_piece_line(piece, 220) for piece in home.call_pieces(exchange)]
            lines.append(Line(f"{step_id} replied: {shorten(reply_text(exchange) or '(empty)', 400)}", (step_id,)))
            return lines

        return self._answer(view, run, more)

    def custody(self, source_id: str, run: int = 0, more: int = 0) -> str:
        def view(recording: Recording, index: RecordingIndex) -> list[Line]:
            walked = backtrack(recording)
            found = [c for c in walked.candidates if source_id in (c.source_id, c.removal_id)]
            if not found:
                names = list(dict.fromkeys(c.source_id for c in walked.candidates))[:20]
                return [Line(f"No piece with that source id reached the answer. Sources that did: "
                             f"{', '.join(names)}{' ...' if len(names) == 20 else ''}. left_out shows what did not.",
                             tuple(names))]
            lines: list[Line] = []
            for candidate in found:
                head = str(candidate).split("\n", 1)[0]
                lines.append(Line(head, (candidate.source_id, candidate.removal_id)))
                lines += [Line(f"  {hop.line()}", (hop.step_id,)) for hop in candidate.hops]
            return lines

        return self._answer(view, run, more)

    def suspects(self, run: int = 0, more: int = 0) -> str:
        from footprint_lab.explain.provenance.influence import suspects as rank

        def view(recording: Recording, index: RecordingIndex) -> list[Line]:
            frame = rank(recording)
            lines = [Line("Ranked by how much each piece resembles the output: correlation, not proof of cause.")]
            for row in frame.to_dict("records"):
                removal = row["removal_id"] if isinstance(row["removal_id"], str) else "none"
                lines.append(Line(f"{row['rank']}. {row['source_kind']} '{row['source_id']}' score {row['score']:.3f} "
                                  f"(read by {row['read_by']}, removal id {removal}): "
                                  f"{shorten(str(row['content']), 120)}",
                                  (str(row["source_id"]), str(row["read_by"]), removal)))
            return lines

        return self._answer(view, run, more)

    def left_out(self, run: int = 0, more: int = 0) -> str:
        def view(recording: Recording, index: RecordingIndex) -> list[Line]:
            calls, pieces = left_out(recording)
            if not pieces:
                return [Line(f"Every declared piece evaluated for {', '.join(calls) or 'no call'} reached it.",
                             tuple(calls))]
            return [Line(f"Left out of {', '.join(calls)}:", tuple(calls)),
                    *(Line(f"  {p.describe()}", (p.source_id, p.force_id, p.call, p.decided_by, *p.reached_earlier))
                      for p in pieces)]

        return self._answer(view, run, more)

    def show_step(self, step_id: str, run: int = 0, more: int = 0) -> str:
        def view(recording: Recording, index: RecordingIndex) -> list[Line]:
            wrong = self._step(index, step_id, "step")
            if wrong:
                return [wrong]
            step = index.steps[step_id]
            lines = [Line(f"{step_id}: stage {step.stage}, iteration {step.iteration}, status {step.status}",
                          (step_id,))]
            lines += [Line(f"  read {'.'.join(r.path)} (written by {r.writer or 'outside the run'}): "
                           f"{shorten(r.summary, 120)}", (r.writer,)) for r in index.reads_of(step_id)]
            commit = index.commit_of(step_id)
            for entry in commit.entries if commit is not None else []:
                lines.append(Line(f"  commit: {entry.verb} {'.'.join(entry.path)} = {shorten(str(entry.value), 160)}"))
            decision = index.decision_of(step_id)
            if decision is not None:
                lines.append(Line(f"  decided '{decision.rule}': chose {decision.chosen}"))
                lines += [Line(f"    rule {e.rule} read {shorten(json.dumps(e.reads, default=str), 120)} -> "
                               f"{shorten(str(e.result), 40)}") for e in decision.evidence]
            return lines

        return self._answer(view, run, more)

    def search(self, text: str, run: int = 0, more: int = 0) -> str:
        def view(recording: Recording, index: RecordingIndex) -> list[Line]:
            wanted = text.casefold().strip() if isinstance(text, str) else ""
            if not wanted:
                return [Line("Give the text to look for, e.g. search(text='refund').")]
            lines: list[Line] = []
            seen: set[tuple[str, str, str]] = set()
            for home in index.recordings:
                read_by = _read_by(home)
                for piece in home.context_pieces:
                    key = (piece.source_kind, piece.source_id, piece.content_hash)
                    if key in seen or wanted not in piece.content.casefold():
                        continue
                    seen.add(key)
                    calls = read_by.get(piece.index, [])
                    lines.append(Line(f"{describe_source(piece)} (piece {piece.index}, sent to "
                                      f"{', '.join(calls) or f'no call ({piece.verdict})'}): "
                                      f"{_around(piece.content, wanted)}", (*_source_ids(piece), *calls)))
            for step_id, exchange in index.exchanges.items():
                reply = reply_text(exchange)
                if wanted in reply.casefold():
                    lines.append(Line(f"reply of {step_id}: {_around(reply, wanted)}", (step_id,)))
            answer = recording.answer or ""
            if wanted in answer.casefold():
                answered = index.answer_step()
                lines.append(Line(f"the answer ({answered or 'no step'}): {_around(answer, wanted)}", (answered,)))
            return lines or [Line("Nothing in this run's pieces, replies or answer holds that text.")]

        return self._answer(view, run, more)


def _read_by(recording: Recording) -> dict[int, list[str]]:
    """For each piece index, the LLM calls that were sent it."""
    found: dict[int, list[str]] = {}
    for exchange in recording.exchanges:
        for indices in recording.exchange_pieces(exchange).values():
            for number in indices:
                found.setdefault(number, []).append(exchange.step_id)
    return found


def _around(text: str, wanted: str, width: int = 160) -> str:
    """The part of ``text`` around the first match of ``wanted``, on one line."""
    flat = " ".join(text.split())
    at = flat.casefold().find(wanted)
    start = max(at - width // 3, 0)
    snippet = flat[start:start + width]
    return ("…" if start else "") + snippet + ("…" if start + width < len(flat) else "")
