"""``Checkpoint``: a conversation as plain JSON, and the checks that guard continuing one.

Rule kept here: a checkpoint is data that went out of this process and may come back from
any store, so it is read like a caller's input: normalized or refused, field by field,
before anything runs. A refusal names the field (``history[3].content``) and describes what
arrived by its shape; it never quotes the conversation.

A checkpoint holds ``schema_version``, ``run_id`` (the run that left it), ``first_run_id``
(the run that opened the conversation: without a named identity, its memory namespace
is that run's, for every turn that continues it), ``history`` (the
user, assistant and tool turns, the final answer included; the system prompt is the agent's
and is not a turn), ``identity`` and ``agent_id`` (only when set explicitly), ``redaction``
(the policy the run was covered by, as data) with ``redaction_marks`` (what it covered and
what matched), and ``pause`` (the question a paused run waits on).

Under a policy, ``agent_id`` is held as the policy masks it (an id can be covered like any text):
an agent continuing the conversation masks its own id with that policy and compares the masks.

With a redaction policy in force a checkpoint is covered like every other record: its fields
and its JSON hold masks, and the real values the model needs to go on stay in a private part
that never leaves this process (:mod:`footprint_lab.core.checkpoint_masks`). A stored checkpoint
holding masks is continued only once its caller says how (``unmask`` or ``accept_masked``).

A run that fails after at least one completed tool round raises :class:`RunCheckpointError`
carrying the last good checkpoint, so nothing done so far is lost.

The checks a checkpoint passes before it is continued, and the :class:`InvalidCheckpointError` they
raise, are :mod:`footprint_lab.core._checkpoint_checks`'s (imported from here).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import ConfigDict

from footprint_lab.base.display import bundle
from footprint_lab.base.refusal import Refusal, RunFailure
from footprint_lab.core._checkpoint_checks import CHECKPOINT_FIELDS as CHECKPOINT_FIELDS
from footprint_lab.core._checkpoint_checks import CHECKPOINT_VERSION
from footprint_lab.core._checkpoint_checks import MAY_BE_LEFT_OUT as MAY_BE_LEFT_OUT
from footprint_lab.core._checkpoint_checks import InvalidCheckpointError as InvalidCheckpointError
from footprint_lab.core._checkpoint_checks import check_envelope as check_envelope
from footprint_lab.core._checkpoint_checks import check_identity_data as check_identity_data
from footprint_lab.core._checkpoint_checks import door_checkpoint as door_checkpoint
from footprint_lab.core._checkpoint_checks import nonblank as nonblank
from footprint_lab.core._checkpoint_checks import plain_checkpoint as plain_checkpoint
from footprint_lab.core._checkpoint_checks import read_checkpoint as read_checkpoint
from footprint_lab.core.checkpoint_masks import Concealed, Mapper, map_value, shown_label
from footprint_lab.core.conversation_legs import Saved, thaw
from footprint_lab.record.recording import Seal
from footprint_lab.record.records import jsonable
from footprint_lab.redact.policy import Redaction
from footprint_lab.sealing.seal import seal


class Checkpoint(Concealed):
    """A conversation, ready to continue in this process or another: plain JSON any store can keep.

    Under a redaction policy its fields and JSON are masked (``masked`` says so); the one a run
    hands back resumes with the real values in this process, a stored one once told how
    (``unmask({...})`` or ``accept_masked()``).
    """

    model_config = ConfigDict(extra="forbid")
    _VALUE_FIELDS: ClassVar[tuple[str, ...]] = ("history", "pause", "identity")

    schema_version: int = CHECKPOINT_VERSION
    run_id: str
    first_run_id: str
    history: list[dict[str, Any]]
    identity: dict[str, str] | None = None
    agent_id: str | None = None
    redaction: dict[str, Any] | None = None
    redaction_marks: dict[str, list[str]]
    pause: dict[str, Any] | None = None
    #: set by ``footprint_lab.seal`` (and by ``Agent(..., seal=True)``): a hash over the saved form above
    seal: Seal | None = None

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return bundle("checkpoint", self, lambda: {"text/plain": repr(self)}, include, exclude)

    @property
    def paused(self) -> bool:
        """``True`` when the conversation waits on a person's answer."""
        return self.pause is not None

    def _shown_labels(self, policy: Redaction) -> dict[str, Any]:
        """The agent's id, as the policy masks it."""
        return {"agent_id": shown_label(self.agent_id, policy)}

    @classmethod
    def _map_values(cls, values: dict[str, Any], fn: Mapper) -> dict[str, Any]:
        """The turns' texts and tool arguments, the pending question and its choices, the identity's fields."""
        out = dict(values)
        history = values.get("history")
        if isinstance(history, list):
            out["history"] = [_turn_values(turn, fn) if isinstance(turn, dict) else turn for turn in history]
        pause = values.get("pause")
        if isinstance(pause, dict):
            out["pause"] = {**pause, "question": map_value(pause.get("question"), fn),
                            "choices": map_value(pause.get("choices"), fn)}
        identity = values.get("identity")
        if isinstance(identity, dict):
            out["identity"] = {key: fn(value) for key, value in identity.items()}
        return out


