"""What a chat's turns are made of: the turn each piece was born in, what changed between turns, tokens.

Rule kept here: everything is read from the recordings and from where each turn's conversation
started and ended, never from a counter of its own. A turn that continued a conversation lands
the earlier messages as ``history#i`` pieces; message ``i`` was born in the turn whose own
messages span it (a turn that failed, was refused or had its question dropped added none).

Role: core layer, for :mod:`footprint_lab.core._chat`; pure functions of its turns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from footprint_lab.engine.schema import TURN_KINDS
from footprint_lab.explain._sources import describe_source

if TYPE_CHECKING:
    from footprint_lab.core._run import Run
    from footprint_lab.engine._recording import Recording

_HISTORY = "history#"


class Turned(Protocol):
    """What these functions read of a turn (``core._chat.ChatTurn``)."""

    start: int
    end: int | None

    @property
    def run(self) -> Run: ...


def born_in(turns: Sequence[Turned], k: int) -> dict[str, int]:
    """``{"history#i": turn}`` for each earlier message turn ``k``'s last leg was sent."""
    spans = [(number, turn.start, turn.end) for number, turn in enumerate(turns[:k]) if turn.end is not None]
    found: dict[str, int] = {}
    for piece in turns[k].run.recording.context_pieces:
        source = piece.source_id
        if piece.source_kind not in TURN_KINDS or not source.startswith(_HISTORY):
            continue
        try:
            position = int(source[len(_HISTORY):])
        except ValueError:
            continue
        found[source] = next((number for number, start, end in spans if start <= position < end), k)
    return found


def sources_sent(recording: Recording) -> list[str]:
    """The sources the answering call was sent that are not conversation turns, as ``kind 'id'``, in order."""
    if not recording.exchanges:
        return []
    pieces = recording.call_pieces(recording.exchanges[-1])
    return list(dict.fromkeys(describe_source(p) for p in pieces if p.source_kind not in TURN_KINDS))


def changes(turns: Sequence[Turned], k: int) -> str:
    """What turn ``k``'s answering call was sent that the turn before it's was not, and what it no longer was."""
    now = sources_sent(turns[k].run.recording)
    if k == 0:
        return f"first turn: {len(now)} source(s) sent"
    before = sources_sent(turns[k - 1].run.recording)
    added = [s for s in now if s not in before]
    gone = [s for s in before if s not in now]
    parts = [f"{turns[k].start} earlier message(s) carried"]
    if added:
        parts.append("new: " + ", ".join(added))
    if gone:
        parts.append("gone: " + ", ".join(gone))
    if not added and not gone:
        parts.append("same sources")
    return "; ".join(parts)


def tokens(recording: Recording) -> int:
    """Input and output tokens of every LLM call of a recording, its member runs' included."""
    total = 0
    pending: list[Any] = [recording]
    while pending:
        current = pending.pop()
        total += sum(x.response.usage.input_tokens + x.response.usage.output_tokens for x in current.exchanges)
        pending += current.children
    return total
