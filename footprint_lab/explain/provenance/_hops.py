"""Each hop of a chain of custody, and whether the recording proves it.

Rule kept here: a hop says only what the recording holds. READ is proven when the request the
call recorded holds the piece; LANDED when the landing step's commit writes the piece's slot;
ALLOWED when a step of this recording gave the verdict; BORN names the declaration, prompt,
tool, turn or member answer the piece came from; ASKED (a tool result) when a response asked
for that tool call. Anything else is kept and marked unproven, with why. The walk that finds
the candidates is :mod:`footprint_lab.explain.provenance.custody`.

Role: explain layer; pure functions of a recording's index.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, NamedTuple

from footprint_lab.explain.render import shorten
from footprint_lab.record.schema import KIND_TOOL_RESULT, SLOT_PATHS, TURN_KINDS

if TYPE_CHECKING:
    from footprint_lab.explain.provenance.custody import Candidate
    from footprint_lab.explain.provenance.index import RecordingIndex
    from footprint_lab.record.recording import ContextPiece, Recording

#: the kinds of hop a chain of custody is made of, in the order a chain shows them
HOP_KINDS = ("ANSWER", "CARRIED", "READ", "LANDED", "ALLOWED", "BORN", "ASKED")
#: the source kinds a context declaration gives its pieces (BORN names the declaration)
DECLARED_KINDS = ("fact", "steering", "instruction", "skill", "memory", "rag")


def feeders(index: RecordingIndex, recording: Recording) -> list[tuple[Recording, str]]:
    """The members whose answers became ``recording``'s message, each with the step that passed it on.

    The step that mounted the member read its message from the tracked state; each read is
    stamped with its writer. A writer that mounted members wrote their answer; a composition's
    ``seed`` wrote the composition's own message, which came from where that composition was
    mounted, so the search goes on there.
    """
    found: list[tuple[Recording, str]] = []
    pending = [recording]
    visited: set[int] = set()
    while pending:
        current = pending.pop()
        mount = current.path
        if not mount or id(current) in visited or mount not in index.steps:
            continue
        visited.add(id(current))
        for read in index.reads_of(mount):
            writer = read.writer
            if writer is None or writer not in index.steps:
                continue
            mounted = index.mounted.get(writer)
            if mounted:
                found += [(member, mount) for member in mounted if member is not current]
            elif index.steps[writer].stage == "seed" and index.home[writer] is not index.root:
                pending.append(index.home[writer])
    return found


class Hop(NamedTuple):
    """One link of a chain of custody."""

    kind: str
    step_id: str | None
    proven: bool
    text: str

    def line(self) -> str:
        mark = "" if self.proven else "  [not proven]"
        return f"{self.kind:<8} {self.text}{mark}"


def _carried_hops(candidate: Candidate) -> list[Hop]:
    """One CARRIED hop per hand-off, from the target's side back to the member that was sent the piece."""
    hops = []
    for link in candidate.carried:
        proven = link.answer_step is not None
        text = link.describe()
        hops.append(Hop("CARRIED", link.passed_by, proven, text if proven else
                        f"{text}, but that member recorded no answer step"))
    return hops


def hops_of(candidate: Candidate) -> list[Hop]:
    """The chain of custody of one candidate, from the target's own hop back to where the piece was born."""
    walk = candidate._walk
    hops = [walk.answer, *_carried_hops(candidate), _read_hop(walk.index, candidate),
            _landed_hop(walk.index, candidate), _allowed_hop(walk.index, candidate), _born_hop(walk.index, candidate)]
    # a tool result carried in from an earlier turn was asked for in that turn's run: its chain here ends at
    # BORN (carried in from run ...), and the asking is that run's evidence
    if candidate.source_kind == KIND_TOOL_RESULT and candidate.piece.detail.get("from_run") is None:
        hops.append(_asked_hop(walk.index, candidate))
    return hops


