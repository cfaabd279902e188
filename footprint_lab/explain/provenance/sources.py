"""Sources: the name under which a piece of context can be taken out of a rerun.

Rule kept here: one mapping, used by every explanation, from a recorded piece to the id a
rerun excludes to remove it (``agent.without([...])`` / ``factory(exclude=[...])``):

- a declaration (fact, steering, instruction, skill, memory, rag) by its declared id;
- the agent's own system prompt as ``system-prompt``;
- a tool by its name, which removes both its entry in the tools slot and every result it
  would have returned;
- the user's message and the model's own turns by nothing: a rerun answers the same input,
  and the model's turns are what a rerun produces again.

Role: explain layer; pure functions of recorded pieces.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from footprint_lab.record.schema import KIND_TOOL_RESULT, READ_SKILL

if TYPE_CHECKING:
    from footprint_lab.record.recording import ContextPiece

#: Kinds a rerun cannot remove, with the reason shown when someone asks to.
NOT_REMOVABLE = {
    "user": "the user's message is the input every rerun answers",
    "assistant": "the model's own turns are what a rerun produces again",
}
#: The tool a declared skill set offers; it goes with the skills, not by itself.
SKILL_LOADER = READ_SKILL


def removal_id(piece: ContextPiece) -> str | None:
    """The id a rerun excludes to remove this piece, or ``None`` when no rerun can remove it."""
    kind = piece.source_kind
    if kind in NOT_REMOVABLE:
        return None
    if kind == KIND_TOOL_RESULT:
        tool = piece.detail.get("tool")
        return tool if isinstance(tool, str) else None
    if kind == "registry" and piece.source_id == SKILL_LOADER:
        return None
    return piece.source_id


def describe_source(piece: ContextPiece) -> str:
    """A piece's source in a few words: ``fact 'vip-override'``, ``result of tool 'lookup_order'``."""
    if piece.source_kind == KIND_TOOL_RESULT:
        return f"result of tool '{piece.detail.get('tool', '?')}'"
    return f"{piece.source_kind} '{piece.source_id}'"
