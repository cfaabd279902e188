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
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from footprint_lab.core.checkpoint_masks import Concealed, Mapper, map_value, shown_label
from footprint_lab.core.conversation_legs import Saved, thaw, turn_position
from footprint_lab.core.identity import IDENTITY_FIELDS
from footprint_lab.record.display import bundle
from footprint_lab.record.recording import Seal
from footprint_lab.record.records import jsonable
from footprint_lab.record.refusal import Refusal, RunFailure, describe_shape
from footprint_lab.record.unicode import is_sound
from footprint_lab.redact.policy import Redaction
from footprint_lab.sealing.seal import seal

CHECKPOINT_VERSION = 1
#: fields a stored checkpoint may leave out: a checkpoint nobody sealed was written without one
MAY_BE_LEFT_OUT = frozenset({"seal"})
CHECKPOINT_FIELDS = (
    "schema_version", "run_id", "first_run_id", "history", "identity", "agent_id", "redaction", "redaction_marks",
    "pause", "seal",
)
_ROLE_KEYS = {
    "user": {"role", "content"},
    "assistant": {"role", "content", "tool_calls"},
    "tool": {"role", "content", "tool_call_id", "name", "is_error"},
}
_AS_GIVEN = (
    "Pass a checkpoint exactly as agent.checkpoint(), run.checkpoint or RunCheckpointError.checkpoint "
    "gave it; a stored one reads back with Checkpoint.model_validate_json(text)."
)


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


class InvalidCheckpointError(Refusal, ValueError):
    """Raised when a checkpoint handed to ``run(continue_from=...)``, ``resume`` or ``resume_on_error``
    is not one this library wrote, or does not fit the door it was handed to.

    Carries ``door``, ``field`` (the field at fault, as a path like ``history[2].role``) and
    ``received`` (its shape, never its content).
    """

    code = "ERR_INVALID_CHECKPOINT"
    fields = ("door", "field", "received")

    def __init__(self, door: str, field: str, received: str, problem: str, fix: str = _AS_GIVEN) -> None:
        super().__init__(f"{door}: the checkpoint's '{field}' {problem} (received {received}). {fix}")
        self.door = door
        self.field = field
        self.received = received
        self._said = (problem, fix)

    def within(self, prefix: str) -> InvalidCheckpointError:
        """The same refusal for a checkpoint nested at ``prefix`` (``paused.approve``) in a larger one."""
        field = prefix if self.field == "checkpoint" else f"{prefix}.{self.field}"
        return InvalidCheckpointError(self.door, field, self.received, *self._said)


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


def read_checkpoint(value: Any, door: str) -> tuple[dict[str, Any], bool]:
    """A checkpoint (``Checkpoint``, a dict, or its JSON text) as checked plain data, or a refusal; and
    whether its values may go on as they are (see :func:`door_checkpoint`)."""
    data, trusted = door_checkpoint(value, door)
    check_envelope(data, CHECKPOINT_FIELDS, CHECKPOINT_VERSION, door)
    for name in ("run_id", "first_run_id"):
        if not nonblank(data[name]):
            raise InvalidCheckpointError(door, name, describe_shape(data[name]), "must be a non-empty string")
    if data["agent_id"] is not None and not nonblank(data["agent_id"]):
        raise InvalidCheckpointError(
            door, "agent_id", describe_shape(data["agent_id"]), "must be a non-empty string or null"
        )
    check_identity_data(data["identity"], door)
    _check_history(data["history"], door)
    _check_marks(data["redaction_marks"], door)
    _check_pause(data["pause"], data["history"], door)
    return data, trusted


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


def door_checkpoint(value: Any, door: str, fix: str = _AS_GIVEN) -> tuple[dict[str, Any], bool]:
    """A checkpoint handed to a door as plain data with the values it continues with, and whether those
    may go on as they are (the run's own, or accepted by the caller) rather than be checked for masks."""
    if isinstance(value, Concealed):
        data = value.model_dump(mode="json")
        values, trusted = value.door_values()
        data.update(values)
        return plain_checkpoint(data, door, fix), trusted
    return plain_checkpoint(value, door, fix), False