def _read_hop(index: RecordingIndex, candidate: Candidate) -> Hop:
    piece = candidate.piece
    call = candidate.read_by
    exchange = index.exchanges[call]
    where = f"the {piece.slot} slot, position {piece.position}"
    via = f" ({candidate.depth} reads back from the target)" if candidate.depth > 1 else ""
    if piece.slot == "system":
        proven = piece.content in exchange.system
    elif piece.slot == "tools":
        proven = any(t.get("name") in (piece.source_id, piece.detail.get("tool")) for t in exchange.tools)
    else:
        proven = 0 <= piece.position < exchange.message_count + len(exchange.injected_messages)
    if proven:
        return Hop("READ", call, True, f"{call} was sent it in {where}{via}")
    return Hop("READ", call, False, f"{call} lists it in {where}, but the request it recorded does not hold it{via}")


def _landed_hop(index: RecordingIndex, candidate: Candidate) -> Hop:
    piece = candidate.piece
    step = piece.landed_by
    if step is None:
        return Hop("LANDED", None, False, "no step is recorded as having landed it")
    if step not in index.steps:
        return Hop("LANDED", step, False,
                   f"landed by {step}, a step this recording does not hold (it arrived with earlier history)")
    commit = index.commit_of(step)
    wanted = SLOT_PATHS.get(piece.slot, ())
    for entry in commit.entries if commit is not None else []:
        if tuple(entry.path) in wanted:
            return Hop("LANDED", step, True,
                       f"{step} wrote it into the {piece.slot} slot (its commit: {entry.verb} {'.'.join(entry.path)})")
    return Hop("LANDED", step, False, f"{step} is recorded as landing it, but its commit does not write the "
                                      f"{piece.slot} slot")


def _allowed_hop(index: RecordingIndex, candidate: Candidate) -> Hop:
    piece = candidate.piece
    step = piece.allowed_by
    if piece.verdict != "admitted":
        return Hop("ALLOWED", step, False, f"its recorded verdict is {piece.verdict} ({piece.reason})")
    imported = candidate.recording.meta.get("imported")
    if imported:  # a foreign framework's spans do not say which rule let a piece in
        return Hop("ALLOWED", step, False, f"in the call's input; {imported}")
    if step is None or step not in index.steps:
        return Hop("ALLOWED", step, False, "no step of this recording gave it a verdict")
    kind = piece.source_kind
    if kind == "base":
        why = "the agent's own system prompt goes with every call"
    elif kind == "registry":
        why = "a tool of the agent is offered on every call"
    elif kind in TURN_KINDS:
        why = "every turn of the conversation stays in the messages slot"
    else:
        spelled = piece.detail.get("trigger")
        trigger = f"{piece.trigger} trigger" + (f" {spelled}" if spelled else "")
        why = f"its {trigger} let it in ({piece.reason})"
        activated = piece.detail.get("activated_by")
        if activated:
            why += f", after {activated}"
    return Hop("ALLOWED", step, True, f"{step} admitted it: {why}")


