"""The Lab widget's detail panels: one LLM call's slots, one piece's custody, reruns and verdicts.

Rule kept here: a panel is a pure function of a recording (and of the explain objects built
from it), every value from a model, tool, user or document is drawn through the views' doors
(``esc`` for text, ``attr`` for an attribute's value), and no panel carries JavaScript.
What is clickable carries the same ``data-fl-*`` attributes the answer view uses
(``data-fl-call``, ``data-fl-piece`` + ``data-fl-slot``, ``data-fl-action``), so the
widget's one click handler serves them all.

Role: lab layer, used by :mod:`footprint_lab.lab.widget`; the answer view itself comes from
:mod:`footprint_lab.lab.views`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from footprint_lab.core._run import explained
from footprint_lab.engine import theme, words
from footprint_lab.engine.markup import css, shown
from footprint_lab.explain._index import RecordingIndex
from footprint_lab.explain._render import shorten
from footprint_lab.explain._sources import describe_source, removal_id
from footprint_lab.explain._tree import run_tree
from footprint_lab.lab.views.page import attr
from footprint_lab.lab.views.page import esc as text

if TYPE_CHECKING:
    from footprint_lab.engine._recording import Recording
    from footprint_lab.explain._ablation import Localization, RerunReport
    from footprint_lab.explain._custody import Candidate
    from footprint_lab.explain._dropped import DroppedContext
    from footprint_lab.explain._replay import Replay

#: what the panels' CSS needs beyond the widget's own stylesheet, so a panel also reads well on its own
STYLE = (
    "<style>"
    f"{theme.dark_rules()}"
    f".fl-p{{font-family:{theme.FONT};font-size:{theme.TEXT};line-height:1.4}}.fl-p a{{color:{theme.BLUE}}}"
    f".fl-p button{{color:{theme.INK};background:{theme.FILL};border:1px solid {theme.LINE};"
    f"border-radius:{theme.RADIUS}}}"
    f".fl-p h4{{margin:.2rem 0 .3rem;font-size:13.5px}}.fl-p h5{{margin:.5rem 0 .15rem;font-size:{theme.SMALL};"
    f"color:{theme.GREY}}}"
    ".fl-p table{border-collapse:collapse;width:100%;margin:.1rem 0}"
    f".fl-p td,.fl-p th{{border-bottom:1px solid {theme.LINE};padding:2px 6px;text-align:left;vertical-align:top}}"
    f".fl-p th{{font-weight:600;color:{theme.GREY};font-size:{theme.SMALL}}}"
    f".fl-p code{{font-size:{theme.SMALL}}}"
    ".fl-p pre{white-space:pre-wrap;word-break:normal;overflow-wrap:break-word;margin:.2rem 0;"
    f"font-size:{theme.SMALL}}}"
    f".fl-p .fl-dim{{color:{theme.GREY}}}"
    ".fl-p.fl-actions,.fl-p .fl-actions{display:flex;gap:.4rem;margin:.45rem 0;flex-wrap:wrap}"
    f".fl-p .fl-act{{font:inherit;font-size:{theme.SMALL};padding:.2rem .6rem;border-radius:{theme.RADIUS};"
    f"border:1px solid {theme.LINE};background:{theme.FILL};cursor:pointer}}"
    f".fl-p .fl-act:hover{{background:{theme.BLUE_TINT}}}"
    ".fl-p .fl-side{display:grid;grid-template-columns:1fr 1fr;gap:.6rem}"
    f".fl-p .fl-side>div{{border:1px solid {theme.LINE};border-radius:{theme.RADIUS};padding:.35rem .55rem}}"
    f".fl-p.fl-lab-piece{{margin-top:.5rem;padding:.4rem .6rem;border-left:3px solid {theme.PURPLE};"
    f"background:{theme.PURPLE_TINT}}}"
    "</style>"
)


#: the most HTML one view may put in the widget's saved state: the answer, the panel and a member's view, with
#: the step rows, stay under the 1 MB a saved notebook's widget state should keep to
VIEW_BUDGET = 200_000


def action(name: str, label: str, source: str | None = None) -> str:
    """A button the widget's click handler turns into ``{do: "click", action: name, source: ...}``."""
    extra = f' data-fl-source="{attr(source)}"' if source is not None else ""
    return f'<button class="fl-act" data-fl-action="{attr(name)}"{extra}>{text(label)}</button>'


def find_recording(recording: Recording, *, step_id: str | None = None, path: str | None = None) -> Recording | None:
    """The recording of the tree (the root or a member's) holding ``step_id``, or mounted at ``path``."""
    if path is not None:
        if recording.path == path:
            return recording
        return next((found for child in recording.children
                     if (found := find_recording(child, path=path)) is not None), None)
    return RecordingIndex(recording).home.get(step_id or "")


