"""Composition runs drawn as trees: the plotly figure as data, and an inline SVG with the list of members beside it.

Rule kept here: a ``RunTree`` displays as a *plain* bundle, never a ``FigureWidget`` (whose saved
widget state would weigh megabytes), and never with plotly.js in it: a notebook that shows a
tree stays as small as one that does not. ``application/vnd.plotly.v1+json`` holds the figure
(JupyterLab and VS Code draw it with their own plotly, interactive); ``text/html`` holds the tree
drawn as inline SVG (:mod:`footprint_lab.lab.views.svg`), which reads with no script at all, and
under it the members as nested ``<details>`` (each with its answer view inside), so GitHub,
nbviewer or a sanitizing viewer still reads every member. The exported single-file page
(``footprint-lab html``) draws the interactive figure, bringing plotly.js once per page.

The figure is a node-link tree in a tidy layout (depth left to right, each leaf on its own
row, a parent centred on its children), not an icicle: a ``Parallel``'s members run at once,
so widths drawn as durations would overlap or lie, and an icicle has no edge on which to
write the decision (the rule and the branch a ``Conditional`` chose, a ``Loop``'s go-on or
stop). Markers are coloured by kind, outlined by status; hover shows duration, tokens and the
answer's start; edges carry their decision.

Role: lab layer; pure functions of a ``RunTree`` (and its recording, for the member views).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from footprint_lab.explain.provenance.tree import RunTree, run_tree
from footprint_lab.lab.views.answer import FULL_MEMBER_VIEWS, nested_html, recordings_by_path
from footprint_lab.lab.views.page import (
    FIRST_DRAWN,
    LONG_LIST,
    TREE_CSS,
    Html,
    el,
    esc,
    join,
    new_scope,
    not_drawn,
    raw,
    shorten,
    start,
    wrap,
)
from footprint_lab.lab.views.svg import SVG_NODES, decision, layout, node_label, tree_svg
from footprint_lab.markup import theme, words

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from footprint_lab.explain.provenance.tree import RunTree, TreeEdge, TreeNode

PLOTLY_MIME = "application/vnd.plotly.v1+json"
RUN_KIND_COLOURS = theme.RUN_KIND_COLOURS
#: above this many nodes the figure drops its text labels (hover still names every node)
LABELLED_NODES = 40
#: a displayed tree (``steps=True``) draws each run's steps as a long list (``page.not_drawn``): the
#: rest are counted, and ``tree.to_frame()`` lists every node
STEPS_PER_RUN = LONG_LIST
FIRST_STEPS = FIRST_DRAWN
STEP_KINDS = ("call-llm", "tool")
CONFIG = {"displaylogo": False, "responsive": True}


def _as_tree(recording_or_tree: Any, steps: bool) -> RunTree:
    if isinstance(recording_or_tree, RunTree):
        return recording_or_tree
    recording = getattr(recording_or_tree, "recording", recording_or_tree)
    return run_tree(recording, steps=steps)


def _figure_text(value: object) -> str:
    """A value in the figure: escaped for plotly's own small HTML (which draws no styled badge: a mark stays text)."""
    return esc(value, badges=False)


def _hover(node: TreeNode, edge: TreeEdge | None) -> str:
    lines = [el("b", raw(_figure_text(node_label(node)))) + f" ({_figure_text(node.kind)})",
             _figure_text(words.meaning(node.kind)) or None,
             f"status: {_figure_text(node.status)}",
             f"{node.duration_ms:.1f} ms · {node.tokens} tokens"]
    if node.path:
        lines.append(f"at {_figure_text(node.path)}")
    if decision(edge):
        lines.append(f"decision: {_figure_text(decision(edge))}")
    if node.answer_preview:
        lines.append(f"answer: {_figure_text(shorten(node.answer_preview, 60))}")
    return start("br").join(line for line in lines if line)  # plotly breaks a hover text at each br


def tree_figure(recording_or_tree: Any, *, steps: bool = False) -> go.Figure:
    """The tree as a plotly ``Figure`` (never a ``FigureWidget``): a run, a recording or a ``RunTree``."""
    import plotly.graph_objects as go

    return go.Figure(figure_data(_as_tree(recording_or_tree, steps)))


