"""``Chat(runner)``: a conversation as a list of turns, each one a run that explains like any other.

Rule kept here: a chat keeps its own conversation, turn by turn, and never borrows the one its
runner holds. Each turn continues the checkpoint the turn before it left (``run(message,
continue_from=...)``), so what a turn was sent is exactly what the recording of the turn before
it says, and two chats (a fork and its parent) on one runner never see each other's turns.

The doors, each judged before anything runs:

- ``send(message)`` runs one turn. A send while a turn is in flight is refused with
  :class:`RunInFlightError` (``overlap="refuse"``, the default) or waits for the turns before it
  (``overlap="queue"``, on one event loop); a send while a turn waits on a person is refused
  with :class:`PendingQuestionError` until ``answer(reply)`` or ``abandon()``.
- ``rerun(k, without=[...])`` reruns turn ``k`` with sources removed, inside the conversation
  as recorded up to it: the turns before ``k`` are carried from the checkpoint turn ``k-1`` left,
  so the provider is called only for turn ``k``. ``localize(k)`` tests every suspect of turn ``k``
  the same way; ``explain.localize(chat[k], rerun=chat)`` works too (the chat tells a rerun
  which conversation a turn's recording continued, :meth:`Chat.rerun_start`).
- ``fork(k)`` is a new chat holding turns ``0..k-1``; its next turn is a new turn ``k``.

What a turn's context is made of, and from which turn each piece came, is in
:mod:`footprint_lab.core._chat_turns`. Refusals raised here: :class:`ChatConfigError`,
:class:`UnknownTurnError`.

Role: core layer; explains through ``footprint_lab.explain`` and displays through the display
registry (``engine._display``, kind ``chat``), like ``Run``.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from footprint_lab.core._chat_turns import born_in, changes, tokens
from footprint_lab.core._checkpoint import checkpoint_from
from footprint_lab.core._conversation import PendingQuestionError, RunInFlightError
from footprint_lab.core._pause import Pause
from footprint_lab.core._run import Run
from footprint_lab.core._runner import Listener, check_listener, run_coroutine_sync
from footprint_lab.engine._bug_reports import write_bug_report
from footprint_lab.engine._display import bundle
from footprint_lab.engine._refusal import Refusal, SettingRefusal, describe_shape
from footprint_lab.explain._ablation import Localization, RerunReport, localize, rerun_without

if TYPE_CHECKING:
    import os
    from pathlib import Path

    import pandas as pd

    from footprint_lab.core._checkpoint import Checkpoint
    from footprint_lab.engine._recording import Recording

OVERLAPS = ("refuse", "queue")
FRAME_COLUMNS = ["turn", "message", "answer", "status", "tokens", "changed", "run_id"]

_BUSY = ("A chat answers one turn at a time: each turn continues the conversation the one before it left, so a "
         "second turn sent now would answer without it. Await the turn in flight, or build the chat with "
         "Chat(runner, overlap='queue') so that a send waits for the turns before it.")
_ASKED = ("Answer it with chat.answer(reply): the paused turn continues where it stopped, and no tool that already "
          "ran runs again. If the question is being dropped, say so with chat.abandon() and then send again: a "
          "question the next message could skip is a consent gate anyone can walk around.")


class ChatConfigError(SettingRefusal):
    """Raised by ``Chat(runner, overlap=...)`` when the runner cannot hold a conversation or ``overlap`` is unknown.

    Carries ``setting`` (``runner`` or ``overlap``) and ``received`` (its shape).
    """

    code = "ERR_CHAT_CONFIG"


class UnknownTurnError(Refusal):
    """Raised by ``chat[k]``, ``rerun(k)``, ``localize(k)``, ``fork(k)`` and ``context(k)`` when ``k`` names no turn.

    Carries ``door``, ``received`` (the shape of what arrived) and ``turns`` (how many the chat holds).
    """

    code = "ERR_UNKNOWN_TURN"
    fields = ("door", "received", "turns")

    def __init__(self, door: str, received: str, turns: int, *, fork: bool = False) -> None:
        last = turns if fork else turns - 1
        held = (f"turns 0 to {last}" if last > 0 else "turn 0") if last >= 0 else "no turn yet"
        what = ("the number of turns the fork keeps" if fork
                else "a turn by its index (0 for the first, -1 for the last)")
        super().__init__(f"{door}: name {what}; this chat holds {turns} turn(s), so {held} (received {received}).")
        self.door = door
        self.received = received
        self.turns = turns


@dataclass(slots=True, eq=False)  # a turn is itself: two turns never compare equal by their fields
class ChatTurn:
    """One turn: the message as sent, its run (the last leg, once a paused turn is answered), and its conversation.

    ``before`` is the checkpoint the turn continued (``None`` for a first turn); ``after`` the
    one it left (``None`` when it did not go on: it failed, was refused or its question dropped);
    ``legs`` are its runs in order (a paused turn answered has two).
    """

    message: Any
    legs: list[Run]
    before: Checkpoint | None
    after: Checkpoint | None = None
    abandoned: bool = False
    #: how many conversation messages the turn started from, and ended with (``None``: it left none)
    start: int = 0
    end: int | None = None
    #: what a person answered, in order: ``(the question tool that asked, the answer)`` (a rerun replays them)
    answers: list[tuple[str, Any]] = field(default_factory=list, repr=False)
    _pause: Pause | None = field(default=None, repr=False)

    @property
    def run(self) -> Run:
        return self.legs[-1]

    @property
    def status(self) -> str:
        return "abandoned" if self.abandoned else self.run.status


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


class Chat:
    """A conversation with ``runner`` (an ``Agent``), one turn per ``send``; see the module docstring."""

    def __init__(self, runner: Any, *, overlap: str = "refuse") -> None:
        if not holds_conversations(runner):
            raise ChatConfigError(
                "Chat", "runner", describe_shape(runner),
                "must be an agent that continues a conversation: one whose run() takes continue_from= and that "
                "can resume a paused turn, e.g. Chat(Agent(provider=..., tools=[...]))",
            )
        if not isinstance(overlap, str) or overlap not in OVERLAPS:
            raise ChatConfigError("Chat", "overlap", describe_shape(overlap) if not isinstance(overlap, str)
                                  else "a string that is neither 'refuse' nor 'queue'",
                                  "is 'refuse' (a send while a turn runs is refused) or 'queue' (it waits its turn)")
        self.runner = runner
        self.overlap = overlap
        self._turns: list[ChatTurn] = []
        self._active: str | None = None  # the run in flight ("" until its first event names it)
        self._queue: asyncio.Lock | None = None
        self._queue_loop: asyncio.AbstractEventLoop | None = None
        #: the chat this one was forked from, and the number of turns it kept
        self.forked_from: tuple[Chat, int] | None = None

    # -- the turns ------------------------------------------------------------------------------
    @property
    def turns(self) -> list[Run]:
        """Every turn's run, in order (a fresh list: changing it changes nothing the chat holds)."""
        return [turn.run for turn in self._turns]

    def __len__(self) -> int:
        return len(self._turns)

    def __iter__(self) -> Iterator[Run]:
        return iter(self.turns)

    def __getitem__(self, k: int) -> Run:
        return self.turn(k, "Chat[k]").run

    def turn(self, k: int, door: str = "Chat.turn") -> ChatTurn:
        """Turn ``k`` with its message, legs and conversation (``-1`` is the last)."""
        count = len(self._turns)
        if not isinstance(k, int) or isinstance(k, bool):
            raise UnknownTurnError(door, describe_shape(k), count)
        if not -count <= k < count:
            raise UnknownTurnError(door, "an index out of range", count)
        return self._turns[k]

    @property
    def pending(self) -> Run | None:
        """The turn waiting on a person's answer, or ``None``."""
        last = self._turns[-1] if self._turns else None
        return last.run if last is not None and last._pause is not None and not last.abandoned else None

    # -- sending --------------------------------------------------------------------------------
    async def send(self, message: Any, /, *, on_event: Listener | None = None, identity: Any = None) -> Run:
        """Run one turn, continuing the conversation so far; returns its ``Run`` (paused, when a tool asked)."""
        door = "Chat.send"
        if self.overlap == "refuse":
            self._refuse_if_busy(door)
            return await self._send(door, message, on_event, identity)
        async with self._slot(door):
            return await self._send(door, message, on_event, identity)

    async def _send(self, door: str, message: Any, on_event: Listener | None, identity: Any) -> Run:
        self._refuse_if_pending(door)
        before = self._conversation()
        keywords: dict[str, Any] = {"identity": identity} if identity is not None else {}
        if before is not None:
            keywords["continue_from"] = before
        turn = ChatTurn(message, [], before, start=len(before.history) if before is not None else 0)
        run = await self._leg(turn, lambda listener: self.runner.run(message, on_event=listener, **keywords),
                              on_event)
        return run

    async def answer(self, reply: Any, /, *, on_event: Listener | None = None) -> Run:
        """Answer the question the last turn waits on; the turn goes on where it paused and returns its run."""
        door = "Chat.answer"
        if self.overlap == "refuse":
            self._refuse_if_busy(door)
            return await self._answer(door, reply, on_event)
        async with self._slot(door):
            return await self._answer(door, reply, on_event)

    async def _answer(self, door: str, reply: Any, on_event: Listener | None) -> Run:
        waiting = self.pending
        if waiting is None:
            from footprint_lab.core._checkpoint import InvalidCheckpointError

            raise InvalidCheckpointError(door, "pause", "a chat with no question pending",
                                         "is null: no turn of this chat is waiting on a question",
                                         "Send the next message with chat.send(message).")
        turn = self._turns[-1]
        checkpoint = waiting.checkpoint
        asked = turn._pause
        run = await self._leg(turn, lambda listener: self.runner.resume(checkpoint, reply, on_event=listener),
                              on_event)
        if asked is not None:
            turn.answers.append((asked.tool_name, reply))
        return run

    async def _leg(self, turn: ChatTurn, start: Any, on_event: Listener | None) -> Run:
        """Run one leg of ``turn`` (a send or an answer) and keep what it leaves; the only place turns change."""
        listener = self._listener(on_event)
        self._active = ""
        try:
            run = await start(listener)
        except Refusal:
            raise  # nothing ran: the chat is as it was
        except BaseException as ended:
            failed = getattr(ended, "_footprint_run", None)
            if isinstance(failed, Run):
                self._keep(turn, failed)
            raise
        finally:
            self._active = None
        self._keep(turn, run)
        return run

    def _keep(self, turn: ChatTurn, run: Run) -> None:
        if not turn.legs:
            self._turns.append(turn)
        turn.legs.append(run)
        saved = run._conversation
        turn._pause = saved.pause if saved is not None and run.paused else None
        if run.status == "finished" and saved is not None and saved.history is not None:
            turn.after = checkpoint_from(saved)
            turn.end = len(turn.after.history)
        else:
            turn.after, turn.end = None, None

    def send_sync(self, message: Any, /, **keywords: Any) -> Run:
        """``send`` from synchronous code, inside a running event loop or not (see ``Agent.run_sync``)."""
        return run_coroutine_sync(self.send(message, **keywords))

    def answer_sync(self, reply: Any, /, **keywords: Any) -> Run:
        """``answer`` from synchronous code."""
        return run_coroutine_sync(self.answer(reply, **keywords))

    def abandon(self) -> Pause | None:
        """Drop the question the last turn waits on, on the record; returns it (``None``: nothing was waiting).

        The turn stays in the chat as ``abandoned`` and adds nothing to the conversation: the next
        turn continues from the one before it.
        """
        self._refuse_if_busy("Chat.abandon")
        waiting = self.pending
        if waiting is None:
            return None
        turn = self._turns[-1]
        pause = turn._pause
        assert pause is not None
        held = getattr(self.runner, "_pending", None)
        if held is not None and held.run_id == waiting.run_id:
            self.runner.abandon_pause()  # the runner's own pause: it notes the drop on the run and lets it go
        else:
            waiting.annotate("answer", f"The question tool '{pause.tool_name}' asked (call {pause.tool_call_id}) was "
                             "dropped with chat.abandon(); this turn will not be resumed.", tag="pause_abandoned")
        turn.abandoned = True
        return pause

    # -- explaining a turn ----------------------------------------------------------------------
    async def rerun(self, k: int, without: Sequence[str] | str, **settings: Any) -> TurnRerun:
        """Turn ``k`` again without the ``without`` sources, in the conversation as recorded up to it.

        Only turn ``k`` calls the provider; ``settings`` are ``explain.rerun_without``'s (``samples=3``
        tests the removal against as many unchanged reruns). ``result.flipped`` says whether the reply changed.
        """
        turn = self.turn(k, "Chat.rerun")
        number = self._turns.index(turn)
        report = await rerun_without(turn.run, without, rerun=self, **settings)  # the turn's start: rerun_start
        return TurnRerun(number, report)

    def rerun_sync(self, k: int, without: Sequence[str] | str, **settings: Any) -> TurnRerun:
        """``rerun`` from synchronous code."""
        return run_coroutine_sync(self.rerun(k, without, **settings))

    async def localize(self, k: int, **settings: Any) -> Localization:
        """Which sources cause turn ``k``'s reply, proven by reruns of that turn alone (``localize``'s settings)."""
        turn = self.turn(k, "Chat.localize")
        return await localize(turn.run, rerun=self, **settings)

    def rerun_start(self, recording: Recording) -> tuple[Any, Any, list[tuple[str, Any]]] | None:
        """For a rerun of one of this chat's turns: ``(the message it answered, the checkpoint it continued,
        what a person answered when it asked)``.

        How ``explain.localize(chat[k], rerun=chat)`` reruns turn ``k`` in its own conversation: a
        turn that paused for a person is given the same answers when its rerun asks the same
        question tool, so a rerun is judged on its reply, not on stopping to ask. ``None`` for a
        recording that is no turn of this chat.
        """
        for turn in self._turns:
            if any(leg.run_id == recording.run_id for leg in turn.legs):
                return turn.message, turn.before, list(turn.answers)
        return None

    def without(self, exclude: Any = (), *, seed: int | None = None) -> Any:
        """The runner rebuilt without ``exclude`` (``Agent.without``): what a rerun of a turn runs."""
        return self.runner.without(exclude, seed=seed)

    def with_forced(self, force: Any, *, exclude: Any = (), seed: int | None = None) -> Any:
        """The runner rebuilt with ``force`` forced in (``Agent.with_forced``)."""
        return self.runner.with_forced(force, exclude=exclude, seed=seed)

    def born_in(self, k: int) -> dict[str, int]:
        """For each conversation piece turn ``k`` was sent, the turn it was born in (its own pieces: ``k``)."""
        turn = self.turn(k, "Chat.born_in")
        return born_in(self._turns, self._turns.index(turn))

    def context(self, k: int, call: int | str | None = None, *, left_out: bool = False) -> pd.DataFrame:
        """``chat[k].context(call)`` with a ``turn`` column: the turn each piece was born in."""
        turn = self.turn(k, "Chat.context")
        number = self._turns.index(turn)
        frame = turn.run.context(call, left_out=left_out)
        origins = born_in(self._turns, number)
        frame.insert(list(frame.columns).index("source_id") + 1, "turn",
                     [origins.get(source, number) for source in frame["source_id"]])
        return frame

    def frame(self) -> pd.DataFrame:
        """One row per turn: message and answer (as recorded), status, tokens, and what changed in its context."""
        import pandas as pd

        rows = []
        for number, turn in enumerate(self._turns):
            first = turn.legs[0].recording
            recording = turn.run.recording
            rows.append({
                "turn": number, "message": first.input.get("message"), "answer": recording.answer,
                "status": turn.status, "tokens": sum(tokens(leg.recording) for leg in turn.legs),
                "changed": changes(self._turns, number), "run_id": turn.run.run_id,
            })
        return pd.DataFrame(rows, columns=FRAME_COLUMNS).astype({"turn": "int64", "tokens": "int64"})

    # -- branching ------------------------------------------------------------------------------
    def fork(self, k: int) -> Chat:
        """A new chat holding turns ``0..k-1`` of this one, on the same runner; this chat is left as it is.

        The fork's next ``send`` is its own turn ``k``, continuing the conversation turn ``k-1`` left.
        The turns kept are the same finished runs in both chats (their recordings are read-only
        evidence; a note added to one with ``annotate`` is on that run, so both chats show it).
        """
        door = "Chat.fork"
        count = len(self._turns)
        if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k <= count:
            raise UnknownTurnError(door, describe_shape(k) if not isinstance(k, int) or isinstance(k, bool)
                                   else "a number out of range", count, fork=True)
        kept = self._turns[:k]
        if kept and kept[-1]._pause is not None and not kept[-1].abandoned:
            self._refuse_if_pending(door)
        child = Chat(self.runner, overlap=self.overlap)
        child._turns = [replace(t, legs=list(t.legs), answers=list(t.answers)) for t in kept]
        child.forked_from = (self, k)
        return child

    # -- filing a bug ---------------------------------------------------------------------------
    def bug_report(self, path: str | os.PathLike[str], *, redact: Any = None) -> Path:
        """Write a zip a maintainer can read: every turn's recording masked, its views offline, and a manifest.

        See ``footprint_lab.notebook`` (``bug_report``) for what the bundle holds; ``redact`` adds a
        policy to the runner's own.
        """
        return write_bug_report(self.turns, path, redact=redact, runner=self.runner, title="A chat's turns")

    # -- display --------------------------------------------------------------------------------
    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The chat as its turns, each opening to its answer view (rendered by the lab, ``engine._display``)."""
        return bundle("chat", self, lambda: {"text/plain": repr(self)}, include, exclude)

    def __repr__(self) -> str:
        statuses = ", ".join(turn.status for turn in self._turns) or "no turn yet"
        return f"Chat({len(self._turns)} turn(s): {statuses})"

    # -- the guards -----------------------------------------------------------------------------
    def _conversation(self) -> Checkpoint | None:
        """The checkpoint the next turn continues: the last turn that left one (``None``: a first turn)."""
        return next((turn.after for turn in reversed(self._turns) if turn.after is not None), None)

    def _refuse_if_busy(self, door: str) -> None:
        if self._active is not None:
            raise RunInFlightError(door, getattr(self.runner, "id", None), self._active or "starting", why=_BUSY)

    def _refuse_if_pending(self, door: str) -> None:
        waiting = self.pending
        if waiting is not None:
            turn = self._turns[-1]
            assert turn._pause is not None
            raise PendingQuestionError(door, turn._pause, waiting.masked(waiting.question or ""), how=_ASKED)

    def _listener(self, on_event: Listener | None) -> Listener:
        """The caller's listener (refused here when it cannot listen), and one that notes the run in flight by
        its first event."""
        if on_event is not None:
            check_listener(on_event, "Chat.send")

        def heard(event: Any) -> None:
            if not self._active:
                self._active = str(getattr(event, "run_id", "") or "")
            if on_event is not None:
                on_event(event)

        return heard

    def _slot(self, door: str) -> asyncio.Lock:
        """The queue sends wait in (``overlap="queue"``): one per event loop, made on first use."""
        loop = asyncio.get_running_loop()
        if self._queue is None or self._queue_loop is not loop:
            if self._queue is not None and self._queue.locked():  # a turn runs on another loop: it cannot be awaited
                self._refuse_if_busy(door)
            self._queue, self._queue_loop = asyncio.Lock(), loop
        return self._queue


def holds_conversations(runner: Any) -> bool:
    """Whether ``runner`` can carry a chat: its ``run`` continues a checkpoint and it can resume a pause."""
    run = getattr(runner, "run", None)
    if not callable(run) or not callable(getattr(runner, "resume", None)):
        return False
    try:
        return "continue_from" in inspect.signature(run).parameters
    except (TypeError, ValueError):
        return False
