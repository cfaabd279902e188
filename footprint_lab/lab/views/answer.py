"""The answer view: a run read from its answer back to the context that fed it, with no JavaScript.

Rule kept here: the view shows only what the recording holds, escaped, and every hop of custody
is the one ``backtrack()`` proves (ANSWER, READ, LANDED, ALLOWED, BORN, ASKED), marked when the
recording cannot prove it. Everything that opens is a ``<details>``; every cross link is an
in-page anchor under the output's own id, so the page reads the same in JupyterLab, VS Code,
GitHub, nbviewer and an exported HTML file.

Layout, top to bottom: who ran and how it ended; the answer (or the pending question, or the
failure); what the answering call was given, slot by slot, one row per piece colour-coded by
source kind, each opening to its custody and suspect rank; what that iteration left out; every
other LLM call, collapsed; for a composition, its members as a nested tree with each member's
own view inside; the steps, collapsed.

Stable hooks for the live widget (which embeds this HTML and catches clicks): ``data-fl-answer``
on the answer, ``data-fl-call`` (step id) on each LLM call block, ``data-fl-piece`` (source id)
and ``data-fl-slot`` on each piece row, ``data-fl-member`` (mount path) on each member block.

Role: lab layer; a pure function of a ``Recording`` (through ``footprint_lab.explain``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from footprint_lab.lab.views.page import (
    CORRELATIONAL,
    anchor,
    clip,
    esc,
    kind_style,
    new_scope,
    shorten,
    wrap,
)

if TYPE_CHECKING:
    from footprint_lab.engine.recording import ContextPiece, LLMExchange, Recording
    from footprint_lab.explain.custody import Backtrack, Candidate, Hop

SLOTS = ("system", "messages", "tools")
#: a composition whose tree has more runs than this shows each member's answer and header only
FULL_MEMBER_VIEWS = 60


def answer_view(recording: Recording) -> str:
    """The whole answer view of a run, as one self-contained HTML fragment (no JavaScript)."""
    scope = new_scope()
    return wrap(scope, run_body(recording, scope, full_members=count_runs(recording) <= FULL_MEMBER_VIEWS))


def count_runs(recording: Recording) -> int:
    """The run and its members at every depth."""
    return 1 + sum(count_runs(child) for child in recording.children)


def tokens_of(recording: Recording) -> tuple[int, int]:
    """Input and output tokens over the run and its members."""
    sent = sum(x.response.usage.input_tokens for x in recording.exchanges)
    got = sum(x.response.usage.output_tokens for x in recording.exchanges)
    for child in recording.children:
        child_sent, child_got = tokens_of(child)
        sent, got = sent + child_sent, got + child_got
    return sent, got


def run_body(recording: Recording, scope: str, *, full_members: bool = True) -> str:
    """A run's view without its style sheet (a member's view nests inside its parent's)."""
    parts = [header(recording), answer_block(recording, scope)]
    if recording.exchanges:
        parts.append(_Calls(recording, scope).render())
    if recording.children:
        from footprint_lab.lab.views.tree import members_html

        parts.append('<details class="fl-box" open><summary>Members</summary>'
                     f"{members_html(recording, scope, full=full_members)}</details>")
    parts.append(steps_table(recording, scope))
    return "".join(parts)


def header(recording: Recording) -> str:
    """Who ran, the run id, the status, the duration and the tokens, on one line."""
    runner = recording.runner
    sent, got = tokens_of(recording)
    name = runner.name or runner.id
    calls = len(recording.exchanges)
    who = f"<b>{esc(name)}</b>" if name else ""
    return (
        f'<div class="fl-head"><span class="fl-tag">{esc(runner.kind)}</span>{who}'
        f'<code class="fl-muted">{esc(recording.run_id)}</code>'
        f'<span class="fl-tag fl-st-{esc(recording.status)}">{esc(recording.status)}</span>'
        f'<span class="fl-muted">{recording.duration_ms:.1f} ms · {sent + got} tokens ({sent} in, {got} out)'
        f" · {calls} LLM call{'s' if calls != 1 else ''}</span></div>"
    )


def answer_block(recording: Recording, scope: str) -> str:
    """The answer, the question the run waits on, or the failure."""
    pause = recording.meta.get("pause")
    target = f'id="{anchor(scope, "a", recording.path)}"'
    if recording.status == "paused":
        question = pause.get("question", "") if isinstance(pause, dict) else ""
        tool = pause.get("tool_name", "") if isinstance(pause, dict) else ""
        return (f'<div class="fl-answer fl-paused" data-fl-answer {target}><b>Waiting on a person</b> '
                f'<span class="fl-muted">(tool {esc(tool)})</span><pre>{esc(question)}</pre></div>')
    if recording.status == "failed":
        error = recording.error or {}
        return (f'<div class="fl-answer fl-failed" data-fl-answer {target}><b>Failed</b> at '
                f"<code>{esc(error.get('step_id', '?'))}</code>: {esc(error.get('type', 'an error'))}"
                f"<pre>{esc(error.get('message', ''))}</pre></div>")
    return (f'<div class="fl-answer" data-fl-answer {target}><b>Answer</b>'
            f"<pre>{esc(recording.answer or '')}</pre></div>")


