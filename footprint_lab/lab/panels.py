"""The Lab widget's detail panels: one LLM call's slots, one piece's custody, reruns and verdicts.

Rule kept here: a panel is a pure function of a recording (and of the explain objects built
from it), built with the engine's escaping element builder (``markup.elements.el``: every value
from a model, tool, user or document escaped, in text and attributes alike), and no panel carries
JavaScript.
What is clickable carries the same ``data-fl-*`` attributes the answer view uses
(``data-fl-call``, ``data-fl-piece`` + ``data-fl-slot``, ``data-fl-action``), so the
widget's one click handler serves them all.

Role: lab layer, used by :mod:`footprint_lab.lab.widget`; the answer view itself comes from
:mod:`footprint_lab.lab.views`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from footprint_lab.core.run import explained
from footprint_lab.explain.provenance.index import RecordingIndex
from footprint_lab.explain.provenance.sources import describe_source, removal_id
from footprint_lab.explain.provenance.tree import run_tree
from footprint_lab.explain.render import shorten
from footprint_lab.markup import theme, words
from footprint_lab.markup.elements import Html, css, el, join, raw, shown

if TYPE_CHECKING:
    from footprint_lab.explain.provenance.custody import Candidate
    from footprint_lab.explain.trials.ablation import Localization, RerunReport
    from footprint_lab.explain.trials.dropped import DroppedContext
    from footprint_lab.explain.trials.replay import Replay
    from footprint_lab.record.recording import Recording

#: what the panels' CSS needs beyond the widget's own stylesheet, so a panel also reads well on its own
STYLE = el("style", raw(
    f"{theme.dark_rules()}"
    f".fl-p{{font-family:{theme.FONT};font-size:{theme.TEXT};line-height:1.4}}.fl-p a{{color:{theme.BLUE}}}"
    f".fl-p button{{color:{theme.INK};background:{theme.FILL};border:1px solid {theme.LINE};"
    f"border-radius:{theme.RADIUS}}}"
    f".fl-p h4{{margin:.2rem 0 .3rem;font-size:13.5px}}.fl-p h5{{margin:.5rem 0 .15rem;font-size:{theme.SMALL};"
    f"color:{theme.GREY}}}"
    ".fl-p table{border-collapse:collapse;width:100%;margin:.1rem 0;color:inherit}"
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
))


#: the most HTML one view may put in the widget's saved state: the answer, the panel and a member's view, with
#: the step rows, stay under the 1 MB a saved notebook's widget state should keep to
VIEW_BUDGET = 200_000


def action(name: str, label: str, source: str | None = None) -> Html:
    """A button the widget's click handler turns into ``{do: "click", action: name, source: ...}``."""
    return el("button", label, class_="fl-act", data_fl_action=name, data_fl_source=source)


def said(*children: Any, css_class: str = "fl-p") -> Html:
    """A panel that only says something (no such call, no such step, too large to keep): its sheet and its words."""
    return join([STYLE, el("div", el("p", *children), class_=css_class)])


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
        return said("No LLM call ", el("code", call), " in this run.")
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
    where = el("div", el("p", "The answer came from ", el("code", call), ". Its pieces, each with its custody, are "
                              "listed in the answer view under ", el("b", "What the answering call was given"),
                         ": click one there (or a piece named below) for its score and the reruns that test it."),
               class_="fl-p")
    return _call_box(home, call, where + messages_html(home, exchange, root=root))


def piece_only_panel(root: Recording, call: str, chosen: tuple[str, str]) -> str:
    """One piece of a call, its custody open, without the call's other pieces (a button lists them all)."""
    from footprint_lab.lab.views.answer import piece_view

    home = find_recording(root, step_id=call)
    exchange = home.exchange_at(call) if home is not None else None
    view = piece_view(home, exchange, chosen) if home is not None and exchange is not None else None
    if home is None or view is None:
        return call_panel(root, call, chosen=chosen)
    every = el("button", "Every piece of ", el("code", call), class_="fl-act", data_fl_call=call)
    return _call_box(home, call, view, every)


def _call_box(home: Recording, call: str, view: str, extra: Html | None = None) -> Html:
    """A panel about one call: its view, and the actions on its run (dropped context, stepping through)."""
    first = home.steps[0].step_id if home.steps else call
    actions = el("div", extra, action("dropped", "Find dropped context (restore each left-out piece)"),
                 action("step", "Step through the run, step by step", first), class_="fl-p fl-actions")
    return join([STYLE, el("div", raw(view), actions, class_="fl-call-panel", data_fl_call=call)])


