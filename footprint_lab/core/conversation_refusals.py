"""The refusals that guard a conversation's state on a runner (``core.conversation``), raised before anything runs.

- :class:`RunInFlightError`: a second turn while one is in flight;
- :class:`PendingQuestionError`: a new message while a person still owes the agent an answer;
- :class:`NoConversationError`: a follow-up with nothing to follow;
- :class:`ResumeIdentityConflictError`: a resumed run that would carry two identities;
- :class:`ResumeRedactionError`: a resumed run that could not keep its records covered the way the paused one did.

Each says what arrived without quoting it and names the fix. Role: core layer; every one is in
``footprint_lab.errors`` too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from footprint_lab.base.refusal import Refusal

if TYPE_CHECKING:
    from footprint_lab.core.pause import Pause


class RunInFlightError(Refusal):
    """Raised by ``run()`` / ``follow_up()`` / ``resume()`` on a runner whose previous turn has not returned.

    Carries ``agent_id`` (the runner's configured id, or ``None``) and ``active_run_id``
    (the run in flight, to join a log line to its recording).
    """

    code = "ERR_RUN_IN_FLIGHT"
    fields = ("agent_id", "active_run_id")

    def __init__(self, door: str, agent_id: str | None, active_run_id: str, *, why: str | None = None) -> None:
        super().__init__(
            f"{door}: this agent is already running (run '{active_run_id}'). " + (why or (
                "One instance answers one turn at a time: its last answer, conversation and pause live on "
                "the instance, so two overlapping turns would each overwrite the other's and checkpoint() would "
                "hand back whichever finished last. Await the turn in flight first, build a second Agent for a "
                "concurrent turn (instances are cheap), or put turns in an asyncio.Queue and serve them one "
                "after another."))
        )
        self.agent_id = agent_id
        self.active_run_id = active_run_id


class PendingQuestionError(Refusal):
    """Raised when a new message (or a failed run's resume) arrives while a question to a person is unanswered.

    The pause is unfinished work with a person on the other end, not a stale flag. Carries
    ``tool_name`` and ``tool_call_id`` (the tool call that asked, to join it to the record).
    The message quotes the question when it is this agent's own pending one (its tool wrote
    it; a redaction policy in force masks it like any record), never one read from a stored
    checkpoint.
    """

    code = "ERR_PENDING_QUESTION"
    fields = ("tool_name", "tool_call_id")

    def __init__(self, door: str, pause: Pause, question: str | None, *, how: str | None = None) -> None:
        if question is None:  # a stored checkpoint's pause came back from outside: described, never repeated
            waiting = ("this checkpoint's run paused to ask a person something and is still waiting; its pause "
                       "names the tool call that asked (see .tool_name and .tool_call_id)")
            drop = "If the question is being dropped, start a new conversation with run(message) instead."
        else:
            waiting = (f"this agent's last run paused to ask a person something and is still waiting. Tool "
                       f"'{pause.tool_name}' (call {pause.tool_call_id}) asked: \"{question}\", and nothing has "
                       "answered it")
            drop = ("If the question really is being dropped, say so with agent.abandon_pause() and then run() "
                    "again: a question a later message could silently skip is a consent gate anyone can walk around.")
        super().__init__(f"{door}: {waiting}. " + (how or (
            "Answer it with agent.resume(checkpoint, answer): the paused run continues where it stopped, and no "
            f"tool that already ran runs again. {drop}")))
        self.tool_name = pause.tool_name
        self.tool_call_id = pause.tool_call_id


class ResumeIdentityConflictError(Refusal):
    """Raised when a continued run would carry two identities.

    A resumed run (or a follow-up, or a stored conversation continued) keeps the identity
    its conversation was started with: its memory namespace, its ``ctx.identity``, the
    principal on its events. Naming someone else, or anyone at all for a conversation that
    was ownerless, is refused. Neither identity is named in the message (whoever provoked an
    error reads it), and nothing has run or moved when it fires. Carries ``door``.
    """

    code = "ERR_SESSION_OWNERSHIP_CONFLICT"
    fields = ("door",)

    def __init__(self, door: str) -> None:
        super().__init__(
            f"{door}: the identity passed is not the one this conversation was started for. A continued run "
            "keeps its conversation's memory namespace and identity, so it cannot also run as somebody else. "
            "Pass the identity the conversation was started with (or none, and its own is used), or start a "
            "new conversation with run(message, identity=...) for the other person. Neither identity appears "
            "in this message on purpose."
        )
        self.door = door


class ResumeRedactionError(Refusal):
    """Raised when a conversation's redaction cannot be carried into the run that continues it.

    ``reason``:

    - ``unreadable``: the checkpoint's ``redaction`` is not a policy this library wrote;
    - ``missing``: its ``redaction_marks`` say its run kept values out of the records, but it
      carries no policy (or one that lost some of those keys or patterns). Every covered run
      writes its policy into its checkpoint, so this one was altered; a ``redact`` passed now
      cannot stand in for the policy the run was covered by;
    - ``unknown-pattern``: the policy names a pattern this side does not hold. A pattern is
      never compiled from a checkpoint: it is a reference to one the agent declares, the
      library's vocabulary holds, or ``redact=`` names.

    Either way the continued run would write into its own records what the earlier one kept
    out. Carries ``door`` and ``reason``; no policy, pattern, name or value is quoted.
    """

    code = "ERR_RESUME_REDACTION"
    fields = ("door", "reason")

    def __init__(self, door: str, reason: str) -> None:
        if reason == "unreadable":
            text = ("the checkpoint's redaction policy is not one this library wrote, so the continued run could "
                    "not keep its records covered. Use the checkpoint as it was written.")
        elif reason == "missing":
            text = ("the checkpoint says its run kept values out of its records, but it carries no policy for "
                    "them: every covered run writes its policy into its checkpoint, so this one was altered. A "
                    "redact= passed now cannot stand in for it. Use the checkpoint as it was written.")
        else:
            where = ("pass the policy the run was handed: resume(checkpoint, answer, redact=...) or "
                     "resume_on_error(checkpoint, redact=...)" if not door.endswith(".run") else
                     "declare it on this agent: Agent(..., redact=Redaction(patterns={name: regex}))")
            text = ("the checkpoint's redaction policy names a pattern this agent does not declare and the library "
                    f"does not hold; a pattern is never compiled from a checkpoint. To continue, {where}.")
        super().__init__(f"{door}: {text}")
        self.door = door
        self.reason = reason


class NoConversationError(Refusal):
    """Raised by ``follow_up()`` when there is no conversation to continue.

    ``reason`` says which, so a caller can branch on it: ``never-run`` (this agent has run
    nothing yet), ``last-run-unfinished`` (its last run failed, or its pause was abandoned),
    ``last-input-refused`` (its input guard refused the last message, which admitted nothing).
    """

    code = "ERR_NO_CONVERSATION"
    fields = ("reason",)

    def __init__(self, door: str, reason: str) -> None:
        super().__init__(f"{door}: {_NO_CONVERSATION[reason]}")
        self.reason = reason


_NO_CONVERSATION = {
    "never-run": (
        "this agent has not finished a run, so there is no conversation to continue. Start one with "
        "agent.run(message): the first turn is a run, every turn after it a follow_up(). To continue a "
        "conversation this process did not have (a stored one, or another instance's), pass it: "
        "agent.run(message, continue_from=checkpoint)."
    ),
    "last-run-unfinished": (
        "this agent's last run did not finish with an answer, so there is no conversation to continue yet. "
        "A failed run's conversation travels on RunCheckpointError.checkpoint: catch it and pass it to "
        "agent.resume_on_error(checkpoint) or agent.run(message, continue_from=checkpoint). A paused run is "
        "answered with agent.resume(run.checkpoint, answer)."
    ),
    "last-input-refused": (
        "the input guard refused this agent's last message, so that run admitted no conversation to continue. "
        "Continue from the checkpoint agent.checkpoint() returned after the last accepted run, with "
        "agent.run(message, continue_from=that_checkpoint), or start a new conversation with agent.run(message)."
    ),
}
