"""``Chat(runner)``: a conversation as a list of turns, each one a run that explains like any other.

Rule kept here: a chat is the agent's own conversation model, kept on an instance of its own. Each
turn runs on an instance of the runner made for it as the runner is then (``Agent._instance``, a
shallow copy), holding the conversation the turn before it left; that instance owns the turn in
flight, the conversation it leaves and the question it waits on, exactly as an ``Agent`` does
(``checkpoint()``, ``follow_up()``), and the chat keeps the turns in order. So what a turn was sent
is exactly what the recording of the turn before it says, and two chats on one runner (a fork and
its parent, say), or a chat and the runner's own runs, never see each other's turns, and never wait
on each other's turn in flight or question pending. A long chat's turns share its messages (each
leg continues with the very messages the legs before it carried: ``conversation_legs.continued``),
and a fork holds the conversation up to its fork point, never the chat it came from.

Rule kept too: everything a chat shows (every turn's recording, ``frame()``, its view, ``repr``,
a turn's message, a checkpoint, a bug report, a rerun's start) is masked by the redaction the
chat holds *now* (:class:`~footprint_lab.core._chat_turns.Masks`): a value a later turn learned
is a secret is masked in the earlier turns' recordings too, the moment anything is shown.

The doors, each judged before anything runs:

- ``send(message)`` runs one turn. A send while one of this chat's turns is in flight is refused
  with :class:`RunInFlightError` (``overlap="refuse"``, the default) or waits for the turns before
  it (``overlap="queue"``, from any event loop or thread); a send while a turn waits on a person
  is refused with :class:`PendingQuestionError` until ``answer(reply)`` or ``abandon()``.
- ``rerun(k, without=[...])`` reruns turn ``k`` with sources removed, inside the conversation
  as recorded up to it: the turns before ``k`` are carried from the checkpoint turn ``k-1`` left,
  so the provider is called only for turn ``k``. ``localize(k)`` tests every suspect of turn ``k``
  the same way; ``explain.localize(chat[k], rerun=chat)`` works too (the chat tells a rerun
  which conversation a turn's recording continued, :meth:`Chat.rerun_start`).
- ``fork(k)`` is a new chat holding turns ``0..k-1``; its next turn is a new turn ``k``.

What a turn's context is made of, from which turn each piece came, and how the chat masks what
it shows, is in :mod:`footprint_lab.core._chat_turns`; a turn as the chat keeps it, where its rerun
starts and a turn run again, in :mod:`footprint_lab.core.chat_turn`. Refusals raised here: :class:`ChatConfigError`,
:class:`UnknownTurnError`.

Role: core layer; explains through ``footprint_lab.explain`` and displays through the display
registry (``base.display``, kind ``chat``), like ``Run``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import weakref
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Unpack, cast

from footprint_lab.base.bug_reports import write_bug_report
from footprint_lab.base.display import bundle
from footprint_lab.base.refusal import Refusal, SettingRefusal, describe_shape
from footprint_lab.core._chat_turns import Masks, born_in, changes, masked_recording, summarize, tokens
from footprint_lab.core.chat_turn import ChatTurn, TurnRerun, TurnStart, _turn_start
from footprint_lab.core.conversation import AnswerInput
from footprint_lab.core.conversation_refusals import PendingQuestionError, RunInFlightError
from footprint_lab.core.door import RunInput
from footprint_lab.core.identity import IdentityInput
from footprint_lab.core.pause import Pause
from footprint_lab.core.run import Run
from footprint_lab.core.runner import Listener, check_listener, run_coroutine_sync
from footprint_lab.explain import Trials, TrialSettings
from footprint_lab.explain.arguments import id_list
from footprint_lab.explain.trials.ablation import Localization, localize, rerun_without
from footprint_lab.explain.trials.rerun import check_removable
from footprint_lab.redact.policy import Redaction, combine_policies

if TYPE_CHECKING:
    import os
    from pathlib import Path

    import pandas as pd

    from footprint_lab.core.agent import Agent
    from footprint_lab.core.conversation_legs import Saved
    from footprint_lab.record.recording import Recording

OVERLAPS = ("refuse", "queue")
FRAME_COLUMNS = ["turn", "message", "answer", "status", "tokens", "changed", "run_id"]

_BUSY = ("A chat answers one turn at a time: each turn continues the conversation the one before it left, so a "
         "second turn sent now would answer without it. Await the turn in flight, or build the chat with "
         "Chat(runner, overlap='queue') so that a send waits for the turns before it.")
_BLOCKED = ("This chat's turn in flight runs on the event loop of the code calling now, so a synchronous call that "
            "waited for it would wait forever. Await it instead: await chat.send(message).")
_ASKED = ("Answer it with chat.answer(reply): the paused turn continues where it stopped, and no tool that already "
          "ran runs again. If the question is being dropped, say so with chat.abandon() and then send again: a "
          "question the next message could skip is a consent gate anyone can walk around.")


class ChatConfigError(SettingRefusal):
    """Raised by ``Chat(runner, overlap=...)`` when the runner cannot hold a conversation or ``overlap`` is unknown.

    Carries ``setting`` (``runner`` or ``overlap``) and ``received`` (its shape).
    """

    code = "ERR_CHAT_CONFIG"


class UnknownTurnError(Refusal, ValueError):
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


class Chat:
    """A conversation with ``runner`` (an ``Agent``), one turn per ``send``; see the module docstring."""

    def __init__(self, runner: Agent, *, overlap: str = "refuse") -> None:
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
        #: the instance the last turn ran on: its run in flight, the conversation it left, its question pending
        self._agent: Any = None
        self._masks = Masks()
        self._shown_at = (-1, -1)  # (the masks' version, how many legs) when every turn was last masked
        self._active_loop: asyncio.AbstractEventLoop | None = None  # the event loop of this chat's run in flight
        self._line: concurrent.futures.Future[None] | None = None  # the last send waiting or running (queue)
        self._parent: tuple[weakref.ref[Chat], int] | None = None

    @property
    def forked_from(self) -> tuple[Chat | None, int] | None:
        """The chat this one was forked from (``None`` once nothing else holds it: a fork never keeps its parent
        alive) and the number of turns it kept; ``None`` for a chat that is no fork."""
        return None if self._parent is None else (self._parent[0](), self._parent[1])

    # -- the turns ------------------------------------------------------------------------------
    @property
    def turns(self) -> list[Run]:
        """Every turn's run, in order (a fresh list: changing it changes nothing the chat holds)."""
        return [turn.run for turn in self._now()]

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
        return self._now()[k]

    @property
    def pending(self) -> Run | None:
        """The turn waiting on a person's answer (its instance holds the question), or ``None``."""
        return self._turns[-1].run if self._asked() is not None else None

    def _asked(self) -> Pause | None:
        """The question this chat's instance waits on, or ``None``."""
        return self._agent._pending if self._agent is not None else None

    # -- sending --------------------------------------------------------------------------------
    async def send(self, message: RunInput, /, *, on_event: Listener | None = None,
                   identity: IdentityInput = None) -> Run:
        """Run one turn, continuing the conversation so far; returns its ``Run`` (paused, when a tool asked)."""
        door = "Chat.send"
        async with self._slot(door):
            return await self._send(door, message, on_event, identity)

    async def _send(self, door: str, message: Any, on_event: Listener | None, identity: Any) -> Run:
        self._refuse_if_pending(door)
        before = self._conversation()
        turn = ChatTurn(message, [], before, self._masks,
                        start=len(before.history) if before is not None and before.history is not None else 0)
        agent = self._agent = self.runner._instance(before)  # before any await: a send now sees it in flight
        return await self._leg(turn, lambda listener: agent._say(
            door, message, identity=identity, learned=dict(self._masks.learned), on_event=listener), on_event)

    async def answer(self, reply: AnswerInput, /, *, on_event: Listener | None = None) -> Run:
        """Answer the question the last turn waits on; the turn goes on where it paused and returns its run."""
        door = "Chat.answer"
        async with self._slot(door):
            return await self._answer(door, reply, on_event)

    async def _answer(self, door: str, reply: Any, on_event: Listener | None) -> Run:
        waiting = self.pending
        if waiting is None:
            from footprint_lab.core.checkpoint import InvalidCheckpointError

            raise InvalidCheckpointError(door, "pause", "a chat with no question pending",
                                         "is null: no turn of this chat is waiting on a question",
                                         "Send the next message with chat.send(message).")
        turn, agent, asked = self._turns[-1], self._agent, self._asked()
        assert asked is not None
        run = await self._leg(turn, lambda listener: agent._say(
            door, reply, answer=True, learned=dict(self._masks.learned), on_event=listener), on_event)
        turn.answers.append((asked.tool_name, reply))
        return run

    async def _leg(self, turn: ChatTurn, start: Any, on_event: Listener | None) -> Run:
        """Run one leg of ``turn`` (a send or an answer) and keep what it leaves; the only place turns change."""
        if on_event is not None:
            check_listener(on_event, "Chat.send")
        self._active_loop = asyncio.get_running_loop()
        try:
            run = await start(on_event)
        except Refusal:
            raise  # nothing ran: the chat is as it was
        except BaseException as ended:
            failed = getattr(ended, "_footprint_run", None)
            if isinstance(failed, Run):
                self._keep(turn, failed)
            raise
        finally:
            self._active_loop = None
        self._keep(turn, run)
        return cast("Run", run)

    def _keep(self, turn: ChatTurn, run: Run) -> None:
        self.runner.last_run = run  # the runner's last run is its chats' too (``%fp``, a Lab read it)
        if not turn.legs:
            self._turns.append(turn)
        turn.legs.append(run)
        turn.summary = summarize(run.recording)
        saved = run._conversation
        left = turn._left
        turn.end = len(left.history) if left is not None and left.history is not None else None
        known = saved.scrubber.known() if saved is not None and saved.scrubber is not None else {}
        self._masks.note(run.policy, known)

    def send_sync(self, message: RunInput, /, *, on_event: Listener | None = None,
                  identity: IdentityInput = None) -> Run:
        """``send`` from synchronous code, inside a running event loop or not (see ``Agent.run_sync``)."""
        self._refuse_if_blocked("Chat.send_sync")
        return run_coroutine_sync(self.send(message, on_event=on_event, identity=identity))

    def answer_sync(self, reply: AnswerInput, /, *, on_event: Listener | None = None) -> Run:
        """``answer`` from synchronous code."""
        self._refuse_if_blocked("Chat.answer_sync")
        return run_coroutine_sync(self.answer(reply, on_event=on_event))

    def abandon(self) -> Pause | None:
        """Drop the question the last turn waits on, on the record; returns it (``None``: nothing was waiting).

        The turn stays in the chat as ``abandoned`` and adds nothing to the conversation: the next
        turn continues from the one before it.
        """
        self._refuse_if_busy("Chat.abandon")
        pause = self._asked()
        if pause is None:
            return None
        turn = self._turns[-1]
        turn.run.annotate("answer", f"The question tool '{pause.tool_name}' asked (call {pause.tool_call_id}) was "
                         "dropped with chat.abandon(); this turn will not be resumed.", tag="pause_abandoned")
        turn.abandoned = True
        self._agent._hold("abandoned", None, None)  # the instance holds no question, nor conversation, now
        return pause

    # -- explaining a turn ----------------------------------------------------------------------
    async def rerun(self, k: int, without: Sequence[str] | str, *, trials: Trials | None = None,
                    **settings: Unpack[TrialSettings]) -> TurnRerun:
        """Turn ``k`` again without the ``without`` sources, in the conversation as recorded up to it.

        Only turn ``k`` calls the provider; ``settings`` are ``explain.rerun_without``'s (``samples=3``
        tests the removal against as many unchanged reruns). ``result.flipped`` says whether the reply changed.
        """
        turn = self.turn(k, "Chat.rerun")
        number = self._turns.index(turn)
        # the turn's start: rerun_start
        names = id_list("Chat.rerun", "without", without)  # refused naming this method and its own keyword
        check_removable("Chat.rerun", turn.run.recording, names)
        report = await rerun_without(turn.run, names, rerun=self, trials=trials, **settings)
        return TurnRerun(number, report)

    def rerun_sync(self, k: int, without: Sequence[str] | str, *, trials: Trials | None = None,
                   **settings: Unpack[TrialSettings]) -> TurnRerun:
        """``rerun`` from synchronous code."""
        return run_coroutine_sync(self.rerun(k, without, trials=trials, **settings))

    async def localize(self, k: int, *, trials: Trials | None = None, **settings: Unpack[TrialSettings]
                       ) -> Localization:
        """Which sources cause turn ``k``'s reply, proven by reruns of that turn alone (the trial settings as for
        ``localize``: ``trials=`` or keywords)."""
        turn = self.turn(k, "Chat.localize")
        return await localize(turn.run, rerun=self, trials=trials, **settings)

    def rerun_start(self, recording: Recording) -> TurnStart | None:
        """For a rerun of one of this chat's turns: ``(the message it answered, the checkpoint it continued,
        what a person answered when it asked)``.

        How ``explain.localize(chat[k], rerun=chat)`` reruns turn ``k`` in its own conversation: a
        turn that paused for a person is given the same answers when its rerun asks the same
        question tool, so a rerun is judged on its reply, not on stopping to ask. The items are what
        the rerun sends again; shown, the start is masked as the chat masks now. ``None`` for a
        recording that is no turn of this chat.
        """
        for turn in self._now():
            if any(leg.run_id == recording.run_id for leg in turn.legs):
                return _turn_start(turn)
        return None

    def without(self, exclude: Iterable[str] | str = (), *, seed: int | None = None) -> Agent:
        """The runner rebuilt without ``exclude`` (``Agent.without``): what a rerun of a turn runs."""
        return self.runner.without(exclude, seed=seed)

    def with_forced(self, force: Iterable[str] | str, *, exclude: Iterable[str] | str = (),
                    seed: int | None = None) -> Agent:
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
        for number, turn in enumerate(self._now()):
            rows.append({
                "turn": number, "message": turn.legs[0].recording.input.get("message"),
                "answer": turn.run.recording.answer, "status": turn.status,
                "tokens": sum(tokens(leg.recording) for leg in turn.legs),
                "changed": changes(self._turns, number), "run_id": turn.run.run_id,
            })
        return pd.DataFrame(rows, columns=FRAME_COLUMNS).astype({"turn": "int64", "tokens": "int64"})

    # -- branching ------------------------------------------------------------------------------
    def fork(self, k: int) -> Chat:
        """A new chat holding turns ``0..k-1`` of this one, on the same runner; this chat is left as it is.

        The fork's next ``send`` is its own turn ``k``, continuing the conversation turn ``k-1`` left.
        The turns kept are the same finished runs in both chats (their recordings are read-only
        evidence; a note added to one with ``annotate`` is on that run, so both chats show it). The
        fork holds those turns and the conversation up to them, never this chat: it runs, pauses
        and is collected on its own, and both mask what either learned is a secret.
        """
        door = "Chat.fork"
        count = len(self._turns)
        if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k <= count:
            raise UnknownTurnError(door, describe_shape(k) if not isinstance(k, int) or isinstance(k, bool)
                                   else "a number out of range", count, fork=True)
        kept = self._turns[:k]
        if k == count:  # a fork keeping the turn that waits on a person would hold a question it cannot answer
            self._refuse_if_pending(door)
        child = Chat(self.runner, overlap=self.overlap)
        child._masks = self._masks
        child._turns = [replace(t, legs=list(t.legs), answers=list(t.answers)) for t in kept]
        child._parent = (weakref.ref(self), k)
        return child

    # -- filing a bug ---------------------------------------------------------------------------
    def bug_report(self, path: str | os.PathLike[str], *, redact: Redaction | None = None) -> Path:
        """Write a zip a maintainer can read: every turn's recording masked, its views offline, and a manifest.

        See ``footprint_lab.notebook`` (``bug_report``) for what the bundle holds; ``redact`` adds a
        policy to the chat's own (its runner's, its turns', and every value they learned).
        """
        turns = self.turns
        if redact is None or isinstance(redact, Redaction):  # anything else is refused by the writer, by name
            redact = combine_policies(self._masks.policy, redact)
        return cast("Path", write_bug_report(turns, path, redact=redact, runner=self.runner, title="A chat's turns"))

    # -- display --------------------------------------------------------------------------------
    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The chat as its turns, each opening to its answer view (rendered by the lab, ``base.display``)."""
        return bundle("chat", self, lambda: {"text/plain": repr(self)}, include, exclude)

    def __repr__(self) -> str:
        statuses = ", ".join(turn.status for turn in self._turns) or "no turn yet"
        return f"Chat({len(self._turns)} turn(s): {statuses})"

    # -- the guards -----------------------------------------------------------------------------
    def _now(self) -> list[ChatTurn]:
        """The turns, each leg's recording masked by what the chat masks now (a value learned since included)."""
        masks = self._masks
        masks.note(getattr(self.runner, "redact", None))  # a policy the runner was given since
        legs = sum(len(turn.legs) for turn in self._turns)
        if self._shown_at == (masks.version, legs):
            return self._turns
        for turn in self._turns:
            if turn._swept == masks.version:
                continue
            for leg in turn.legs:
                again = None if masks.covered(leg) else masked_recording(leg.recording, masks)
                if again is not None:  # the run's evidence, as the chat's policy masks it now
                    leg._recording, leg._shown_answer = again, again.answer
            turn._swept = masks.version
        self._shown_at = (masks.version, legs)
        return self._turns

    def _conversation(self) -> Saved | None:
        """The conversation the next turn continues: the last turn that left one (``None``: a first turn)."""
        return next((left for turn in reversed(self._turns) if (left := turn._left) is not None), None)

    def _refuse_if_busy(self, door: str, why: str = _BUSY) -> None:
        active = self._agent._active_run_id if self._agent is not None else None
        if active is not None:
            raise RunInFlightError(door, getattr(self.runner, "id", None), active, why=why)

    def _refuse_if_blocked(self, door: str) -> None:
        """A synchronous send from the loop this chat's turn runs on would wait on itself: refused instead."""
        with contextlib.suppress(RuntimeError):
            if self._active_loop is asyncio.get_running_loop():
                self._refuse_if_busy(door, _BLOCKED)

    def _refuse_if_pending(self, door: str) -> None:
        asked = self._asked()
        if asked is not None:
            waiting = self._turns[-1].run
            raise PendingQuestionError(door, asked, self._masks.shown(waiting.masked(waiting.question or "")),
                                       how=_ASKED)

    @contextlib.asynccontextmanager
    async def _slot(self, door: str) -> AsyncIterator[None]:
        """Where a send or an answer waits its turn: refused while one runs (``overlap="refuse"``), or in line
        behind the ones before it (``overlap="queue"``), whichever event loop or thread each runs on."""
        if self.overlap == "refuse":
            self._refuse_if_busy(door)
            yield
            return
        ahead, mine = self._line, concurrent.futures.Future[None]()
        self._line = mine
        try:
            if ahead is not None and not ahead.done():
                await asyncio.shield(asyncio.wrap_future(ahead))  # shielded: a send cancelled here leaves the line
            yield
        finally:
            if ahead is None or ahead.done():
                mine.set_result(None)
            else:  # cancelled while waiting: the one behind still waits for the one ahead
                ahead.add_done_callback(lambda _: mine.set_result(None))


def holds_conversations(runner: Any) -> bool:
    """Whether ``runner`` can carry a chat: an agent's conversation doors (``_instance``, ``_say``), a ``run`` that
    continues a checkpoint, ``resume``."""
    run = getattr(runner, "run", None)
    if not callable(run) or not all(callable(getattr(runner, name, None)) for name in ("resume", "_instance", "_say")):
        return False
    try:
        return "continue_from" in inspect.signature(run).parameters
    except (TypeError, ValueError):
        return False
