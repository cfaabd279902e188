"""What a runner captures while it runs, typed: a context piece, and the token usage of a call.

Rule kept: each captured record has one shape, written by one constructor. A runner appends
thousands of pieces per run (200 declarations give 200 verdicts an iteration), so a piece is
captured in the form the finished run keeps: one flat tuple, its keys first (one tuple shared by
every piece of its shape), then its values, all plain values; the garbage collector stops
tracking such a tuple after its first pass, and a piece costs one allocation, never a dict
to be converted later. The token usage of a call is a plain tuple in the order
:class:`UsageCounts` names. The ``Recording`` turns pieces into its pydantic models on first
use (``record.recording``), where every :class:`Evidence` key goes into the piece's ``detail``.

Role: record layer, shared by ``core`` (the agent's own pieces) and ``context`` (declared ones).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from types import EllipsisType
from typing import Any, Literal, NamedTuple, TypedDict, TypeVar, Unpack

Slot = Literal["system", "messages", "tools"]
PieceVerdict = Literal["admitted", "skipped", "dropped"]
Cache = Literal["always", "never", "while_active"]


class Evidence(TypedDict, total=False):
    """The kind-specific evidence a piece may carry (``detail`` in the recording)."""

    #: a conversation turn: the run it was carried over from (follow-ups, resumes; :data:`CARRIED_FROM` while shared)
    from_run: str | EllipsisType | None
    #: a tool result: its tool, the call step that asked for it, whether it failed, a person who answered
    tool: str
    requested_by: str
    is_error: bool
    answered_by: str
    #: a tool that raised: the exception's type, its message (masked, bounded) and the tool's own frame
    error_type: str
    error_message: str
    error_frame: str
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
    #: a piece of a replayed call: the run and call step it was recorded in (``run_id/step_id``), whether its text
    #: was replaced
    replayed_from: str
    edited: bool


#: The ``ContextPiece`` fields every captured piece holds, in this order, before its evidence;
#: ``content_hash`` and ``index`` are computed when the recording is built.
PIECE_FIELDS = ("slot", "position", "source_kind", "source_id", "content", "trigger", "verdict", "reason",
                "allowed_by", "landed_by", "iteration", "cache", "declared_at")
#: where :data:`PIECE_FIELDS` sit in a captured piece (its keys come first)
SOURCE_KIND, ALLOWED_BY, POSITION = (PIECE_FIELDS.index(name) + 1 for name in ("source_kind", "allowed_by", "position"))
#: A captured piece: ``(keys, *values)``, the keys being :data:`PIECE_FIELDS` followed by the
#: :class:`Evidence` keys it carries (one tuple shared by every piece of that shape), then one
#: value per key.
CapturedPiece = tuple[Any, ...]

#: The reason a piece dropped over its slot's budget is captured with; its text is written from
#: its slot and its ``size`` / ``budget`` / ``used`` evidence when the recording is built
#: (:func:`budget_reason`), so that a run with many dropped pieces formats none of them.
OVER_BUDGET = "over budget"


def budget_reason(slot: str, budget: int, used: int, size: int) -> str:
    """Why a piece was dropped: its slot's budget, what was used before it, and what it needed."""
    return f"over the {slot} budget of {budget} characters: {used} used, this piece needs {size}"


Shared = TypeVar("Shared", bound=Hashable)
_KEYS: dict[tuple[str, ...], tuple[str, ...]] = {}


def one_copy(table: dict[Shared, Shared], value: Shared) -> Shared:
    """The copy of ``value`` kept in ``table`` (kept there on first sight, while the table is small):
    a long run captures thousands of records that repeat a few keys tuples and payloads."""
    shared = table.get(value)
    if shared is None:
        shared = value
        if len(table) < 4096:
            table[value] = value
    return shared


def shared_keys(keys: tuple[str, ...]) -> tuple[str, ...]:
    """One shared copy of a tuple of keys."""
    return one_copy(_KEYS, keys)


def piece_keys(evidence: tuple[str, ...]) -> tuple[str, ...]:
    """The keys of a piece that carries these evidence keys (shared, see :func:`shared_keys`)."""
    return shared_keys(PIECE_FIELDS + evidence)


def evidence_of(piece: CapturedPiece, key: str, default: Any = None) -> Any:
    """One evidence value of a captured piece (``default`` when it does not carry that key)."""
    keys = piece[0]
    return piece[keys.index(key) + 1] if key in keys else default