def answering_call(recording: Recording) -> str | None:
    """The LLM call whose reply became the answer (the nearest call the backtrack reaches), if any."""
    calls = explained(recording).backtrack().calls
    if calls:
        return calls[0]
    exchanges = RecordingIndex(recording).exchanges
    return next(reversed(exchanges), None)


def call_panel(root: Recording, call: str, *, chosen: tuple[str, str] | None = None) -> str:
    """One LLM call as part 1's slots view (each piece opens to its custody), with the chosen piece open."""
    from footprint_lab.lab.views import slots_view
    from footprint_lab.lab.views.answer import opened

    home = find_recording(root, step_id=call)
    exchange = home.exchange_at(call) if home is not None else None
    if home is None or exchange is None:
        return f'{STYLE}<div class="fl-p"><p>No LLM call <code>{text(call)}</code> in this run.</p></div>'
    view = slots_view(home, exchange, left_out=True, keep=chosen)
    if chosen is not None:
        view = opened(view, chosen)
    return _call_box(home, call, view)


def answer_panel(root: Recording, call: str) -> str:
    """What a click on the answer opens: the answering call as the model saw it (its messages, each naming
    its piece, and the raw request and reply), pointing at the answer view's list of its pieces rather than
    repeating it."""
    from footprint_lab.lab.views.messages import messages_html

    home = find_recording(root, step_id=call)
    exchange = home.exchange_at(call) if home is not None else None
    if home is None or exchange is None:
        return call_panel(root, call)
    said = (f'<div class="fl-p"><p>The answer came from <code>{text(call)}</code>. Its pieces, each with its '
            "custody, are listed in the answer view under <b>What the answering call was given</b>: click one "
            "there (or a piece named below) for its score and the reruns that test it.</p></div>")
    return _call_box(home, call, said + messages_html(home, exchange, root=root))


def piece_only_panel(root: Recording, call: str, chosen: tuple[str, str]) -> str:
    """One piece of a call, its custody open, without the call's other pieces (a button lists them all)."""
    from footprint_lab.lab.views.answer import piece_view

    home = find_recording(root, step_id=call)
    exchange = home.exchange_at(call) if home is not None else None
    view = piece_view(home, exchange, chosen) if home is not None and exchange is not None else None
    if home is None or view is None:
        return call_panel(root, call, chosen=chosen)
    every = (f'<button class="fl-act" data-fl-call="{attr(call)}">Every piece of <code>{text(call)}</code></button>')
    return _call_box(home, call, view, every)


def _call_box(home: Recording, call: str, view: str, extra: str = "") -> str:
    """A panel about one call: its view, and the actions on its run (dropped context, stepping through)."""
    first = home.steps[0].step_id if home.steps else call
    return (f'{STYLE}<div class="fl-call-panel" data-fl-call="{attr(call)}">{view}<div class="fl-p fl-actions">'
            + extra + action("dropped", "Find dropped context (restore each left-out piece)")
            + action("step", "Step through the run, step by step", first) + "</div></div>")


def step_panel(root: Recording, step_id: str, piece: tuple[str, str] | None = None) -> str:
    """One step of a run, in order: what it read (each value with the step that wrote it), what it committed, and,
    with ``piece`` (a slot and a source id) selected, where that piece's custody stands at this step; buttons go to
    the step before and the step after."""
    home = find_recording(root, step_id=step_id) or root
    order = [step.step_id for step in home.steps]
    if step_id not in order:
        return f'{STYLE}<div class="fl-p"><p>No step <code>{text(step_id)}</code> in this run.</p></div>'
    at = order.index(step_id)
    step = home.steps[at]
    reads = [r for r in home.reads if r.step_id == step_id]
    commits = [entry for commit in home.commits if commit.step_id == step_id for entry in commit.entries]
    saw = "".join(f"<tr><td><code>{text('.'.join(map(str, r.path)))}</code></td><td>{text(r.summary)}</td>"
                  f"<td><code>{text(r.writer or '-')}</code></td></tr>" for r in reads)
    wrote = "".join(f"<tr><td><code>{text('.'.join(map(str, e.path)))}</code></td><td>{text(e.verb)}</td>"
                    f"<td>{text(shorten(str(e.value), 160))}</td></tr>" for e in commits)
    custody = ""
    if piece is not None:
        slot, source = piece
        hops = [p for p in home.context_pieces if p.source_id == source and (not slot or p.slot == slot)]
        said: list[str] = []
        for found in hops:
            if found.allowed_by == step_id:
                said.append(words.term("ALLOWED", "span", shown=f"ALLOWED here: {found.reason or found.verdict}"))
            if found.landed_by == step_id:
                said.append(words.term("LANDED", "span",
                                       shown=f"LANDED here, at position {found.position} of the {found.slot} slot"))
            if any(x.step_id == step_id and found.index in [i for sent in home.exchange_pieces(x).values()
                                                             for i in sent] for x in home.exchanges):
                said.append(words.term("READ", "span", shown="READ here: this call was sent it"))
        custody = (f"<h5>{text(source)} at this step</h5>"
                   f'<div class="fl-dim">{"; ".join(said) or "no hop of its custody is at this step"}</div>')
    back = action("step", "◀ step before", order[at - 1]) if at > 0 else ""
    forth = action("step", "step after ▶", order[at + 1]) if at + 1 < len(order) else ""
    return (f'{STYLE}<div class="fl-p fl-step-panel"><h4>Step {at + 1} of {len(order)}: <code>{text(step_id)}</code> '
            f"({text(step.stage)}, {text(step.status)}, {step.duration_ms:.1f} ms)</h4>"
            f'<div class="fl-actions">{back}{forth}</div>'
            f"<h5>What it read ({len(reads)})</h5>"
            + (f"<table><tr><th>path</th><th>value</th><th>written by</th></tr>{saw}</table>" if reads
               else '<div class="fl-dim">nothing</div>')
            + f"<h5>What it committed ({len(commits)})</h5>"
            + (f"<table><tr><th>path</th><th>verb</th><th>value</th></tr>{wrote}</table>" if commits
               else '<div class="fl-dim">nothing</div>')
            + custody + "</div>")


