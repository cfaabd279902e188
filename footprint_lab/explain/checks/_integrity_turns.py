"""The recordings of a run as the integrity checks read them: one ``Turn`` per recording, gathered once.

Pattern: one pass per recording (the run's and each member's) builds what every check needs:
the tool step that ran each tool call, the result piece each tool step returned, the pieces of
tools that raised, and, only where a call was offered a tool that depends on an earlier result,
the transcript position of each piece and the skills' instructions. A 10,000-step run is read
in milliseconds.

Role: explain layer; read by the checks of :mod:`footprint_lab.explain.checks.integrity`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from footprint_lab.record.schema import KIND_TOOL_RESULT

if TYPE_CHECKING:
    from footprint_lab.record.recording import ContextPiece, LLMExchange, Recording, ToolCallRecord


# The checks keep what they gather in dicts of strings and numbers: a 10,000-step recording
# is a large heap, and long-lived containers made here would make the collector walk it.
@dataclass(slots=True)
class Turn:
    """One recording (one turn, or one member's run) as the checks read it, gathered in one pass."""

    recording: Recording
    #: tool call id -> the tool step that ran it (``None``: it never ran)
    ran_in: dict[str, str | None] = field(default_factory=dict)
    #: piece index -> its position in the transcript (only pieces that carry a transcript message)
    transcript_position: dict[int, int] = field(default_factory=dict)
    #: tool step -> the index of the result piece it returned
    result_of: dict[str, int] = field(default_factory=dict)
    #: (iteration, skill id) -> the skill's instructions piece of that iteration
    bodies: dict[tuple[int | None, str], ContextPiece] = field(default_factory=dict)
    #: whether any call was offered a tool whose offer depends on an earlier result
    grounded_offers: bool = False
    #: the result piece of each tool call whose tool raised, in order
    raised: list[ContextPiece] = field(default_factory=list)

    def calls(self) -> Iterator[tuple[LLMExchange, ToolCallRecord]]:
        """Every tool call a model asked for, with the exchange that asked, in order."""
        for exchange in self.recording.exchanges:
            for call in exchange.response.tool_calls:
                yield exchange, call

    def steps_of(self, exchange: LLMExchange, call: ToolCallRecord) -> tuple[str, ...]:
        """The call that asked for a tool call and, when it ran, the tool step that ran it."""
        ran = self.ran_in.get(call.id)
        return (exchange.step_id, ran) if ran else (exchange.step_id,)


def _recordings(root: Recording) -> list[Recording]:
    found, pending = [], [root]
    while pending:
        recording = pending.pop()
        found.append(recording)
        pending += recording.children
    return found


def read_turns(root: Recording) -> list[Turn]:
    """A ``Turn`` for the run's recording and for each of its members', each gathered in one pass."""
    turns = []
    for recording in _recordings(root):
        turn = Turn(recording)
        pieces = recording.context_pieces
        ran_in = turn.ran_in
        # A tool result is a transcript message, so the transcript's pieces hold every one of them.
        for number in recording.message_pieces:
            piece = pieces[number]
            if piece.source_kind == KIND_TOOL_RESULT:
                ran_in[piece.source_id] = piece.landed_by
                if piece.landed_by is not None:
                    turn.result_of[piece.landed_by] = number
                if "error_type" in piece.detail:
                    turn.raised.append(piece)
        for exchange in recording.exchanges:
            for number in exchange.tool_pieces:
                if "activated_by" in pieces[number].detail:
                    turn.grounded_offers = True
        if turn.grounded_offers:
            turn.transcript_position = {p: n for n, p in enumerate(recording.message_pieces)}
            turn.bodies = {(p.iteration, p.source_id): p for p in pieces
                           if p.source_kind == "skill" and p.slot == "system"}
        turns.append(turn)
    return turns
