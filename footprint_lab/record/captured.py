"""What a runner captures while it runs: a context piece, a call's token usage, a carried conversation.

Rule kept: each captured record has one shape, written by one constructor. A run captures
thousands of pieces, so a piece is captured in the form the finished run keeps: one flat tuple
of plain values, its keys first (one keys tuple shared by every piece of that shape). The garbage
collector stops tracking such a tuple, and a piece costs one allocation. A call's token usage is
a plain tuple in :class:`UsageCounts` order. The ``Recording`` makes its models from these on
first use, each :class:`Evidence` key going into the piece's ``detail``.

Role: record layer, shared by ``core`` (the agent's own pieces) and ``context`` (declared ones).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from types import EllipsisType
from typing import Any, Literal, NamedTuple, TypedDict, TypeVar, Unpack

from footprint_lab.record.schema import HISTORY
from footprint_lab.record.spliced import Repeat, Window, matched, prefix, spliced

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
    #: a replayed call's piece: where it was recorded (``run_id/step_id``), whether its text was replaced
    replayed_from: str
    edited: bool


#: The ``ContextPiece`` fields every captured piece holds, in this order, before its evidence;
#: ``content_hash`` and ``index`` are computed when the recording is built.
PIECE_FIELDS = ("slot", "position", "source_kind", "source_id", "content", "trigger", "verdict", "reason",
                "allowed_by", "landed_by", "iteration", "cache", "declared_at")
#: where :data:`PIECE_FIELDS` sit in a captured piece (its keys come first)
SOURCE_KIND, ALLOWED_BY = (PIECE_FIELDS.index(name) + 1 for name in ("source_kind", "allowed_by"))
#: A captured piece: ``(keys, *values)``, the keys being :data:`PIECE_FIELDS` then its :class:`Evidence` keys.
CapturedPiece = tuple[Any, ...]

#: The captured reason of a piece dropped over its slot's budget. Its text is written only when the
#: recording is built (:func:`budget_reason`), so a run that drops many pieces formats none.
OVER_BUDGET = "over budget"


def budget_reason(slot: str, budget: int, used: int, size: int) -> str:
    """Why a piece was dropped: its slot's budget, what was used before it, and what it needed."""
    return f"over the {slot} budget of {budget} characters: {used} used, this piece needs {size}"


Shared = TypeVar("Shared", bound=Hashable)
_KEYS: dict[tuple[str, ...], tuple[str, ...]] = {}


