"""Conversations on a runner, and the refusals that guard the state they live in.

An ``Agent`` keeps its last run's conversation (and pause) on the instance: that is what
makes ``checkpoint()``, ``follow_up()``, ``resume()`` and ``abandon_pause()`` possible. That
state has exactly one owner at a time, so the doors here refuse, before anything runs and
leaving the state as it was:

- a second turn while one is in flight (:class:`RunInFlightError`): both would return a
  plausible answer, and the instance would keep whichever finished last;
- a new message while a person still owes the agent an answer (:class:`PendingQuestionError`):
  a consent gate that the next message could walk around is no gate;
- a follow-up with nothing to follow (:class:`NoConversationError`), which would otherwise
  quietly become a first turn;
- a resumed run that would carry two identities (:class:`ResumeIdentityConflictError`), or
  could not keep its records covered the way the paused one did (:class:`ResumeRedactionError`).

``run()`` is one turn and always starts a new conversation unless it is named:
``follow_up()`` continues this instance's last finished run, ``run(..., continue_from=cp)``
continues a stored one, ``resume()`` answers a paused one, ``resume_on_error()`` picks a
failed one up at its last completed tool round.

Role: the conversation doors of ``Agent`` (mixed in) and the state they guard; the refusals are in
:mod:`footprint_lab.core.conversation_refusals`. Every door
checks here, then runs its leg through the agent's ``_drive`` (``core.agent``), which is
the only place that state changes (through ``_hold``).
"""

from __future__ import annotations

import contextlib
import copy
from typing import TYPE_CHECKING, Any, Self, TypeAlias

