"""The LLM calls of the answer view: what each call was given, slot by slot, each piece opening to its custody.

Rule kept here: a piece's custody is the one ``backtrack()`` proves for the call that read it (a hop
every row of a call shares written once above its slots), else what the piece's own fields record;
a long slot draws its first and last rows and every top-ranked suspect, and counts the rest with
the method that lists them. The answering call is open; every other call is collapsed to what it
was given that the answering call was not.

Stable hooks for the live widget: ``data-fl-call`` (step id) on each LLM call block,
``data-fl-piece`` (source id) and ``data-fl-slot`` on each piece row (its custody hops are the
``<ol>`` directly inside it; a shared hop is ``ul.fl-hops`` above the slots).

Role: lab layer; the calls section of :mod:`~footprint_lab.lab.views.answer`, a pure function of a
``Recording`` (through ``footprint_lab.explain``); the explanation views draw a piece's row with it too.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from footprint_lab.core.call_messages import CallMessages
from footprint_lab.core.run import explained
from footprint_lab.explain.checks.tool_choice import CLOSE_CALL
from footprint_lab.explain.checks.tool_lint import twins
from footprint_lab.lab.views.messages import call_messages_body
from footprint_lab.lab.views.page import (
    CORRELATIONAL,
    FIRST_DRAWN,
    LONG_LIST,
    SEP,
    Html,
    anchor,
    el,
    esc,
    flag,
    join,
    kind_style,
    mark,
    not_drawn,
    raw,
    shorten,
)
from footprint_lab.markup import words

if TYPE_CHECKING:
    from footprint_lab.explain.provenance.custody import Backtrack, Candidate, Hop
    from footprint_lab.record.recording import ContextPiece, LLMExchange, Recording


#: A long run's view stays readable and quick to draw: a slot is a long list (``page.not_drawn``) that
#: also draws any top-TOP_RANKS suspect; the earlier calls section shows the latest EARLIER_CALLS.
#: What is left out is counted, with the method that shows it.
SLOT_ROWS = LONG_LIST
FIRST_ROWS = FIRST_DRAWN
TOP_RANKS = 5
EARLIER_CALLS = 20
#: an opened piece draws this much of its content (a value's own bound, ``markup.elements``, is larger)
PIECE_TEXT = 4000


@dataclass(frozen=True)
class Folded:
    """Pieces a view counts but does not list, and the line (text) said in their place: a chat turn's messages
    carried from earlier turns, which every later turn was sent again (``chat[k]`` lists them)."""

    sources: Collection[str]
    said: str


def flags(kinds: list[str]) -> Html:
    """One badge per kind of integrity finding on a step."""
    return join(flag(kind) for kind in kinds)

def twins_note(exchange: LLMExchange) -> Html | None:
    """How close each tool choice was: from the provider's log-probabilities when it reported them
    (the margin over the runner-up, "close call" under ``log 2``), otherwise the tools it was sent
    that read nearly alike (the tool lint's confusable pairs): "chose between twins". Empty when
    there is nothing to say."""
    response = exchange.response
    if not response.tool_calls:
        return None

    notes: list[Html] = []
    measured = set()
    for margin in response.tool_margins:
        measured.add(margin.tool)
        chose = join([el("code", margin.tool), f" p={math.exp(margin.logprob):.2f}"])
        if margin.margin is None:
            notes.append(join([chose, " (the provider listed no alternative)"]))
            continue
        rival = (el("code", margin.runner_up_tool) if margin.runner_up_tool
                 else join(["token ", el("code", margin.runner_up)]))
        close = margin.margin < CLOSE_CALL
        verdict = "close call, chose between twins: " if close else ""
        notes.append(join([verdict, chose, " over ", rival,
                           f" p={math.exp(margin.runner_up_logprob or 0.0):.2f}, margin {margin.margin:.2f} nats",
                           "" if close else " (clear)"]))
    if len(exchange.tools) >= 2:
        for name in dict.fromkeys(call.name for call in response.tool_calls):
            near = twins(exchange.tools, name) if name not in measured else []
            if near:
                listed = join((join([el("code", other), f" ({score:.2f})"]) for other, score in near), ", ")
                notes.append(join([el("code", name), " chose between twins: ", listed]))
    return join(el("p", note, class_="fl-note", data_fl_twins=True) for note in notes)

class _Calls:
    """The LLM calls of one recording: the answering one open, the others collapsed to what differs."""

    def __init__(self, recording: Recording, scope: str, badges: dict[str, list[str]] | None = None,
                 keep: tuple[str, str] | None = None, *, messages: bool = False, folded: Folded | None = None) -> None:
        self.recording = recording
        self.folded = folded
        #: the answering call also shows as the model saw it (its messages, the raw request and reply)
        self.messages = messages
        self.scope = scope
        self.badges = badges or {}
        self.keep = keep
        #: a member's step ids are shown relative to where it was mounted (the data attributes keep them whole)
        self.prefix = f"{recording.path}/" if recording.path else ""
        self.custody: dict[tuple[str, int], Candidate] = {}
        self.ranks: dict[tuple[str, str], tuple[int, float, int]] = {}
        self.notes: dict[str, list[str]] = {}
        for annotation in recording.annotations:
            self.notes.setdefault(annotation.target, []).append(annotation.text)
        self._walk_back()

    def _walk_back(self) -> None:
        kept = explained(self.recording)
        walked: Backtrack = kept.backtrack()
        for candidate in walked.candidates:
            if candidate.recording is self.recording:
                self.custody[(candidate.read_by, candidate.piece.index)] = candidate
        if not walked.candidates:
            return
        frame = kept.suspects()
        total = len(frame)
        for rank, kind, source, score in zip(frame["rank"], frame["source_kind"], frame["source_id"],
                                             frame["score"], strict=True):
            self.ranks[(str(kind), str(source))] = (int(rank), float(score), total)

    def render(self) -> Html:
        exchanges = self.recording.exchanges
        answering = exchanges[-1]
        parts = [self.call_block(answering, answering=True)]
        others = exchanges[:-1]
        if others:
            sent = self._sent_keys(answering)
            inner = [self.other_call(x, sent) for x in reversed(others[-EARLIER_CALLS:])]
            if len(others) > EARLIER_CALLS:
                inner.append(el("p", f"… and {len(others) - EARLIER_CALLS} earlier calls, not drawn here: ",
                                el("code", f'run.context("{others[0].step_id}")'), " shows any call's slots.",
                                class_="fl-note"))
            parts.append(el("details", el("summary", f"Every other LLM call ({len(others)}), latest first: what each "
                                                     "was given that the answering call was not"),
                            *inner, class_="fl-box"))
        return join(parts)

    def _facts(self, exchange: LLMExchange) -> Html:
        usage = exchange.response.usage
        return join([el("code", local(exchange.step_id, self.prefix)), flags(self.badges.get(exchange.step_id, [])),
                     " · ", el("code", exchange.model), " · ",
                     f"{usage.input_tokens} in / {usage.output_tokens} out tokens · {exchange.duration_ms:.1f} ms"])

    def call_block(self, exchange: LLMExchange, *, answering: bool, left_out: bool = True) -> Html:
        """One call's slots, each piece opening to its custody; ``answering`` puts it under its heading."""
        step = exchange.step_id
        shared = self._shared_answer(step) if answering else None
        reply = self.reply(exchange) if self._reply_text(exchange) != self.recording.answer else None
        which = "the answering call" if self.recording.status == "finished" else "the last LLM call"
        seen = None
        if answering and self.messages:
            seen = el("details", el("summary", "As the model saw it: its messages in order"),
                      call_messages_body(CallMessages(self.recording, self.recording, exchange), raw=False),
                      class_="fl-box fl-as-messages")
        return el("section", el("h4", f"What {which} was given") if answering else None,
                  el("div", self._facts(exchange), class_="fl-muted"), self.slots(exchange, shared),
                  self.left_out(exchange) if left_out else None, reply, twins_note(exchange), seen,
                  class_="fl-call", id=anchor(self.scope, "c", step), data_fl_call=step)

    def _shared_answer(self, call: str) -> Hop | None:
        """The ANSWER hop every piece of ``call`` shares, shown once above its slots rather than in each row."""
        hops = {c.hops[0] for (read_by, _), c in self.custody.items() if read_by == call}
        return hops.pop() if len(hops) == 1 else None

    def _sent_keys(self, exchange: LLMExchange) -> set[tuple[str, str, str, str]]:
        return {(p.slot, p.source_kind, p.source_id, p.content_hash) for p in self.recording.call_pieces(exchange)}

    def other_call(self, exchange: LLMExchange, answering: set[tuple[str, str, str, str]]) -> Html:
        """An earlier call: only the pieces the answering call was not also sent, then its reply."""
        step = exchange.step_id
        pieces = self.recording.call_pieces(exchange)
        differ = [p for p in pieces if (p.slot, p.source_kind, p.source_id, p.content_hash) not in answering]
        same = len(pieces) - len(differ)
        shared = el("p", f"{same} more piece{'s' if same != 1 else ''}, the same as the answering call's, are listed "
                         "there.", class_="fl-note") if same else None
        text = self._reply_text(exchange)
        reply = shorten(text, 90)
        said = el("span", f"replied: {reply}", class_="fl-muted")
        return el("details", el("summary", self._facts(exchange), " ", said),
                  twins_note(exchange), *(self.piece_row(p, step) for p in differ), shared, self.left_out(exchange),
                  self.reply(exchange) if reply != text else None,
                  class_="fl-call fl-box", id=anchor(self.scope, "c", step), data_fl_call=step)

    def slots(self, exchange: LLMExchange, shared: Hop | None = None) -> Html:
        pieces = self.recording.context_pieces
        parts = []
        if shared is not None:
            tail = "; every piece below reached it through this call, and opens to the rest of its custody"
            parts.append(el("ul", _hop_html(shared, self.scope, self.prefix, tail=tail), class_="fl-hops"))
        for slot, every in self.recording.exchange_pieces(exchange).items():
            if not every:
                continue
            indices, folded = self._unfolded(every)
            drawn = [i for i in self._drawn(indices) if 0 <= i < len(pieces)]
            rows = [self.piece_row(pieces[i], exchange.step_id, shared) for i in drawn]
            if folded and self.folded is not None:
                rows.append(el("p", self.folded.said, class_="fl-note fl-folded", data_fl_folded=folded))
            if len(drawn) < len(indices):
                rows.append(el("p", f"{len(indices) - len(drawn)} more pieces of this slot are not drawn here: ",
                               el("code", f'run.context("{exchange.step_id}")'), " lists every one.", class_="fl-note"))
            parts.append(el("div", el("h5", f"{slot} · {len(every)}"), *rows, class_="fl-slot", data_slot=slot))
        if self.ranks:
            parts.append(el("p", mark("#rank · score"), " a piece's suspect rank of "
                                 f"{next(iter(self.ranks.values()))[2]} (lexical overlap with the answer, weighted by "
                                 f"distance); unmarked pieces share no words with it. {CORRELATIONAL}",
                            class_="fl-note"))
        return join(parts)

    def _unfolded(self, indices: list[int]) -> tuple[list[int], int]:
        """A slot's pieces this view lists, and how many it folds (see :class:`Folded`)."""
        if self.folded is None:
            return indices, 0
        pieces, sources = self.recording.context_pieces, self.folded.sources
        listed = [i for i in indices if not (0 <= i < len(pieces) and pieces[i].source_id in sources)]
        return listed, len(indices) - len(listed)

    def _drawn(self, indices: list[int]) -> list[int]:
        """Which of a slot's pieces a view draws (see SLOT_ROWS, and ``keep``), in slot order."""
        middle = set(not_drawn(indices))
        if not middle:
            return indices
        pieces = self.recording.context_pieces
        ranked = {i for i in middle if 0 <= i < len(pieces) and (
            self.ranks.get((pieces[i].source_kind, pieces[i].source_id), (TOP_RANKS + 1,))[0] <= TOP_RANKS
            or (pieces[i].slot, pieces[i].source_id) == self.keep)}
        return [i for i in indices if i not in middle or i in ranked]

    def left_out(self, exchange: LLMExchange) -> Html | None:
        missing = [p for p in self.recording.context_pieces
                   if p.verdict != "admitted" and p.iteration == exchange.iteration]
        if not missing:
            return None
        return el("details", el("summary", f"Left out: {len(missing)} piece{'s' if len(missing) != 1 else ''} "
                                           "skipped or dropped"),
                  *(self.piece_row(p, exchange.step_id) for p in missing), class_="fl-box fl-left-out")

    def reply(self, exchange: LLMExchange) -> Html:
        whole = f'run.exchange("{exchange.step_id}").response'
        return el("details", el("summary", "Reply"), el("pre", raw(esc(self._reply_text(exchange), whole=whole))),
                  class_="fl-box")

    @staticmethod
    def _reply_text(exchange: LLMExchange) -> str:
        response = exchange.response
        calls = [f"→ {call.name}({call.args})" for call in response.tool_calls]
        return "\n".join(part for part in [response.content or "", *calls] if part)

    def piece_row(self, piece: ContextPiece, call: str, shared: Hop | None = None) -> Html:
        candidate = self.custody.get((call, piece.index))
        rank = self.ranks.get((piece.source_kind, piece.source_id)) if candidate is not None else None
        ranked = mark(f"#{rank[0]} · {rank[1]:.2f}") if rank and rank[1] > 0 else None
        preview = shorten(piece.content, 110)
        summary = piece_summary(piece, preview, ranked, self.prefix)
        hops = self._recorded(piece) if candidate is None else _hops_html(
            [hop for hop in candidate.hops if hop != shared], self.scope, self.prefix)
        whole = f'run.context("{call}")'
        content = None if preview == piece.content else el("pre", raw(esc(piece.content, limit=PIECE_TEXT,
                                                                           whole=whole)))
        return el("details", el("summary", summary), content, hops, class_="fl-piece",
                  style=kind_style(piece.source_kind), data_fl_piece=piece.source_id, data_fl_slot=piece.slot)

    def _recorded(self, piece: ContextPiece) -> Html:
        """The custody a piece's own fields record, for a piece the answer's backtrack did not reach."""
        reason = f" ({piece.reason})" if piece.reason else None
        lines = [el("li", words.term("TRIGGER"), f" {piece.trigger}: ", words.term(piece.verdict, "span"), reason)]
        if piece.allowed_by:
            lines.append(el("li", words.term("ALLOWED"), " by ", _step_link(self.scope, piece.allowed_by, self.prefix)))
        if piece.landed_by:
            lines.append(el("li", words.term("LANDED"), " by ", _step_link(self.scope, piece.landed_by, self.prefix)))
        if piece.verdict == "dropped":
            detail = piece.detail
            lines.append(el("li", words.term("BUDGET"), f" size {detail.get('size', '?')}, budget "
                                                        f"{detail.get('budget', '?')}, already used "
                                                        f"{detail.get('used', '?')}"))
        return el("ul", *lines)


def piece_summary(piece: ContextPiece, preview: str, ranked: Html | None, prefix: str = "", *,
                  read_by: str | None = None, proof: Html | None = None) -> Html:
    """A piece's row, closed: its kind, its id, the start of its content, its rank, the call that read it (with
    ``read_by``) and the step that landed it (or, for a piece left out, what its trigger did), each apart from
    the next by real text (the sheet lays them out and hides the dots). Every word says what it means on hover."""
    read = join([SEP, words.term("read by", "small", shown=f"read by {local(read_by, prefix)}")]) if read_by else None
    landed = (words.term("landed by", "small", shown=f"landed by {local(piece.landed_by, prefix)}")
              if piece.landed_by else words.term(piece.verdict, "small"))
    return join([words.kind(piece.source_kind), SEP, el("code", piece.source_id), SEP, el("span", preview),
                 join([SEP, ranked]) if ranked else None, read, SEP, landed, proof])


def local(step: str, prefix: str) -> str:
    """A step id shown relative to the member run it belongs to."""
    return step[len(prefix):] if prefix and step.startswith(prefix) else step


def _step_link(scope: str, step: str, prefix: str = "", kind: str = "s") -> Html:
    return el("a", local(step, prefix), href=f"#{anchor(scope, kind, step)}")


def _hop_html(hop: Hop, scope: str, prefix: str = "", *, linked: bool = True, tail: str = "") -> Html:
    """One hop as a list item: its kind, its step (a link, unless the hop before linked the same), the evidence."""
    link = None
    if hop.step_id:
        shown = _step_link(scope, hop.step_id, prefix, "c" if hop.kind == "READ" else "s") if linked else \
            esc(local(hop.step_id, prefix))
        link = join([raw(shown), " "])
    unproven = None if hop.proven else words.NOT_PROVEN
    text = "wrote the output above" if hop.kind == "ANSWER" and hop.proven else hop.text
    if hop.step_id and text.startswith(hop.step_id + " "):  # the link already names the step
        text = text[len(hop.step_id) + 1:]
    return el("li", words.term(hop.kind), " ", link, text, tail, unproven)


def _hops_html(hops: list[Hop], scope: str, prefix: str = "") -> Html:
    return el("ol", *(_hop_html(hop, scope, prefix, linked=not at or hop.step_id != hops[at - 1].step_id)
                      for at, hop in enumerate(hops)))