def one_copy(table: dict[Shared, Shared], value: Shared) -> Shared:
    """The copy of ``value`` kept in ``table`` (stored on first sight, until the table is full): a long run
    repeats a few keys tuples and payloads thousands of times."""
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
    """The token usage of one LLM call, captured as a plain tuple in this order (the collector stops
    tracking a plain tuple of numbers, never a named one)."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    estimated: bool


#: The ``from_run`` of a carried message's shared piece: the run it came from differs by leg, so it is filled
#: in when the recording is built. ``Ellipsis``: no captured value is one, and the collector never tracks it.
CARRIED_FROM = ...


class History:
    """A conversation's earlier messages in their recorded forms, made once and shared by every leg that carries them.

    A leg that continues a conversation lands each earlier message as a ``history#i`` piece, records
    it JSON-native, and leaves it as JSON text. Turn ``k`` carries all that turn ``k-1`` did, so
    making these anew each turn would cost ``n**2 / 2`` of each over ``n`` turns. Here each form is
    made once, in lists that only grow at their end, and a leg reads its first ``size`` through a
    :class:`~footprint_lab.record.spliced.Window`, which later growth never changes. A leg whose
    messages part from those held (a fork, a checkpoint read back, another landing step) gets a new
    history that shares the common start (:meth:`carry`). One lock keeps legs on other threads apart.
    """

    __slots__ = ("_lock", "_messages", "_natives", "_pieces", "_step", "_texts")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._messages: list[Any] = []
        self._pieces: list[CapturedPiece] = []
        #: each message made JSON-native, and as JSON text, when first asked for (``None`` until then)
        self._natives: list[Any] = []
        self._texts: list[str | None] = []
        #: the step that landed them (every leg's first step: the same id in each leg of one conversation)
        self._step: str | None = None

    def carry(self, messages: Sequence[Any], step: str, source_kind: Callable[[Any], str],
              content: Callable[[Any], str]) -> History:
        """The history holding ``messages`` (these very objects) first, each landed by ``step``: this one, grown
        by the new ones, or a new one where they part from it. ``source_kind`` and ``content`` write a new piece."""
        same = self.holds(messages) if self._step in (None, step) else 0
        with self._lock:
            held = self._messages
            target = self
            if same < len(held) and same < len(messages):  # they part here: the shared ones and these
                target = History()
                for name in ("_messages", "_pieces", "_natives", "_texts"):
                    setattr(target, name, getattr(self, name)[:same])
            target._step = step
            for index in range(len(target._messages), len(messages)):
                message = messages[index]
                target._pieces.append(captured_piece(
                    "messages", source_kind(message), f"{HISTORY}{index}", content(message), step=step,
                    iteration=None, position=index, reason="conversation", from_run=CARRIED_FROM))
                target._natives.append(None)
                target._texts.append(None)
                target._messages.append(message)
            return target

    def holds(self, messages: Sequence[Any]) -> int:
        """How many of ``messages``, from the first, are the ones held here (these very objects)."""
        with self._lock:
            held = self._messages
            limit = min(len(held), len(messages))
            same = 0
            while same < limit and held[same] is messages[same]:
                same += 1
            return same

    def piece(self, index: int) -> CapturedPiece:
        """The piece that lands message ``index``."""
        return self._pieces[index]

    def messages(self, size: int) -> Window:
        """The first ``size`` messages, shared."""
        return prefix(self._messages, size)

    def pieces(self, size: int) -> Window:
        """The pieces of the first ``size`` messages, shared."""
        return prefix(self._pieces, size)

    def natives(self, size: int, make: Callable[[Any], Any]) -> Window:
        """The first ``size`` messages as recordings hold them (``make`` makes one JSON-native), each made once."""
        return self._forms(self._natives, size, make)

    def texts(self, size: int, make: Callable[[Any], str]) -> Window:
        """The first ``size`` messages as a conversation left for the next leg holds them (``make`` writes one)."""
        return self._forms(self._texts, size, make)

    def _forms(self, forms: list[Any], size: int, make: Callable[[Any], Any]) -> Window:
        with self._lock:
            messages = self._messages
            for index in range(size):
                if forms[index] is None:
                    forms[index] = make(messages[index])
        return prefix(forms, size)

    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__ if name != "_lock"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._lock = threading.Lock()
        for name, value in state.items():
            setattr(self, name, value)


class Carried(NamedTuple):
    """What a recorder holds of the conversation its leg carried: the first ``size`` messages of ``history``,
    carried from run ``from_run``."""

    history: History
    size: int
    from_run: str


def share_carried(recorder: Any) -> None:
    """Read each column's carried stretch of a finished ``recorder`` from the history its legs share, so a
    chat's turn keeps nothing per earlier message. Items that differ (a message a policy masked) stay its own."""
    carried, at = recorder.carried, recorder.carried_at
    if carried is None or at is None or not carried.size:
        return
    history, size, _ = carried
    entries, events, pieces, messages = at

    def shared(column: str, start: int, stretch: Window | Repeat | range) -> None:
        held = getattr(recorder, column)
        if len(held) >= start + size:
            setattr(recorder, column, spliced([held[:start], *matched(held[start:start + size], stretch),
                                               held[start + size:]]))

    if len(recorder.entry_paths) > entries:
        shared("entry_paths", entries, Repeat(recorder.entry_paths[entries], size))
    shared("entry_verbs", entries, Repeat("append", size))
    shared("entry_values", entries, history.messages(size))
    if len(recorder.event_seqs) > events:
        shared("event_seqs", events, range(recorder.event_seqs[events], recorder.event_seqs[events] + size))
        shared("event_steps", events, Repeat(recorder.event_steps[events], size))
    shared("event_refs", events, range(entries, entries + size))
    shared("event_types", events, Repeat("write", size))
    shared("event_payloads", events, Repeat(None, size))
    shared("pieces", pieces, history.pieces(size))
    shared("messages", messages, history.messages(size))
    shared("message_pieces", messages, range(pieces, pieces + size))
