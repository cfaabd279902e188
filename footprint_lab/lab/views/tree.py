"""Composition runs drawn as trees: a plotly figure, and a nested no-JavaScript tree beside it.

Rule kept here: a ``RunTree`` displays as a *plain* plotly figure bundle
(``application/vnd.plotly.v1+json`` plus ``text/html``), never a ``FigureWidget``, whose saved
widget state would weigh megabytes per figure. The ``text/html`` carries plotly.js from the
installed plotly package (never a CDN), embedded at most once per kernel session: the first
tree shown brings it, the later ones draw with it. Below the figure the same HTML holds the
tree as nested ``<details>`` (one per member, with the member's answer view inside), so a page
with JavaScript off, GitHub or nbviewer still reads every member.

The figure is a node-link tree in a tidy layout (depth left to right, each leaf on its own
row, a parent centred on its children), not an icicle: a ``Parallel``'s members run at once,
so widths drawn as durations would overlap or lie, and an icicle has no edge on which to
write the decision (the rule and the branch a ``Conditional`` chose, a ``Loop``'s go-on or
stop). Markers are coloured by kind, outlined by status; hover shows duration, tokens and the
answer's start; edges carry their decision.

Role: lab layer; pure functions of a ``RunTree`` (and its recording, for the member views).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from footprint_lab.explain._tree import RunTree, run_tree
from footprint_lab.lab.views.answer import FULL_MEMBER_VIEWS, nested_html, node_label, recordings_by_path
from footprint_lab.lab.views.page import (
    FIRST_DRAWN,
    LONG_LIST,
    STATUS_COLOURS,
    esc,
    new_scope,
    not_drawn,
    shorten,
    wrap,
)

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from footprint_lab.explain._tree import RunTree, TreeEdge, TreeNode

PLOTLY_MIME = "application/vnd.plotly.v1+json"
RUN_KIND_COLOURS = {
    "agent": "#0969da", "llm_call": "#8250df", "sequence": "#1a7f37", "parallel": "#bc4c00",
    "conditional": "#bf3989", "loop": "#9a6700", "workflow": "#0a7ea4", "graph": "#57606a",
    "call-llm": "#d2b4fe", "tool": "#afb8c1",
}
#: above this many nodes the figure drops its text labels (hover still names every node)
LABELLED_NODES = 40
#: a displayed tree (``steps=True``) draws each run's steps as a long list (``page.not_drawn``): the
#: rest are counted, and ``tree.to_frame()`` lists every node
STEPS_PER_RUN = LONG_LIST
FIRST_STEPS = FIRST_DRAWN
STEP_KINDS = ("call-llm", "tool")
CONFIG = {"displaylogo": False, "responsive": True}
_plotlyjs_sent = False
_FIXED_HEIGHT = re.compile(r'^\s*<div style="height:[0-9.]+px; width:100%;">')


def _as_tree(recording_or_tree: Any, steps: bool) -> RunTree:
    if isinstance(recording_or_tree, RunTree):
        return recording_or_tree
    recording = getattr(recording_or_tree, "recording", recording_or_tree)
    return run_tree(recording, steps=steps)


def layout(tree: RunTree) -> dict[str, tuple[float, float]]:
    """Tidy positions: ``x`` is the depth, each leaf takes the next row, a parent sits mid-way over its children."""
    children: dict[str | None, list[str]] = {}
    for node in tree.nodes:
        children.setdefault(node.parent, []).append(node.path)
    placed: dict[str, tuple[float, float]] = {}
    depth = {node.path: node.depth for node in tree.nodes}
    row = 0.0
    roots = children.get(None, [])
    # iterative post-order, so a deep tree never hits the recursion limit
    stack: list[tuple[str, bool]] = [(path, False) for path in reversed(roots)]
    while stack:
        path, done = stack.pop()
        below = children.get(path, [])
        if not below:
            placed[path] = (float(depth[path]), row)
            row += 1
        elif done:
            placed[path] = (float(depth[path]), (placed[below[0]][1] + placed[below[-1]][1]) / 2)
        else:
            stack.append((path, True))
            stack.extend((child, False) for child in reversed(below))
    return placed


def _figure_text(value: object) -> str:
    """A value in the figure: escaped for plotly's own small HTML (which draws no styled badge: a mark stays text)."""
    return esc(value, badges=False)


