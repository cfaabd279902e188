"""What a chat's turns are made of, and what the chat masks now.

Rule kept here: everything is read from the recordings and from where each turn's conversation
started and ended, never from a counter of its own. A turn that continued a conversation lands
the earlier messages as ``history#i`` pieces; message ``i`` was born in the turn whose own
messages span it (a turn that failed, was refused or had its question dropped added none).
Each turn's recording is read once, when the turn is kept (:func:`summarize`): which sources
its answering call was sent and how many earlier messages it carried. So ``frame()`` and the
chat's view cost one row per turn, however long the conversation each turn carried.

Rule kept too: a chat shows every turn under the redaction it holds *now* (:class:`Masks`): the
policies of its runner and of each turn's run, and every value any turn of the chat (or of a
chat forked from it, or it from) learned under a covered key. A password typed in turn 0 that
turn 2 learns is a secret is masked in turn 0's recording as well (:func:`masked_recording`).

Role: core layer, for :mod:`footprint_lab.core.chat`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Protocol

from footprint_lab.explain.provenance.sources import describe_source
from footprint_lab.record.by_field import by_field, texts
from footprint_lab.record.recording import Recording
from footprint_lab.record.rows import as_rows
from footprint_lab.record.schema import HISTORY, TURN_KINDS
from footprint_lab.redact.policy import Redaction, RunScrubber, combine_policies
from footprint_lab.sealing.seal import masked_again

if TYPE_CHECKING:
    from footprint_lab.core.run import Run

_HISTORY = HISTORY


@dataclass(frozen=True, slots=True)
class Summary:
    """What a turn's last leg was sent, read once: the sources (not turns) of its answering call, in order,
    and how many earlier messages it carried as ``history#i`` pieces."""

    sent: tuple[str, ...]
    carried: int


class Turned(Protocol):
    """What these functions read of a turn (``core.chat_turn.ChatTurn``)."""

    start: int
    end: int | None
    summary: Summary

    @property
    def run(self) -> Run: ...


def summarize(recording: Recording) -> Summary:
    """A turn's :class:`Summary`, from its recording's pieces read as columns for this use only (no piece is
    made a model, nor kept: a turn that carried a thousand messages costs a few lists, once)."""
    pieces = recording.context_pieces
    kinds, ids, details = as_rows(pieces).values("source_kind", "source_id", "detail")
    carried = sum(1 for kind, source in zip(kinds, ids, strict=True)
                  if kind in TURN_KINDS and source.startswith(_HISTORY))
    if not recording.exchanges:
        return Summary((), carried)
    slots = recording.exchange_pieces(recording.exchanges[-1]).values()
    sent: list[Any] = [SimpleNamespace(source_kind=kinds[i], source_id=ids[i], detail=details[i] or {})
                       for slot in slots for i in slot if kinds[i] not in TURN_KINDS]
    return Summary(tuple(dict.fromkeys(map(describe_source, sent))), carried)


def born_in(turns: Sequence[Turned], k: int) -> dict[str, int]:
    """``{"history#i": turn}`` for each earlier message turn ``k``'s last leg was sent."""
    spans = [(number, turn.start, turn.end) for number, turn in enumerate(turns[:k]) if turn.end is not None]
    return {f"{_HISTORY}{position}": next((number for number, start, end in spans if start <= position < end), k)
            for position in range(turns[k].summary.carried)}


def changes(turns: Sequence[Turned], k: int) -> str:
    """What turn ``k``'s answering call was sent that the turn before it's was not, and what it no longer was."""
    now = turns[k].summary.sent
    if k == 0:
        return f"first turn: {len(now)} source(s) sent"
    before = turns[k - 1].summary.sent
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


class Masks:
    """The redaction a chat (and every chat forked from it, or it from) holds now.

    ``policy`` covers what the runner's policy and every turn's run's cover; ``learned`` is every
    value a leg learned under a covered key (value -> mask). ``version`` moves whenever either
    grows, so each chat knows to sweep its turns again. It holds no chat: a fork shares it
    without keeping its parent alive.
    """

    __slots__ = ("_scrubber", "learned", "policy", "version")

    def __init__(self) -> None:
        self.policy: Redaction | None = None
        self.learned: dict[str, str] = {}
        self.version = 0
        self._scrubber: RunScrubber | None = None

    def note(self, policy: Redaction | None, learned: Mapping[str, str] = {}) -> None:  # read only
        """Take in a policy in force and values a leg learned; moves ``version`` when either adds something."""
        widened = policy is not None and (self.policy is None or not self.policy.covers(policy))
        new = {value: mask for value, mask in learned.items() if value not in self.learned}
        if not widened and not new:
            return
        self.policy = combine_policies(self.policy, policy) if widened else self.policy
        self.learned.update(new)
        self._scrubber = None
        self.version += 1

    def scrubber(self) -> RunScrubber | None:
        """A scrubber for what the chat shows: the policy now, taught every value learned (``None``: no policy)."""
        if self.policy is None:
            return None
        if self._scrubber is None:
            self._scrubber = self.policy.for_run()
            self._scrubber.teach(self.learned)
        return self._scrubber

    def shown(self, value: Any) -> Any:
        """``value`` as the chat may show it now (a message, a person's answer, a question)."""
        scrubber = self.scrubber()
        return value if scrubber is None else scrubber.sweep(scrubber.quietly(value))

    def covered(self, run: Run) -> bool:
        """Whether ``run``'s recording needs no masking again: made under all the chat's policy, and no value was
        learned (a leg that learned one may hold it in a record made before: those are looked at)."""
        return self.policy is None or (not self.learned and run.policy is not None and run.policy.covers(self.policy))


def masked_recording(recording: Recording, masks: Masks) -> Recording | None:
    """``recording`` masked under ``masks`` field by field (``sealing.seal.masked_again``: a new, loadable
    recording, hashes recomputed, report naming the policy, sealed again when it was sealed); ``None`` when there
    was nothing to mask. Should masking values under keys leave a field that no longer fits, its texts alone are
    masked, which always fits: the recording shown is never the one holding what the chat learned since."""
    scrubber = masks.scrubber()
    assert masks.policy is not None and scrubber is not None
    data = recording.model_dump(mode="json")
    by_field(data, scrubber.quietly, Recording)  # what the whole recording teaches first: masked in every field
    names = {"keys": masks.policy.keys, "patterns": masks.policy.patterns}
    try:
        return masked_again(data, masks.shown, **names)
    except ValueError:
        return masked_again(data, lambda value: texts(value, masks.shown), **names)
