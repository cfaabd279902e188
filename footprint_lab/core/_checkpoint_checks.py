"""The checks that guard continuing a checkpoint: one handed to a door is normalized or refused, field by field.

Rule kept here: a checkpoint is data that went out of this process and may come back from any
store, so it is read like a caller's input before anything runs: as private plain JSON (nothing
the caller holds is aliased or changed; what is not JSON, or not text UTF-8 can save, is
refused), every field present and none unknown, the version this library writes, and each
field's shape: the history's turns in an order a conversation can have (a user message first,
every tool call answered before the next turn, by the tool it called), the redaction marks, and
the pending question on the first unanswered tool call. A refusal (:class:`InvalidCheckpointError`)
names the field (``history[3].content``) and describes what arrived by its shape; it never
quotes the conversation. The envelope and door checks serve a composition's checkpoint too
(:mod:`footprint_lab.flow.checkpoint`).

Role: core layer; the names are imported from :mod:`footprint_lab.core.checkpoint`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from footprint_lab.base.refusal import Refusal, describe_shape
from footprint_lab.base.unicode import is_sound
from footprint_lab.core.checkpoint_masks import Concealed
from footprint_lab.core.conversation_legs import turn_position
from footprint_lab.core.identity import IDENTITY_FIELDS
from footprint_lab.record.recording import Seal
from footprint_lab.record.schema import CALL_FIELDS

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
_PAUSE_KEYS = ("question", "tool_name", "tool_call_id", "choices")
_AS_GIVEN = (
    "Pass a checkpoint exactly as agent.checkpoint(), run.checkpoint or RunCheckpointError.checkpoint "
    "gave it; a stored one reads back with Checkpoint.model_validate_json(text)."
)


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
            door, "checkpoint", describe_shape(value, CHECKPOINT_FIELDS), "holds values that are not plain JSON", fix
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
            raise InvalidCheckpointError(door, where, describe_shape(call, CALL_FIELDS),
                                         "must be a tool call {id, name, args}")
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
    if not isinstance(pause, dict) or set(pause) != set(_PAUSE_KEYS):
        raise InvalidCheckpointError(door, "pause", describe_shape(pause, _PAUSE_KEYS),
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

