"""``Recording``: one run as plain, versioned data (pydantic, exact JSON round trip).

Every explanation and every notebook view is a pure function of a ``Recording``. It holds
only JSON-native values, so ``Recording.model_validate_json(r.model_dump_json()) == r``
holds for every run, and a recording saved from one process explains the same way in
another. A composed run nests its members' recordings in ``children``.

Light on memory: the models are made from the capture without validating it again (its
values are JSON-native already), sharing one fields-set per class, and the per-step lists
(steps, reads, commits, decisions, events, context pieces, exchanges) are
:class:`~footprint_lab.engine.rows.Rows` made on first use, so holding a recording costs
about what its capture does (bench/bench_memory.py).

Displayed, a recording (like the ``Run`` around it) carries itself under
:data:`RECORDING_MIME` beside its views, so a saved notebook holds its own evidence.

Role: engine layer. This module is imported lazily (on the first ``run.recording`` access)
so that ``import footprint_lab`` stays light.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeGuard

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    StrictInt,
    WrapSerializer,
    model_serializer,
    model_validator,
)

from footprint_lab.engine.captured import OVER_BUDGET, UsageCounts, as_dict, budget_reason
from footprint_lab.engine.recall import swept_tokens
from footprint_lab.engine.rows import Rows, rows_field
from footprint_lab.engine.schema import MESSAGE_REF, MESSAGES, RECORDING_MIME, SCHEMA_VERSION

if TYPE_CHECKING:
    from footprint_lab.engine.recorder import Recorder



class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)


class RunnerInfo(_Data):
    kind: str
    id: str | None = None
    name: str | None = None


class Step(_Data):
    step_id: str
    stage: str
    iteration: int | None = None
    status: str
    started_ms: float
    duration_ms: float


class Read(_Data):
    step_id: str
    path: list[str]
    writer: str | None
    summary: str


class CommitEntry(_Data):
    path: list[str]
    verb: Literal["set", "merge", "append", "delete"]
    value: Any = None


class Commit(_Data):
    step_id: str
    entries: list[CommitEntry]


class RuleEvidence(_Data):
    rule: str
    reads: dict[str, Any]
    result: Any = None


class Decision(_Data):
    step_id: str
    rule: str
    evidence: list[RuleEvidence]
    chosen: str


class Event(_Data):
    """The one event envelope, shared by live subscribers and the recording.

    ``seq`` numbers the events of a whole run, its member runs included, in delivery order;
    a member's recording keeps the numbers its events were delivered with.
    """

    seq: int
    run_id: str
    type: str
    step_id: str
    payload: dict[str, Any] = Field(default_factory=dict)


class ContextPiece(_Data):
    """One piece of what a provider received (or could have), with its chain of custody.

    ``verdict`` is ``admitted`` (it landed at ``position`` of ``slot`` in step ``landed_by``),
    ``skipped`` (its trigger said no, or it had nothing to give) or ``dropped`` (admitted, then
    over the slot's budget: ``detail`` has ``size``, ``budget`` and ``used``); skipped and
    dropped pieces have ``position == -1`` and no ``landed_by``. ``allowed_by`` is the step
    that gave the verdict. Declared context also records ``declared_at`` (``file:line``) and
    its ``cache`` hint; what ``detail`` holds per kind is listed in
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


class UsageRecord(_Data):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    estimated: bool = False


class ToolCallRecord(_Data):
    id: str
    name: str
    args: dict[str, Any]


class ToolMargin(_Data):
    """How close one tool choice was, from the provider's log-probabilities (``explain.choice``).

    ``logprob`` is the deciding token's; ``runner_up`` the best other token at that position and
    ``runner_up_tool`` the offered tool it would have begun (``None`` when it begins none);
    ``margin`` is the difference in nats (``None`` when the provider listed no alternative).
    """

    call_id: str
    tool: str
    logprob: float
    runner_up: str | None = None
    runner_up_tool: str | None = None
    runner_up_logprob: float | None = None
    margin: float | None = None


class ResponseRecord(_Data):
    content: str | None
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    stop_reason: str | None = None
    model: str | None = None
    usage: UsageRecord = Field(default_factory=UsageRecord)
    #: per tool call, how close the choice was, when the provider reported log-probabilities
    tool_margins: list[ToolMargin] = Field(default_factory=list)


class LLMExchange(_Data):
    """One LLM call: the request exactly as assembled, and the response as received.

    The request's messages are ``recording.messages[:message_count]`` followed by
    ``injected_messages``; storing the prefix length keeps a long run linear in size.
    """

    step_id: str
    iteration: int | None
    model: str
    system: str
    message_count: int
    injected_messages: list[dict[str, Any]] = Field(default_factory=list)
    tools: list[dict[str, Any]] = Field(default_factory=list)
    system_pieces: list[int] = Field(default_factory=list)
    message_pieces: list[int] = Field(default_factory=list)
    tool_pieces: list[int] = Field(default_factory=list)
    tools_withheld: bool = False
    response: ResponseRecord
    duration_ms: float = 0.0
    wire: dict[str, Any] | None = None


class Annotation(_Data):
    """An analyst's note on one part of a run: a step id, a context piece's source id, or ``"answer"``.

    ``at`` is when it was written (seconds since the epoch); ``tag`` is a free label
    (``"suspect"``, ``"ok"``...), ``None`` when not given.
    """

    target: str
    text: str
    tag: str | None = None
    at: float = 0.0


class Seal(_Data):
    """A recording's seal (see :mod:`footprint_lab.engine.seal`): the chain's ``head``, a SHA-256 digest per
    record kind (the header counts as one), per kind a CRC-32 tag per field (to locate a break), the
    policy names a scrub re-sealed under, and when it was sealed."""

    algorithm: str
    head: str
    kinds: dict[str, str]
    tags: dict[str, str]
    scrubbed: list[str] = Field(default_factory=list)
    sealed_at: float = 0.0


class PendingSeal(Seal):
    """A seal owed since the run ended, worked out the first time anything looks at it.

    ``Agent(..., seal=True)`` seals every run, but hashing a recording means making every one
    of its records, which costs more than the run itself; most runs are never saved or
    checked. So a sealed run's recording carries this stand-in, made from the run's closed
    capture and stamped with the run's end as ``sealed_at``: reading any field, comparing,
    copying, pickling or dumping it (the recording's own dump included) computes the seal
    then, exactly as it would have been computed when the run ended, and from then on it is
    an ordinary ``Seal``.
    """

    __slots__ = ("_make",)

    def __init__(self, make: Callable[[], Seal]) -> None:  # no fields yet: they come on first use
        object.__setattr__(self, "__dict__", {})
        object.__setattr__(self, "__pydantic_fields_set__", set())
        object.__setattr__(self, "__pydantic_extra__", None)
        object.__setattr__(self, "__pydantic_private__", None)
        object.__setattr__(self, "_make", make)

    @property
    def owed(self) -> bool:
        """``True`` until the seal has been worked out."""
        return self._make is not None

    def settled(self) -> Seal:
        """This seal with its fields computed (they are computed once)."""
        make = self._make
        if make is not None:
            object.__setattr__(self, "_make", None)
            try:
                made = make()
            except BaseException:
                object.__setattr__(self, "_make", make)
                raise
            self.__dict__.update(made.__dict__)
            object.__setattr__(self, "__pydantic_fields_set__", set(made.__pydantic_fields_set__))
        return self

    def __getattr__(self, name: str) -> Any:
        if self._make is not None and name in Seal.model_fields:
            return getattr(self.settled(), name)
        return super().__getattr__(name)  # type: ignore[misc]

    def __eq__(self, other: object) -> bool:
        self.settled()
        if isinstance(other, PendingSeal):
            other.settled()
        return isinstance(other, Seal) and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self.as_seal())

    def as_seal(self) -> Seal:
        """A plain ``Seal`` with these fields (what copies, pickles and dumps are made of)."""
        return Seal.model_construct(**self.settled().__dict__)

    def __copy__(self) -> Seal:  # type: ignore[override]
        return self.as_seal()

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Seal:  # type: ignore[override]
        return self.as_seal().model_copy(deep=True)

    def __reduce__(self) -> Any:
        return self.as_seal().__reduce__()

    def model_dump(self, **options: Any) -> dict[str, Any]:
        return self.as_seal().model_dump(**options)

    def model_dump_json(self, **options: Any) -> str:
        return self.as_seal().model_dump_json(**options)


