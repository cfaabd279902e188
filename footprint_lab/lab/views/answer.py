"""The answer view: a run read from its answer back to the context that fed it, with no JavaScript.

Rule kept here: the view shows only what the recording holds, escaped, and every hop of custody
is the one ``backtrack()`` proves (ANSWER, READ, LANDED, ALLOWED, BORN, ASKED), marked when the
recording cannot prove it. Everything that opens is a ``<details>``; every cross link is an
in-page anchor under the output's own id, so the page reads the same in JupyterLab, VS Code,
GitHub, nbviewer and an exported HTML file.

Layout, top to bottom: who ran and how it ended (with "1 tool failed" beside the status when a tool
raised, members' tools included); the answer (or the pending question, or the
failure); the integrity findings (``explain.integrity``), each linking to its steps, which carry
a badge per finding in the call blocks and the steps table; what the answering call was given,
slot by slot, one row per piece colour-coded by
source kind, each opening to its custody and suspect rank; what that iteration left out; every
other LLM call, collapsed; for a composition, its members as a nested tree with each member's
own view inside; the steps, collapsed.

Stable hooks for the live widget (which embeds this HTML and catches clicks): ``data-fl-answer``
on the answer, ``data-fl-call`` (step id) on each LLM call block, ``data-fl-piece`` (source id)
and ``data-fl-slot`` on each piece row (its custody hops are the ``<ol>`` directly inside it; a hop
every row of a call shares is written once above the slots as ``ul.fl-hops``), ``data-fl-member``
(mount path) on each member block.

The LLM calls section (each call's slots and piece rows) is :mod:`~footprint_lab.lab.views.calls`'s.

Role: lab layer; a pure function of a ``Recording`` (through ``footprint_lab.explain``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from footprint_lab.core.run import explained
from footprint_lab.core.timeline import Timeline
from footprint_lab.explain.provenance.tree import run_tree
from footprint_lab.lab.views.calls import Folded, _Calls, flags
from footprint_lab.lab.views.messages import CHAT_CSS
from footprint_lab.lab.views.page import (
    TREE_CSS,
    Html,
    anchor,
    answer_box,
    attr,
    el,
    esc,
    join,
    kind_tag,
    new_scope,
    raw,
    shorten,
    start,
    tag,
    wrap,
)
from footprint_lab.lab.views.runset import money
from footprint_lab.lab.views.svg import node_label
from footprint_lab.lab.views.timeline import TIMELINE_CSS, timeline_body
from footprint_lab.markup import words
from footprint_lab.providers.prices import priced, usage_by_model
from footprint_lab.sealing.seal import verify

if TYPE_CHECKING:
    from footprint_lab.explain.checks.integrity import IntegrityReport
    from footprint_lab.explain.provenance.tree import RunTree, TreeNode
    from footprint_lab.record.recording import LLMExchange, Recording

SLOTS = ("system", "messages", "tools")
#: a composition whose tree has more runs than this shows each member's answer and header only
FULL_MEMBER_VIEWS = 60



def answer_view(recording: Recording, *, note: str = "", budget: int | None = None, carried: bool = True,
                messages: bool = True, timeline: bool = True, folded: Folded | None = None) -> str:
    """The whole answer view of a run, as one self-contained HTML fragment (no JavaScript); ``note`` (text)
    is said under its header. ``carried``: the output holds the recording beside the view (a verified seal
    badge is shown only then: an output that shows a seal must carry what backs it). ``messages``: the
    answering call also shows as the model saw it, one click away (the Lab shows that in its panel instead);
    ``timeline``: the steps' timeline too (a chat's turns leave both out: the chat stays one line a turn).
    ``folded``: pieces each slot counts but does not list (see :class:`Folded`).

    The one builder of the view, for a cell's display and the Lab widget alike: past ``budget``
    characters (the widget keeps its view in the notebook's saved state) the view is its header
    and its answer, still clickable, with a line saying how large the whole is and where to see it.
    """
    scope = new_scope()
    report = explained(recording).integrity()
    body = run_body(recording, scope, full_members=count_runs(recording) <= FULL_MEMBER_VIEWS, note=note,
                    carried=carried, report=report, messages=messages, timeline=timeline, folded=folded)
    extra = ((TREE_CSS if recording.children else "") + (CHAT_CSS if messages and recording.exchanges else "")
             + (TIMELINE_CSS if timeline and recording.steps else ""))
    view = wrap(scope, body, extra=extra)
    if budget is None or len(view) <= budget:
        return view
    scope = new_scope()
    said = (f"The full view of this run is {len(view) // 1000} kB, more than a notebook should keep: click the "
            "answer for the call that produced it, or display lab.run for all of it.")
    return wrap(scope, join([header(recording, carried=carried, report=report), answer_block(recording, scope),
                             el("p", said, class_="fl-note")]))


def count_runs(recording: Recording) -> int:
    """The run and its members at every depth."""
    return 1 + sum(count_runs(child) for child in recording.children)


def usage_of(recording: Recording) -> tuple[int, int, int]:
    """Input tokens, output tokens and LLM calls over the run and its members."""
    sent = sum(x.response.usage.input_tokens for x in recording.exchanges)
    got = sum(x.response.usage.output_tokens for x in recording.exchanges)
    calls = len(recording.exchanges)
    for child in recording.children:
        child_sent, child_got, child_calls = usage_of(child)
        sent, got, calls = sent + child_sent, got + child_got, calls + child_calls
    return sent, got, calls


def run_body(recording: Recording, scope: str, *, full_members: bool = True, nested: bool = False,
             note: str = "", carried: bool = True, report: IntegrityReport | None = None,
             messages: bool = True, timeline: bool = True, folded: Folded | None = None) -> Html:
    """A run's view without its style sheet; ``nested`` (a member inside its parent's tree) leaves out
    the header and the members, which the tree's own row and branches already show. ``report``: the run's
    integrity report, when the caller has it already; ``messages``, ``timeline``, ``folded``: see
    :func:`answer_view`."""
    report = report if report is not None else explained(recording).integrity()
    badges = report.by_step()
    parts: list[Html | None] = [] if nested else [header(recording, carried=carried, report=report)]
    if note:
        parts.append(el("p", note, class_="fl-note fl-left-out-note"))
    parts.append(answer_block(recording, scope))
    parts.append(integrity_block(report, scope))
    parts.append(notes_block(recording))
    if recording.exchanges:
        parts.append(_Calls(recording, scope, badges, messages=messages and not nested, folded=folded).render())
    if recording.children and not nested:
        parts.append(el("details", el("summary", "Members"), members_html(recording, scope, full=full_members),
                        class_="fl-box", open=True))
    if timeline and recording.steps and not nested:
        parts.append(el("details", el("summary", f"Timeline: {len(recording.steps)} steps, how long each took"),
                        timeline_body(Timeline(recording)), class_="fl-box fl-timeline-box"))
    parts.append(steps_table(recording, scope, badges))
    return join(parts)



def integrity_block(report: IntegrityReport, scope: str) -> Html:
    """The findings of the integrity checks, each linking to its steps, and every check's disposition."""
    checks = (el("li", el("code", d.check), " ", words.disposition(d.status), ": ", d.note)
              for d in report.dispositions)
    ledger = el("details", el("summary", "Every check"), el("ul", *checks, class_="fl-hops"))
    if not report.findings:
        return el("div", "Integrity: no findings.", ledger, class_="fl-muted fl-integrity")
    items = (el("li", flags([f.kind]), " ", f.what, " ",
                join((el("a", el("code", step), href=f"#{anchor(scope, 's', step)}") for step in f.steps), " "),
                el("div", f.why, class_="fl-note"))
             for f in report.findings)
    count = len(report.findings)
    return el("details", el("summary", f"Integrity: {count} finding{'s' if count != 1 else ''}"),
              el("ul", *items, class_="fl-hops"), ledger, class_="fl-box fl-integrity", open=True)