def _hover(node: TreeNode, edge: TreeEdge | None) -> str:
    lines = [f"<b>{_figure_text(node_label(node))}</b> ({_figure_text(node.kind)})",
             f"status: {_figure_text(node.status)}",
             f"{node.duration_ms:.1f} ms · {node.tokens} tokens"]
    if node.path:
        lines.append(f"at {_figure_text(node.path)}")
    if edge is not None and edge.rule:
        lines.append(f"decision: {_figure_text(edge.rule)} → {_figure_text(edge.chosen)}")
    if node.answer_preview:
        lines.append(f"answer: {_figure_text(shorten(node.answer_preview, 60))}")
    return "<br>".join(lines)


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
    for edge in tree.edges:
        (x0, y0), (x1, y1) = where[edge.parent], where[edge.child]
        middle = (x0 + x1) / 2
        edge_x += [x0, middle, middle, x1, None]
        edge_y += [y0, y0, y1, y1, None]
        if edge.rule:
            label_x.append(middle)
            label_y.append(y1)
            label_text.append(_figure_text(shorten(f"{edge.rule} → {edge.chosen}", 40)))
    labelled = len(tree.nodes) <= LABELLED_NODES
    traces: list[dict[str, Any]] = [{"type": "scatter", "x": edge_x, "y": edge_y, "mode": "lines", "hoverinfo": "skip",
                                     "showlegend": False, "line": {"color": "#8c959f", "width": 1}}]
    for kind in dict.fromkeys(node.kind for node in tree.nodes):
        group = [node for node in tree.nodes if node.kind == kind]
        traces.append({
            "type": "scatter", "x": [where[n.path][0] for n in group], "y": [where[n.path][1] for n in group],
            "mode": "markers+text" if labelled else "markers", "name": _figure_text(kind),
            "text": [_figure_text(shorten(node_label(n), 28)) for n in group], "textposition": "top center",
            "hovertext": [_hover(n, into.get(n.path)) for n in group], "hoverinfo": "text",
            "customdata": [n.path for n in group],
            "marker": {"size": 14 if labelled else 8, "color": RUN_KIND_COLOURS.get(kind, "#6e7781"),
                       "line": {"width": 2.5, "color": [STATUS_COLOURS.get(n.status, "#6e7781") for n in group]}},
        })
    if label_text and labelled:
        traces.append({"type": "scatter", "x": label_x, "y": label_y, "mode": "text", "text": label_text,
                       "textposition": "bottom center", "hoverinfo": "skip", "showlegend": False,
                       "textfont": {"size": 10, "color": "#8250df"}})
    rows = 1 + max((y for _, y in where.values()), default=0)
    depth = max((node.depth for node in tree.nodes), default=0)
    return {"data": traces, "layout": {
        "height": int(min(900, max(260, 48 * rows + 80))), "margin": {"l": 20, "r": 20, "t": 30, "b": 20},
        "plot_bgcolor": "#fff", "paper_bgcolor": "#fff", "hovermode": "closest",
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


def tree_html(recording_or_tree: Any, *, steps: bool = False, figure: dict[str, Any] | None = None,
              left_out: int = 0) -> str:
    """The tree's ``text/html``: the figure (plotly.js embedded on the first one only) and the no-JS tree.

    ``left_out`` says how many step nodes the caller's tree leaves out (:func:`drawn_steps`).
    """
    global _plotlyjs_sent
    tree = _as_tree(recording_or_tree, steps)
    scope = new_scope()
    drawn = ""
    if figure is not None:
        import plotly.io

        drawn = plotly.io.to_html(figure, full_html=False, include_plotlyjs=False, div_id=f"{scope}-figure",
                                  config=CONFIG, validate=False)
        # The box takes its height from the figure once plotly.js draws it, so where nothing draws it
        # (scripts off, a sanitized copy) it is no empty gap; plotly writes the height on its wrapper.
        drawn = _FIXED_HEIGHT.sub('<div style="width:100%;">', drawn, count=1)
        # with scripting off the figure's box is hidden too; the list below holds everything
        drawn = (f'<div class="fl-figure">{drawn}</div>'
                 f"<noscript><style>#{scope} .fl-figure{{display:none}}</style></noscript>")
        if not _plotlyjs_sent:
            drawn = _plotlyjs() + drawn
            _plotlyjs_sent = True
    homes = recordings_by_path(tree.recording) if tree.recording is not None else {}
    nested = nested_html(tree, scope, homes, len(tree.nodes) <= FULL_MEMBER_VIEWS, skip_root=False)
    note = f'<p class="fl-note">{esc(_left_out_note(left_out))}</p>' if left_out else ""
    return wrap(scope, f'{drawn}{note}<details class="fl-box fl-nojs" open><summary>Runs as a list '
                       f"({len(tree.nodes)})</summary>{nested}</details>")


def _plotlyjs() -> str:
    """plotly.js from the installed package, in a scope where it sets ``window.Plotly`` even beside require.js."""
    from plotly.offline import get_plotlyjs

    return ('<script type="text/javascript">(function(module, exports, define){'
            f"{get_plotlyjs()}\n}})();</script>")


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
        "text/html": tree_html(shown, figure=figure, left_out=left_out),
    }