def figure_data(tree: RunTree) -> dict[str, Any]:
    """The figure as plain plotly JSON (``data`` and ``layout``), built without plotly's validation.

    Displaying a tree needs only this; building a ``go.Figure`` validates every value, which
    costs a 1,000-member tree most of its time, so only :func:`tree_figure` does it.
    """
    where = layout(tree)
    into = {edge.child: edge for edge in tree.edges}
    edge_x: list[float | None] = []
    edge_y: list[float | None] = []
    label_x: list[float] = []
    label_y: list[float] = []
    label_text: list[str] = []
    for edge in tree.edges:  # the figure runs depth left to right: a layer is an x, a column a y
        (x0, y0), (x1, y1) = where[edge.parent], where[edge.child]
        middle = (x0 + x1) / 2
        edge_x += [x0, middle, middle, x1, None]
        edge_y += [y0, y0, y1, y1, None]
        if edge.rule:
            label_x.append(middle)
            label_y.append(y1)
            label_text.append(_figure_text(shorten(decision(edge), 40)))
    labelled = len(tree.nodes) <= LABELLED_NODES
    traces: list[dict[str, Any]] = [{"type": "scatter", "x": edge_x, "y": edge_y, "mode": "lines", "hoverinfo": "skip",
                                     "showlegend": False, "line": {"color": theme.plain(theme.LINE), "width": 1}}]
    for kind in dict.fromkeys(node.kind for node in tree.nodes):
        group = [node for node in tree.nodes if node.kind == kind]
        traces.append({
            "type": "scatter", "x": [where[n.path][0] for n in group], "y": [where[n.path][1] for n in group],
            "mode": "markers+text" if labelled else "markers", "name": _figure_text(kind),
            "text": [_figure_text(shorten(node_label(n), 28)) for n in group], "textposition": "top center",
            "hovertext": [_hover(n, into.get(n.path)) for n in group], "hoverinfo": "text",
            "customdata": [n.path for n in group],
            "marker": {"size": 14 if labelled else 8, "color": theme.plain(RUN_KIND_COLOURS.get(kind, theme.GREY)),
                       "line": {"width": 2.5, "color": [theme.plain(theme.status_colour(n.status)) for n in group]}},
        })
    if label_text and labelled:
        traces.append({"type": "scatter", "x": label_x, "y": label_y, "mode": "text", "text": label_text,
                       "textposition": "bottom center", "hoverinfo": "skip", "showlegend": False,
                       "textfont": {"size": 10, "color": theme.plain(theme.PURPLE)}})
    rows = 1 + max((y for _, y in where.values()), default=0)
    depth = max((node.depth for node in tree.nodes), default=0)
    return {"data": traces, "layout": {
        "height": int(min(900, max(260, 48 * rows + 80))), "margin": {"l": 20, "r": 20, "t": 30, "b": 20},
        "plot_bgcolor": theme.plain(theme.PAPER), "paper_bgcolor": theme.plain(theme.PAPER), "hovermode": "closest",
        "legend": {"title": {"text": "kind"}},
        "xaxis": {"visible": False, "range": [-0.4, depth + 0.6]},
        "yaxis": {"visible": False, "autorange": "reversed"},
        "title": {"text": f"{len(tree.nodes)} node{'s' if len(tree.nodes) != 1 else ''} · depth {depth}",
                  "font": {"size": 12}},
    }}


def drawn_steps(tree: RunTree) -> tuple[RunTree, int]:
    """``tree`` as a display draws it, each run's step nodes bounded (see STEPS_PER_RUN), and how many it left out."""
    under: dict[str | None, list[str]] = {}
    for node in tree.nodes:
        if node.kind in STEP_KINDS:
            under.setdefault(node.parent, []).append(node.path)
    dropped = {path for paths in under.values() for path in not_drawn(paths)}
    if not dropped:
        return tree, 0
    return RunTree(nodes=tuple(n for n in tree.nodes if n.path not in dropped),
                   edges=tuple(e for e in tree.edges if e.child not in dropped), recording=tree.recording), len(dropped)


def _left_out_note(left_out: int) -> str:
    return (f"{left_out} more LLM-call and tool steps are not drawn (each run shows its first {FIRST_STEPS} and "
            f"its latest ones): tree.to_frame() lists every node") if left_out else ""


def tree_html(recording_or_tree: Any, *, steps: bool = False, left_out: int = 0) -> Html:
    """The tree's ``text/html``, with no script: the tree as inline SVG, then its members as a list.

    ``left_out`` says how many step nodes the caller's tree leaves out (:func:`drawn_steps`).
    """
    tree = _as_tree(recording_or_tree, steps)
    scope = new_scope()
    picture = tree_svg(tree)
    drawn = el("div", picture, class_="fl-figure") if picture else el(
        "p", f"This tree has {len(tree.nodes)} nodes, more than a picture can show ({SVG_NODES}); the list below "
             "holds every one, and tree_figure(run) draws it with plotly.", class_="fl-note")
    homes = recordings_by_path(tree.recording) if tree.recording is not None else {}
    nested = nested_html(tree, scope, homes, len(tree.nodes) <= FULL_MEMBER_VIEWS, skip_root=False)
    note = el("p", _left_out_note(left_out), class_="fl-note") if left_out else None
    listed = el("details", el("summary", f"Runs as a list ({len(tree.nodes)})"), nested, class_="fl-box fl-nojs",
                open=True)
    return wrap(scope, join([drawn, note, listed]), extra=TREE_CSS)


def tree_bundle(tree: RunTree) -> dict[str, Any]:
    """The display bundle of a ``RunTree``: plotly's own MIME type, the HTML beside it, and a text outline.

    A run with many steps (``steps=True``) is drawn with its first and latest ones (:func:`drawn_steps`).
    """
    shown, left_out = drawn_steps(tree)
    figure = figure_data(shown)
    note = _left_out_note(left_out)
    return {
        "text/plain": shown.summary() + (f"\n… {note}" if note else ""),
        PLOTLY_MIME: {**figure, "config": CONFIG},
        "text/html": tree_html(shown, left_out=left_out),
    }
