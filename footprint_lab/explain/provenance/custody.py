"""The backtrack: from an answer (or any step) back to every piece of context that reached it.

Rule kept here: nothing is shown that the recording does not hold, and every hop says whether
the recording proves it. From the target, the backward slice over reads finds the LLM calls
it depends on; every piece each call was sent is a candidate, with its chain of custody::

    ANSWER   what the target produced (the answer, a reply, a decision)
    READ     the LLM call that was sent the piece, in which slot and at which position
    LANDED   the step whose commit wrote it into that slot
    ALLOWED  the verdict that let it in (its trigger and reason)
    BORN     where it came from: a declaration, the agent's prompt or tools, the user's
             message, the model's own turn, a tool's result, or (a member's message) the
             answer of the member upstream that was passed on to it
    ASKED    (tool results) the LLM call whose response asked for that tool call

In a composed run the walk crosses members: a member's message is often another member's
answer (the message a ``Sequence`` step passed on, the branches' answers fed to a
``Parallel`` merge), so the walk goes on into that member's answering call and its pieces.
Each such upstream piece carries the links that brought it to the target (``carried``: whose
answer was passed to whom, by which step), shown as CARRIED hops right after ANSWER, and the
downstream message that carried it is marked as a carrier. Every candidate names its member
(path and the name the analyst gave it).

A hop the recording cannot prove (a step it does not hold, a commit that does not write the
slot, a tool call no response asked for) is kept and marked unproven, with why; limits hit
by the slice, values read from outside the tracked state, and members mounted by a decision
step that ran only after its decision (so are not followed from it) are reported with the result.

Role: explain layer; a pure function of a ``Recording``. Refusal raised here:
:class:`UnknownStepError`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from footprint_lab.base.refusal import Refusal, describe_shape, did_you_mean
from footprint_lab.explain.arguments import recording_of, whole_number
from footprint_lab.explain.provenance._hops import Hop as Hop
from footprint_lab.explain.provenance._hops import feeders, hops_of
from footprint_lab.explain.provenance.index import ANSWER_PATH, RecordingIndex
from footprint_lab.explain.provenance.slice import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_STEPS,
    MOST_DEPTH,
    MOST_STEPS,
    Slice,
    backward_slice,
)
from footprint_lab.explain.render import display_bundle, shorten
from footprint_lab.record.rows import as_list
from footprint_lab.record.step_id import parse_step_id

if TYPE_CHECKING:
    import pandas as pd

    from footprint_lab.explain.arguments import RunLike
    from footprint_lab.explain.provenance.members import Member
    from footprint_lab.record.recording import ContextPiece, LLMExchange, Recording

#: how many candidates a notebook display shows before pointing at the full text
DISPLAY_LIMIT = 25
#: Candidates ``str(bt)`` shows before it summarises the rest (``bt.render()`` shows every one):
#: a 10,000-step run has thousands, whose full text runs to megabytes and takes longer to
#: write out than the walk took to find them (bench/bench_explain.py).
TEXT_LIMIT = 200


class UnknownStepError(Refusal, ValueError):
    """Raised by ``backtrack(at=...)`` when ``at`` names no step of the run.

    Carries ``received`` (the shape of what arrived, never its text) and ``steps`` (how many
    steps the run recorded, members included); ``near`` (a step id of the run close to the one
    given, said as "did you mean") is named in the message only.
    """

    code = "ERR_UNKNOWN_STEP"
    fields = ("received", "steps")

    def __init__(self, received: str, steps: int, near: str = "") -> None:
        super().__init__(
            f"backtrack: 'at' must be the id of one of this run's {steps} steps, as listed in run.steps "
            "(e.g. 'call-llm#3', or 'sequence#2/call-llm#5' inside a member run); leave it out to start "
            f"from the answer{'; ' + near if near else ''} (received {received})."
        )
        self.received = received
        self.steps = steps


class Link(NamedTuple):
    """One hand-off between members: ``upstream``'s answer (written by ``answer_step``) was passed by ``passed_by``
    to ``downstream`` as its message, where ``carrier`` is that message's candidate."""

    upstream: Member
    answer_step: str | None
    passed_by: str
    downstream: Member
    carrier: Candidate

    def describe(self) -> str:
        written = f", written by {self.answer_step}," if self.answer_step else ""
        return (f"the answer of {self.upstream.label()}{written} was passed by {self.passed_by} to "
                f"{self.downstream.label()} as its message")


class _Walk:
    """What every candidate of one backtrack shares: the index and the target's own hop."""

    __slots__ = ("answer", "index")

    def __init__(self, index: RecordingIndex, answer: Hop) -> None:
        self.index = index
        self.answer = answer