def _settled_seal(value: Seal | None, handler: Any) -> Any:
    """How a recording's dump writes its seal: a pending one is computed first."""
    return handler(value.as_seal() if isinstance(value, PendingSeal) else value)


class Recording(_Data):
    """A whole run, as data."""

    #: a whole number, never text or a boolean that would pass for one (the door refuses a newer one)
    schema_version: StrictInt = SCHEMA_VERSION
    run_id: str
    #: where the run was mounted: the mounting step's id for a member run, empty at top level
    path: str = ""
    runner: RunnerInfo
    identity: dict[str, str] | None = None
    status: Literal["finished", "failed", "paused", "cancelled"]
    input: dict[str, Any]
    answer: str | None = None
    stopped_early: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    started_at: float
    duration_ms: float
    # The per-step lists are ``Rows`` (footprint_lab.engine.rows): lists whose models are built
    # from the capture on first use, with the JSON of plain lists.
    steps: Annotated[list[Step], *rows_field(Step)] = Field(default_factory=list)
    reads: Annotated[list[Read], *rows_field(Read)] = Field(default_factory=list)
    commits: Annotated[list[Commit], *rows_field(Commit)] = Field(default_factory=list)
    decisions: Annotated[list[Decision], *rows_field(Decision)] = Field(default_factory=list)
    events: Annotated[list[Event], *rows_field(Event)] = Field(default_factory=list)
    context_pieces: Annotated[list[ContextPiece], *rows_field(ContextPiece)] = Field(default_factory=list)
    exchanges: Annotated[list[LLMExchange], *rows_field(LLMExchange)] = Field(default_factory=list)
    messages: list[dict[str, Any]] = Field(default_factory=list)
    #: for each transcript message, the index of the context piece that carries it
    message_pieces: list[int] = Field(default_factory=list)
    children: list[Recording] = Field(default_factory=list)
    annotations: list[Annotation] = Field(default_factory=list)
    redaction: dict[str, Any] | None = None
    listener_errors: int = 0
    meta: dict[str, Any] = Field(default_factory=dict)
    #: set by ``footprint_lab.seal``; annotations stay outside it
    seal: Annotated[Seal | None, WrapSerializer(_settled_seal)] = None

    @model_validator(mode="before")
    @classmethod
    def _unpack(cls, data: Any) -> Any:
        """Read the saved form: each table (:func:`packed`) back to its records, each reference to its value."""
        return _dereferenced(_untables(data))

    @model_serializer(mode="wrap")
    def _saved(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        """Write the saved form (JSON): from schema version 2, a transcript message's text is stored once."""
        data = handler(self)
        if info.mode_is_json() and self.schema_version >= 2 and isinstance(data, dict):
            _reference(data)
        return data

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The run's views and this recording as JSON under :data:`RECORDING_MIME` (see ``engine.display``)."""
        from footprint_lab.engine.display import bundle

        return bundle("recording", self, lambda: {"text/plain": repr(self), RECORDING_MIME: self.model_dump(
            mode="json")}, include, exclude)

    def request_messages(self, exchange: LLMExchange) -> list[dict[str, Any]]:
        """The messages an exchange sent, reconstructed exactly from the transcript."""
        return [*self.messages[: exchange.message_count], *exchange.injected_messages]

    def exchange_pieces(self, exchange: LLMExchange) -> dict[str, list[int]]:
        """The context-piece indices each slot of an exchange was assembled from."""
        return {
            "system": list(exchange.system_pieces),
            "messages": [*self.message_pieces[: exchange.message_count], *exchange.message_pieces],
            "tools": list(exchange.tool_pieces),
        }

    def call_pieces(self, exchange: LLMExchange, *, left_out: bool = False) -> list[ContextPiece]:
        """The pieces an exchange was sent, slot by slot (system, messages, tools), in position order.

        With ``left_out``, the pieces its iteration evaluated but did not send (skipped or
        dropped) follow, in the order they were evaluated.
        """
        pieces = self.context_pieces
        sent = [pieces[i] for indices in self.exchange_pieces(exchange).values() for i in indices]
        if left_out:
            sent += [p for p in pieces if p.verdict != "admitted" and p.iteration == exchange.iteration]
        return sent

    def annotation_targets(self) -> dict[str, str]:
        """What a note can be attached to, each with its kind: ``answer``, every ``step`` id and every
        context ``piece``'s source id, member runs included (a step id wins over a same-named source)."""
        pieces: dict[str, str] = {}
        steps: dict[str, str] = {}
        stack = [self]
        while stack:
            recording = stack.pop()
            pieces.update((piece.source_id, "piece") for piece in recording.context_pieces)
            steps.update((step.step_id, "step") for step in recording.steps)
            stack.extend(recording.children)
        return {**pieces, **steps, "answer": "answer"}

    def exchange_at(self, step_id: str) -> LLMExchange | None:
        """The exchange recorded by an LLM-call step, or ``None``."""
        for exchange in self.exchanges:
            if exchange.step_id == step_id:
                return exchange
        return None


#: The fields of a context piece, besides its content and detail, that can carry text from a
#: model, a tool, a user or a document (a redaction policy covers them too).
_PIECE_TEXT = frozenset({"source_id", "reason"})


#: the lists of flat records a recording stores as tables in its compact form, with each record's model
_TABLES: dict[str, type[_Data]] = {"steps": Step, "reads": Read, "events": Event, "context_pieces": ContextPiece}


#: the names the saved form (its tables and references) puts where a reader that looks values up by key
#: (a scrubber masking by key) expects a field's name: such a reader works on :func:`unpacked` data
TABLE_KEYS = frozenset({"columns", "rows", "same", MESSAGE_REF,
                        *(name for model in _TABLES.values() for name in model.model_fields)})


def packed(recording: Recording) -> dict[str, Any]:
    """The recording as compact JSON-native data that ``Recording.model_validate`` reads back equal.

    Fields at their defaults are left out, except ``schema_version`` (a reader needs it to read
    the rest). Each list of flat records (steps, reads, events, context pieces) becomes a table,
    ``{"columns": [...], "rows": [[...], ...]}``, naming each field once instead of once per
    record; a column with one value in every row is written once, under ``same``. Members
    (``children``) are packed the same way. Nothing is dropped: a record's field left at its
    default is written as that default.
    """
    data: dict[str, Any] = recording.model_dump(mode="json", exclude_defaults=True)
    return {"schema_version": recording.schema_version, **_pack(data)}


def _pack(data: dict[str, Any]) -> dict[str, Any]:
    for name, model in _TABLES.items():
        records = data.get(name)
        if records:
            data[name] = _table(records, model)
    if data.get("children"):
        data["children"] = [_pack(child) for child in data["children"]]
    return data


def _table(records: list[dict[str, Any]], model: type[_Data]) -> dict[str, Any]:
    columns = list(dict.fromkeys(key for record in records for key in record))
    fields = model.model_fields
    defaults = {name: fields[name].get_default(call_default_factory=True) for name in columns
                if not fields[name].is_required()}
    rows = [[record[name] if name in record else defaults[name] for name in columns] for record in records]
    same = {name: rows[0][at] for at, name in enumerate(columns)
            if len(rows) > 1 and all(row[at] == rows[0][at] for row in rows)}
    if same:
        keep = [at for at, name in enumerate(columns) if name not in same]
        columns = [columns[at] for at in keep]
        rows = [[row[at] for at in keep] for row in rows]
    return {"columns": columns, "rows": rows, **({"same": same} if same else {})}


def unpacked(data: Any) -> Any:
    """Recording data with every table and reference (its members' too) back in record form; other data as given.

    For readers that work on the data rather than the model, e.g. a scrubber masking values by key.
    """
    data = _dereferenced(_untables(data))
    if isinstance(data, dict) and isinstance(data.get("children"), list):
        data = {**data, "children": [unpacked(child) for child in data["children"]]}
    return data


def _untables(data: Any) -> Any:
    if isinstance(data, dict) and any(isinstance(data.get(name), dict) for name in _TABLES):
        data = {**data, **{name: _untable(data[name]) for name in _TABLES if isinstance(data.get(name), dict)}}
    return data


def _untable(table: dict[str, Any]) -> Any:
    """A table back to its records; anything else is given back for the schema to refuse by field."""
    columns, rows, same = table.get("columns"), table.get("rows"), table.get("same", {})
    if not (isinstance(columns, list) and isinstance(rows, list) and isinstance(same, dict)
            and all(isinstance(row, list) and len(row) == len(columns) for row in rows)):
        return table
    return [{**same, **dict(zip(columns, row, strict=True))} for row in rows]


def _reference(data: dict[str, Any]) -> None:
    """Replace, in one recording's JSON data, each copy of a transcript message by its index (see ``engine.schema``).

    A commit entry that appends message ``k`` to the transcript keeps ``{"message": k}`` in place
    of its value, and a context piece whose content is message ``k``'s text keeps
    ``{"message": k}`` as its content: a 5 MB tool result is then saved once, in ``messages``,
    and not three times. Only exact copies are replaced, so a value a redaction policy masked
    differently in one place is kept as it is.
    """
    messages = data.get("messages")
    if not messages:
        return
    path = list(MESSAGES)
    at = 0
    for commit in data.get("commits") or ():
        for entry in commit["entries"]:
            if entry.get("verb") == "append" and entry.get("path") == path and at < len(messages):
                found = _next_equal(messages, entry.get("value"), at)
                if found is not None:
                    del entry["value"]
                    entry[MESSAGE_REF] = found
                    at = found + 1
    pieces = data.get("context_pieces") or []
    for k, index in enumerate(data.get("message_pieces") or ()):
        if k < len(messages) and isinstance(index, int) and 0 <= index < len(pieces):
            piece, text = pieces[index], messages[k].get("content")
            if isinstance(text, str) and text and piece.get("content") == text:
                piece["content"] = {MESSAGE_REF: k}


def _next_equal(messages: list[Any], value: Any, start: int) -> int | None:
    """The first message from ``start`` on equal to ``value`` (the next one is nearly always it)."""
    for k in range(start, len(messages)):
        if messages[k] == value:
            return k
    return None


def _dereferenced(data: Any) -> Any:
    """Recording data with each reference :func:`_reference` wrote back to the value it stands for.

    A reference that names no message is left as it is, for the schema to refuse by its field.
    """
    if not isinstance(data, dict):
        return data
    messages = data.get("messages")
    if not isinstance(messages, list) or not messages:
        return data
    commits, pieces = data.get("commits"), data.get("context_pieces")
    if isinstance(commits, list) and any(_refers(entry) for commit in commits if isinstance(commit, dict)
                                         for entry in _entries(commit)):
        data = {**data, "commits": [_commit_values(commit, messages) for commit in commits]}
    if isinstance(pieces, list) and any(isinstance(piece, dict) and _message_of(piece.get("content"), messages)
                                        is not None for piece in pieces):
        data = {**data, "context_pieces": [_piece_content(piece, messages) for piece in pieces]}
    return data


def _entries(commit: dict[str, Any]) -> list[Any]:
    entries = commit.get("entries")
    return entries if isinstance(entries, list) else []


def _refers(entry: Any) -> bool:
    return isinstance(entry, dict) and MESSAGE_REF in entry


def _commit_values(commit: Any, messages: list[Any]) -> Any:
    """A commit with each entry's reference read: the message it names, or a value written beside it."""
    if not isinstance(commit, dict) or not any(_refers(entry) for entry in _entries(commit)):
        return commit
    entries = []
    for entry in _entries(commit):
        k = entry.get(MESSAGE_REF) if _refers(entry) else None
        if "value" in entry and _refers(entry):  # a value written beside the reference is the value
            entry = {name: value for name, value in entry.items() if name != MESSAGE_REF}
        elif _is_index(k, messages):
            entry = {**{name: value for name, value in entry.items() if name != MESSAGE_REF}, "value": messages[k]}
        entries.append(entry)
    return {**commit, "entries": entries}


def _message_of(content: Any, messages: list[Any]) -> str | None:
    """The text a piece's content reference names, or ``None`` when it is no such reference."""
    if isinstance(content, dict) and len(content) == 1:
        k = content.get(MESSAGE_REF)
        if _is_index(k, messages) and isinstance(messages[k], dict) and isinstance(messages[k].get("content"), str):
            return str(messages[k]["content"])
    return None


def _piece_content(piece: Any, messages: list[Any]) -> Any:
    text = _message_of(piece.get("content"), messages) if isinstance(piece, dict) else None
    return piece if text is None else {**piece, "content": text}


def _is_index(value: Any, items: list[Any]) -> TypeGuard[int]:
    return type(value) is int and 0 <= value < len(items)


def content_hash(text: str) -> str:
    """A short, stable fingerprint of a piece's content."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def jsonable(value: Any) -> Any:
    """``value`` as JSON-native data, so a recording round-trips exactly.

    A mapping comes back with its keys sorted: a saved notebook sorts every key, so a
    recording whose free-form data is already in that order reads back identical, text
    included, which is what lets its seal hold after the trip (``engine.seal``). Plain text,
    whole numbers, flags and ``None`` are taken as they are without a call per value (a
    recording's build passes through this for every captured value).
    """
    if type(value) in _PLAIN:
        return value
    if isinstance(value, dict):
        out = {str(k): v if type(v) in _PLAIN else jsonable(v) for k, v in value.items()}
        return out if len(out) < 2 else {k: out[k] for k in sorted(out)}
    if isinstance(value, list | tuple):
        return [v if type(v) in _PLAIN else jsonable(v) for v in value]
    if value is None or isinstance(value, str | bool | int):  # subclasses (an enum's member, say)
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, set | frozenset):
        return sorted((jsonable(v) for v in value), key=repr)
    if isinstance(value, BaseModel):
        return jsonable(value.model_dump(mode="json"))
    return repr(value)


#: the types :func:`jsonable` passes through as they are (exact types: a subclass takes the long way)
_PLAIN = frozenset({str, int, bool, type(None)})


def _maker(cls: type[_Data]) -> Any:
    """A constructor for ``cls`` from values already JSON-native and complete (every field given).

    What ``model_construct`` does, minus its per-field loop, and with one fields-set shared by
    every instance (every field is always set, and ``__setattr__`` only adds names to it). A
    validated model carries its own set and a copy of every value: about 1.2 kB per object,
    which for a long run's tens of thousands of events, reads and steps was most of the memory
    it kept (bench/bench_memory.py). Values come from the capture, which the runners build
    from JSON-native data, and ``Recording.model_validate_json`` of the dump gives back an
    equal recording (tests/test_engine.py).
    """
    fields_set = set(cls.model_fields)
    new = cls.__new__
    setattr_ = object.__setattr__

    def make(values: dict[str, Any]) -> Any:
        model = new(cls)
        setattr_(model, "__dict__", values)
        setattr_(model, "__pydantic_fields_set__", fields_set)
        setattr_(model, "__pydantic_extra__", None)
        setattr_(model, "__pydantic_private__", None)
        return model

    return make


(_step, _read, _commit, _entry, _decision, _rule, _event, _context_piece, _llm_exchange, _response, _usage,
 _tool_call, _tool_margin, _recording) = (_maker(model) for model in (
    Step, Read, Commit, CommitEntry, Decision, RuleEvidence, Event, ContextPiece, LLMExchange, ResponseRecord,
    UsageRecord, ToolCallRecord, ToolMargin, Recording))


def _unchanged(value: Any) -> Any:
    return value


def _sweeper(recorder: Recorder) -> Callable[[Any], Any]:
    """What masks again the secrets the policy learned only after some records were captured.

    A record is scrubbed as it happens, so one captured before a secret was learned (a
    password typed in the message, then put under a covered key by a tool call) still holds
    it; the Recording is the saved evidence, so each record is swept once more as its row is
    made. Only when the policy learned something (``RunScrubber.sweep``): otherwise, and for a
    run without a policy, nothing is done per record.
    """
    policy = recorder.policy
    sweep: Callable[[Any], Any] | None = getattr(policy, "sweep", None)
    return sweep if sweep is not None and getattr(policy, "learned", False) else _unchanged


def build_recording(
    recorder: Recorder,
    *,
    runner: dict[str, Any],
    status: str,
    input: dict[str, Any],
    answer: str | None,
    identity: dict[str, str] | None = None,
    stopped_early: dict[str, Any] | None = None,
    error: dict[str, Any] | None = None,
    ended_ns: int,
    children: list[Recording] | None = None,
    redaction: dict[str, Any] | None = None,
) -> Recording:
    """Materialise a recorder's capture into a ``Recording``.

    The recording's own fields are made now; its per-step lists are ``Rows`` over the
    capture, each made into models the first time it is read (the capture's lists only
    grow, so the counts taken here fix what the recording holds).
    """
    start = recorder.started_ns
    clean = recorder.clean
    captured_steps = recorder.steps

    def step(i: int) -> Step:
        s = captured_steps[i]
        return _step({"step_id": s[0], "stage": s[1], "iteration": s[2], "status": s[5],
                      "started_ms": (s[3] - start) / 1e6, "duration_ms": ((s[4] or s[3]) - s[3]) / 1e6})

    sweep = _sweeper(recorder)
    captured_reads = recorder.reads

    def read(i: int) -> Read:
        r = captured_reads[i]
        return _read({"step_id": r[0], "path": list(r[1]), "writer": r[2], "summary": sweep(r[3])})

    captured_commits, paths, verbs, values = recorder.commits, recorder.entry_paths, recorder.entry_verbs, \
        recorder.entry_values

    def commit(i: int) -> Commit:
        step_id, first, end = captured_commits[i]
        return _commit({"step_id": step_id, "entries": [
            _entry({"path": list(paths[j]), "verb": verbs[j], "value": sweep(jsonable(values[j]))})
            for j in range(first, end)
        ]})

    captured_decisions = recorder.decisions

    def decision(i: int) -> Decision:
        d = captured_decisions[i]
        return _decision({"step_id": d[0], "rule": d[1], "evidence": [
            _rule({"rule": n, "reads": sweep(jsonable(r)), "result": sweep(jsonable(x))}) for n, r, x in d[2]
        ], "chosen": sweep(d[3])})

    run_id = recorder.run_id
    seqs, types, event_steps, payloads, refs = (recorder.event_seqs, recorder.event_types, recorder.event_steps,
                                                recorder.event_payloads, recorder.event_refs)

    # a value learned late whose words went out in neighbouring streamed tokens: those tokens as they should read
    tokens = swept_tokens(types, event_steps, payloads, recorder.policy) if sweep is not _unchanged else {}

    def event(i: int) -> Event:
        type_, payload = types[i], tokens.get(i, payloads[i])
        # a routine event's payload (made from its record) holds paths and step ids, never a value: nothing to sweep
        payload = recorder.payload(type_, None, refs[i]) if payload is None else sweep(jsonable(payload))
        return _event({"seq": seqs[i], "run_id": run_id, "type": type_, "step_id": event_steps[i],
                       "payload": payload})

    captured_pieces, captured_exchanges = recorder.pieces, recorder.exchanges
    shared_tools: dict[int, Any] = {}
    return _recording({
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "path": recorder.path,
        "runner": RunnerInfo(**runner),
        "identity": clean(identity),
        "status": status,
        "input": clean(jsonable(input)),
        "answer": clean(answer),
        "stopped_early": clean(jsonable(stopped_early)),
        "error": clean(jsonable(error)),
        "started_at": recorder.started_at,
        "duration_ms": (ended_ns - start) / 1e6,
        "steps": Rows(count=len(captured_steps), make=step),
        "reads": Rows(count=len(captured_reads), make=read),
        "commits": Rows(count=len(captured_commits), make=commit),
        "decisions": Rows(count=len(captured_decisions), make=decision),
        "events": Rows(count=len(seqs), make=event),
        "context_pieces": Rows(count=len(captured_pieces),
                               make=lambda i: _piece(i, as_dict(captured_pieces[i]), clean)),
        "exchanges": Rows(count=len(captured_exchanges),
                          make=lambda i: _exchange(as_dict(captured_exchanges[i]), clean, recorder, shared_tools)),
        "messages": clean(jsonable(recorder.messages)),
        "message_pieces": list(recorder.message_pieces),
        "children": children or [],
        "annotations": [Annotation.model_validate(note) for note in clean(jsonable(recorder.annotations))],
        "redaction": redaction,
        "listener_errors": recorder.listener_errors,
        "meta": clean(jsonable(recorder.meta)),
        "seal": None,
    })


_PIECE_FIELDS = frozenset(ContextPiece.model_fields) - {"index", "content", "content_hash", "detail"}
_PIECE_ORDER = tuple(ContextPiece.model_fields)
_PIECE_DEFAULTS = {name: field.default for name, field in ContextPiece.model_fields.items() if name in _PIECE_FIELDS}


def _piece(index: int, piece: dict[str, Any], clean: Any) -> ContextPiece:
    """A captured piece (a ``CapturedPiece``, as a dict): its known fields as they are, its evidence keys
    into ``detail``.

    Runners capture pieces as flat tuples of plain values (see ``engine.captured``), so evidence
    such as a tool result's ``requested_by`` rides beside the fields and is gathered into
    ``detail`` here; a field a piece leaves out takes its default.
    """
    content = clean(piece["content"])
    values = dict(_PIECE_DEFAULTS)
    detail = {}
    for key, value in piece.items():
        if key in _PIECE_FIELDS:
            values[key] = clean(value) if key in _PIECE_TEXT else value
        elif key != "content":
            detail[key] = value
    if values["reason"] == OVER_BUDGET and values["verdict"] == "dropped":
        values["reason"] = budget_reason(values["slot"], detail["budget"], detail["used"], detail["size"])
    values.update(index=index, content=content, content_hash=content_hash(content), detail=jsonable(clean(detail)))
    return _context_piece({name: values[name] for name in _PIECE_ORDER})


_RESPONSE_FIELDS = ("content", "tool_calls", "stop_reason", "response_model", "usage", "tool_margins")


def _exchange(captured: dict[str, Any], clean: Any, recorder: Recorder, shared_tools: dict[int, Any]) -> LLMExchange:
    """A captured exchange (flat: the response's fields sit beside the request's) as a model.

    Its ``tools`` may be an index into the recorder's shared values (made JSON-native once per
    index, in ``shared_tools``: every call of a run is usually sent the same tools), and its
    tool calls (given ``reply`` instead of ``tool_calls``) those of the reply message, at that
    index in the transcript.
    """
    tools = captured.get("tools")
    if isinstance(tools, int):
        made = shared_tools.get(tools)
        if made is None:
            made = shared_tools[tools] = clean(jsonable(recorder.shared[tools]))
        captured = {**captured, "tools": ()}
    else:
        made = None
    if "reply" in captured:
        captured = {**captured, "tool_calls": recorder.messages[captured["reply"]].get("tool_calls", [])}
    data = clean(jsonable({k: v for k, v in captured.items() if k not in _RESPONSE_FIELDS}))
    if made is not None:
        data["tools"] = made  # one list for every exchange sent the same tools, as the run sent them
    response = clean(jsonable({k: captured.get(k) for k in _RESPONSE_FIELDS}))
    usage = response["usage"]
    # the captured usage counts (engine.captured.UsageCounts), a list once made JSON-native
    usage = dict(zip(UsageCounts._fields, usage, strict=True)) if isinstance(usage, list) else usage or {}
    calls = response["tool_calls"] or []
    data["response"] = _response({
        "content": response["content"],
        "tool_calls": [_tool_call({"id": c["id"], "name": c["name"], "args": c["args"]}) for c in calls],
        "stop_reason": response["stop_reason"], "model": response["response_model"],
        "usage": _usage({name: usage.get(name, default) for name, default in _USAGE_DEFAULTS.items()}),
        "tool_margins": [_tool_margin({name: margin.get(name) for name in _MARGIN_FIELDS})  # in field order
                         for margin in response["tool_margins"] or ()],
    })
    return _llm_exchange({name: data[name] if name in data else field.get_default(call_default_factory=True)
                          for name, field in LLMExchange.model_fields.items()})


_USAGE_DEFAULTS = {name: field.default for name, field in UsageRecord.model_fields.items()}
_MARGIN_FIELDS = tuple(ToolMargin.model_fields)