def slots_view(recording: Recording, exchange: LLMExchange, *, left_out: bool = False) -> str:
    """What one LLM call was given, slot by slot (and, with ``left_out``, what its iteration left out)."""
    scope = new_scope()
    calls = _Calls(recording, scope)
    title = f"<h4>What <code>{esc(exchange.step_id)}</code> was given</h4>"
    return wrap(scope, header(recording) + title + calls.call_block(exchange, answering=None, left_out=left_out))


class _Calls:
    """The LLM calls of one recording: the answering one open, the others collapsed."""

    def __init__(self, recording: Recording, scope: str) -> None:
        self.recording = recording
        self.scope = scope
        self.custody: dict[tuple[str, int], Candidate] = {}
        self.ranks: dict[tuple[str, str], tuple[int, float, int]] = {}
        self._walk_back()

    def _walk_back(self) -> None:
        from footprint_lab.explain.custody import backtrack
        from footprint_lab.explain.influence import suspects

        walked: Backtrack = backtrack(self.recording)
        for candidate in walked.candidates:
            if candidate.recording is self.recording:
                self.custody[(candidate.read_by, candidate.piece.index)] = candidate
        if not walked.candidates:
            return
        frame = suspects(self.recording, trace=walked)
        total = len(frame)
        for rank, kind, source, score in zip(frame["rank"], frame["source_kind"], frame["source_id"],
                                             frame["score"], strict=True):
            self.ranks[(str(kind), str(source))] = (int(rank), float(score), total)

    def render(self) -> str:
        exchanges = self.recording.exchanges
        answering = exchanges[-1]
        parts = [self.call_block(answering, answering=True)]
        others = exchanges[:-1]
        if others:
            inner = "".join(self.call_block(x, answering=False) for x in reversed(others))
            parts.append(f'<details class="fl-box"><summary>Every other LLM call of the run ({len(others)}), '
                         f"latest first</summary>{inner}</details>")
        return "".join(parts)

    def call_block(self, exchange: LLMExchange, *, answering: bool | None, left_out: bool = True) -> str:
        """One call's slots; ``answering`` opens it under a heading, ``False`` collapses it, ``None`` shows it bare."""
        step = exchange.step_id
        usage = exchange.response.usage
        facts = (f"<code>{esc(step)}</code> · model <code>{esc(exchange.model)}</code> · "
                 f"{usage.input_tokens} in / {usage.output_tokens} out tokens · {exchange.duration_ms:.1f} ms")
        body = self.slots(exchange) + (self.left_out(exchange) if left_out else "") + self.reply(exchange)
        ident = f'id="{anchor(self.scope, "c", step)}" data-fl-call="{esc(step)}"'
        if answering is None:
            return f'<section class="fl-call" {ident}><div class="fl-muted">{facts}</div>{body}</section>'
        if answering:
            return (f'<section class="fl-call" {ident}><h4>What the answering call was given</h4>'
                    f'<div class="fl-muted">{facts}</div>{body}</section>')
        reply = shorten(self._reply_text(exchange), 90)
        return (f'<details class="fl-call fl-box" {ident}><summary>{facts} '
                f'<span class="fl-muted">→ {esc(reply)}</span></summary>{body}</details>')

    def slots(self, exchange: LLMExchange) -> str:
        recording = self.recording
        pieces = recording.context_pieces
        parts = []
        for slot, indices in recording.exchange_pieces(exchange).items():
            rows = "".join(self.piece_row(pieces[i], exchange.step_id) for i in indices if 0 <= i < len(pieces))
            parts.append(f'<div class="fl-slot" data-slot="{slot}"><h5>{slot} · {len(indices)} '
                         f"piece{'s' if len(indices) != 1 else ''}</h5>{rows}</div>")
        return "".join(parts)

    def left_out(self, exchange: LLMExchange) -> str:
        missing = [p for p in self.recording.context_pieces
                   if p.verdict != "admitted" and p.iteration == exchange.iteration]
        if not missing:
            return ""
        rows = "".join(self.piece_row(p, exchange.step_id) for p in missing)
        return (f'<details class="fl-box fl-left-out"><summary>Left out of this call: {len(missing)} '
                f"piece{'s' if len(missing) != 1 else ''} (skipped or dropped)</summary>{rows}</details>")

    def reply(self, exchange: LLMExchange) -> str:
        return (f'<details class="fl-box"><summary>What it replied</summary>'
                f"<pre>{esc(self._reply_text(exchange))}</pre></details>")

    @staticmethod
    def _reply_text(exchange: LLMExchange) -> str:
        response = exchange.response
        calls = [f"→ {call.name}({call.args})" for call in response.tool_calls]
        return "\n".join(part for part in [response.content or "", *calls] if part)

    def piece_row(self, piece: ContextPiece, call: str) -> str:
        candidate = self.custody.get((call, piece.index))
        rank = self.ranks.get((piece.source_kind, piece.source_id)) if candidate is not None else None
        landed = piece.landed_by or piece.verdict
        ranked = f'<span class="fl-rank">#{rank[0]} · {rank[1]:.2f}</span>' if rank else ""
        summary = (f'<span class="fl-kind">{esc(piece.source_kind)}</span>'
                   f'<code class="fl-id">{esc(piece.source_id)}</code>'
                   f'<span class="fl-prev">{esc(shorten(piece.content, 110))}</span>{ranked}'
                   f'<span class="fl-at">{esc(landed)}</span>')
        hops = _hops_html(candidate.hops, self.scope) if candidate is not None else self._recorded(piece)
        note = ""
        if rank is not None:
            note = (f'<p class="fl-note">Suspect rank {rank[0]} of {rank[2]}, score {rank[1]:.2f} (lexical '
                    f"overlap with the answer, weighted by distance). {CORRELATIONAL}</p>")
        declared = f' · declared at <code>{esc(piece.declared_at)}</code>' if piece.declared_at else ""
        return (f'<details class="fl-piece" style="{kind_style(piece.source_kind)}" '
                f'data-fl-piece="{esc(piece.source_id)}" data-fl-slot="{esc(piece.slot)}">'
                f"<summary>{summary}</summary>"
                f'<div class="fl-body"><div class="fl-muted">{esc(piece.slot)} slot, position {piece.position}'
                f"{declared}</div><pre>{esc(clip(piece.content))}</pre>{hops}{note}</div></details>")

    def _recorded(self, piece: ContextPiece) -> str:
        """The custody a piece's own fields record, for a piece the answer's backtrack did not reach."""
        reason = f" ({esc(piece.reason)})" if piece.reason else ""
        lines = [f"<li><b>VERDICT</b> {esc(piece.verdict)}{reason}, trigger {esc(piece.trigger)}</li>"]
        if piece.allowed_by:
            lines.append(f"<li><b>ALLOWED</b> by {self._step_link(piece.allowed_by)}</li>")
        if piece.landed_by:
            lines.append(f"<li><b>LANDED</b> by {self._step_link(piece.landed_by)}</li>")
        if piece.verdict == "dropped":
            detail = piece.detail
            lines.append(f"<li><b>BUDGET</b> size {esc(detail.get('size', '?'))}, budget "
                         f"{esc(detail.get('budget', '?'))}, already used {esc(detail.get('used', '?'))}</li>")
        return (f'<ul class="fl-hops">{"".join(lines)}</ul><p class="fl-note">The backtrack from the answer '
                "does not reach this piece; these are the facts its record holds.</p>")

    def _step_link(self, step: str) -> str:
        return f'<a href="#{anchor(self.scope, "s", step)}"><code>{esc(step)}</code></a>'