class Candidate:
    """A piece of context that demonstrably reached the target, with its hops (built on first access)."""

    __slots__ = ("_hops", "_walk", "carried", "carries", "depth", "piece", "read_by", "recording")

    def __init__(self, walk: _Walk, recording: Recording, piece: ContextPiece, read_by: str, depth: int) -> None:
        self._walk = walk
        self._hops: list[Hop] | None = None
        self.recording = recording
        self.piece = piece
        #: the LLM-call step that was sent this piece
        self.read_by = read_by
        #: how many reads back from the target that call is (0 when the target is the call)
        self.depth = depth
        #: for a piece of an upstream member: the hand-offs that carried it to the target, nearest to it first
        self.carried: tuple[Link, ...] = ()
        #: for a member's message that was other members' answers: those members (it carried them downstream)
        self.carries: tuple[Member, ...] = ()

    @property
    def member(self) -> Member:
        """The member whose LLM call was sent this piece (path and the name the analyst gave it)."""
        return self._walk.index.member(self.recording)

    @property
    def source_id(self) -> str:
        return self.piece.source_id

    @property
    def source_kind(self) -> str:
        return self.piece.source_kind

    @property
    def slot(self) -> str:
        return self.piece.slot

    @property
    def content(self) -> str:
        return self.piece.content

    @property
    def removal_id(self) -> str | None:
        """The id a rerun excludes to remove this piece (``None`` for the user's message and model turns).

        In a composed run it is qualified by the member's path when another member has a source of the same id.
        """
        return self._walk.index.names.name(self.recording, self.piece)

    @property
    def carried_by(self) -> str | None:
        """Which member's answer carried this piece downstream to the target, in words (``None``: it was sent there)."""
        if not self.carried:
            return None
        return "; then ".join(link.describe() for link in reversed(self.carried))

    @property
    def hops(self) -> list[Hop]:
        """ANSWER, READ, LANDED, ALLOWED, BORN (and ASKED for a tool's result), in that order."""
        if self._hops is None:
            self._hops = hops_of(self)
        return self._hops

    @property
    def proven(self) -> bool:
        """``True`` when the recording proves every hop."""
        return all(hop.proven for hop in self.hops)

    @property
    def label(self) -> str:
        return f"{self.source_kind} '{self.source_id}'"

    def __str__(self) -> str:
        where = self.member
        head = self.label if not where.path else f"{self.label} of {where.label()}"
        return "\n".join([head, *("  " + hop.line() for hop in self.hops)])

    def __repr__(self) -> str:
        return f"Candidate({self.label}, read_by={self.read_by!r})"