def header(recording: Recording, *, carried: bool = True, report: IntegrityReport | None = None) -> Html:
    """Who ran, the run id, the status (and how many tool calls raised, in words), the duration and the
    tokens, on one line (and the seal: see :func:`seal_badge`). ``report``: the run's integrity report, when
    the caller has it already."""
    runner = recording.runner
    sent, got, calls = usage_of(recording)
    name = runner.name or runner.id
    failed = len((report if report is not None else explained(recording).integrity()).of_kind("tool_failed"))
    said = f"{failed} tool{'s' if failed != 1 else ''} failed"
    usage = (f"{recording.duration_ms:.1f} ms · {sent + got} tokens ({sent} in, {got} out)"
             f" · {calls} LLM call{'s' if calls != 1 else ''}")
    # the spaces between the items keep them apart where the sheet's flex gap is gone (an untrusted notebook)
    return el("div", kind_tag(runner.kind), " ", el("b", name) if name else None, " ",
              el("code", recording.run_id, class_="fl-muted"), " ",
              tag(recording.status, recording.status), " ",
              join([tag(said, "failed", data_fl_failed_tools=True), " "]) if failed else None,
              el("span", usage, cost_said(recording) if calls else None, class_="fl-muted"), " ",
              seal_badge(recording, carried=carried), class_="fl-head")


