"""The records a recording is made of: steps, reads, commits, decisions, events, context pieces, notes.

Rule kept here: a record holds only JSON-native values (:func:`jsonable` makes them so), with its
fields in a fixed order. So a recording round-trips exactly through its JSON, and its seal's
canonical text is the same in every process. These are the engine's generic records; an LLM call's
exchange is in :mod:`footprint_lab.record.exchange`.

Role: record layer (pydantic models, loaded with the first recording).
"""

from __future__ import annotations

import enum
import hashlib
import math
import uuid
from collections.abc import Callable
from typing import Any, Literal, TypeVar

import orjson
from pydantic import BaseModel, ConfigDict, Field


class Data(BaseModel):
    """The base of every record: no field it does not declare, fields that can be set."""

    model_config = ConfigDict(extra="forbid", frozen=False)


Made = TypeVar("Made", bound=Data)


def maker(cls: type[Made], *, unset: frozenset[str] = frozenset()) -> Callable[[dict[str, Any]], Made]:
    """A constructor for ``cls`` from values already JSON-native and complete (every field given), unvalidated.

    It calls ``model_construct`` with one fields-set shared by every instance (safe: setting a field
    only adds a name already in it), which saves most of a long run's memory. Every field counts as
    set except those in ``unset`` (given at their defaults, so an ``exclude_unset`` dump leaves them
    out); then each instance gets its own set. The values come from the capture, built from
    JSON-native data, so the dump reads back (``Recording.model_validate_json``) as an equal recording.
    """
    every = frozenset(cls.model_fields) - unset
    construct = cls.model_construct
    if not unset:
        shared = set(every)
        return lambda values: construct(shared, **values)
    return lambda values: construct(set(every), **values)


class RunnerInfo(Data):
    kind: str
    id: str | None = None
    name: str | None = None


class Step(Data):
    step_id: str
    stage: str
    iteration: int | None = None
    status: str
    started_ms: float
    duration_ms: float


class Read(Data):
    step_id: str
    path: list[str]
    writer: str | None
    summary: str


class CommitEntry(Data):
    path: list[str]
    verb: Literal["set", "merge", "append", "delete"]
    value: Any = None


class Commit(Data):
    step_id: str
    entries: list[CommitEntry]


class RuleEvidence(Data):
    rule: str
    reads: dict[str, Any]
    result: Any = None


class Decision(Data):
    step_id: str
    rule: str
    evidence: list[RuleEvidence]
    chosen: str


class Event(Data):
    """The one event envelope, shared by live subscribers and the recording.

    ``seq`` numbers the events of a whole run, member runs included, in delivery order. A
    member's recording keeps the numbers its events were delivered with.
    """

    seq: int
    run_id: str
    type: str
    step_id: str
    payload: dict[str, Any] = Field(default_factory=dict)


class ContextPiece(Data):
    """One piece of what a provider received (or could have), with its chain of custody.

    ``verdict`` is ``admitted`` (it landed at ``position`` of ``slot`` in step ``landed_by``),
    ``skipped`` (its trigger said no, or it had nothing to give) or ``dropped`` (admitted, then
    over the slot's budget: ``detail`` has ``size``, ``budget`` and ``used``). Skipped and
    dropped pieces have ``position == -1`` and no ``landed_by``. ``allowed_by`` is the step
    that gave the verdict. Declared context also records ``declared_at`` (``file:line``) and
    its ``cache`` hint. What ``detail`` holds per kind is listed in
    :mod:`footprint_lab.context.assembly`.
    """

    index: int
    slot: Literal["system", "messages", "tools"]
    position: int
    source_kind: str
    source_id: str
    content: str
    content_hash: str
    trigger: str = "base"
    verdict: Literal["admitted", "skipped", "dropped"] = "admitted"
    reason: str = ""
    allowed_by: str | None = None
    landed_by: str | None = None
    iteration: int | None = None
    detail: dict[str, Any] = Field(default_factory=dict)
    cache: Literal["always", "never", "while_active"] | None = None
    declared_at: str | None = None


