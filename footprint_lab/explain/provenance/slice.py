"""The backward slice: from one step, back over its reads to the steps that wrote what it read.

Rule kept here: the slice follows only what the recording proves. Every read stamped the
step that last wrote the value *when it was read*, so each edge is a pointer, never a guess;
a step that mounted a member run leads on to the member's answer, except when the walk
starts from that step's own decision and the member started after it (a ``Conditional``
routes first and runs the branch second, so the branch's work never reached the route;
a ``Loop`` decides after its pass, so the pass's answer did). At an LLM call the walk
follows no reads (what reached a call is accounted for piece by piece by the backtrack), only
the earlier calls whose output the call was sent (a model turn, a tool result it asked for):
what steered an earlier call's tool choice reached the answer through it. The walk stops at the
limits it is given, and it says which limit it hit. A read with no writer, or with a writer
the recording does not hold, is reported as a value from outside the tracked state.

Role: explain layer.
"""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import dataclass, field

from footprint_lab.explain.provenance.index import RecordingIndex
from footprint_lab.record.rows import as_list
from footprint_lab.record.schema import KIND_ASSISTANT, KIND_TOOL_RESULT

DEFAULT_MAX_DEPTH = 32
DEFAULT_MAX_STEPS = 2000
#: the largest limits a walk takes (the whole of any run a machine can hold)
MOST_DEPTH = 1_000_000
MOST_STEPS = 10_000_000


@dataclass(frozen=True, slots=True)
class Edge:
    """``reader`` read ``path``, last written by ``writer`` (``None``: nothing in the recording wrote it)."""

    reader: str
    path: tuple[str, ...]
    writer: str | None
    depth: int
    #: ``False`` when the stamped writer is not a step this recording holds
    held: bool = True

    def describe(self) -> str:
        where = ".".join(self.path)
        if self.writer is None:
            return f"{self.reader} read {where}, which no recorded step wrote (a value from outside the tracked state)"
        if not self.held:
            return f"{self.reader} read {where}, written by {self.writer}, a step this recording does not hold"
        return f"{self.reader} read {where}, written by {self.writer}"


@dataclass(slots=True)
class Slice:
    """The steps a start step depends on, by depth, and the LLM calls where the walk stopped."""

    start: str
    max_depth: int
    max_steps: int
    depths: dict[str, int] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    #: LLM-call steps reached, nearest first (the walk stops at each)
    calls: list[str] = field(default_factory=list)
    #: of those, the calls reached only through an output a later call was sent (not through a read)
    earlier: set[str] = field(default_factory=set)
    #: reads whose value the recording cannot trace to a step
    outside: list[Edge] = field(default_factory=list)
    #: why the walk stopped early, one sentence per limit hit (empty when it was complete)
    truncated: list[str] = field(default_factory=list)
    #: what the recording says about the start decision's members, one sentence each (ran after it, or order unknown)
    order: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.truncated


def backward_slice(
    index: RecordingIndex, start: str, *, max_depth: int = DEFAULT_MAX_DEPTH, max_steps: int = DEFAULT_MAX_STEPS
) -> Slice:
    """Walk back from ``start`` over reads (and member mounts), breadth first, within the limits."""
    result = Slice(start=start, max_depth=max_depth, max_steps=max_steps)
    depths = result.depths
    depths[start] = 0
    queue = deque([start])
    cut_depth: set[str] = set()  # the steps not followed, each once (several reads may name one)
    cut_size: set[str] = set()
    while queue:
        step_id = queue.popleft()
        depth = depths[step_id]
        if index.is_llm_call(step_id):
            result.calls.append(step_id)
            origins = _origins(index, step_id, depths)
            result.earlier.update(origins)
            found: list[tuple[tuple[str, ...], str | None]] = [(("messages",), origin) for origin in origins]
        else:
            found = _sources(index, step_id, result.order if step_id == start else None)
        for path, writer in found:
            if writer is None or writer not in index.steps:
                result.outside.append(Edge(step_id, path, writer, depth + 1, held=False))
                continue
            edge = Edge(step_id, path, writer, depth + 1)
            result.edges.append(edge)
            if writer in depths:
                continue
            if depth + 1 > max_depth:
                cut_depth.add(writer)
                continue
            if len(depths) >= max_steps:
                cut_size.add(writer)
                continue
            depths[writer] = depth + 1
            queue.append(writer)
    if cut_depth:
        result.truncated.append(
            f"the slice stopped at depth {max_depth}: {len(cut_depth)} step(s) further back were not followed "
            "(raise max_depth to follow them)"
        )
    if cut_size:
        result.truncated.append(
            f"the slice stopped at {max_steps} steps: {len(cut_size)} more were not followed "
            "(raise max_steps to follow them)"
        )
    return result


def _origins(index: RecordingIndex, call: str, reached: dict[str, int]) -> list[str]:
    """The earlier calls of ``call``'s run whose output it was sent: the call behind each model turn, and the call that
    asked for each tool result, latest first. The scan stops at a call already reached, which leads on to the rest."""
    recording = index.home[call]
    pieces = as_list(recording.context_pieces)
    exchange = index.exchanges[call]
    transcript = recording.message_pieces
    turns = range(min(exchange.message_count, len(transcript)) - 1, -1, -1)
    numbers = itertools.chain(reversed(exchange.message_pieces), map(transcript.__getitem__, turns))
    found: dict[str, None] = {}
    for number in numbers:
        if not 0 <= number < len(pieces):
            continue
        piece = pieces[number]
        origin = (piece.source_id if piece.source_kind == KIND_ASSISTANT else piece.detail.get("requested_by")
                  if piece.source_kind == KIND_TOOL_RESULT else None)
        if not isinstance(origin, str) or origin == call or index.home.get(origin) is not recording:
            continue
        if origin in reached:
            break
        if index.is_llm_call(origin):
            found[origin] = None
    return list(found)


def _sources(index: RecordingIndex, step_id: str,
             order: list[str] | None) -> list[tuple[tuple[str, ...], str | None]]:
    """What a step read, with the writer each read stamped; a mount step adds its member's answer.

    ``order`` is given for the start step: when it decided something, a member that started
    after the decision is no source of it (said in ``order``), and one the recording cannot
    place before or after it is kept, with that said too.
    """
    found = [(tuple(read.path), read.writer) for read in index.reads_of(step_id)]
    members = index.mounted.get(step_id, ())
    judged = order is not None and bool(members) and index.decision_of(step_id) is not None
    decided = index.decision_seq(step_id) if judged else None
    for member in members:
        runner = member.runner
        name = runner.name or runner.id or runner.kind
        if order is not None and judged:
            started = member.events[0].seq if member.events else None
            if decided is not None and started is not None and started > decided:
                order.append(f"{step_id} took its decision before member '{name}' ran, so nothing that member "
                             "did reached the decision; it is not followed")
                continue
            if decided is None or started is None:
                order.append(f"the recording does not order {step_id}'s decision and member '{name}', so the "
                             "member is followed although it may have run after the decision")
        found.append((("member", name, "answer"), index.answer_step(member)))
    return found
