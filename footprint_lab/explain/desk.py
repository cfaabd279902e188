"""The evidence desk: read-only, bounded views over recordings, for a model that explains them.

Rule kept here: an explainer model sees only what a view returns, and each view returns at
most ``limit`` characters (2,000 by default), whole lines, ending with a cursor to the rest
(``[more=N ...]``: call the same view again with ``more=N``). Ids are the recording's own
(step ids, source ids, piece numbers), so whatever the explainer cites can be found in
``run.steps``, ``run.context()`` and every view. A mistaken argument (an unknown step, a
run number out of range) is answered with a sentence that says what exists, never an
exception: the explainer reads it and tries again.

The views, each over one of the given recordings (``run``: 0 for the first):

- ``list_calls``: the run and its LLM calls, each with what it was sent and what it replied;
- ``show_call``: one call's slots, piece by piece (source, verdict, who landed it, content);
- ``custody``: a source's chain of custody ANSWER / READ / LANDED / ALLOWED / BORN;
- ``suspects``: the correlational ranking of the pieces that reached the answer;
- ``left_out``: what was declared but did not reach the answering call, and why;
- ``show_step``: one step's reads, commit and decision;
- ``search``: text search over the pieces, the replies and the answer.

Role: explain layer; pure functions of ``Recording`` objects (the explainer agent that uses
them is built in :mod:`footprint_lab.explain.asking`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from footprint_lab.explain.custody import backtrack, reply_text
from footprint_lab.explain.dropped import left_out
from footprint_lab.explain.index import RecordingIndex
from footprint_lab.explain.render import shorten
from footprint_lab.explain.sources import describe_source

if TYPE_CHECKING:
    from footprint_lab.engine.recording import ContextPiece, Recording

LIMIT = 2000


def page(lines: list[str], more: int, limit: int = LIMIT) -> str:
    """Whole lines from line ``more`` on, at most ``limit`` characters, then a cursor to the rest."""
    start = max(more, 0)
    if start >= len(lines) and lines:
        return f"[nothing past line {len(lines)}: this view has {len(lines)} lines; call it with more=0]"
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
    if end < len(lines):
        shown.append(f"[more={end}: {len(lines) - end} more line(s); call again with more={end}]")
    return "\n".join(shown)


def _piece_line(piece: ContextPiece, preview: int) -> str:
    where = f"landed by {piece.landed_by}" if piece.landed_by else f"{piece.verdict} by {piece.allowed_by}"
    return (f"  [{piece.slot} {piece.position}] {describe_source(piece)} (piece {piece.index}, {where}): "
            f"{shorten(piece.content, preview)}")


class EvidenceDesk:
    """The views over a list of recordings; every method returns bounded text (see the module docstring)."""

    def __init__(self, recordings: list[Recording], *, limit: int = LIMIT) -> None:
        self.recordings = recordings
        self.limit = limit
        self._indexes: dict[int, RecordingIndex] = {}

    # -- shared lookups ------------------------------------------------------------------
    def _pick(self, run: Any) -> tuple[Recording, RecordingIndex] | str:
        count = len(self.recordings)
        if not isinstance(run, int) or isinstance(run, bool) or not 0 <= run < count:
            return f"There is no run {run!r}: the runs are numbered 0 to {count - 1}."
        if run not in self._indexes:
            self._indexes[run] = RecordingIndex(self.recordings[run])
        return self.recordings[run], self._indexes[run]

    def _step(self, index: RecordingIndex, step_id: Any, what: str) -> str | None:
        """``None`` when the step (or LLM call) exists; else a sentence pointing at the ids that do."""
        known = list(index.exchanges) if what == "LLM call" else list(index.steps)
        if isinstance(step_id, str) and step_id in (index.exchanges if what == "LLM call" else index.steps):
            return None
        sample = ", ".join(known[:12]) + (" ..." if len(known) > 12 else "")
        return f"No {what} of this run has that id. Its {what} ids: {sample}. list_calls shows them."

    def _answer(self, view: Callable[[Recording, RecordingIndex], list[str] | str], run: Any, more: Any) -> str:
        picked = self._pick(run)
        if isinstance(picked, str):
            return picked
        lines = view(*picked)
        if isinstance(lines, str):
            return lines
        return page(lines, more if isinstance(more, int) and not isinstance(more, bool) else 0, self.limit)

    # -- the views -----------------------------------------------------------------------
    def list_calls(self, run: int = 0, more: int = 0) -> str:
        def view(recording: Recording, index: RecordingIndex) -> list[str]:
            runner = recording.runner
            lines = [f"run {run}: {runner.kind} '{runner.name or runner.id or '?'}', status {recording.status}, "
                     f"{len(index.steps)} steps, {len(index.exchanges)} LLM call(s); answer written by "
                     f"{index.answer_step() or 'no step'}"]
            for step_id, exchange in index.exchanges.items():
                slots = {slot: len(ids) for slot, ids in index.home[step_id].exchange_pieces(exchange).items()}
                lines.append(f"{step_id} (iteration {exchange.iteration}, model {exchange.model}): sent "
                             f"{slots['system']} system, {slots['messages']} message, {slots['tools']} tool "
                             f"piece(s); replied: {shorten(reply_text(exchange) or '(empty)', 140)}")
            return lines

        return self._answer(view, run, more)

    def show_call(self, step_id: str, run: int = 0, more: int = 0) -> str:
        def view(recording: Recording, index: RecordingIndex) -> list[str] | str:
            wrong = self._step(index, step_id, "LLM call")
            if wrong:
                return wrong
            exchange = index.exchanges[step_id]
            home = index.home[step_id]
            lines = [f"{step_id} (iteration {exchange.iteration}) was sent, slot by slot:"]
            lines += [_piece_line(piece, 220) for piece in home.call_pieces(exchange)]
            lines.append(f"{step_id} replied: {shorten(reply_text(exchange) or '(empty)', 400)}")
            return lines

        return self._answer(view, run, more)

    def custody(self, source_id: str, run: int = 0, more: int = 0) -> str:
        def view(recording: Recording, index: RecordingIndex) -> list[str] | str:
            walked = backtrack(recording)
            found = [c for c in walked.candidates if source_id in (c.source_id, c.removal_id)]
            if not found:
                names = list(dict.fromkeys(c.source_id for c in walked.candidates))
                return (f"No piece with that source id reached the answer. Sources that did: "
                        f"{', '.join(names[:20])}{' ...' if len(names) > 20 else ''}. left_out shows what did not.")
            lines: list[str] = []
            for candidate in found:
                lines += str(candidate).splitlines()
            return lines

        return self._answer(view, run, more)

    def suspects(self, run: int = 0, more: int = 0) -> str:
        from footprint_lab.explain.influence import suspects as rank

        def view(recording: Recording, index: RecordingIndex) -> list[str]:
            frame = rank(recording)
            lines = ["Ranked by how much each piece resembles the output: correlation, not proof of cause."]
            for row in frame.to_dict("records"):
                removal = row["removal_id"] if isinstance(row["removal_id"], str) else "none"
                lines.append(f"{row['rank']}. {row['source_kind']} '{row['source_id']}' score {row['score']:.3f} "
                             f"(read by {row['read_by']}, removal id {removal}): {shorten(str(row['content']), 120)}")
            return lines

        return self._answer(view, run, more)

    def left_out(self, run: int = 0, more: int = 0) -> str:
        def view(recording: Recording, index: RecordingIndex) -> list[str]:
            calls, pieces = left_out(recording)
            if not pieces:
                return [f"Every declared piece evaluated for {', '.join(calls) or 'no call'} reached it."]
            return [f"Left out of {', '.join(calls)}:", *(f"  {p.describe()}" for p in pieces)]

        return self._answer(view, run, more)

    def show_step(self, step_id: str, run: int = 0, more: int = 0) -> str:
        def view(recording: Recording, index: RecordingIndex) -> list[str] | str:
            wrong = self._step(index, step_id, "step")
            if wrong:
                return wrong
            step = index.steps[step_id]
            lines = [f"{step_id}: stage {step.stage}, iteration {step.iteration}, status {step.status}"]
            lines += [f"  read {'.'.join(r.path)} (written by {r.writer or 'outside the run'}): "
                      f"{shorten(r.summary, 120)}" for r in index.reads_of(step_id)]
            commit = index.commit_of(step_id)
            for entry in commit.entries if commit is not None else []:
                lines.append(f"  commit: {entry.verb} {'.'.join(entry.path)} = {shorten(str(entry.value), 160)}")
            decision = index.decision_of(step_id)
            if decision is not None:
                lines.append(f"  decided '{decision.rule}': chose {decision.chosen}")
                lines += [f"    rule {e.rule} read {shorten(json.dumps(e.reads, default=str), 120)} -> "
                          f"{shorten(str(e.result), 40)}" for e in decision.evidence]
            return lines

        return self._answer(view, run, more)

    def search(self, text: str, run: int = 0, more: int = 0) -> str:
        def view(recording: Recording, index: RecordingIndex) -> list[str] | str:
            wanted = text.casefold().strip() if isinstance(text, str) else ""
            if not wanted:
                return "Give the text to look for, e.g. search(text='refund')."
            lines: list[str] = []
            seen: set[tuple[str, str, str]] = set()
            for home in index.recordings:
                read_by = _read_by(home)
                for piece in home.context_pieces:
                    key = (piece.source_kind, piece.source_id, piece.content_hash)
                    if key in seen or wanted not in piece.content.casefold():
                        continue
                    seen.add(key)
                    calls = ", ".join(read_by.get(piece.index, [])) or f"no call ({piece.verdict})"
                    lines.append(f"{describe_source(piece)} (piece {piece.index}, sent to {calls}): "
                                 f"{_around(piece.content, wanted)}")
            for step_id, exchange in index.exchanges.items():
                reply = reply_text(exchange)
                if wanted in reply.casefold():
                    lines.append(f"reply of {step_id}: {_around(reply, wanted)}")
            answer = recording.answer or ""
            if wanted in answer.casefold():
                lines.append(f"the answer ({index.answer_step() or 'no step'}): {_around(answer, wanted)}")
            return lines or "Nothing in this run's pieces, replies or answer holds that text."

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