def flat(record: dict[str, Any]) -> tuple[Any, ...]:
    """A captured dict in the form a piece is captured in: ``(keys, *values)``, its keys shared."""
    return (shared_keys(tuple(record)), *record.values())


def as_dict(record: tuple[Any, ...] | dict[str, Any]) -> dict[str, Any]:
    """A captured record (a piece, an exchange) as a dict, whichever form it is held in."""
    return dict(zip(record[0], record[1:], strict=True)) if isinstance(record, tuple) else record


def captured_piece(
    slot: Slot,
    source_kind: str,
    source_id: str,
    content: str,
    *,
    step: str,
    iteration: int | None,
    position: int,
    verdict: PieceVerdict = "admitted",
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
    return (piece_keys(tuple(evidence)), slot, position if landed else -1, source_kind, source_id, content, trigger,
            verdict, reason, step, step if landed else None, iteration, cache, declared_at, *evidence.values())


class UsageCounts(NamedTuple):
    """The token usage of one LLM call, as captured with its exchange (in this order, as a plain tuple:
    the collector stops tracking a plain tuple of numbers, never a named one)."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    estimated: bool


#: The ``from_run`` evidence of a carried message's piece as :class:`History` shares it: the run the conversation
#: was carried from, which differs from leg to leg, is filled in when the recording is built
#: (``Recorder.carried``). ``Ellipsis``: no captured value is one, and the collector never tracks it.
CARRIED_FROM = ...


class History:
    """The recorded forms of a conversation's earlier messages, made once and shared by every leg that carries them.

    A leg that continues a conversation lands each earlier message as a ``history#i`` piece, its
    recording holds each message made JSON-native, and the conversation it leaves holds each one as
    JSON text. A chat's turn ``k`` carries the messages turn ``k-1`` carried, and more: made anew by
    every turn, a chat of ``n`` turns would hold ``n**2 / 2`` of each. Here, message ``i`` (this very
    object) gets each form once, and every leg that carries it holds those same objects; a leg that
    carries another message at ``i`` (a fork that went another way, a conversation read back from a
    checkpoint) gets its own, and shares those on.

    Each entry ``(message, step, piece, native, text)`` is read and replaced whole, so legs of forked
    chats on other threads never pair one message with another's forms.
    """

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: list[tuple[Any, ...]] = []

    def piece(self, index: int, message: Any, source_kind: str, content: Callable[[Any], str], step: str,
              ) -> CapturedPiece:
        """The piece that lands ``message``, carried at ``index`` by ``step``: the one made before, when this
        message was carried there by a step of that id; made here otherwise (``content`` writes its text)."""
        entries = self._entries
        entry = entries[index] if index < len(entries) else None
        if entry is not None and entry[0] is message and entry[1] == step:
            return entry[2]
        made = captured_piece("messages", source_kind, f"history#{index}", content(message), step=step,
                              iteration=None, position=index, reason="conversation", from_run=CARRIED_FROM)
        entry = (message, step, made, None, None)
        if index < len(entries):
            entries[index] = entry
        elif index == len(entries):
            entries.append(entry)
        return made

    def native(self, index: int, message: Any, make: Callable[[Any], Any]) -> Any:
        """``message`` as recordings hold it (``make`` makes it JSON-native): made once while ``index`` holds it."""
        return self._form(index, message, 3, make)

    def text(self, index: int, message: Any, make: Callable[[Any], str]) -> str:
        """``message`` as a conversation left for the next leg holds it (``make`` writes it): written once."""
        text: str = self._form(index, message, 4, make)
        return text

    def _form(self, index: int, message: Any, at: int, make: Callable[[Any], Any]) -> Any:
        entries = self._entries
        entry = entries[index] if index < len(entries) else None
        if entry is None or entry[0] is not message:
            return make(message)  # not carried here (a leg's own message), or another leg carries another now
        if entry[at] is None:
            entry = entries[index] = (*entry[:at], make(message), *entry[at + 1:])
        return entry[at]


class Carried(NamedTuple):
    """What a recorder holds of the conversation its leg carried: its first ``size`` messages are the
    ``history``'s, carried from run ``from_run`` (``record.build`` reads them so)."""

    history: History
    size: int
    from_run: str