class Backtrack:
    """Every piece of context that reached a target, each with its chain of custody."""

    def __init__(self, target: str | None, answer: Hop | None, candidates: list[Candidate], slice_: Slice | None,
                 notes: list[str], decisions: list[Any], output: str = "", index: RecordingIndex | None = None) -> None:
        self._index = index
        #: the step walked back from (``None`` when the run recorded none to start from)
        self.target = target
        #: what the target produced, in full (the answer's text, a reply, a decision's choice)
        self.output = output
        #: the target's own hop: what it produced
        self.answer = answer
        self.candidates = candidates
        #: the backward slice from the target (``None`` when there was no target)
        self.slice = slice_
        #: decisions taken by steps on the slice, with the values they read
        self.decisions = decisions
        #: what the walk could not follow or prove: limits hit, untracked values, members a decision preceded
        self.notes = notes

    def member_of(self, step_id: str) -> Member | None:
        """The member (path, given name) whose recording holds a step of this run, or ``None``."""
        index = self._index
        home = index.home.get(step_id) if index is not None else None
        return index.member(home) if index is not None and home is not None else None

    @property
    def calls(self) -> list[str]:
        """The LLM calls whose pieces are the candidates, nearest to the target first: those the walk reached, then
        the earlier calls whose output (a model turn, a tool result they asked for) those were sent."""
        return list(self.slice.calls) if self.slice is not None else []

    def candidate(self, source_id: str) -> Candidate | None:
        """The candidate nearest to the target with this source id (a declaration id, a tool call id...)."""
        return next((c for c in self.candidates if c.source_id == source_id), None)

    def __iter__(self) -> Iterator[Candidate]:
        return iter(self.candidates)

    def __len__(self) -> int:
        return len(self.candidates)

    def summary(self) -> str:
        if self.target is None:
            return "Backtrack: nothing to walk back from."
        if not self.calls:
            return (f"Backtrack from {self.target}: no LLM call was reached, so no piece of context is shown "
                    "as having reached it.")
        earlier = self.slice.earlier if self.slice is not None else set()
        calls = ", ".join(call for call in self.calls if call not in earlier)
        before = sum(call in earlier for call in self.calls)
        if before:
            sent = "they were" if "," in calls else "it was"
            calls += f" and {before} earlier call(s) whose output {sent} sent"
        unproven = sum(1 for c in self.candidates for hop in c.hops if not hop.proven)
        proof = ("every hop is proven by the recording" if not unproven
                 else f"{unproven} hop(s) could not be proven and are marked")
        return (f"Backtrack from {self.target}: {len(self.candidates)} piece(s) of context reached "
                f"{calls}; {proof}.")

    def __str__(self) -> str:
        return self.render(limit=TEXT_LIMIT)

    def render(self, limit: int | None = None) -> str:
        """The chain of every candidate (the first ``limit`` of them, when given), then what is unproven.

        ``str(bt)`` is ``render(limit=200)``, the notebook display ``render(limit=25)``; both say
        how many candidates they left out.
        """
        lines = [self.summary()]
        if self.slice is not None and self.slice.edges:
            lines.append("Path from the target:")
            lines += [f"  {edge.describe()}" for edge in self.slice.edges]
        for decision in self.decisions:
            lines.append(f"  {decision.step_id} decided '{decision.rule}': chose {decision.chosen}")
        shown = self.candidates if limit is None else self.candidates[:limit]
        for candidate in shown:
            lines += ["", str(candidate)]
        if len(shown) < len(self.candidates):
            lines += ["", f"... and {len(self.candidates) - len(shown)} more candidates: bt.render() or "
                          "bt.to_frame() shows them all"]
        if self.notes:
            lines += ["", "What the walk could not follow or prove:", *(f"  - {note}" for note in self.notes)]
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """One row per hop: the candidate's number, source and slot, then the hop and whether it is proven (a table
        whose long cells display clipped, whole on hover: ``explain.frame``)."""
        from footprint_lab.explain.frame import ShownFrame  # imports pandas

        rows = [
            {"candidate": number, "source_kind": c.source_kind, "source_id": c.source_id, "slot": c.slot,
             "position": c.piece.position, "read_by": c.read_by, "hop": hop.kind, "step_id": hop.step_id,
             "proven": hop.proven, "evidence": hop.text, "member": c.member.path, "member_name": c.member.name}
            for number, c in enumerate(self.candidates) for hop in c.hops
        ]
        columns = ["candidate", "source_kind", "source_id", "slot", "position", "read_by", "hop", "step_id",
                   "proven", "evidence", "member", "member_name"]
        return ShownFrame(rows, columns=columns)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return display_bundle("backtrack", self, self.summary(), self.render(limit=DISPLAY_LIMIT), include, exclude)

    def __repr__(self) -> str:
        return f"Backtrack(target={self.target!r}, candidates={len(self.candidates)})"


