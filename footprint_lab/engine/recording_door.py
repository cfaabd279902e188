"""The door for a recording that comes from outside: checked once, then trusted by every view.

Defect closed: a recording loaded from a file (or edited by hand, or changed after it was
loaded) reached the views as it was. An exchange naming piece ``999`` raised ``IndexError``
deep in ``run.context()``; piece ``-1`` silently showed another piece; a tool call that is a
string broke the HTML view; ``schema_version=99`` loaded without a word; a missing or extra
field surfaced as pydantic's own ``ValidationError``, quoting the data.

Rule kept here: :func:`load_recording` (JSON text, bytes or ``model_dump`` data) and
:func:`check_recording` (a ``Recording`` object, as ``Run.from_recording`` receives it) are
the one door. They check the schema version, the shape of every record pydantic cannot pin
down (messages, tool calls, the redaction report) and every cross reference (piece indices,
message counts, the steps exchanges name), in the recording and each member run's. A
recording that fails is refused with :class:`InvalidRecordingError`, naming the field by
its path (``exchanges.2.system_pieces.0``) and what is wrong with it, never quoting a value.

Role: engine layer, next to the ``Recording`` it guards.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from footprint_lab.engine.recording import SCHEMA_VERSION, Recording
from footprint_lab.engine.refusal import Refusal, describe_shape

_LOAD_FIX = ("Pass a Recording: load a saved one with footprint_lab.load_recording(text) (JSON text, bytes or "
             "the dict model_dump() gives), which checks it on the way in")


class InvalidRecordingError(Refusal):
    """Raised when a recording handed to a door cannot be read or does not hold together.

    Carries ``door`` (where it was handed in), ``field`` (the path of the field at fault,
    ``exchanges.2.system_pieces.0``; ``recording`` for the whole value) and ``problem`` (what
    is wrong with it, by shape). Nothing is run and no value is quoted.
    """

    code = "ERR_INVALID_RECORDING"
    fields = ("door", "field", "problem")

    def __init__(self, door: str, field: str, problem: str, fix: str | None = None) -> None:
        advice = fix or ("A recording is evidence: use it as the library wrote it, or record the run again; "
                         "a hand-edited one cannot be trusted by the views that explain it")
        super().__init__(f"{door}: the recording's '{field}' {problem}. {advice}.")
        self.door = door
        self.field = field
        self.problem = problem


def load_recording(data: Any, *, door: str = "load_recording") -> Recording:
    """A saved recording (JSON text or bytes, or ``model_dump`` data), read and checked once."""
    if isinstance(data, Recording):
        return check_recording(data, door=door)
    if isinstance(data, dict):
        _check_version(data.get("schema_version", SCHEMA_VERSION), door, "schema_version")
        reader: Callable[[Any], Recording] = Recording.model_validate
    elif isinstance(data, str | bytes | bytearray):
        reader = Recording.model_validate_json
    else:
        raise InvalidRecordingError(door, "recording", f"is {describe_shape(data)}, not a recording", _LOAD_FIX)
    try:
        recording = reader(data)
    except ValidationError as invalid:
        raise _refusal(invalid, door) from None
    return check_recording(recording, door=door)


def check_recording(recording: Any, *, door: str = "Run.from_recording") -> Recording:
    """``recording`` itself when it holds together; :class:`InvalidRecordingError` naming the first fault."""
    if not isinstance(recording, Recording):
        raise InvalidRecordingError(door, "recording", f"is {describe_shape(recording)}, not a Recording", _LOAD_FIX)
    _Checker(door).recording(recording, "")
    return recording


def _refusal(invalid: ValidationError, door: str) -> InvalidRecordingError:
    first = invalid.errors(include_url=False, include_context=False, include_input=False)[0]
    where = ".".join(str(part) for part in first["loc"]) or "recording"
    kind = first["type"]
    if kind == "missing":
        problem = "is missing"
    elif kind == "extra_forbidden":
        problem = "is not a field a recording has"
    elif kind.startswith("json"):
        where, problem = "recording", "is not valid JSON"
    else:
        problem = f"has the wrong type or value ({kind})"
    return InvalidRecordingError(door, where, problem)


def _check_version(version: Any, door: str, where: str) -> None:
    if version != SCHEMA_VERSION or isinstance(version, bool):
        raise InvalidRecordingError(
            door, where, f"is not {SCHEMA_VERSION}, the only schema version this library reads",
            "Read it with the footprint_lab version that wrote it, or record the run again",
        )


class _Checker:
    """Walks one recording (and its member runs) looking for the first fault."""

    __slots__ = ("door",)

    def __init__(self, door: str) -> None:
        self.door = door

    def fail(self, where: str, problem: str) -> InvalidRecordingError:
        return InvalidRecordingError(self.door, where, problem)

    def recording(self, recording: Recording, at: str) -> None:
        _check_version(recording.schema_version, self.door, f"{at}schema_version")
        pieces = recording.context_pieces
        messages = recording.messages
        steps = {step.step_id for step in recording.steps if isinstance(step.step_id, str)}
        for n, piece in enumerate(pieces):
            if piece.index != n:
                raise self.fail(f"{at}context_pieces.{n}.index", "does not match the piece's place in the list")
        self.messages(messages, f"{at}messages")
        self.indices(recording.message_pieces, len(pieces), f"{at}message_pieces")
        if len(recording.message_pieces) > len(messages):
            raise self.fail(f"{at}message_pieces", "names more pieces than there are messages")
        for n, exchange in enumerate(recording.exchanges):
            where = f"{at}exchanges.{n}"
            if exchange.step_id not in steps:
                raise self.fail(f"{where}.step_id", "names no step of this recording")
            count = exchange.message_count
            if not _is_int(count) or not 0 <= count <= len(messages):
                raise self.fail(f"{where}.message_count", "is not a count of the recording's messages")
            if count > len(recording.message_pieces):
                raise self.fail(f"{where}.message_count", "counts messages that have no context piece")
            for slot in ("system_pieces", "message_pieces", "tool_pieces"):
                self.indices(getattr(exchange, slot), len(pieces), f"{where}.{slot}")
            self.messages(exchange.injected_messages, f"{where}.injected_messages")
            calls = exchange.response.tool_calls
            if not isinstance(calls, list):
                raise self.fail(f"{where}.response.tool_calls", "is not a list")
            for k, call in enumerate(calls):
                self.call(call if isinstance(call, dict) else getattr(call, "__dict__", call),
                          f"{where}.response.tool_calls.{k}")
        self.redaction(recording.redaction, f"{at}redaction")
        for n, child in enumerate(recording.children):
            if not isinstance(child, Recording):
                raise self.fail(f"{at}children.{n}", "is not a recording")
            self.recording(child, f"{at}children.{n}.")

    def indices(self, values: Any, size: int, where: str) -> None:
        if not isinstance(values, list | tuple):
            raise self.fail(where, "is not a list of piece indices")
        for k, value in enumerate(values):
            if not _is_int(value) or not 0 <= value < size:
                raise self.fail(f"{where}.{k}", f"is not the index of one of the {size} context pieces")

    def messages(self, messages: Any, where: str) -> None:
        if not isinstance(messages, list):
            raise self.fail(where, "is not a list of messages")
        for n, message in enumerate(messages):
            at = f"{where}.{n}"
            if not isinstance(message, dict):
                raise self.fail(at, "is not a message (a dict with a role and content)")
            if not isinstance(message.get("role"), str):
                raise self.fail(f"{at}.role", "is missing or not text")
            content = message.get("content")
            if content is not None and not isinstance(content, str):
                raise self.fail(f"{at}.content", "is not text")
            calls = message.get("tool_calls")
            if calls is not None:
                if not isinstance(calls, list):
                    raise self.fail(f"{at}.tool_calls", "is not a list of tool calls")
                for k, call in enumerate(calls):
                    self.call(call, f"{at}.tool_calls.{k}")

    def call(self, call: Any, where: str) -> None:
        if not isinstance(call, dict):
            raise self.fail(where, "is not a tool call (a dict with id, name and args)")
        for key, kind in (("id", str), ("name", str), ("args", dict)):
            if not isinstance(call.get(key), kind):
                raise self.fail(f"{where}.{key}", f"is missing or not {'a dict' if kind is dict else 'text'}")

    def redaction(self, report: Any, where: str) -> None:
        if report is None:
            return
        if not isinstance(report, dict):
            raise self.fail(where, "is not a redaction report")
        for key in ("keys", "patterns", "matched"):
            if not _texts(report.get(key, [])):
                raise self.fail(f"{where}.{key}", "is not a list of names")
        counts = report.get("counts", {})
        if not isinstance(counts, dict) or not all(isinstance(k, str) and _is_int(v) for k, v in counts.items()):
            raise self.fail(f"{where}.counts", "is not a mapping of names to counts")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _texts(values: Any) -> bool:
    return isinstance(values, list) and all(isinstance(value, str) for value in values)