def cost_said(recording: Recording) -> Html:
    """What the run's LLM calls cost at today's list prices (``≈`` when tokens were estimated), or "no price",
    the hover naming the models without one and how to add a price."""
    usd, note = priced(usage_by_model(recording))
    said = "no price" if usd is None else f"≈{money(usd)}" if note else money(usd)
    return join([" · ", el("span", said, class_="fl-cost", title=note or "at today's list prices")])



def seal_badge(recording: Recording, *, carried: bool = True) -> Html | None:
    """The seal, checked now: ``sealed · verified`` (green), ``seal broken`` (red, naming the first broken
    link), nothing for a recording that was never sealed. A scrubbed one says by which policy names.

    A view whose output does not carry the recording (too large for a notebook output; a slots view)
    says only that the run was sealed, in grey and with no seal mark: a reader of the saved notebook
    has nothing beside it to check, and ``footprint-lab verify`` reports an output that shows a seal it
    does not carry as broken."""
    verdict = verify(recording)
    if verdict.status == "unsealed":
        return None
    if not carried:
        return tag("sealed · recording not kept in this output")
    scrubbed = f" · scrubbed ({', '.join(verdict.scrubbed)})" if verdict.scrubbed else ""
    label, tone = ("sealed · verified" + scrubbed, "finished") if verdict.holds else ("seal broken", "failed")
    return tag(label, tone, data_fl_seal=verdict.status, title=str(verdict))


def answer_block(recording: Recording, scope: str) -> Html:
    """The answer, the question the run waits on, or the failure."""
    pause = recording.meta.get("pause")
    hooks = {"data_fl_answer": True, "id": anchor(scope, "a", recording.path)}
    if recording.status == "paused":
        question = pause.get("question", "") if isinstance(pause, dict) else ""
        tool = pause.get("tool_name", "") if isinstance(pause, dict) else ""
        return answer_box("paused", el("b", "Waiting on a person"), " ",
                          el("span", f"(tool {tool})", class_="fl-muted"),
                          el("pre", raw(esc(question, whole="run.question"))), **hooks)
    if recording.status == "failed":
        error = recording.error or {}
        frame = join([" ", el("span", "raised at ", el("code", error["frame"]), class_="fl-muted")]) \
            if error.get("frame") else None
        return answer_box("failed", el("b", "Failed"), " at ", el("code", error.get("step_id", "?")), ": ",
                          error.get("type", "an error"), frame,
                          el("pre", raw(esc(error.get("message", ""), whole="run.recording.error"))), **hooks)
    whole = "run.answer" if not recording.path else f'the member\'s own recording (mounted at "{recording.path}")'
    return answer_box(recording.status, el("b", "Answer"), el("pre", raw(esc(recording.answer or "", whole=whole))),
                      **hooks)


def slots_view(recording: Recording, exchange: LLMExchange, *, left_out: bool = False,
               keep: tuple[str, str] | None = None) -> str:
    """What one LLM call was given, slot by slot (and, with ``left_out``, what its iteration left out).

    ``keep`` (a slot and a source id) is a piece drawn even where a long slot leaves pieces out.
    """
    scope = new_scope()
    calls = _Calls(recording, scope, keep=keep)
    title = el("h4", "What ", el("code", exchange.step_id), " was given")
    return wrap(scope, join([header(recording, carried=False), title,
                             calls.call_block(exchange, answering=False, left_out=left_out)]))


def piece_view(recording: Recording, exchange: LLMExchange, chosen: tuple[str, str]) -> str | None:
    """One piece of one LLM call (``chosen``: its slot and source id), its row open to its custody, without the
    call's other pieces; ``None`` when the call was not given that piece (it was left out, or never existed)."""
    slot, source = chosen
    pieces = recording.context_pieces
    found = next((pieces[i] for indices in recording.exchange_pieces(exchange).values() for i in indices
                  if 0 <= i < len(pieces) and pieces[i].source_id == source and (not slot or pieces[i].slot == slot)),
                 None)
    if found is None:
        return None
    scope = new_scope()
    row = _Calls(recording, scope, keep=chosen).piece_row(found, exchange.step_id)
    title = el("h4", el("code", found.source_id), f" in the {found.slot} slot of ", el("code", exchange.step_id))
    return wrap(scope, title + opened(row, (found.slot, found.source_id)))


