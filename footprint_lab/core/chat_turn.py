"""One turn of a chat, as the chat keeps it; where a rerun of a turn starts; a turn run again without sources.

Rule kept here: a turn keeps the message as it sent it (what a rerun sends again), never shown;
everything it shows (its message, the checkpoints it continued and left, where a rerun starts) is
masked as its chat masks *now* (:class:`~footprint_lab.core._chat_turns.Masks`), so a value a later
turn learned is a secret is masked here too.

- :class:`ChatTurn`: the message as sent, its runs in order (a paused turn answered has two), and
  where its conversation started and ended;
- :class:`TurnStart`: ``(message, checkpoint, answers)``, what ``Chat.rerun_start`` hands a rerun;
- :class:`TurnRerun`: what ``Chat.rerun(k, without=[...])`` returns.

Role: core layer, for :mod:`footprint_lab.core.chat`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from footprint_lab.core._chat_turns import Masks, Summary
from footprint_lab.core.checkpoint import checkpoint_from

if TYPE_CHECKING:
    from footprint_lab.core.checkpoint import Checkpoint
    from footprint_lab.core.conversation_legs import Saved
    from footprint_lab.core.run import Run
    from footprint_lab.explain.trials.ablation import RerunReport



@dataclass(slots=True, eq=False, repr=False)  # a turn is itself: two turns never compare equal by their fields
class ChatTurn:
    """One turn: the message as sent, its run (the last leg, once a paused turn is answered), and its conversation.

    ``message``, ``before`` and ``after`` are shown as the chat masks them now (see the module
    docstring); ``before`` is the checkpoint the turn continued (``None`` for a first turn),
    ``after`` the one it left (``None`` when it did not go on: it failed, was refused or its
    question dropped); ``legs`` are its runs in order (a paused turn answered has two).
    """

    _sent: Any  # the message as sent: what a rerun of the turn sends again, never shown
    legs: list[Run]
    _from: Saved | None  # the conversation it continued
    _masks: Masks
    abandoned: bool = False
    #: how many conversation messages the turn started from, and ended with (``None``: it left none)
    start: int = 0
    end: int | None = None
    #: what a person answered, in order: ``(the question tool that asked, the answer)`` (a rerun replays them)
    answers: list[tuple[str, Any]] = field(default_factory=list)
    #: what its last leg was sent, read once when the leg was kept
    summary: Summary = field(default_factory=lambda: Summary((), 0))
    _swept: int = -1  # the version of the chat's masks its legs were last masked with

    @property
    def run(self) -> Run:
        return self.legs[-1]

    @property
    def status(self) -> str:
        return "abandoned" if self.abandoned else self.run.status

    @property
    def message(self) -> Any:
        """The message as the chat masks it now."""
        return self._masks.shown(self._sent)

    @property
    def before(self) -> Checkpoint | None:
        """The checkpoint the turn continued, masked as the chat masks now (its real values kept private)."""
        return self._checkpoint(self._from)

    @property
    def after(self) -> Checkpoint | None:
        """The checkpoint the turn left, masked as the chat masks now (``None``: it left none)."""
        return self._checkpoint(self._left)

    @property
    def _left(self) -> Saved | None:
        saved = self.run._conversation
        finished = self.run.status == "finished" and not self.abandoned
        return saved if finished and saved is not None and saved.history is not None else None

    def _checkpoint(self, saved: Saved | None) -> Checkpoint | None:
        if saved is None:
            return None
        scrubber = self._masks.scrubber()
        made = checkpoint_from(saved)
        return made if scrubber is None else made.concealed_by(scrubber)

    def __repr__(self) -> str:
        return (f"ChatTurn(message={self.message!r}, status={self.status!r}, legs={[leg.run_id for leg in self.legs]!r}"
                f", start={self.start}, end={self.end})")


class TurnStart(tuple[Any, ...]):  # (message, checkpoint, answers)
    """``(message, checkpoint, answers)``: where a rerun of a turn starts (:meth:`Chat.rerun_start`).

    Its items are what the rerun sends again, as the turn sent them (the checkpoint's real values
    are private to it); shown (``repr``, ``str``), it is masked as the chat masks now.
    """

    masks: Masks

    def __repr__(self) -> str:
        message, checkpoint, answers = self
        return repr((self.masks.shown(message), checkpoint, self.masks.shown(answers)))

    __str__ = __repr__


def _turn_start(turn: ChatTurn) -> TurnStart:
    start = TurnStart((turn._sent, turn.before, list(turn.answers)))
    start.masks = turn._masks
    return start


@dataclass(slots=True)
class TurnRerun:
    """Turn ``turn`` run again without ``removed``: whether the reply ``flipped``, and the rerun's ``report``."""

    turn: int
    report: RerunReport

    @property
    def flipped(self) -> bool:
        """``True`` when the rerun's reply differs from the recorded one (the report's comparator says so)."""
        return self.report.changed

    @property
    def answer(self) -> str | None:
        return self.report.after

    @property
    def run(self) -> Any:
        return self.report.run

    @property
    def removed(self) -> list[str]:
        return self.report.removed

    def summary(self) -> str:
        return f"Turn {self.turn}: {self.report.summary()}"

    def __str__(self) -> str:
        return f"Turn {self.turn}: {self.report}"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return self.report._repr_mimebundle_(include, exclude)