from footprint_lab.base.refusal import describe_shape
from footprint_lab.core.checkpoint_masks import shown_label
from footprint_lab.core.conversation_legs import Continuation, Saved, continued
from footprint_lab.core.conversation_refusals import (
    NoConversationError,
    PendingQuestionError,
    ResumeIdentityConflictError,
    ResumeRedactionError,
    RunInFlightError,
)
from footprint_lab.core.door import InvalidRunInputError, RunInput, normalize_run_input
from footprint_lab.core.identity import Identity, IdentityInput, coerce_identity
from footprint_lab.core.pause import Pause
from footprint_lab.core.runner import Listener, new_run_id, run_coroutine_sync
from footprint_lab.redact.policy import (
    PolicyDataError,
    Redaction,
    RedactionConfigError,
    combine_policies,
    policy_from_data,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from footprint_lab.core.checkpoint import Checkpoint
    from footprint_lab.core.member_run import ParentRun
    from footprint_lab.core.run import Run


#: what ``resume`` takes: a ``Checkpoint``, its dict, or its JSON text
CheckpointInput: TypeAlias = "Checkpoint | Mapping[str, Any] | str"
#: what a person answers a paused run with: text, or JSON data (written as text)
AnswerInput = str | bool | int | float | list[Any] | dict[str, Any]


class Conversation:
    """The conversation doors of a runner: ``checkpoint``, ``follow_up``, ``resume``, ``resume_on_error``,
    ``abandon_pause``. Mixed into ``Agent``; the state below has one owner at a time."""

    # What the instance holds, as class defaults until its first run.
    _outcome: str | None = None  # finished | paused | failed | cancelled | input-refused | abandoned
    _saved: Saved | None = None
    _pending: Pause | None = None
    _active_run_id: str | None = None
    redact: Redaction | None = None
    id: str | None

    if TYPE_CHECKING:
        last_run: Run | None  # the runner's (core.runner.Runner.last_run)

        def _listeners_for(self, on_event: Listener | None) -> tuple[Listener, ...]: ...

        async def _drive(
            self, bag: dict[str, Any], *, door: str, start: Continuation | None, identity: Identity | None,
            on_event: Listener | None,
        ) -> Run: ...

    def _door(self, name: str) -> str:
        return f"{type(self).__name__}.{name}"

    # -- the doors --------------------------------------------------------------------------
    def checkpoint(self) -> Checkpoint | None:
        """The conversation this agent holds, as a ``Checkpoint``; ``None`` when it holds none.

        It holds none before its first run, after a run that failed or was cancelled before completing a tool
        round, after its input guard refused a message, and after ``abandon_pause()``.
        """
        if self._saved is None:
            return None
        from footprint_lab.core.checkpoint import checkpoint_from

        return checkpoint_from(self._saved)

    async def follow_up(self, message: RunInput, /, *, on_event: Listener | None = None,
                        identity: IdentityInput = None) -> Run:
        """Continue this agent's last finished run with another message: ``await agent.follow_up("And then?")``.

        After a cancelled run it goes on from that run's last completed tool round.
        """
        door = self._door("follow_up")
        bag = normalize_run_input(message, door, identity=identity)
        named = coerce_identity(bag.pop("identity", None), door)
        self._refuse_if_busy(door)
        self._refuse_if_pending(door)
        saved = self._saved
        # A cancelled run's caller chose to stop it; the conversation goes on from its last completed round.
        if self._outcome not in ("finished", "cancelled") or saved is None or saved.history is None:
            reasons = {None: "never-run", "input-refused": "last-input-refused"}
            raise NoConversationError(door, reasons.get(self._outcome, "last-run-unfinished"))
        named = _one_identity(saved.identity, named, door)
        return await self._drive(bag, door=door, start=self._carry(saved, "follow_up"), identity=named,
                                 on_event=on_event)

    async def resume(
        self, checkpoint: CheckpointInput, answer: AnswerInput, /, *, identity: IdentityInput = None,
        redact: Redaction | None = None, on_event: Listener | None = None,
    ) -> Run:
        """Answer a paused run: ``await agent.resume(run.checkpoint, "yes")``.

        The answer becomes the result of the tool call that asked; the tool calls after it in
        that batch run now, and no earlier tool runs again. ``identity`` may be left out (the
        paused run's own is used); ``redact`` names patterns a stored checkpoint's policy refers to.
        """
        door = self._door("resume")
        named = coerce_identity(identity, door)
        self._refuse_if_busy(door)
        text = answer_text(answer, door)
        start, named = self._continuation(checkpoint, named, door, "resume", redact)
        pause = start.pause
        if pause is None:
            from footprint_lab.core.checkpoint import InvalidCheckpointError

            raise InvalidCheckpointError(
                door, "pause", "null", "is null: this conversation is not waiting on a question",
                "Continue a finished conversation with run(message, continue_from=checkpoint), and a failed "
                "one with resume_on_error(checkpoint).",
            )
        pending = self._pending
        if pending is not None and (pending.run_id, pending.tool_call_id) != (pause.run_id, pause.tool_call_id):
            raise PendingQuestionError(door, pending, self._quote(pending.question))
        start.answer = text
        return await self._drive({"answer": text}, door=door, start=start, identity=named, on_event=on_event)

    async def resume_on_error(
        self, checkpoint: CheckpointInput, /, *, identity: IdentityInput = None, redact: Redaction | None = None,
        on_event: Listener | None = None,
    ) -> Run:
        """Pick a failed run up at its last completed tool round: ``await agent.resume_on_error(err.checkpoint)``.

        The model is called next, with the conversation as it stood; no finished tool runs again.
        """
        door = self._door("resume_on_error")
        named = coerce_identity(identity, door)
        self._refuse_if_busy(door)
        self._refuse_if_pending(door)
        start, named = self._continuation(checkpoint, named, door, "resume_on_error", redact)
        if start.pause is not None:
            raise PendingQuestionError(door, start.pause, None)
        if start.history[-1]["role"] == "assistant":
            from footprint_lab.core.checkpoint import InvalidCheckpointError

            raise InvalidCheckpointError(
                door, "history", "a history that ends with the model's answer",
                "ends with a finished turn, so there is no failed run to pick up",
                "Continue a finished conversation with run(message, continue_from=checkpoint).",
            )
        return await self._drive({}, door=door, start=start, identity=named, on_event=on_event)

    # -- the conversation a chat keeps on an instance of its own (core.chat) ---------------------
    def _instance(self, holding: Saved | None = None) -> Self:
        """A new instance of this runner as it is declared now (its provider, tools, context, policy and
        listeners, shared), holding ``holding`` as its conversation and nothing else: no run in flight, no
        question pending, no last run. The one helper that makes the extra instances a chat runs its turns
        on; cheap (a shallow copy), so each turn gets one made from its runner as the runner is then."""
        made = copy.copy(self)
        made._active_run_id = None
        made.last_run = None
        made._hold("finished" if holding is not None else None, holding, None)
        return made

    async def _say(
        self, door: str, said: Any, *, answer: bool = False, identity: Any = None,
        learned: dict[str, str] | None = None, on_event: Listener | None = None,
    ) -> Run:
        """One leg of the conversation this instance holds, for the chat that keeps it (``core.chat.Chat``): a new
        message (``said``) that continues it, or with ``answer`` the person's answer to the question it waits on.

        Checked like ``follow_up`` and ``resume``, with the chat's ``door`` named in what is refused; the
        chat refuses a turn in flight and a pending question itself, in its own words, from what this
        instance holds. ``learned`` adds values the chat knows to mask (what a chat it was forked from
        learned, say).
        """
        saved = self._saved
        if answer:
            assert saved is not None and saved.pause is not None
            text = answer_text(said, door)
            named = coerce_identity(identity, door)
            bag: dict[str, Any] = {"answer": text}
        else:
            bag = normalize_run_input(said, door, identity=identity)
            named = coerce_identity(bag.pop("identity", None), door)
        start = None
        if saved is not None:
            named = _one_identity(saved.identity, named, door)
            start = self._carry(saved, "resume" if answer else "continue_from")
            start.learned = {**(learned or {}), **(start.learned or {})}
            if answer:
                start.pause, start.answer = saved.pause, text
        return await self._drive(bag, door=door, start=start, identity=named, on_event=on_event)

    def _carry(self, saved: Saved, how: str) -> Continuation:
        """How a leg goes on from a conversation this process holds: its messages (the ones its legs before
        shared, as they are: ``conversation_legs.continued``), its policy with this agent's, its marks, what it
        learned to mask, and its messages' recorded forms (shared where the messages are)."""
        assert saved.history is not None
        return Continuation(how, continued(saved), saved.run_id,
                            saved.first_run_id, policy=combine_policies(saved.policy, self.redact), marks=saved.marks,
                            learned=saved.scrubber.known() if saved.scrubber is not None else None,
                            carried=saved.carried)

    # -- the same doors for synchronous code (scripts), like run_sync ----------------------------
    def follow_up_sync(self, message: RunInput, /, *, on_event: Listener | None = None,
                       identity: IdentityInput = None) -> Run:
        """``follow_up`` from synchronous code, inside a running event loop or not (see ``run_sync``)."""
        return run_coroutine_sync(self.follow_up(message, on_event=on_event, identity=identity))

    def resume_sync(self, checkpoint: CheckpointInput, answer: AnswerInput, /, *, identity: IdentityInput = None,
                    redact: Redaction | None = None, on_event: Listener | None = None) -> Run:
        """``resume`` from synchronous code, inside a running event loop or not (see ``run_sync``)."""
        return run_coroutine_sync(self.resume(checkpoint, answer, identity=identity, redact=redact, on_event=on_event))

    def resume_on_error_sync(self, checkpoint: CheckpointInput, /, *, identity: IdentityInput = None,
                             redact: Redaction | None = None, on_event: Listener | None = None) -> Run:
        """``resume_on_error`` from synchronous code, inside a running event loop or not (see ``run_sync``)."""
        return run_coroutine_sync(self.resume_on_error(checkpoint, identity=identity, redact=redact,
                                                       on_event=on_event))

    def abandon_pause(self) -> Pause | None:
        """Drop the question this agent's last run is waiting on, on the record; returns it (or ``None``).

        The paused run's recording gets an annotation saying the question was dropped, and the
        agent holds no conversation afterwards: its next turn is a new ``run()``.
        """
        self._refuse_if_busy(self._door("abandon_pause"))
        pending = self._pending
        if pending is None:
            return None
        run = self.last_run
        if run is not None and run.run_id == pending.run_id:
            run.annotate("answer", f"The question tool '{pending.tool_name}' asked (call {pending.tool_call_id}) "
                         "was dropped with abandon_pause(); this run will not be resumed.", tag="pause_abandoned")
        self._hold("abandoned", None, None)
        return pending

    # -- shared checks ----------------------------------------------------------------------
    def _refuse_if_busy(self, door: str) -> None:
        if self._active_run_id is not None:
            raise RunInFlightError(door, shown_label(self.id, self.redact), self._active_run_id)  # masked as recorded

    def _refuse_if_pending(self, door: str) -> None:
        pending = self._pending
        if pending is not None:
            raise PendingQuestionError(door, pending, self._quote(pending.question))

    def _quote(self, question: str) -> str:
        """This agent's own question as an error may show it: masked by the policy it was recorded under,
        values its run learned under covered keys included."""
        saved = self._saved
        policy = combine_policies(saved.policy if saved is not None else None, self.redact)
        if policy is None:
            return question
        scrubber = policy.for_run()
        if saved is not None and saved.scrubber is not None:
            scrubber.teach(saved.scrubber.known())
        return str(scrubber.scrub(question))

    def _start_turn(self, door: str, carried: Any, named: Identity | None) -> tuple[Continuation | None, Any]:
        """Checks for a new message (``run``): nothing in flight, no pending question, a sound checkpoint."""
        self._refuse_if_busy(door)
        self._refuse_if_pending(door)
        if carried is None:
            return None, named
        start, named = self._continuation(carried, named, door, "continue_from", None)
        if start.pause is not None:
            raise PendingQuestionError(door, start.pause, None)
        return start, named

    def _continuation(
        self, value: Any, named: Identity | None, door: str, how: str, redact: Any,
    ) -> tuple[Continuation, Identity | None]:
        """Read a checkpoint for ``door``: refused by name, or how the leg starts and whom it runs for."""
        from footprint_lab.core.checkpoint import ConversationMismatchError, read_checkpoint, refuse_masked
        from footprint_lab.core.checkpoint_masks import Concealed

        if redact is not None and not isinstance(redact, Redaction):
            raise RedactionConfigError("redact", describe_shape(redact), "must be a Redaction(keys=..., patterns=...)")
        data, trusted = read_checkpoint(value, door)
        written_by = data["agent_id"]
        if self.id is not None and written_by is not None and written_by not in self._ids_shown(data, redact):
            raise ConversationMismatchError(door, shown_label(self.id, combine_policies(redact, self.redact)),
                                            written_by)
        carried_identity = Identity(**data["identity"]) if data["identity"] is not None else None
        named = _one_identity(carried_identity, named, door)
        policy = self._carried_policy(data, door, redact)
        if not trusted:
            refuse_masked(data, door)
        pause = Pause(run_id=data["run_id"], **data["pause"]) if data["pause"] is not None else None
        start = Continuation(how, data["history"], data["run_id"], data["first_run_id"], policy=policy,
                             marks=data["redaction_marks"], pause=pause,
                             learned=value.learned() if isinstance(value, Concealed) else None)
        return start, named

    def _ids_shown(self, data: dict[str, Any], redact: Redaction | None) -> set[str | None]:
        """This agent's id as a checkpoint may hold it: as given, or masked by a policy the checkpoint's run may
        have been covered by (its own, carried, when this side can rebuild it; this side's)."""
        policies = [combine_policies(redact, self.redact)]
        if data["redaction"] is not None:
            with contextlib.suppress(PolicyDataError):  # refused by name when the leg is set up
                policies.append(policy_from_data(data["redaction"], redact, self.redact))
        return {self.id, *(shown_label(self.id, policy) for policy in policies)}

    def _carried_policy(self, data: dict[str, Any], door: str, redact: Redaction | None) -> Redaction | None:
        """The policy the continued leg runs under: the carried one (rebuilt by name) with this side's."""
        marks = data["redaction_marks"]
        raw = data["redaction"]
        if raw is None:
            if marks["keys"] or marks["patterns"] or marks["matched"]:
                raise ResumeRedactionError(door, "missing")
            return combine_policies(redact, self.redact)
        try:
            carried = policy_from_data(raw, redact, self.redact)
        except PolicyDataError as problem:
            raise ResumeRedactionError(door, problem.reason) from None
        if not set(marks["keys"]) <= set(carried.keys) or not set(marks["patterns"]) <= set(carried.patterns):
            raise ResumeRedactionError(door, "missing")
        return combine_policies(carried, redact, self.redact)

    # -- a member resumed by its composition ------------------------------------------------
    def _member_resume(self, resume: tuple[Any, Any], serves: ParentRun, redact: Redaction | None) -> Continuation:
        """How a member that paused inside a composition goes on: its checkpoint and the person's answer.

        Read like any resume (the checkpoint checked field by field), but nothing on the
        instance is read or held: the run it serves decides whom it runs for.
        """
        door = f"{type(self).__name__}.resume"
        checkpoint, answer = resume
        start = self._member_continuation(checkpoint, serves.identity, door, redact)
        start.answer = answer_text(answer, door)
        return start

    def _member_continuation(
        self, checkpoint: Any, owner: Identity | None, door: str, redact: Redaction | None, *, failed: bool = False,
    ) -> Continuation:
        """A member's checkpoint read for a resume (``failed``: a resume_on_error) of the run serving ``owner``."""
        start, whose = self._continuation(checkpoint, owner, door, "resume_on_error" if failed else "resume", redact)
        if whose != owner:
            raise ResumeIdentityConflictError(door)
        if failed and start.pause is not None:
            from footprint_lab.core.checkpoint import InvalidCheckpointError

            raise InvalidCheckpointError(door, "pause", "a pause", "is set: this member is waiting on a question, "
                                         "not failed")
        if not failed and start.pause is None:
            from footprint_lab.core.checkpoint import InvalidCheckpointError

            raise InvalidCheckpointError(door, "pause", "null", "is null: this member is not waiting on a question")
        return start

    def _member_retry(self, checkpoint: Any, serves: ParentRun, redact: Redaction | None) -> Continuation:
        """How a member that failed inside a composition goes on: from its last completed tool round."""
        return self._member_continuation(checkpoint, serves.identity, f"{type(self).__name__}.resume_on_error",
                                         redact, failed=True)

    def _waiting_checkpoint(
        self, checkpoint: Any, door: str, *, run_id: str, owner: Any, redact: Any, failed: bool = False,
    ) -> tuple[Any, list[Any]]:
        from footprint_lab.core.checkpoint import Checkpoint, InvalidCheckpointError, plain_checkpoint

        start = self._member_continuation(checkpoint, owner, door, redact, failed=failed)
        if start.from_run != run_id:
            raise InvalidCheckpointError(door, "run_id", "another run's id",
                                         "must be the id of the run the composition's checkpoint belongs to")
        if isinstance(checkpoint, Checkpoint):  # kept as it is: its private values resume the member
            return checkpoint, [start]
        return Checkpoint.model_validate(plain_checkpoint(checkpoint, door)), [start]

    def _failed_checkpoint(
        self, checkpoint: Any, door: str, *, run_id: str, owner: Any, redact: Any,
    ) -> tuple[Any, list[Any]]:
        return self._waiting_checkpoint(checkpoint, door, run_id=run_id, owner=owner, redact=redact, failed=True)


    # -- what the instance holds --------------------------------------------------------------
    def _claim(self, door: str) -> str:
        """Check-and-set the in-flight guard, with no ``await`` in between."""
        self._refuse_if_busy(door)
        run_id = new_run_id()
        self._active_run_id = run_id
        return run_id

    def _hold(self, outcome: str | None, saved: Saved | None, pending: Pause | None) -> None:
        self._outcome = outcome
        self._saved = saved
        self._pending = pending


def _one_identity(carried: Identity | None, named: Identity | None, door: str) -> Identity | None:
    """A continued run's identity: its conversation's; naming another (or one for an ownerless one) is refused."""
    if named is None:
        return carried
    if carried is None or carried != named:
        raise ResumeIdentityConflictError(door)
    return carried


def answer_text(answer: Any, door: str) -> str:
    """A person's answer as the paused tool call's result: a string, or JSON data written as text."""
    from footprint_lab.core.turn import result_text

    if isinstance(answer, str):
        return answer
    if answer is None or not isinstance(answer, bool | int | float | list | dict):
        raise InvalidRunInputError(
            door, describe_shape(answer),
            "the answer must be a string (or JSON data: a number, list or dict), and becomes the result of the "
            "tool call that asked; resume(run.checkpoint, 'yes')",
        )
    return result_text(answer)