def plain_checkpoint(value: Any, door: str, fix: str = _AS_GIVEN) -> dict[str, Any]:
    """A checkpoint handed to a door (a model, a dict, or its JSON text) as a private JSON-native dict.

    Nothing the caller holds is aliased or changed; anything that is not JSON is refused.
    """
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    elif isinstance(value, str | bytes | bytearray):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            raise InvalidCheckpointError(door, "checkpoint", "text that is not JSON", "is not readable", fix) from None
    if not isinstance(value, Mapping):
        raise InvalidCheckpointError(door, "checkpoint", describe_shape(value), "is not a checkpoint", fix)
    try:
        data: dict[str, Any] = json.loads(json.dumps(dict(value), allow_nan=False))
    except (TypeError, ValueError, RecursionError):
        raise InvalidCheckpointError(
            door, "checkpoint", describe_shape(value), "holds values that are not plain JSON", fix
        ) from None
    unsound = _unsound_at(data, "")
    if unsound is not None:  # the continued run's recording could not be saved
        raise InvalidCheckpointError(door, unsound or "checkpoint", "a string holding a lone surrogate",
                                     "must be text that can be saved as UTF-8", fix)
    return data


def _unsound_at(value: Any, at: str) -> str | None:
    """The path of the first string (key or value) in ``value`` that holds a lone surrogate, or ``None``."""
    if isinstance(value, str):
        return None if is_sound(value) else at
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{at}.{key}" if at else str(key)
            if not is_sound(str(key)):
                return at or "checkpoint"
            found = _unsound_at(item, where)
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _unsound_at(item, f"{at}[{index}]")
            if found is not None:
                return found
    return None


def check_envelope(data: dict[str, Any], names: tuple[str, ...], version: int, door: str, fix: str = _AS_GIVEN) -> None:
    """Every field present (but those that :data:`MAY_BE_LEFT_OUT`), none unknown, and the version this
    library reads and writes."""
    for name in names:
        if name not in data and name not in MAY_BE_LEFT_OUT:
            raise InvalidCheckpointError(door, name, "nothing", "is missing", fix)
    unknown = [k for k in data if k not in names]
    if unknown:
        raise InvalidCheckpointError(
            door, "checkpoint", f"{len(unknown)} field(s) this library does not write", "has unknown fields", fix
        )
    made = data.get("seal")
    if made is not None and not isinstance(made, Seal):
        try:
            Seal.model_validate(made)
        except ValueError:
            raise InvalidCheckpointError(door, "seal", describe_shape(made),
                                         "must be null or the seal footprint_lab.seal wrote", fix) from None
    found = data["schema_version"]
    if type(found) is not int or found != version:
        raise InvalidCheckpointError(
            door, "schema_version", describe_shape(found) if type(found) is not int else "another version",
            f"is not {version}, the version this library reads and writes", fix,
        )


def nonblank(value: Any) -> bool:
    """``True`` for a string with something besides whitespace in it."""
    return isinstance(value, str) and bool(value.strip())


def check_identity_data(identity: Any, door: str) -> None:
    """``null``, or an identity object: known keys, each a non-empty string."""
    if identity is None:
        return
    if not isinstance(identity, dict) or not identity:
        raise InvalidCheckpointError(door, "identity", describe_shape(identity), "must be null or an identity object")
    for key, value in identity.items():
        if key not in IDENTITY_FIELDS:
            raise InvalidCheckpointError(door, "identity", "a key an identity does not have", "has an unknown key")
        if not nonblank(value):
            raise InvalidCheckpointError(door, f"identity.{key}", describe_shape(value), "must be a non-empty string")


def _check_history(history: Any, door: str) -> None:
    if not isinstance(history, list) or not history:
        raise InvalidCheckpointError(
            door, "history", describe_shape(history), "must be a non-empty list of conversation turns"
        )
    open_calls: dict[str, str] = {}
    for index, entry in enumerate(history):
        at = f"history[{index}]"
        if not isinstance(entry, dict):
            raise InvalidCheckpointError(door, at, describe_shape(entry), "must be a turn object")
        role = entry.get("role")
        if not isinstance(role, str) or role not in _ROLE_KEYS:
            raise InvalidCheckpointError(
                door, f"{at}.role", describe_shape(role) if not isinstance(role, str) else "another string",
                "must be 'user', 'assistant' or 'tool'",
            )
        if index == 0 and role != "user":
            raise InvalidCheckpointError(door, f"{at}.role", "another role", "must be 'user': a conversation opens "
                                         "with the caller's message")
        if not set(entry) <= _ROLE_KEYS[role]:
            raise InvalidCheckpointError(door, at, f"a {role} turn with keys this library does not write",
                                         "has unknown keys")
        if role != "tool" and open_calls:
            raise InvalidCheckpointError(
                door, at, f"a {role} turn", "comes before every tool call of the turn before it has a result"
            )
        content = entry.get("content")
        if role == "assistant":
            open_calls = _check_tool_calls(entry.get("tool_calls"), f"{at}.tool_calls", door)
            if not isinstance(content, str) and not (content is None and open_calls):
                raise InvalidCheckpointError(
                    door, f"{at}.content", describe_shape(content),
                    "must be a string (or null on a turn that calls tools)",
                )
        elif role == "user":
            if not nonblank(content):
                raise InvalidCheckpointError(door, f"{at}.content", describe_shape(content) if not isinstance(
                    content, str) else "a blank string", "must be a non-empty string")
        else:
            call_id = entry.get("tool_call_id")
            if not isinstance(call_id, str) or call_id not in open_calls:
                raise InvalidCheckpointError(
                    door, f"{at}.tool_call_id", describe_shape(call_id) if not isinstance(call_id, str)
                    else "an id no open tool call has", "must answer a tool call of the assistant turn before it",
                )
            if entry.get("name") != open_calls.pop(call_id):
                raise InvalidCheckpointError(door, f"{at}.name", describe_shape(entry.get("name")),
                                             "must name the tool that was called")
            if not isinstance(content, str):
                raise InvalidCheckpointError(door, f"{at}.content", describe_shape(content), "must be a string")
            if "is_error" in entry and not isinstance(entry["is_error"], bool):
                raise InvalidCheckpointError(door, f"{at}.is_error", describe_shape(entry["is_error"]),
                                             "must be true or false")