def piece_panel(candidate: Candidate | None, piece_id: str, call: str, suspects: Any, *, can_rerun: bool,
                can_replay: bool = False) -> str:
    """One piece of the open call: whether its custody is proven, its suspect score, and the reruns that test it.

    Its custody itself is open in the call's slots view above.
    """
    if candidate is None:
        return (f'<div class="fl-p fl-lab-piece"><p>The backtrack from <code>{text(call)}</code> finds no piece '
                f"<code>{text(piece_id)}</code>; its row above shows what its record holds.</p></div>")
    piece = candidate.piece
    proven = "every hop of its custody is proven" if candidate.proven else "some hops of its custody are unproven"
    parts = [
        f'<div class="fl-p fl-lab-piece"><h4>{text(describe_source(piece))} · {text(piece.slot)} slot of '
        f"<code>{text(candidate.read_by)}</code></h4>",
        f'<div class="fl-dim">{proven} (the piece\'s row shows each hop)</div>',
        _suspect_line(suspects, piece_id),
    ]
    removable = removal_id(piece)
    if removable is None:
        parts.append('<div class="fl-dim">A rerun cannot remove this piece: the user\'s message is the input every '
                     "rerun answers, and the model's own turns are what a rerun produces again.</div>")
    elif can_rerun:
        parts.append('<div class="fl-actions">' + action("rerun", "Rerun without this piece", removable)
                     + action("localize", "Test this piece (reruns with and without it)", removable)
                     + action("localize", "Localize: test every piece") + "</div>")
    elif not can_replay:
        parts.append('<div class="fl-dim">Reruns rebuild the agent that made this call, and no single agent of '
                     "this runner matches it, so Rerun and Localize are not offered here; a Lab made with "
                     "replay=provider re-sends the recorded call instead.</div>")
    if removable is not None and can_replay:
        parts.append(
            '<div class="fl-replay"><h5>Replay this call (its recorded request, sent again)</h5>'
            '<div class="fl-actions">'
            + action("replay", "Replay without this piece (3 times, and 3 unchanged)", removable)
            + action("replay_localize", "Localize by replay: test every piece of the answering call") + "</div>"
            + f'<label class="fl-dim">Or replace its text, then replay:<textarea class="fl-edit" data-fl-edit rows="3">'
            f"{text(piece.content)}</textarea></label>"
            + '<div class="fl-actions">' + action("replay_edit", "Replay with this text (3 times, and 3 unchanged)",
                                                  removable)
            + "</div></div>")
    parts.append("</div>")
    return "".join(parts)


def replay_panel(found: Replay) -> str:
    """``replay``: the recorded answer, each replay's answer and each unchanged replay's, with the flip counts."""
    rows = [("recorded", found.original, "")]
    rows += [(f"replay {k + 1}", answer, "changed" if found.flipped(answer) else "same")
             for k, answer in enumerate(found.answers)]
    rows += [(f"unchanged {k + 1}", r.answer, "changed" if found.flipped(r.answer) else "same")
             for k, r in enumerate(found.unchanged)]
    body = "".join(f"<tr><td>{text(name)}</td><td><pre>{text(answer)}</pre></td><td>{text(verdict)}</td></tr>"
                   for name, answer, verdict in rows)
    return (f'{STYLE}<div class="fl-p fl-replayed"><h4>{text(found.summary())}</h4>'
            f"<table><tr><th>which</th><th>answer</th><th>vs recorded</th></tr>{body}</table>"
            '<div class="fl-dim">A replay tests this call only; a few replays are an observation: Localize by replay '
            "tests every piece with the statistics of a proof.</div></div>")


