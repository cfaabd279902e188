"""``RunTree``: a composed run as nodes and edges, computed purely from its ``Recording``.

A composition's recording nests its members' recordings in ``children``; each child knows
where it was mounted (``path``, the mounting step's id). The tree keeps one node per run
(the root and every member, at any depth) and one edge per mount, labelled with the
decision the mounting step recorded (the branch a ``Conditional`` chose, a ``Loop`` pass's
go-on-or-stop), so "why did this member run" is answered on the edge itself. A member is
named by its runner's ``name``, or else by the key the analyst mounted it under
(``Sequence({"first": a})``), which the composition records in the member's ``meta["member"]``. With
``steps=True`` every LLM call and tool step is a node too, under the run that took it.

Nothing here runs, mutates or re-reads anything: the same recording always gives the same
tree, live or loaded from JSON.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from footprint_lab.base.display import bundle
from footprint_lab.explain.provenance.members import member_key

if TYPE_CHECKING:
    import pandas as pd

    from footprint_lab.record.recording import Recording

PREVIEW = 60


@dataclass(frozen=True, slots=True)
class TreeNode:
    """One run (or, with ``steps=True``, one LLM call or tool step) in the tree.

    ``path`` is where a run was mounted (empty for the root) or a step's id; ``tokens`` counts
    the subtree; ``member`` is the key a composition mounted the run under.
    """

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
    member: str | None = None


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
    #: the recording the tree was drawn from (views open each member's answer from it)
    recording: Recording | None = field(default=None, compare=False, repr=False)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return bundle("tree", self, lambda: {"text/plain": self.summary()}, include, exclude)

    def summary(self) -> str:
        """One line per node, indented by depth, with the decision that led to it."""
        into = {edge.child: edge for edge in self.edges}
        lines = []
        for node in self.nodes:
            edge = into.get(node.path)
            why = f"  [{edge.rule}: {edge.chosen}]" if edge is not None and edge.rule else ""
            label = node.name or node.path or "root"
            lines.append(f"{'  ' * node.depth}{node.kind} {label}: {node.status}, {node.duration_ms:.1f} ms, "
                         f"{node.tokens} tokens{why}")
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """One row per node, with the decision on the edge that led to it (``rule``, ``chosen``)."""
        from footprint_lab.explain.frame import ShownFrame  # imports pandas

        into = {edge.child: edge for edge in self.edges}
        rows = []
        for node in self.nodes:
            edge = into.get(node.path)
            rows.append({**asdict(node), "rule": edge.rule if edge else None, "chosen": edge.chosen if edge else None})
        columns = [*TreeNode.__dataclass_fields__, "rule", "chosen"]
        return ShownFrame(rows, columns=columns)


def run_tree(recording: Recording, *, steps: bool = False) -> RunTree:
    """The tree of a recording and all its member runs (and their LLM call and tool steps with ``steps``)."""
    nodes: list[TreeNode] = []
    edges: list[TreeEdge] = []
    _walk(recording, None, 0, None, nodes, edges, steps)
    return RunTree(nodes=tuple(nodes), edges=tuple(edges), recording=recording)


def _preview(text: str) -> str:
    return text if len(text) <= PREVIEW else text[: PREVIEW - 1] + "…"


def _walk(recording: Recording, parent: str | None, depth: int, member: str | None, nodes: list[TreeNode],
          edges: list[TreeEdge], steps: bool) -> int:
    at = len(nodes)  # the node goes before its descendants, once their tokens are counted
    tokens = sum(x.response.usage.input_tokens + x.response.usage.output_tokens for x in recording.exchanges)
    if steps:
        _step_nodes(recording, depth + 1, nodes, edges)
    decisions = {d.step_id: d for d in recording.decisions}
    for child in recording.children:
        decision = decisions.get(child.path)
        edges.append(TreeEdge(parent=recording.path, child=child.path,
                              rule=decision.rule if decision else None, chosen=decision.chosen if decision else None))
        tokens += _walk(child, recording.path, depth + 1, member_key(recording, child), nodes, edges, steps)
    nodes.insert(at, TreeNode(
        path=recording.path, parent=parent, depth=depth, kind=recording.runner.kind,
        name=recording.runner.name or member, runner_id=recording.runner.id, status=recording.status,
        duration_ms=recording.duration_ms, tokens=tokens, answer_preview=_preview(recording.answer or ""),
        member=member,
    ))
    return tokens


def _step_nodes(recording: Recording, depth: int, nodes: list[TreeNode], edges: list[TreeEdge]) -> None:
    """One node per LLM call and tool step of ``recording`` (not of its members).

    Their kinds are the stage names, ``call-llm`` and ``tool``, so a step never reads as a run of
    kind ``llm_call``; each is named by its step id and the model or tool it used.
    """
    exchanges = {x.step_id: x for x in recording.exchanges}
    tools = {e.step_id: e.payload for e in recording.events if e.type == "tool_start"}
    for step in recording.steps:
        exchange = exchanges.get(step.step_id)
        if exchange is not None:
            usage = exchange.response.usage
            reply = exchange.response.content or ", ".join(c.name for c in exchange.response.tool_calls)
            kind, what, tokens = "call-llm", exchange.model, usage.input_tokens + usage.output_tokens
        elif step.step_id in tools:
            kind, what, tokens, reply = "tool", str(tools[step.step_id].get("tool", "")), 0, ""
        else:
            continue
        edges.append(TreeEdge(parent=recording.path, child=step.step_id, rule=None, chosen=None))
        nodes.append(TreeNode(
            path=step.step_id, parent=recording.path, depth=depth, kind=kind,
            name=f"{step.step_id.rsplit('/', 1)[-1]} ({what})", runner_id=None,
            status="failed" if step.status == "failed" else "finished", duration_ms=step.duration_ms,
            tokens=tokens, answer_preview=_preview(reply),
        ))
