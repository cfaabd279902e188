"""What a runner captures while it runs, typed: a context piece, and the token usage of a call.

Rule kept: each captured record has one shape, written by one constructor. A runner appends
thousands of these per run, so they stay a plain ``dict`` (a ``TypedDict``) and a
``NamedTuple``: the type checker knows every key and field, and nothing costs more at run
time than the literal it replaces. The ``Recording`` turns them into its pydantic models
once, when the run ends (``engine.recording``).

Role: engine layer, shared by ``core`` (the agent's own pieces) and ``context`` (declared ones).
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple, TypedDict

Slot = Literal["system", "messages", "tools"]
Verdict = Literal["admitted", "skipped", "dropped"]
Cache = Literal["always", "never", "while_active"]


class CapturedPiece(TypedDict):
    """One context piece as captured (the ``ContextPiece`` fields known while the run is live).

    ``detail`` holds the kind-specific evidence (a tool result's ``tool`` and
    ``requested_by``, a RAG chunk's ``score``...); ``content_hash`` and ``index`` are
    computed when the recording is built.
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
    detail: dict[str, Any]


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
    detail: dict[str, Any] | None = None,
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
        "detail": detail if detail is not None else {},
    }


class UsageCounts(NamedTuple):
    """The token usage of one LLM call, as captured with its exchange."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    estimated: bool