def _turn_values(turn: dict[str, Any], fn: Mapper) -> dict[str, Any]:
    """A turn with ``fn`` applied to its text, its tool calls' arguments, and the ids and tool names a model
    wrote (a hostile one can put anything there; each is masked alike wherever it recurs, so a masked
    call and its result still pair up)."""
    out = {key: fn(value) if key in _TURN_TEXTS and isinstance(value, str) else value for key, value in turn.items()}
    calls = turn.get("tool_calls")
    if isinstance(calls, list):
        out["tool_calls"] = [{key: fn(value) if key in _CALL_VALUES else value for key, value in call.items()}
                             if isinstance(call, dict) else call for call in calls]
    return out


_TURN_TEXTS = frozenset({"content", "tool_call_id", "name"})
_CALL_VALUES = frozenset({"id", "name", "args"})


def checkpoint_from(saved: Saved) -> Checkpoint:
    """The checkpoint of what an execution left (a fresh copy: changing it changes nothing held)."""
    assert saved.history is not None
    history = thaw(saved.history)
    for turn in history:  # an empty reply is an empty string here, as the checks below require
        if turn["role"] == "assistant" and turn.get("content") is None and not turn.get("tool_calls"):
            turn["content"] = ""
    checkpoint = Checkpoint(
        schema_version=CHECKPOINT_VERSION,
        run_id=saved.run_id,
        first_run_id=saved.first_run_id,
        history=history,
        identity=saved.identity.as_dict() if saved.identity is not None else None,
        agent_id=saved.agent_id,
        redaction=saved.policy.to_data() if saved.policy is not None else None,
        redaction_marks={k: list(v) for k, v in saved.marks.items()},
        pause=jsonable(saved.pause.as_data()) if saved.pause is not None else None,
    )
    checkpoint = checkpoint if saved.scrubber is None else checkpoint.concealed_by(saved.scrubber)
    if saved.sealed:  # over the saved form: a sealed checkpoint never holds what the policy covers
        seal(checkpoint)  # type: ignore[arg-type]  # seal takes a checkpoint too
    return checkpoint


class ConversationMismatchError(Refusal, ValueError):
    """Raised when a checkpoint written by one agent is continued by another.

    Fires only when both ids were set explicitly (``Agent(id=...)``) and differ: an agent's
    tools and system prompt are part of what its conversation meant. Under a redaction policy that
    covers an id, the checkpoint holds it masked and the two are compared masked. Carries ``door``,
    ``agent_id`` (the agent asked to continue, masked as a checkpoint holds it) and
    ``checkpoint_agent_id`` (the one that wrote it).
    """

    code = "ERR_CONVERSATION_MISMATCH"
    fields = ("door", "agent_id", "checkpoint_agent_id")

    def __init__(self, door: str, agent_id: str, checkpoint_agent_id: str) -> None:
        super().__init__(
            f"{door}: this checkpoint was written by another agent (both agents have an explicit id, and "
            "they differ). A conversation continues with the agent that had it, whose tools and system "
            "prompt shaped it. Continue it on that agent, or start a new conversation here with run(message)."
        )
        self.door = door
        self.agent_id = agent_id
        self.checkpoint_agent_id = checkpoint_agent_id


