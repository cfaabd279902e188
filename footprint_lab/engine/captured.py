"""What a runner captures while it runs, typed: a context piece, and the token usage of a call.

Rule kept: each captured record has one shape, written by one constructor. A runner appends
thousands of these per run, so they stay a flat ``dict`` of plain values (a ``TypedDict``,
which the garbage collector never has to track) and a ``NamedTuple``: the type checker knows
every key and field, and nothing costs more at run time than the literal it replaces. The
``Recording`` turns them into its pydantic models once, when the run ends
(``engine.recording``), where every :class:`Evidence` key goes into the piece's ``detail``.

Role: engine layer, shared by ``core`` (the agent's own pieces) and ``context`` (declared ones).
"""

from __future__ import annotations

from typing import Literal, NamedTuple, TypedDict, Unpack

Slot = Literal["system", "messages", "tools"]
Verdict = Literal["admitted", "skipped", "dropped"]
Cache = Literal["always", "never", "while_active"]


class Evidence(TypedDict, total=False):
    """The kind-specific evidence a piece may carry (``detail`` in the recording)."""

    #: a conversation turn: the run it was carried over from (follow-ups, resumes)
    from_run: str | None
    #: a tool result: its tool, the call step that asked for it, whether it failed, a person who answered
    tool: str
    requested_by: str
    is_error: bool
    answered_by: str
    #: a declaration: its trigger spelled out, and the tool step that activated it
    condition: str
    activated_by: str
    #: the read_skill tool: the skills it offers
    skills: tuple[str, ...]
    #: a memory piece: the store's key for the item, its role; how many items were recalled
    item: str
    role: str
    recalled: int
    #: a RAG chunk: which chunk of which document, its score and rank, the threshold and scorer
    chunk: str
    document: str
    score: float
    rank: int
    threshold: float
    scorer: str
    #: a dropped piece: its size, the slot's budget, and what was used before it
    size: int
    budget: int
    used: int


class CapturedPiece(Evidence):
    """One context piece as captured: the ``ContextPiece`` fields known while the run is live.

    ``content_hash`` and ``index`` are computed when the recording is built.
    """

    slot: Slot
    position: int
    source_kind: str
    source_id: str
    content: str
    trigger: str
    verdict: Verdict
    reason: str
    allowed_by: str
    landed_by: str | None
    iteration: int | None
    cache: Cache | None
    declared_at: str | None


def captured_piece(
    slot: Slot,
    source_kind: str,
    source_id: str,
    content: str,
    *,
    step: str,
    iteration: int | None,
    position: int,
    verdict: Verdict = "admitted",
    reason: str = "always",
    trigger: str = "base",
    cache: Cache | None = None,
    declared_at: str | None = None,
    **evidence: Unpack[Evidence],
) -> CapturedPiece:
    """A piece judged (and, when admitted, landed) by ``step``.

    An admitted piece lands at ``position`` in the same step; a skipped or dropped one has
    position ``-1`` and no ``landed_by``, whatever ``position`` says.
    """
    landed = verdict == "admitted"
    return {
        "slot": slot, "position": position if landed else -1, "source_kind": source_kind, "source_id": source_id,
        "content": content, "trigger": trigger, "verdict": verdict, "reason": reason, "allowed_by": step,
        "landed_by": step if landed else None, "iteration": iteration, "cache": cache, "declared_at": declared_at,
        **evidence,
    }


class UsageCounts(NamedTuple):
    """The token usage of one LLM call, as captured with its exchange."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    estimated: bool