def step_panel(root: Recording, step_id: str, piece: tuple[str, str] | None = None) -> str:
    """One step of a run, in order: what it read (each value with the step that wrote it), what it committed, and,
    with ``piece`` (a slot and a source id) selected, where that piece's custody stands at this step; buttons go to
    the step before and the step after."""
    home = find_recording(root, step_id=step_id) or root
    order = [step.step_id for step in home.steps]
    if step_id not in order:
        return said("No step ", el("code", step_id), " in this run.")
    at = order.index(step_id)
    step = home.steps[at]
    reads = [r for r in home.reads if r.step_id == step_id]
    commits = [entry for commit in home.commits if commit.step_id == step_id for entry in commit.entries]
    saw = [[el("code", ".".join(map(str, r.path))), r.summary, el("code", r.writer or "-")] for r in reads]
    wrote = [[el("code", ".".join(map(str, e.path))), e.verb, shorten(str(e.value), 160)] for e in commits]
    custody = None
    if piece is not None:
        slot, source = piece
        hops = [p for p in home.context_pieces if p.source_id == source and (not slot or p.slot == slot)]
        found: list[Html] = []
        for held in hops:
            if held.allowed_by == step_id:
                found.append(words.term("ALLOWED", "span", shown=f"ALLOWED here: {held.reason or held.verdict}"))
            if held.landed_by == step_id:
                found.append(words.term("LANDED", "span",
                                        shown=f"LANDED here, at position {held.position} of the {held.slot} slot"))
            if any(x.step_id == step_id and held.index in [i for sent in home.exchange_pieces(x).values()
                                                            for i in sent] for x in home.exchanges):
                found.append(words.term("READ", "span", shown="READ here: this call was sent it"))
        custody = join([el("h5", f"{source} at this step"),
                        el("div", join(found, "; ") or "no hop of its custody is at this step", class_="fl-dim")])
    back = action("step", "◀ step before", order[at - 1]) if at > 0 else None
    forth = action("step", "step after ▶", order[at + 1]) if at + 1 < len(order) else None
    nothing = el("div", "nothing", class_="fl-dim")
    return join([STYLE, el(
        "div", el("h4", f"Step {at + 1} of {len(order)}: ", el("code", step_id),
                  f" ({step.stage}, {step.status}, {step.duration_ms:.1f} ms)"),
        el("div", back, forth, class_="fl-actions"),
        el("h5", f"What it read ({len(reads)})"),
        _table(["path", "value", "written by"], saw) if reads else nothing,
        el("h5", f"What it committed ({len(commits)})"),
        _table(["path", "verb", "value"], wrote) if commits else nothing,
        custody, class_="fl-p fl-step-panel")])


def _table(header: list[str], rows: list[list[Any]]) -> Html:
    """A panel's table: a heading row, then one row of cells per entry (text escaped, markup kept)."""
    return el("table", el("tr", *(el("th", name) for name in header)),
              *(el("tr", *(el("td", cell) for cell in row)) for row in rows))