def _check_tool_calls(calls: Any, at: str, door: str) -> dict[str, str]:
    if calls is None:
        return {}
    if not isinstance(calls, list) or not calls:
        raise InvalidCheckpointError(door, at, describe_shape(calls), "must be a non-empty list of tool calls")
    named: dict[str, str] = {}
    for position, call in enumerate(calls):
        where = f"{at}[{position}]"
        if not isinstance(call, dict) or set(call) != {"id", "name", "args"}:
            raise InvalidCheckpointError(door, where, describe_shape(call), "must be a tool call {id, name, args}")
        if not nonblank(call["id"]) or call["id"] in named:
            raise InvalidCheckpointError(door, f"{where}.id", describe_shape(call["id"]),
                                         "must be a non-empty string, unique within its turn")
        if not nonblank(call["name"]):
            raise InvalidCheckpointError(door, f"{where}.name", describe_shape(call["name"]),
                                         "must be a non-empty string")
        if not isinstance(call["args"], dict):
            raise InvalidCheckpointError(door, f"{where}.args", describe_shape(call["args"]), "must be an object")
        named[call["id"]] = call["name"]
    return named


def _check_marks(marks: Any, door: str) -> None:
    if not isinstance(marks, dict) or set(marks) != {"keys", "patterns", "matched"}:
        raise InvalidCheckpointError(door, "redaction_marks", describe_shape(marks),
                                     "must be an object with keys, patterns and matched")
    for name in ("keys", "patterns", "matched"):
        names = marks[name]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise InvalidCheckpointError(door, f"redaction_marks.{name}", describe_shape(names),
                                         "must be a list of strings")
    covered = {f"key:{k}" for k in marks["keys"]} | {f"pattern:{p}" for p in marks["patterns"]}
    if not set(marks["matched"]) <= covered:
        raise InvalidCheckpointError(door, "redaction_marks.matched", "names no key or pattern in force",
                                     "must name only keys and patterns that were in force")


def _check_pause(pause: Any, history: list[dict[str, Any]], door: str) -> None:
    _, _, open_calls = turn_position(history)
    if pause is None:
        if open_calls:
            raise InvalidCheckpointError(
                door, "history", "a last turn with tool calls that have no result",
                "ends with unanswered tool calls, yet the checkpoint has no pending question",
            )
        return
    if not isinstance(pause, dict) or set(pause) != {"question", "tool_name", "tool_call_id", "choices"}:
        raise InvalidCheckpointError(door, "pause", describe_shape(pause),
                                     "must be null or {question, tool_name, tool_call_id, choices}")
    if not nonblank(pause["question"]):
        raise InvalidCheckpointError(door, "pause.question", describe_shape(pause["question"]),
                                     "must be a non-empty string")
    choices = pause["choices"]
    if choices is not None and (not isinstance(choices, list) or not all(isinstance(c, str) for c in choices)):
        raise InvalidCheckpointError(door, "pause.choices", describe_shape(choices), "must be null or strings")
    if not open_calls or pause["tool_call_id"] != open_calls[0]["id"]:
        raise InvalidCheckpointError(
            door, "pause.tool_call_id", describe_shape(pause["tool_call_id"]),
            "must be the first tool call of the last turn still without a result",
        )
    if pause["tool_name"] != open_calls[0]["name"]:
        raise InvalidCheckpointError(door, "pause.tool_name", describe_shape(pause["tool_name"]),
                                     "must name the tool of the paused call")


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
