"""``RunTree``: a composed run as nodes and edges, computed purely from its ``Recording``.

A composition's recording nests its members' recordings in ``children``; each child knows
where it was mounted (``path``, the mounting step's id). The tree keeps one node per run
(the root and every member, at any depth) and one edge per mount, labelled with the
decision the mounting step recorded (the branch a ``Conditional`` chose, a ``Loop`` pass's
go-on-or-stop), so "why did this member run" is answered on the edge itself.

Nothing here runs, mutates or re-reads anything: the same recording always gives the same
tree, live or loaded from JSON.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from footprint_lab.engine.recording import Recording

PREVIEW = 60


@dataclass(frozen=True, slots=True)
class TreeNode:
    """One run in the tree. ``path`` is where it was mounted (empty for the root); ``tokens`` counts its subtree."""

    path: str
    parent: str | None
    depth: int
    kind: str
    name: str | None
    runner_id: str | None
    status: str
    duration_ms: float
    tokens: int
    answer_preview: str


@dataclass(frozen=True, slots=True)
class TreeEdge:
    """A mount: ``parent`` ran ``child``; ``rule`` and ``chosen`` are the decision of the mounting step, if any."""

    parent: str
    child: str
    rule: str | None
    chosen: str | None


@dataclass(frozen=True, slots=True)
class RunTree:
    """The nodes (root first, then depth first in mount order) and edges of a composed run."""

    nodes: tuple[TreeNode, ...]
    edges: tuple[TreeEdge, ...]

    def to_frame(self) -> pd.DataFrame:
        """One row per node, with the decision on the edge that led to it (``rule``, ``chosen``)."""
        import pandas as pd

        into = {edge.child: edge for edge in self.edges}
        rows = []
        for node in self.nodes:
            edge = into.get(node.path)
            rows.append({**asdict(node), "rule": edge.rule if edge else None, "chosen": edge.chosen if edge else None})
        columns = [*TreeNode.__dataclass_fields__, "rule", "chosen"]
        return pd.DataFrame(rows, columns=columns)


def run_tree(recording: Recording) -> RunTree:
    """The tree of a recording and all its member runs."""
    nodes: list[TreeNode] = []
    edges: list[TreeEdge] = []
    _walk(recording, None, 0, nodes, edges)
    return RunTree(nodes=tuple(nodes), edges=tuple(edges))


def _walk(recording: Recording, parent: str | None, depth: int, nodes: list[TreeNode], edges: list[TreeEdge]) -> int:
    at = len(nodes)  # the node goes before its descendants, once their tokens are counted
    tokens = sum(x.response.usage.input_tokens + x.response.usage.output_tokens for x in recording.exchanges)
    decisions = {d.step_id: d for d in recording.decisions}
    for child in recording.children:
        decision = decisions.get(child.path)
        edges.append(TreeEdge(parent=recording.path, child=child.path,
                              rule=decision.rule if decision else None, chosen=decision.chosen if decision else None))
        tokens += _walk(child, recording.path, depth + 1, nodes, edges)
    answer = recording.answer or ""
    nodes.insert(at, TreeNode(
        path=recording.path, parent=parent, depth=depth, kind=recording.runner.kind, name=recording.runner.name,
        runner_id=recording.runner.id, status=recording.status, duration_ms=recording.duration_ms, tokens=tokens,
        answer_preview=answer if len(answer) <= PREVIEW else answer[: PREVIEW - 1] + "…",
    ))
    return tokens