def backtrack(
    run: RunLike,
    at: str | None = None,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> Backtrack:
    """Walk back from the answer (or from step ``at``) to every piece of context that reached it.

    ``max_depth`` and ``max_steps`` bound the backward slice; when one is hit the result says so.
    """
    recording = recording_of(run, "backtrack")
    whole_number("backtrack", "max_depth", max_depth, 1, MOST_DEPTH)
    whole_number("backtrack", "max_steps", max_steps, 1, MOST_STEPS)
    index = RecordingIndex(recording)
    notes: list[str] = []
    target = _target(index, at, notes)
    if target is None:
        return Backtrack(None, None, [], None, notes, [])
    slice_ = backward_slice(index, target, max_depth=max_depth, max_steps=max_steps)
    notes += slice_.truncated
    notes += slice_.order
    notes += [edge.describe() for edge in slice_.outside]
    if not slice_.calls:
        notes.append(f"no LLM call was reached from {target}, so no context piece can be shown as its cause")
    output, answer = _produced(index, target, at is None)
    walk = _Walk(index, answer)
    candidates = _candidates(walk, slice_)
    _link_members(index, candidates)
    decisions = [d for r in index.recordings for d in r.decisions if d.step_id in slice_.depths]
    return Backtrack(target, answer, candidates, slice_, notes, decisions, output, index)


# -- the target -------------------------------------------------------------------------
def _target(index: RecordingIndex, at: Any, notes: list[str]) -> str | None:
    if at is not None:
        if not isinstance(at, str):
            raise UnknownStepError(describe_shape(at), len(index.steps))
        if at not in index.steps:
            known_shape = parse_step_id(at) is not None
            shape = "a step id this run does not hold" if known_shape else "a string that is not a step id"
            raise UnknownStepError(shape, len(index.steps), did_you_mean([at], index.steps))
        return at
    answer_step = index.answer_step()
    if answer_step is not None:
        return answer_step
    root = index.root
    if root.exchanges:
        last = root.exchanges[-1].step_id
        notes.append(f"the run wrote no answer (status {root.status}); the walk starts from its last LLM call, {last}")
        return last
    notes.append(f"the run wrote no answer and made no LLM call (status {root.status}): there is nothing to walk")
    return None


def _produced(index: RecordingIndex, target: str, is_answer: bool) -> tuple[str, Hop]:
    """What the target produced (its full text) and the ANSWER hop that shows it."""
    exchange = index.exchanges.get(target)
    if exchange is not None:
        text = reply_text(exchange)
        return text, Hop("ANSWER", target, True, f'{target} replied: "{shorten(text)}"')
    decision = index.decision_of(target)
    if decision is not None:
        return decision.chosen, Hop("ANSWER", target, True,
                                    f"{target} decided '{decision.rule}': chose {decision.chosen}")
    commit = index.commit_of(target)
    if commit is None:
        return "", Hop("ANSWER", target, False, f"{target} left no commit, so what it produced is not recorded")
    for entry in commit.entries:
        if entry.path == ANSWER_PATH:
            text = str(entry.value or "")
            what = "the answer" if is_answer else "an answer"
            return text, Hop("ANSWER", target, True, f'{target} wrote {what}: "{shorten(text)}"')
    paths = ", ".join(".".join(e.path) for e in commit.entries) or "nothing"
    return "", Hop("ANSWER", target, True, f"{target} ({index.steps[target].stage}) wrote {paths}")


def reply_text(exchange: LLMExchange) -> str:
    response = exchange.response
    calls = [f"{c.name}({json.dumps(c.args, ensure_ascii=False, sort_keys=True)})" for c in response.tool_calls]
    return "\n".join(part for part in [response.content or "", *calls] if part)


# -- the candidates ---------------------------------------------------------------------
def _candidates(walk: _Walk, slice_: Slice) -> list[Candidate]:
    """The pieces each reached call was sent, nearest call first; of an earlier call reached through its output
    (``Slice.earlier``), only the sources no nearer call was sent (the system prompt of each pass is one source)."""
    index = walk.index
    seen: set[tuple[int, int]] = set()
    sources: set[tuple[int, str, str]] = set()
    read: dict[int, int] = {}  # per recording, how much of its transcript's start is looked at already
    found: list[Candidate] = []
    for call in slice_.calls:
        recording = index.home[call]
        pieces = as_list(recording.context_pieces)
        count = len(pieces)
        depth = slice_.depths[call]
        owner = id(recording)
        exchange = index.exchanges[call]
        start = read.get(owner, 0)  # a transcript only grows: an earlier call's turns were all looked at
        read[owner] = max(start, exchange.message_count)
        sent = [*exchange.system_pieces, *recording.message_pieces[start:exchange.message_count],
                *exchange.message_pieces, *exchange.tool_pieces]
        for number in sent:
            key = (owner, number)
            if key in seen or not 0 <= number < count:
                continue
            seen.add(key)
            piece = pieces[number]
            source = (owner, piece.source_kind, piece.source_id)
            if call in slice_.earlier and source in sources:
                continue
            sources.add(source)
            found.append(Candidate(walk, recording, piece, call, depth))
    return found


# -- upstream members -------------------------------------------------------------------
def _is_message(candidate: Candidate) -> bool:
    piece = candidate.piece
    return piece.source_kind == "user" and piece.detail.get("from_run") is None


def _link_members(index: RecordingIndex, candidates: list[Candidate]) -> None:
    """Mark each member message that carried other members' answers, and give their pieces the chain."""
    if len(index.recordings) == 1:
        return
    parents = {id(child): parent for parent in index.recordings for child in parent.children}
    fed: dict[int, tuple[Recording, str, Candidate]] = {}
    for candidate in candidates:  # nearest to the target first: the first carrier found for a member wins
        if not _is_message(candidate) or not candidate.recording.path:
            continue
        upstream = feeders(index, candidate.recording)
        candidate.carries = tuple(index.member(member) for member, _ in upstream)
        for member, mount in upstream:
            fed.setdefault(id(member), (member, mount, candidate))
    if not fed:
        return
    for candidate in candidates:
        level: Recording | None = candidate.recording
        chain: list[Link] = []
        seen: set[int] = set()
        while level is not None and id(level) not in seen:
            seen.add(id(level))
            hand_off = fed.get(id(level))
            if hand_off is not None:
                member, mount, carrier = hand_off
                chain.append(Link(index.member(member), index.answer_step(member), mount,
                                  index.member(carrier.recording), carrier))
                level = carrier.recording
            else:
                level = parents.get(id(level))
        candidate.carried = tuple(reversed(chain))