def _hops_html(hops: list[Hop], scope: str) -> str:
    items = []
    for hop in hops:
        step = ""
        if hop.step_id:
            kind = "c" if hop.kind == "READ" else "s"
            step = f'<a href="#{anchor(scope, kind, hop.step_id)}"><code>{esc(hop.step_id)}</code></a> '
        mark = "" if hop.proven else ' <span class="fl-unproven">[not proven]</span>'
        items.append(f"<li><b>{esc(hop.kind)}</b> {step}{esc(hop.text)}{mark}</li>")
    return f'<ol class="fl-hops">{"".join(items)}</ol>'


def steps_table(recording: Recording, scope: str) -> str:
    """Every step of the run, collapsed; each row is an anchor the custody hops link to."""
    rows = "".join(
        f'<tr id="{anchor(scope, "s", step.step_id)}"><td><code>{esc(step.step_id)}</code></td>'
        f"<td>{esc(step.stage)}</td><td>{'' if step.iteration is None else step.iteration}</td>"
        f"<td>{esc(step.status)}</td><td>{step.duration_ms:.2f} ms</td></tr>"
        for step in recording.steps
    )
    return (f'<details class="fl-box"><summary>Steps ({len(recording.steps)})</summary>'
            '<table class="fl-table"><tr><th>step</th><th>stage</th><th>iteration</th><th>status</th>'
            f"<th>duration</th></tr>{rows}</table></details>")


def bundle_text(recording: Recording) -> str:
    """The one-line ``text/plain`` of a run."""
    preview = (recording.answer or "")[:60]
    return f"Run(run_id={recording.run_id!r}, status={recording.status!r}, answer={preview!r})"