def _born_hop(index: RecordingIndex, candidate: Candidate) -> Hop:
    piece = candidate.piece
    kind = piece.source_kind
    runner = candidate.recording.runner
    imported = candidate.recording.meta.get("imported")
    if imported:  # the spans show the piece, never the declaration that made it
        return Hop("BORN", None, False, f"a {kind} piece; {imported}")
    who = f"{runner.kind} '{runner.name or runner.id}'" if (runner.name or runner.id) else f"the {runner.kind}"
    if kind == "base":
        return Hop("BORN", None, True, f"the system prompt of {who} (its system=...)")
    if kind == "registry":
        return Hop("BORN", None, True, f"tool '{piece.source_id}' of {who}: its description is what landed")
    carried = piece.detail.get("from_run")
    if carried is not None and kind in TURN_KINDS:
        continues = candidate.recording.meta.get("continues") or {}
        how = continues.get("how", "a checkpoint")
        text = f"an earlier turn of the conversation, carried in from run {carried} ({how})"
        return Hop("BORN", piece.landed_by, continues.get("run_id") == carried, text)
    if kind == "user" and candidate.recording.path:
        return _member_message_hop(index, candidate)
    if kind == "user":
        message = candidate.recording.input.get("message")
        if message == piece.content:
            return Hop("BORN", piece.landed_by, True, "the user's message, the input of the run")
        return Hop("BORN", piece.landed_by, False, "a user turn that is not this run's input (earlier history)")
    if kind == "assistant":
        exchange = index.exchanges.get(piece.source_id)
        if exchange is None:
            return Hop("BORN", piece.source_id, False,
                       f"the model's turn from {piece.source_id}, a call this recording does not hold")
        return Hop("BORN", piece.source_id, True, f"the model's own turn, the response of {piece.source_id}")
    if kind == KIND_TOOL_RESULT:
        return _tool_born_hop(index, candidate)
    if kind in DECLARED_KINDS:
        where = f" at {piece.declared_at}" if getattr(piece, "declared_at", None) else ""
        return Hop("BORN", None, True, f"define_{kind}('{piece.source_id}'){where}{_kind_detail(piece)}")
    return Hop("BORN", None, False, f"a {kind} source; the recording does not say where such a piece comes from")


def _member_message_hop(index: RecordingIndex, candidate: Candidate) -> Hop:
    """A member's message: what the step that mounted it passed on (other members' answers, or the run's message)."""
    recording = candidate.recording
    mount = recording.path
    here = index.member(recording).label()
    upstream = feeders(index, recording)
    if upstream:
        answers = ", ".join(f"{index.member(member).label()} ({index.answer_step(member) or 'no answer step'})"
                            for member, _ in upstream)
        return Hop("BORN", mount, True, f"the message {mount} passed to {here}: built from the answer of {answers}")
    if recording.input.get("message") == candidate.piece.content:
        return Hop("BORN", mount, True, f"the message {mount} passed to {here}: the message its composition was given")
    return Hop("BORN", mount, False, f"a user turn of {here} that is not the message it was passed (earlier history)")


def _kind_detail(piece: ContextPiece) -> str:
    detail = piece.detail
    if piece.source_kind == "memory" and "item" in detail:
        return f": recalled item {detail['item']}, written by run {detail.get('from_run')}"
    if piece.source_kind == "rag" and "chunk" in detail:
        return (f": chunk {detail['chunk']} of document {detail.get('document')}, score {detail.get('score')}, "
                f"rank {detail.get('rank')}, threshold {detail.get('threshold')}")
    return ""


def _tool_born_hop(index: RecordingIndex, candidate: Candidate) -> Hop:
    piece = candidate.piece
    tool = piece.detail.get("tool", "?")
    step = piece.landed_by
    text = f"tool '{tool}' returned it in {step} (tool call {piece.source_id})"
    if step is None or step not in index.steps:
        return Hop("BORN", step, False, f"{text}, a step this recording does not hold")
    started = any(e.type == "tool_start" and e.payload.get("tool_call_id") == piece.source_id
                  for e in index.events_of(step))
    if not started:
        return Hop("BORN", step, False, f"{text}, but that step recorded no start of this tool call")
    return Hop("BORN", step, True, text)


def _asked_hop(index: RecordingIndex, candidate: Candidate) -> Hop:
    piece = candidate.piece
    asker = piece.detail.get("requested_by")
    if not isinstance(asker, str):
        return Hop("ASKED", None, False, "the recording does not say which LLM call asked for this tool call")
    exchange = index.exchanges.get(asker)
    call = None if exchange is None else next(
        (c for c in exchange.response.tool_calls if c.id == piece.source_id), None)
    if call is None:
        return Hop("ASKED", asker, False, f"recorded as asked for by {asker}, whose response holds no such call")
    args = json.dumps(call.args, ensure_ascii=False, sort_keys=True)
    return Hop("ASKED", asker, True, f"{asker} asked for it: {call.name}({shorten(args)})")
