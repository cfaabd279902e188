"""The door for a recording that comes from outside: checked once, then trusted by every view.

Defect closed: a recording loaded from a file (or edited by hand, or changed after loading) reached
the views unchecked. A bad piece index raised ``IndexError`` deep inside a view, and pydantic's own
error quoted the data.

Rule kept here: :func:`load_recording` (JSON text, bytes or ``model_dump`` data) and
:func:`check_recording` (a ``Recording`` object, as ``Run.from_recording`` gets it) are the one
door. Text is parsed by :func:`~footprint_lab.base.saved_json.parse_json` (at most ``MAX_NESTING``
levels deep). In the recording and in each member run, the door checks:

- the schema version: a whole number this library reads. A newer one, the unreleased 0.1's schema
  version 1 and a seal of an earlier chain are refused as :class:`RecordingVersionError`, which
  names the version and says how to read, record or seal it again;
- that member runs nest as a tree: each member's ``path`` extends its parent's, no two share one,
  and there are at most :data:`MAX_MEMBER_DEPTH` levels (walked with a stack, not by recursion);
- the shape of what pydantic cannot pin down: messages, tool calls, the redaction report;
- every cross reference: piece indices, message counts, the steps that exchanges name.

Any other fault is refused as :class:`InvalidRecordingError`, naming the field by its path
(``exchanges.2.system_pieces.0``) and what is wrong with it, never quoting a value.

Role: record layer, next to the ``Recording`` it guards.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from pydantic import ValidationError

from footprint_lab.base.refusal import Refusal, describe_shape
from footprint_lab.base.saved_json import MAX_NESTING, NestingTooDeep, nesting, parse_json
from footprint_lab.record.recording import Recording
from footprint_lab.record.rows import as_rows
from footprint_lab.record.schema import (
    READABLE_VERSIONS,
    SCHEMA_VERSION,
    SEAL_ALGORITHM,
    UNRELEASED_SEALS,
    UNRELEASED_VERSIONS,
)
from footprint_lab.record.spliced import Spliced

#: member runs nested deeper than this below the top run are refused (a composition of
#: compositions nests only a few levels)
MAX_MEMBER_DEPTH = 32

_LOAD_FIX = ("Pass a Recording: load a saved one with footprint_lab.load_recording(text) (JSON text, bytes or "
             "the dict model_dump() gives), which checks it on the way in")


class InvalidRecordingError(Refusal, ValueError):
    """Raised when a recording handed to a door cannot be read or does not hold together.

    Carries ``door`` (where it was handed in), ``field`` (the path of the field at fault, such as
    ``exchanges.2.system_pieces.0``, or ``recording`` for the whole value) and ``problem`` (what is
    wrong with it, by shape). Nothing is run and no value is quoted.
    """

    code = "ERR_INVALID_RECORDING"
    fields: ClassVar[tuple[str, ...]] = ("door", "field", "problem")

    def __init__(self, door: str, field: str, problem: str, fix: str | None = None) -> None:
        advice = fix or ("A recording is evidence: use it as the library wrote it, or record the run again; "
                         "a hand-edited one cannot be trusted by the views that explain it")
        super().__init__(f"{door}: the recording's '{field}' {problem}. {advice}.")
        self.door = door
        self.field = field
        self.problem = problem


class RecordingVersionError(InvalidRecordingError):
    """Raised when a recording is in a format this library does not read: written by a newer
    footprint_lab (a higher ``schema_version``), or by the unreleased 0.1 (schema version 1, or a
    seal of an earlier chain, ``sha256-chain/2`` to ``/5``).

    Carries ``version`` (the schema version, or the seal's algorithm) besides ``door``, ``field`` and
    ``problem``. It is no sign of tampering: read a newer one with the footprint_lab that wrote it;
    record or seal an unreleased one again, since no release ever wrote it.
    """

    code = "ERR_RECORDING_VERSION"
    fields = ("door", "field", "problem", "version")

    def __init__(self, door: str, field: str, version: int | str) -> None:
        if isinstance(version, str):  # a seal's algorithm
            super().__init__(door, field, f"is {version}, a seal of footprint_lab 0.1, an unreleased format this "
                             f"library does not check (it seals with {SEAL_ALGORITHM})", "Seal it again: run it "
                             "again with seal=True, or save it again sealed by this library (remove its 'seal', "
                             "load it and call footprint_lab.seal on it)")
        elif version in UNRELEASED_VERSIONS:
            super().__init__(door, field, f"is {version}, the schema of footprint_lab 0.1, an unreleased format "
                             f"this library does not read (it reads {SCHEMA_VERSION})", "Record the run again "
                             "with this footprint_lab (run it again, and save or show the new run)")
        else:
            shown = str(version) if version < 1_000_000 else "a version over a million"
            super().__init__(door, field, f"is {shown}, newer than {SCHEMA_VERSION}, the schema version this "
                             "library reads", "Read it with the newer footprint_lab that wrote it "
                             "(pip install -U footprint-lab)")
        self.version = version


def load_recording(data: str | bytes | bytearray | dict[str, Any] | Recording, *,
                   door: str = "load_recording") -> Recording:
    """Read a saved recording (JSON text or bytes, or ``model_dump`` data) and check it once.

    Refuses one that does not hold together with ``InvalidRecordingError`` (``RecordingVersionError``
    for a format this library does not read), naming the field at fault without quoting its value.
    """
    if isinstance(data, Recording):
        return check_recording(data, door=door)
    if isinstance(data, str | bytes | bytearray):
        return load_parsed(read_json(data, door), door=door)  # measured as it was parsed
    if isinstance(data, dict) and nesting(data) > MAX_NESTING:
        raise InvalidRecordingError(door, "recording", f"nests deeper than {MAX_NESTING} levels")
    return load_parsed(data, door=door)


def load_parsed(data: Any, *, door: str) -> Recording:
    """A recording from data ``parse_json`` gave (or a part of it: the file's nesting bound covers every
    part), checked as :func:`load_recording` checks it, bar the nesting."""
    if not isinstance(data, dict):
        raise InvalidRecordingError(door, "recording", f"is {describe_shape(data)}, not a recording", _LOAD_FIX)
    _check_version(data.get("schema_version", SCHEMA_VERSION), door, "schema_version")
    try:
        recording = Recording.model_validate(data)
    except ValidationError as invalid:
        raise _refusal(invalid, door) from None
    return check_recording(recording, door=door)


def read_json(raw: str | bytes | bytearray, door: str) -> Any:
    """Saved text parsed (see ``base.saved_json``), or :class:`InvalidRecordingError` saying why not."""
    try:
        return parse_json(raw)
    except NestingTooDeep:
        raise InvalidRecordingError(door, "recording", f"nests deeper than {MAX_NESTING} levels") from None
    except ValueError:
        raise InvalidRecordingError(door, "recording", "is not valid JSON") from None


def check_recording(recording: Any, *, door: str = "Run.from_recording") -> Recording:
    """``recording`` itself when it holds together; :class:`InvalidRecordingError` naming the first fault."""
    if not isinstance(recording, Recording):
        raise InvalidRecordingError(door, "recording", f"is {describe_shape(recording)}, not a Recording", _LOAD_FIX)
    checker = _Checker(door)
    for member, at in _members(recording, door):
        checker.recording(member, at)
    return recording


def _members(recording: Recording, door: str) -> Iterator[tuple[Recording, str]]:
    """The recording and every member run, each with its field path (``children.1.``), in document
    order. Refuses a member that does not nest: not a recording, a ``path`` that does not extend its
    parent's or repeats another's, or more than MAX_MEMBER_DEPTH levels down."""
    seen = {recording.path}
    stack: list[tuple[Recording, str, int]] = [(recording, "", 0)]
    while stack:
        member, at, depth = stack.pop()
        yield member, at
        children = member.children
        if children and depth == MAX_MEMBER_DEPTH:
            raise InvalidRecordingError(door, f"{at}children", f"nests member runs deeper than {MAX_MEMBER_DEPTH} "
                                        "levels below the top run")
        below = f"{member.path}/" if member.path else ""
        for n, child in enumerate(children):
            where = f"{at}children.{n}"
            if not isinstance(child, Recording):
                raise InvalidRecordingError(door, where, "is not a recording")
            path = child.path
            if not isinstance(path, str) or not path.startswith(below) or len(path) == len(below):
                raise InvalidRecordingError(door, f"{where}.path", "does not extend its parent run's path (a member "
                                            "run is mounted at one of its parent's steps)")
            if path in seen:
                raise InvalidRecordingError(door, f"{where}.path", "is the path of another run of this recording")
            seen.add(path)
        stack.extend((child, f"{at}children.{n}.", depth + 1) for n, child in reversed(list(enumerate(children))))


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
    if _is_int(version) and version in READABLE_VERSIONS:
        return
    if _is_int(version) and (version > SCHEMA_VERSION or version in UNRELEASED_VERSIONS):
        raise RecordingVersionError(door, where, version)
    readable = " or ".join(map(str, READABLE_VERSIONS))
    raise InvalidRecordingError(door, where, f"is not {readable} (a whole number), the schema versions "
                                "this library reads", "Read it with the footprint_lab version that wrote it, or "
                                "record the run again")


def check_seal(recording: Recording, door: str, at: str = "") -> None:
    """Refuse a recording (this one; its members are checked one by one) sealed by the unreleased 0.1."""
    made = recording.seal
    algorithm = made.algorithm if made is not None else None
    if algorithm in UNRELEASED_SEALS:
        raise RecordingVersionError(door, f"{at}seal.algorithm", algorithm)


_SLOTS = ("system_pieces", "message_pieces", "tool_pieces")
#: what the door checks of each exchange, in the order it reads them
_EXCHANGE_CHECKED = ("step_id", "message_count", *_SLOTS, "injected_messages", "response")


class _Checker:
    """Checks one recording's own fields (its member runs are handed in one by one) for the first fault."""

    __slots__ = ("door",)

    def __init__(self, door: str) -> None:
        self.door = door

    def fail(self, where: str, problem: str) -> InvalidRecordingError:
        return InvalidRecordingError(self.door, where, problem)

    def recording(self, recording: Recording, at: str) -> None:
        _check_version(recording.schema_version, self.door, f"{at}schema_version")
        check_seal(recording, self.door, at)
        pieces = recording.context_pieces
        messages = recording.messages
        (step_ids,) = as_rows(recording.steps).values("step_id")  # read as columns: no step made a model
        steps = {step_id for step_id in step_ids if isinstance(step_id, str)}
        (indices,) = as_rows(pieces).values("index")
        for n, index in enumerate(indices):
            if index != n:
                raise self.fail(f"{at}context_pieces.{n}.index", "does not match the piece's place in the list")
        self.messages(messages, f"{at}messages")
        self.indices(recording.message_pieces, len(pieces), f"{at}message_pieces")
        if len(recording.message_pieces) > len(messages):
            raise self.fail(f"{at}message_pieces", "names more pieces than there are messages")
        exchanges = as_rows(recording.exchanges).values(*_EXCHANGE_CHECKED)  # as columns: no exchange made a model
        for n, (step_id, count, *slots, injected, response) in enumerate(zip(*exchanges, strict=True)):
            where = f"{at}exchanges.{n}"
            if step_id not in steps:
                raise self.fail(f"{where}.step_id", "names no step of this recording")
            if not _is_int(count) or not 0 <= count <= len(messages):
                raise self.fail(f"{where}.message_count", "is not a count of the recording's messages")
            if count > len(recording.message_pieces):
                raise self.fail(f"{where}.message_count", "counts messages that have no context piece")
            for slot, indices in zip(_SLOTS, slots, strict=True):
                self.indices(indices, len(pieces), f"{where}.{slot}")
            self.messages(injected, f"{where}.injected_messages")
            calls = response["tool_calls"] if isinstance(response, dict) else response.tool_calls
            if not isinstance(calls, list):
                raise self.fail(f"{where}.response.tool_calls", "is not a list")
            for k, call in enumerate(calls):
                self.call(call if isinstance(call, dict) else getattr(call, "__dict__", call),
                          f"{where}.response.tool_calls.{k}")
        self.redaction(recording.redaction, f"{at}redaction")

    def indices(self, values: Any, size: int, where: str) -> None:
        if not isinstance(values, list | tuple | Spliced):  # Spliced: a live run's, shared with its conversation
            raise self.fail(where, "is not a list of piece indices")
        for k, value in enumerate(values):
            if not _is_int(value) or not 0 <= value < size:
                raise self.fail(f"{where}.{k}", f"is not the index of one of the {size} context pieces")

    def messages(self, messages: Any, where: str) -> None:
        if not isinstance(messages, list | Spliced):
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