def opened(view: str, chosen: tuple[str, str]) -> str:
    """``view`` with the row of the chosen piece (its slot and source id) drawn open."""
    slot, piece = chosen
    hook = f'data-fl-piece="{attr(piece)}" data-fl-slot="{attr(slot)}"'
    return view.replace(f"{hook}>", f"{hook} open>", 1)


def notes_block(recording: Recording) -> Html | None:
    """The analyst's notes on the run (``run.annotate``), each with what it is about."""
    if not recording.annotations:
        return None
    items = (el("li", el("code", note.target),
                join([" ", el("span", f"({note.tag})", class_="fl-muted")]) if note.tag else None, ": ", note.text,
                class_="fl-noted")
             for note in recording.annotations)
    return el("div", el("b", "Notes"), el("ul", *items), class_="fl-box fl-notes")



def steps_table(recording: Recording, scope: str, badges: dict[str, list[str]] | None = None) -> Html:
    """Every step of the run, collapsed; each row is an anchor the custody hops link to (and findings badge)."""
    badges = badges or {}
    # end tags of rows and cells are optional in HTML: left out, a long run's table is a third smaller
    rows = (start("tr", start("td", step.step_id, flags(badges.get(step.step_id, []))),
                  start("td", "" if step.iteration is None else step.iteration), start("td", step.status),
                  start("td", f"{step.duration_ms:.2f}"), id=anchor(scope, "s", step.step_id))
            for step in recording.steps)
    head = start("tr", *(start("th", name) for name in ("step", "iteration", "status", "ms")))
    return el("details", el("summary", f"Steps ({len(recording.steps)})"), el("table", head, *rows), class_="fl-box")


def bundle_text(recording: Recording) -> str:
    """The one-line ``text/plain`` of a run."""
    preview = (recording.answer or "")[:60]
    return f"Run(run_id={recording.run_id!r}, status={recording.status!r}, answer={preview!r})"


# -- members of a composed run (the tree view draws them the same way) ------------------


def members_html(recording: Recording, scope: str, *, full: bool) -> Html:
    """The members of a composed run as nested ``<details>``, each holding the member's view."""
    tree = run_tree(recording)
    homes = recordings_by_path(recording)
    return nested_html(tree, scope, homes, full, skip_root=True)


def recordings_by_path(recording: Recording) -> dict[str, Recording]:
    """Every run of a composed recording (itself and its members, at any depth) by its path."""
    found = {recording.path: recording}
    for child in recording.children:
        found.update(recordings_by_path(child))
    return found


def nested_html(tree: RunTree, scope: str, homes: dict[str, Recording], full: bool, *, skip_root: bool) -> Html:
    """A run tree's members as nested ``<details>``; each member's body is its own answer view (or all of it)."""
    children: dict[str | None, list[TreeNode]] = {}
    for node in tree.nodes:
        children.setdefault(node.parent, []).append(node)
    into = {edge.child: edge for edge in tree.edges}

    def member(node: TreeNode) -> Html:
        edge = into.get(node.path)
        why = (join([" ", el("span", f"{edge.rule} → {edge.chosen}", class_="fl-edge")])
               if edge is not None and edge.rule else None)
        home = homes.get(node.path)
        if home is None:  # a step node (steps=True)
            body = el("div", node.answer_preview, class_="fl-muted")
        elif full and node.path:
            body = run_body(home, scope, nested=True)
        else:
            body = answer_block(home, scope)
        below = [member(child) for child in children.get(node.path, [])]
        said = f"{node.duration_ms:.1f} ms · {node.tokens} tokens · {shorten(node.answer_preview, 60)}"
        summary = el("summary", kind_tag(node.kind), " ", el("b", node_label(node)), why, " · ",
                     tag(node.status, node.status), " ", el("span", said, class_="fl-muted"))
        return el("li", el("details", summary, el("div", body, class_="fl-member-body"),
                           el("ul", *below) if below else None,
                           class_="fl-member", open=not node.path, data_fl_member=node.path,
                           id=anchor(scope, "m", node.path)))

    tops = children.get(None, [])
    nodes = [child for top in tops for child in children.get(top.path, [])] if skip_root else tops
    note = None if full else el(
        "p", "This tree is large, so each member shows its header and answer only; "
             "Run.from_recording(member_recording) displays any member in full.", class_="fl-note")
    return join([note, el("ul", *(member(node) for node in nodes), class_="fl-tree")])