class Annotation(Data):
    """An analyst's note on one part of a run: a step id, a context piece's source id, or ``"answer"``.

    ``at`` is when it was written (seconds since the epoch). ``tag`` is a free label
    (``"suspect"``, ``"ok"``...), or ``None``.
    """

    target: str
    text: str
    tag: str | None = None
    at: float = 0.0


def content_hash(text: str) -> str:
    """A short, stable fingerprint of a piece's content."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


class _Fingerprints(dict[str, str]):
    """Each short text's :func:`content_hash`, worked out once per process: runs land the same texts (a
    system prompt, a tool's description, a fact) again and again. It keeps only texts of at most
    :data:`_SHORT` characters, and at most :data:`_KEPT` of them (about 1 MB)."""

    def __missing__(self, text: str) -> str:
        made = content_hash(text)
        if len(text) <= _SHORT and len(self) < _KEPT:
            self[text] = made
        return made


_SHORT, _KEPT = 1024, 1024
#: ``fingerprint(text) == content_hash(text)``, a C lookup for a text seen before. For runs with no
#: redaction policy only: a policy's runs hash their masked texts with :func:`content_hash`, keeping none.
fingerprint = _Fingerprints().__getitem__


def jsonable(value: Any) -> Any:
    """``value`` as JSON-native data, so a recording round-trips exactly.

    A mapping comes back with its keys sorted, as a saved notebook sorts them, so free-form data
    reads back identical and the seal still holds after the trip. Plain text, whole numbers,
    flags and ``None`` pass through as they are (the build calls this for every captured value).

    Other data JSON can hold goes through orjson and back, keys sorted. Anything else takes a walk
    that writes values as orjson would: an enum as its value, a UUID as its text, a number that is
    not finite as ``None``. A set becomes a sorted list, a model its JSON dump, a mapping's keys
    text, and any other object its ``repr``.
    """
    if type(value) in _PLAIN:
        return value
    try:
        return orjson.loads(native_text(value))
    except TypeError:  # a key that is not text, a surrogate, a set, a model, an object...
        return _walk(value)


def jsonable_each(values: list[Any]) -> list[Any]:
    """``[jsonable(v) for v in values]``, in one orjson call each way when all of them can be written."""
    try:
        made: list[Any] = orjson.loads(native_text(values))
    except TypeError:
        return [jsonable(value) for value in values]
    return made


def native_text(value: Any) -> bytes:
    """The JSON text :func:`jsonable` reads ``value`` back from: compact, keys sorted at every level.

    Raises ``TypeError`` for data orjson does not write natively (:func:`jsonable` then walks it).
    """
    return orjson.dumps(value, default=_refuse, option=_NATIVE)


def _walk(value: Any) -> Any:
    if type(value) in _PLAIN:
        return value
    if isinstance(value, dict):
        out = {str(k): _walk(v) for k, v in value.items()}
        return out if len(out) < 2 else {k: out[k] for k in sorted(out)}
    if isinstance(value, list | tuple):
        return [_walk(v) for v in value]
    if isinstance(value, enum.Enum):
        return _walk(value.value)
    if value is None or isinstance(value, str | bool | int):  # subclasses
        return value
    if isinstance(value, float):  # a subclass (numpy's float64) as the float it is: orjson writes that one
        return float(value) if math.isfinite(value) else None
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, set | frozenset):
        return sorted((_walk(v) for v in value), key=repr)
    if isinstance(value, BaseModel):
        return jsonable(value.model_dump(mode="json"))
    return repr(value)


def _refuse(value: Any) -> Any:
    raise TypeError(type(value).__name__)


#: what orjson may write natively: every other type (a dataclass, a date, a subclass of ``str``...) takes the walk
_NATIVE = (orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
           | orjson.OPT_PASSTHROUGH_SUBCLASS)
#: the types :func:`jsonable` passes through as they are (exact types: a subclass takes the long way)
_PLAIN = frozenset({str, int, bool, type(None)})