def piece_panel(candidate: Candidate | None, piece_id: str, call: str, suspects: Any, *, can_rerun: bool,
                can_replay: bool = False) -> str:
    """One piece of the open call: whether its custody is proven, its suspect score, and the reruns that test it.

    Its custody itself is open in the call's slots view above.
    """
    if candidate is None:
        return el("div", el("p", "The backtrack from ", el("code", call), " finds no piece ", el("code", piece_id),
                            "; its row above shows what its record holds."), class_="fl-p fl-lab-piece")
    piece = candidate.piece
    proven = "every hop of its custody is proven" if candidate.proven else "some hops of its custody are unproven"
    parts: list[Html | None] = [
        el("h4", f"{describe_source(piece)} · {piece.slot} slot of ", el("code", candidate.read_by)),
        el("div", f"{proven} (the piece's row shows each hop)", class_="fl-dim"),
        _suspect_line(suspects, piece_id),
    ]
    removable = removal_id(piece)
    if removable is None:
        parts.append(el("div", "A rerun cannot remove this piece: the user's message is the input every rerun answers, "
                               "and the model's own turns are what a rerun produces again.", class_="fl-dim"))
    elif can_rerun:
        parts.append(el("div", action("rerun", "Rerun without this piece", removable),
                        action("localize", "Test this piece (reruns with and without it)", removable),
                        action("localize", "Localize: test every piece"), class_="fl-actions"))
    elif not can_replay:
        parts.append(el("div", "Reruns rebuild the agent that made this call, and no single agent of this runner "
                               "matches it, so Rerun and Localize are not offered here; a Lab made with "
                               "replay=provider re-sends the recorded call instead.", class_="fl-dim"))
    if removable is not None and can_replay:
        edit = el("textarea", piece.content, class_="fl-edit", data_fl_edit=True, rows="3")
        parts.append(el(
            "div", el("h5", "Replay this call (its recorded request, sent again)"),
            el("div", action("replay", "Replay without this piece (3 times, and 3 unchanged)", removable),
               action("replay_localize", "Localize by replay: test every piece of the answering call"),
               class_="fl-actions"),
            el("label", "Or replace its text, then replay:", edit, class_="fl-dim"),
            el("div", action("replay_edit", "Replay with this text (3 times, and 3 unchanged)", removable),
               class_="fl-actions"),
            class_="fl-replay"))
    return el("div", *parts, class_="fl-p fl-lab-piece")


def replay_panel(found: Replay) -> Html:
    """``replay``: the recorded answer, each replay's answer and each unchanged replay's, with the flip counts."""
    from footprint_lab.lab.views.explain import REPLAY_NOTE, replay_table

    return join([STYLE, el("div", el("h4", found.summary()), replay_table(found),
                           el("div", REPLAY_NOTE, class_="fl-dim"), class_="fl-p fl-replayed")])


def _suspect_line(suspects: Any, piece_id: str) -> Html | None:
    if suspects is None or len(suspects) == 0:
        return None
    rows = suspects[suspects["source_id"] == piece_id]
    if len(rows) == 0:
        return el("div", "not among the ranked suspects", class_="fl-dim")
    row = rows.iloc[0]
    return el("div", "suspect score ", el("b", f"{float(row['score']):.3f}"),
              f", rank {int(row['rank'])} of {len(suspects)} ",
              el("span", f"({row['evidence']}; a ranking is correlational: only Localize calls something a cause)",
                 class_="fl-dim"), class_="fl-suspect")


def rerun_panel(report: RerunReport) -> Html:
    """``rerun_without``: the answer before and after, side by side, and which sources changed."""
    after = report.after if report.after is not None else f"(the rerun failed: {report.error})"
    side = el("div", el("div", el("div", "before", class_="fl-dim"), el("pre", report.before)),
              el("div", el("div", f"after, without {', '.join(report.removed)}", class_="fl-dim"), el("pre", after)),
              class_="fl-side")
    changed = (f"no longer sent: {', '.join(report.gone) or 'nothing'} · newly sent: "
               f"{', '.join(report.appeared) or 'nothing'}. One rerun is an observation; Localize repeats it against "
               "a baseline.")
    return join([STYLE, el("div", el("h4", report.summary()), side, el("div", changed, class_="fl-dim"),
                           class_="fl-p fl-rerun")])


def localize_panel(report: Localization) -> Html:
    """``localize``: part 1's verdicts table (one row per tested suspect), marked for the widget."""
    from footprint_lab.lab.views.explain import localization_html

    return el("div", localization_html(report), class_="fl-localize")


def dropped_panel(report: DroppedContext) -> Html:
    """``find_dropped_context``: part 1's table of left-out pieces, each with what restoring it did."""
    from footprint_lab.lab.views.explain import dropped_html

    return el("div", dropped_html(report), class_="fl-dropped")


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
    return said(f"{what} is {len(view) // 1000} kB of HTML, more than a notebook should keep; ",
                el("code", "lab.run.context(call)"), " and ", el("code", "lab.run.backtrack()"), " hold it all.")


def static_copy(view: str) -> Html:
    """The answer view as a saved notebook keeps it beside the widget, for readers without a kernel."""
    return el("div", el("div", "footprint_lab Lab: a static copy of what it last showed (the live widget is gone with "
                               "its kernel: run the cell again to click into it)",
                        style=css(font_size=theme.SMALL, color=theme.GREY)),
              raw(view), class_="fl-static-copy")