def refuse_masked(data: dict[str, Any], door: str) -> None:
    """A stored checkpoint's masks (of the policy it was covered by) must not reach the model unannounced."""
    Checkpoint.refuse_placeholders({name: data[name] for name in Checkpoint._VALUE_FIELDS},
                                   covered_names(data["redaction_marks"], data["redaction"]), door)


def covered_names(marks: dict[str, Any], policy: Any) -> set[str]:
    """The key and pattern names a checkpoint's masks may carry: those in force when it was written."""
    names = {*marks["keys"], *marks["patterns"]}
    if isinstance(policy, dict):
        names.update(k for k in policy.get("keys") or () if isinstance(k, str))
        names.update(p["name"] for p in policy.get("patterns") or () if isinstance(p, dict) and isinstance(
            p.get("name"), str))
    return names


# -- a run that failed after doing work --------------------------------------------------

_STAGES = {"call-llm": "while calling the model", "tool": "while running a tool"}


def resume_can_help(cause: BaseException) -> tuple[bool, str]:
    """Whether resuming can get past ``cause`` as it is, and if not, why (one clause)."""
    status = getattr(cause, "status", None) or getattr(cause, "status_code", None)
    code = str(getattr(cause, "code", "") or "").upper()
    kind = type(cause).__name__
    if "CONTEXT" in code or "ContextWindow" in kind or "ContextLength" in kind:
        return False, ("the conversation no longer fits the model's context window, and a resume sends the same "
                       "conversation; shorten it or pick a model with a larger window first")
    if status in (401, 403) or "AUTH" in code or "API_KEY" in code or "Auth" in kind:
        return False, ("the provider did not accept the credentials; set a valid key on a provider for this agent "
                       "first")
    if status in (400, 404, 422):
        return False, (f"the provider refused the request itself (status {status}), so the same request fails the "
                       "same way; fix the model name or the request first")
    retryable = getattr(cause, "retryable", None)  # the provider errors say so themselves
    if retryable is True:
        return True, ""
    if isinstance(cause, Refusal):
        return False, f"the cause is a refusal ({cause.code}) that names its own fix; apply it first"
    if retryable is False:
        return False, "the provider marked this error as not worth retrying; fix its cause first"
    return True, ""


class RunCheckpointError(RunFailure):
    """Raised when a run fails after at least one completed tool round.

    A :class:`RunFailure`, not a refusal: work was done. Nothing of it is lost: ``checkpoint`` holds the conversation
    up to the last completed round, ``cause`` the original error. ``stage`` says where it failed
    (``call-llm``, ``tool`` or another step), ``iteration`` in which loop iteration, ``step_id``
    the step, and ``resumable`` whether ``agent.resume_on_error(err.checkpoint)`` can get past
    the cause as it is (not for rejected credentials, a 400/404/422, or a context window overflow).
    """

    code: ClassVar[str] = "ERR_RUN_CHECKPOINT"
    fields: ClassVar[tuple[str, ...]] = ("stage", "iteration", "step_id", "resumable", "checkpoint", "cause")

    def __init__(
        self, door: str, *, checkpoint: Checkpoint, saved: Saved, cause: BaseException, stage: str,
        iteration: int, step_id: str, rounds: int,
    ) -> None:
        resumable, why = resume_can_help(cause)
        where = _STAGES.get(stage, f"in its {stage} step")
        code = getattr(cause, "code", None)
        named = f"{type(cause).__name__}{f', {code}' if isinstance(code, str) else ''}"
        then = (
            "Once the cause has passed, await agent.resume_on_error(err.checkpoint) continues from there, "
            "without running any finished tool again."
            if resumable else
            f"Resuming as it is would not help: {why}; then agent.resume_on_error(err.checkpoint) can continue."
        )
        message = (
            f"{door}: the run failed in iteration {iteration} {where} (step {step_id}), after {rounds} completed "
            f"tool round{'s' if rounds != 1 else ''}. Nothing done before it is lost: err.checkpoint holds the "
            f"conversation up to the last completed round, and err.cause the original error ({named}). {then}"
        )
        super().__init__(message)
        self.checkpoint = checkpoint
        self.cause = cause
        self.stage = stage
        self.iteration = iteration
        self.step_id = step_id
        self.resumable = resumable
        self._saved = saved
