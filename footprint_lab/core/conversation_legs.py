"""Legs of a conversation: where an execution starts, what it tracks, and what it leaves behind.

A conversation is a chain of executions ("legs"): a first ``run()``, follow-ups, the resume
of a paused run, the resume of a failed one. Rule kept here: where a leg starts is derived
from the conversation itself, never from a counter a caller could set. From the history:

- the turns since the last user message are the current turn; its assistant turns count its
  LLM calls (so a resumed leg keeps counting where the paused one stopped) and those that
  asked for tools count its tool rounds (so the iteration budget holds across legs);
- tool calls of the last assistant turn without a result are the open batch: the paused one
  first, then the ones that never ran.

Every leg also carries the id of the run that opened its conversation (``first_run_id``):
without a named identity, that run's ``{conversation_id: first_run_id}`` is the memory
namespace of every leg, so a follow-up or a resume reads what the earlier turns wrote.

Everything here is light (no pydantic): it runs on every execution.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from footprint_lab.record.spliced import spliced

#: a conversation as a runner holds it between turns (:func:`freeze`): each message's JSON text
Frozen = Sequence[str]

if TYPE_CHECKING:
    from footprint_lab.core.identity import Identity
    from footprint_lab.core.pause import Pause
    from footprint_lab.record.captured import History
    from footprint_lab.redact.policy import Redaction, RunScrubber


def turn_position(history: Sequence[dict[str, Any]]) -> tuple[int, int, list[dict[str, Any]]]:
    """``(tool rounds, LLM calls, open tool calls)`` of the conversation's current turn."""
    start = 0
    for index in range(len(history) - 1, -1, -1):
        if history[index].get("role") == "user":
            start = index + 1
            break
    rounds = calls = 0
    open_calls: list[dict[str, Any]] = []
    for message in history[start:]:
        role = message.get("role")
        if role == "assistant":
            calls += 1
            open_calls = list(message.get("tool_calls") or [])
            rounds += bool(open_calls)
        elif role == "tool":
            open_calls = [c for c in open_calls if c.get("id") != message.get("tool_call_id")]
    return rounds, calls, open_calls


@dataclass(slots=True)
class Continuation:
    """How one leg starts from an earlier conversation (checked before anything runs).

    ``how`` is ``follow_up``, ``continue_from``, ``resume`` or ``resume_on_error``; ``history``
    the earlier turns; ``from_run`` the run that left them and ``first_run_id`` the run that
    opened the conversation; ``pause`` and ``answer`` are set for a resume; ``policy`` is the
    redaction the leg runs under and ``marks`` what earlier legs' policy covered.
    """

    how: str
    history: list[dict[str, Any]]
    from_run: str
    #: the run that opened the conversation: its memory namespace when no identity was named
    first_run_id: str
    policy: Redaction | None = None
    marks: dict[str, list[str]] | None = None
    pause: Pause | None = None
    answer: str | None = None
    #: values earlier legs learned to mask (value -> mask): masked from this leg's first record on
    learned: dict[str, str] | None = None
    #: the recorded forms of the earlier turns, shared with the legs that carried them before (record.captured)
    carried: History | None = None


@dataclass(slots=True)
class Leg:
    """What one execution tracks beyond the transcript (lives on the turn, never on the agent)."""

    start: Continuation | None
    scrubber: RunScrubber | None
    #: principal and tenant, when the caller named an identity (events carry them only then)
    who: dict[str, str] = field(default_factory=dict)
    #: the history length when the last tool round completed (``None`` before the first one)
    good: int | None = None
    iteration: int = 0
    #: the tool call running now (the one that asked, when a tool asks a person)
    call: Any = None

    def marks(self) -> dict[str, list[str]]:
        """The redaction marks this leg leaves: its own policy's, or the carried ones."""
        if self.scrubber is not None:
            return self.scrubber.marks()
        carried = self.start.marks if self.start is not None else None
        return {k: list(v) for k, v in carried.items()} if carried else {"keys": [], "patterns": [], "matched": []}


@dataclass(slots=True)
class Saved:
    """What an execution leaves for its runner to hold: the conversation, as a checkpoint would carry it.

    ``outcome`` is ``finished``, ``paused``, ``failed`` or ``input-refused`` (then ``history``
    is ``None``: nothing was admitted to continue). ``history`` is held frozen (:func:`freeze`).
    """

    outcome: str
    run_id: str
    first_run_id: str
    history: Frozen | None
    identity: Identity | None
    agent_id: str | None
    policy: Redaction | None
    marks: dict[str, list[str]]
    pause: Pause | None = None
    #: the run's scrubber (with what it learned), which masks the checkpoint's saved form
    scrubber: RunScrubber | None = None
    #: whether the checkpoint is sealed (``Agent(..., seal=True)``)
    sealed: bool = False
    #: the recorded forms of its messages, for the leg that continues it to share (record.captured)
    carried: History | None = None
    #: how many of its first messages are ``carried``'s own (the very objects): a leg that continues it takes
    #: those as they are and reads back only the rest (:func:`continued`)
    held: int = 0


def freeze(history: Sequence[dict[str, Any]], carried: History | None = None) -> tuple[Frozen, int]:
    """The conversation as a runner holds it between turns: each message as JSON text.

    A runner keeps its last conversation alive for ``follow_up``. Held as dicts and lists,
    every turn would stay tracked by the cyclic garbage collector and slow each collection of
    the runs that follow (a long conversation measurably so); a tuple of strings is never
    tracked, and reading it back gives the next leg turns nobody else holds. A message its leg
    carried (``carried``) is held as the text the legs before wrote for it, read from the list
    the conversation's legs share (``record.spliced``): a long chat holds each message's text
    once, and each turn nothing per earlier message. Returns the frozen conversation and how many of its
    first messages ``carried`` holds.
    """
    size = carried.holds(history) if carried is not None else 0
    if not size:
        return tuple(map(_text, history)), 0
    assert carried is not None
    return spliced([carried.texts(size, _text), tuple(map(_text, history[size:]))]), size


def _text(message: dict[str, Any]) -> str:
    return json.dumps(message, ensure_ascii=False, default=repr)


def thaw(history: Frozen) -> list[dict[str, Any]]:
    """A held conversation as fresh turns a new leg can extend."""
    turns: list[dict[str, Any]] = json.loads(f"[{','.join(history)}]")
    return turns


def continued(saved: Saved) -> list[dict[str, Any]]:
    """The messages a leg continuing ``saved`` starts from: the ones its legs before shared (``saved.held`` of
    them, these very objects, so the new leg shares their pieces and recorded forms too) and the rest read
    back. A conversation continued turn after turn so costs each turn only its own messages."""
    assert saved.history is not None
    if saved.carried is None or not saved.held:
        return thaw(saved.history)
    return [*saved.carried.messages(saved.held), *thaw(saved.history[saved.held:])]


def who(identity: Identity | None) -> dict[str, str]:
    """The principal and tenant events carry: only those the caller named."""
    if identity is None:
        return {}
    return {k: v for k in ("principal", "tenant") if (v := getattr(identity, k)) is not None}
