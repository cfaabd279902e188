"""A run tree drawn as inline SVG, laid out here in Python: a picture that needs no script at all.

Rule kept here: the SVG is the tree as a reader with scripts off gets it (GitHub, nbviewer, a
sanitizing viewer, an untrusted notebook), so it says everything in words: each node's name,
its kind, its status as a symbol and a word (``✓ finished``), its time and tokens, and on the
edge into it the decision that led there (a ``Conditional``'s rule and branch, a ``Loop``'s
go-on or stop). Colours (the kind's band, the status's outline) are presentation attributes,
not ``style``, and only repeat what the words say. Every text is drawn through the engine's
doors (:func:`footprint_lab.markup.elements.el`), so a hostile member name stays text.

Layout: layered, one row per depth, top down; each leaf takes the next column and a parent
sits centred over its children (a tidy tree), computed in one iterative pass so a deep tree
never hits the recursion limit. A tree of more than :data:`SVG_NODES` nodes is not drawn
(its list below the figure still reads every member).

Role: lab layer; a pure function of a ``RunTree``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from footprint_lab.explain.render import shorten
from footprint_lab.markup import theme, words
from footprint_lab.markup.elements import Html, css, el, join

if TYPE_CHECKING:
    from footprint_lab.explain.provenance.tree import RunTree, TreeEdge, TreeNode

#: above this many nodes the SVG is left out (the list under it holds every member)
SVG_NODES = 150
NODE_W, NODE_H = 172, 56
GAP_X, GAP_Y = 16, 46
MARGIN = 8
NAME_CHARS, EDGE_CHARS = 24, 28


def layout(tree: RunTree) -> dict[str, tuple[float, float]]:
    """Tidy positions, ``(depth, column)``: each leaf takes the next column, a parent sits mid-way over its children."""
    children: dict[str | None, list[str]] = {}
    for node in tree.nodes:
        children.setdefault(node.parent, []).append(node.path)
    placed: dict[str, tuple[float, float]] = {}
    depth = {node.path: node.depth for node in tree.nodes}
    column = 0.0
    # iterative post-order, so a deep tree never hits the recursion limit
    stack: list[tuple[str, bool]] = [(path, False) for path in reversed(children.get(None, []))]
    while stack:
        path, done = stack.pop()
        below = children.get(path, [])
        if not below:
            placed[path] = (float(depth[path]), column)
            column += 1
        elif done:
            placed[path] = (float(depth[path]), (placed[below[0]][1] + placed[below[-1]][1]) / 2)
        else:
            stack.append((path, True))
            stack.extend((child, False) for child in reversed(below))
    return placed


def node_label(node: TreeNode) -> str:
    """What a tree calls a node: its name, else the last part of its path, else its kind."""
    return node.name or node.path.rsplit("/", 1)[-1] or node.kind


def decision(edge: TreeEdge | None) -> str:
    """The decision written on an edge (``rule → chosen``), empty where the mount decided nothing."""
    return f"{edge.rule} → {edge.chosen}" if edge is not None and edge.rule else ""


def _text(x: float, y: float, words: str, *, size: str = theme.SMALL, colour: str = theme.INK,
          weight: str | None = None, anchor: str | None = None, halo: bool = False) -> Html:
    # the trailing space keeps one text apart from the next where a reader flattens the picture to words;
    # a halo (the page's colour under the letters) keeps an edge's label legible across its line
    # colours go in the style (a palette variable is read there, never in a presentation attribute)
    return el("text", words + " ", x=f"{x:.0f}", y=f"{y:.0f}", font_size=size, font_weight=weight,
              font_family=theme.FONT, text_anchor=anchor, stroke_width=4 if halo else None,
              paint_order="stroke" if halo else None, style=css(fill=colour, stroke=theme.PAPER if halo else None))


def _node(node: TreeNode, x: float, y: float, said: str) -> Html:
    """One node, the decision on the edge into it first (so a reader of the words meets it before the node)."""
    status_colour = theme.status_colour(node.status)
    unfinished = node.status in ("failed", "paused")
    left = x + 10
    label = _text(x + NODE_W / 2, y - 5, shorten(said, EDGE_CHARS), size=theme.TINY, colour=theme.PURPLE,
                  anchor="middle", halo=True) if said else None
    return el(
        "g",
        label,
        el("title", f"{node_label(node)} ({node.kind}): {node.status}; {shorten(node.answer_preview, 120)}"
                    + (f"\n{node.kind}: {words.meaning(node.kind)}" if words.meaning(node.kind) else "")),
        el("rect", x=f"{x:.0f}", y=f"{y:.0f}", width=NODE_W, height=NODE_H, rx=6, stroke_width=2 if unfinished else 1,
           style=css(fill=theme.PAPER, stroke=status_colour if unfinished else theme.LINE)),
        el("rect", x=f"{x:.0f}", y=f"{y:.0f}", width=5, height=NODE_H,
           style=css(fill=theme.RUN_KIND_COLOURS.get(node.kind, theme.GREY))),
        _text(left, y + 17, shorten(node_label(node), NAME_CHARS), weight="600"),
        _text(left, y + 33, f"{node.kind} · {theme.status_mark(node.status)}", colour=status_colour),
        _text(left, y + 48, f"{node.duration_ms:.1f} ms · {node.tokens} tokens", size=theme.TINY, colour=theme.GREY),
        class_="fl-tree-node", data_fl_member=node.path,
    )


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'s' if number != 1 else ''}"


def tree_svg(tree: RunTree) -> Html:
    """The tree as one ``<svg>`` element (empty for a tree over :data:`SVG_NODES` nodes)."""
    if not tree.nodes or len(tree.nodes) > SVG_NODES:
        return Html("")
    where = layout(tree)
    into = {edge.child: edge for edge in tree.edges}

    def corner(path: str) -> tuple[float, float]:
        depth, column = where[path]
        return MARGIN + column * (NODE_W + GAP_X), MARGIN + depth * (NODE_H + GAP_Y)

    edges = []
    for edge in tree.edges:
        (px, py), (cx, cy) = corner(edge.parent), corner(edge.child)
        top, bottom = cy, py + NODE_H
        middle = (bottom + top) / 2
        edges.append(el("path", d=f"M{px + NODE_W / 2:.0f} {bottom:.0f}V{middle:.0f}H{cx + NODE_W / 2:.0f}V{top:.0f}",
                        stroke_width="1.2", style=css(fill="none", stroke=theme.LINE)))
    nodes = [_node(node, *corner(node.path), decision(into.get(node.path))) for node in tree.nodes]
    columns = 1 + int(max(column for _, column in where.values()))
    rows = 1 + int(max(depth for depth, _ in where.values()))
    width = 2 * MARGIN + columns * NODE_W + (columns - 1) * GAP_X
    height = 2 * MARGIN + rows * NODE_H + (rows - 1) * GAP_Y
    described = f"run tree: {_count(len(tree.nodes), 'node')} on {_count(rows, 'level')}"
    decided = sum(1 for edge in into.values() if edge.rule)
    if decided:
        described += f", {_count(decided, 'decision')} written on its edges"
    return el("svg", el("title", described), join(edges), join(nodes), xmlns="http://www.w3.org/2000/svg",
              class_="fl-svg", role="img", aria_label=described, width=f"{width:.0f}", height=f"{height:.0f}",
              viewBox=f"0 0 {width:.0f} {height:.0f}")