def _suspect_line(suspects: Any, piece_id: str) -> str:
    if suspects is None or len(suspects) == 0:
        return ""
    rows = suspects[suspects["source_id"] == piece_id]
    if len(rows) == 0:
        return '<div class="fl-dim">not among the ranked suspects</div>'
    row = rows.iloc[0]
    return (f'<div class="fl-suspect">suspect score <b>{float(row["score"]):.3f}</b>, rank {int(row["rank"])} of '
            f'{len(suspects)} <span class="fl-dim">({text(row["evidence"])}; a ranking is correlational: only '
            "Localize calls something a cause)</span></div>")


def rerun_panel(report: RerunReport) -> str:
    """``rerun_without``: the answer before and after, side by side, and which sources changed."""
    after = report.after if report.after is not None else f"(the rerun failed: {report.error})"
    return (
        f'{STYLE}<div class="fl-p fl-rerun"><h4>{text(report.summary())}</h4><div class="fl-side">'
        f'<div><div class="fl-dim">before</div><pre>{text(report.before)}</pre></div>'
        f'<div><div class="fl-dim">after, without {text(", ".join(report.removed))}</div><pre>{text(after)}</pre></div>'
        f'</div><div class="fl-dim">no longer sent: {text(", ".join(report.gone) or "nothing")} · newly sent: '
        f'{text(", ".join(report.appeared) or "nothing")}. One rerun is an observation; Localize repeats it '
        "against a baseline.</div></div>"
    )


def localize_panel(report: Localization) -> str:
    """``localize``: part 1's verdicts table (one row per tested suspect), marked for the widget."""
    from footprint_lab.lab.views.explain import localization_html

    return f'<div class="fl-localize">{localization_html(report)}</div>'


def dropped_panel(report: DroppedContext) -> str:
    """``find_dropped_context``: part 1's table of left-out pieces, each with what restoring it did."""
    from footprint_lab.lab.views.explain import dropped_html

    return f'<div class="fl-dropped">{dropped_html(report)}</div>'


def tree_data(recording: Recording) -> dict[str, Any]:
    """The run tree as the small JSON the widget draws (nothing for a run without members)."""
    if not recording.children:
        return {}

    tree = run_tree(recording)
    into = {edge.child: edge for edge in tree.edges}
    nodes = []
    for node in tree.nodes:
        edge = into.get(node.path)
        name = node.name or node.runner_id or (node.path.rpartition("/")[2] or "run")
        # the path names the member the widget asks for (kept as it is); the texts are drawn as any value
        nodes.append({
            "path": node.path, "parent": node.parent, "depth": node.depth, "status": node.status,
            "label": shown(f"{name} ({node.kind})"), "preview": shown(node.answer_preview),
            "kind": words.meaning(node.kind),
            "edge": shown(f"{edge.rule}: {edge.chosen}") if edge is not None and edge.rule else "",
        })
    return {"nodes": nodes}


def answer_html(recording: Recording) -> str:
    """The answer view of a recording: part 1's no-JS view, whose ``data-fl-*`` hooks the widget catches.

    A view larger than :data:`VIEW_BUDGET` (a long run whose every call is shown with every
    slot) is its header and answer, still clickable, so the saved notebook stays small; the
    one builder of the view (``lab.views.answer_view``) decides both.
    """
    from footprint_lab.lab.views import answer_view

    return answer_view(recording, budget=VIEW_BUDGET, messages=False)  # the answer's click shows them


def bounded(view: str, what: str) -> str:
    """A panel, or a line saying where to look when it is too large to keep in the widget's state."""
    if len(view) <= VIEW_BUDGET:
        return view
    return (f'{STYLE}<div class="fl-p"><p>{text(what)} is {len(view) // 1000} kB of HTML, more than a notebook '
            "should keep; <code>lab.run.context(call)</code> and <code>lab.run.backtrack()</code> hold it all."
            "</p></div>")


def static_copy(view: str) -> str:
    """The answer view as a saved notebook keeps it beside the widget, for readers without a kernel."""
    return (f'<div class="fl-static-copy"><div style="{css(font_size=theme.SMALL, color=theme.GREY)}">'
            "footprint_lab Lab: a static copy of what it last showed (the live widget is gone with its kernel: "
            "run the cell again to click into it)</div>"
            f"{view}</div>")
