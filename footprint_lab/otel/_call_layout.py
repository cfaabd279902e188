"""How one LLM call's span lays out as a request: its system parts, its turns, the documents placed in it.

Rule kept here: a call's request is recorded exactly, ready to be sent again. Its leading system
turns are the system slot (a later system turn stays a turn), joined by a blank line as the runner
joins its system pieces; a retrieved document that stands whole between blank lines of a system
part is a piece of its own; two turns are the same turn when role, text, the tool call answered
and the calls made agree; the settings the span recorded, and the lengths of several system
messages, ride in the request's ``wire`` so a replay sends it as it was sent.

Role: read by :mod:`footprint_lab.otel._importer` as it replays a call's span; no ``opentelemetry`` import.
"""

from __future__ import annotations

from typing import Any

from footprint_lab.record.schema import KIND_BASE, KIND_TOOL_RESULT

#: What joins a call's system parts, as the runner (and a replay) joins its system pieces.
BLANK_LINE = "\n\n"


def turn_key(turn: dict[str, Any]) -> tuple[Any, ...]:
    """What makes two turns the same turn: role, text, the tool call answered, the calls made."""
    calls = turn.get("tool_calls")
    return (turn["role"], turn.get("content"), turn.get("tool_call_id"),
            tuple([(c["id"], c["name"]) for c in calls]) if calls else ())


def request_wire(call: Any) -> dict[str, Any]:
    """What the recorded request says beyond its fields: the call's settings, and, when its system text went as
    several system messages (each leading system turn, then the instructions as one), each one's length, so a
    replay sends it as it was sent (``explain.trials.replay``)."""
    system, _ = split_system(call.turns)
    lengths = [len(t) for t in system] + ([len(BLANK_LINE.join(call.instructions))] if call.instructions else [])
    return {"options": call.settings, **({"system_messages": lengths} if len(lengths) > 1 else {})}


def split_system(turns: list[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
    """The leading system turns' texts (the system slot), and the turns after them (a later system turn stays)."""
    lead = next((n for n, turn in enumerate(turns) if turn["role"] != "system"), len(turns))
    return [turn["content"] for turn in turns[:lead]], turns[lead:]


def around_documents(text: str, documents: list[tuple[int, str]]) -> list[tuple[str, int | None]] | None:
    """``text`` as the parts a blank line joins: each retrieved document that stands whole in it (with its place) and
    the text between them (place ``None``), so the pieces join back to the text as a native call's do; ``None``
    when no document stands there, or one does not stand between blank lines (the text then stays one piece)."""
    starts: dict[int, int] = {}  # where a document starts in the text: its place (the first of equal texts)
    for place, content in documents:
        start = text.find(content) if content else -1
        if start >= 0:
            starts.setdefault(start, place)
    if not starts:
        return None
    contents = dict(documents)
    parts: list[tuple[str, int | None]] = []
    cursor = 0
    for start in sorted(starts):
        gap = text[cursor:start]
        if start < cursor or (cursor and not gap.startswith(BLANK_LINE)):
            return None  # documents overlap, or one does not end with a blank line
        gap = gap[len(BLANK_LINE):] if cursor else gap
        if gap:
            if not gap.endswith(BLANK_LINE):
                return None
            parts.append((gap[:-len(BLANK_LINE)], None))
        parts.append((contents[starts[start]], starts[start]))
        cursor = start + len(contents[starts[start]])
    rest = text[cursor:]
    if rest and not rest.startswith(BLANK_LINE):
        return None
    return parts + ([(rest[len(BLANK_LINE):], None)] if rest else [])


def turn_kind(turn: dict[str, Any]) -> str:
    """The source kind of a transcript turn: ``user``, ``assistant``, ``tool_result``, or ``base`` for a system turn
    that follows other turns."""
    role_ = turn["role"]
    return KIND_TOOL_RESULT if role_ == "tool" else KIND_BASE if role_ == "system" else role_


def named_pieces(source_ids: Any, slot: str, count: int) -> list[tuple[str, str]] | None:
    """The (kind, source id) of each piece of a slot, when a footprint_lab export named them (and they fit)."""
    named = source_ids.get(slot) if isinstance(source_ids, dict) else None
    if not isinstance(named, list) or len(named) != count:
        return None
    if not all(isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in named):
        return None
    return [(kind, source_id) for kind, source_id in named]
