"""``Recording``: one run as plain, versioned data (pydantic, exact JSON round trip).

Every explanation and every notebook view is a pure function of a ``Recording``. It holds
only JSON-native values, so ``Recording.model_validate_json(r.model_dump_json()) == r``
holds for every run, and a recording saved from one process explains the same way in
another. A composed run nests its members' recordings in ``children``. Its seal (``Seal``,
or a ``PendingSeal`` still owed) sits beside its records, computed by ``engine._seal``.

Where the rest lives: the generic records (steps, reads, commits, events, context pieces) in
``engine._records``, what an LLM call sent and received in ``engine._exchange``, the saved
form (tables, references to repeated text) in ``engine._saved_form``, the build from a
recorder's capture in ``engine._build``, and every path and key in ``engine.schema``. The
models are offered here too, beside the recording that holds them.

Displayed, a recording (like the ``Run`` around it) carries itself under
:data:`RECORDING_MIME` beside its views, so a saved notebook holds its own evidence.

Role: engine layer. This module is imported lazily (on the first ``run.recording`` access)
so that ``import footprint_lab`` stays light.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    StrictInt,
    WrapSerializer,
    model_serializer,
    model_validator,
)

from footprint_lab.engine._exchange import LLMExchange, ResponseRecord, ToolCallRecord, ToolMargin, UsageRecord
from footprint_lab.engine._records import (
    Annotation,
    Commit,
    CommitEntry,
    ContextPiece,
    Data,
    Decision,
    Event,
    Read,
    RuleEvidence,
    RunnerInfo,
    Step,
)
from footprint_lab.engine._rows import rows_field
from footprint_lab.engine._saved_form import dereferenced, reference, share_texts, untables
from footprint_lab.engine.schema import RECORDING_MIME, SCHEMA_VERSION

#: the records a recording is made of, offered here beside it (they live in ``_records`` and ``_exchange``)
__all__ = ["RECORDING_MIME", "SCHEMA_VERSION", "Annotation", "Commit", "CommitEntry", "ContextPiece", "Decision",
           "Event", "LLMExchange", "PendingSeal", "Read", "Recording", "ResponseRecord", "RuleEvidence",
           "RunnerInfo", "Seal", "Step", "ToolCallRecord", "ToolMargin", "UsageRecord"]


class Seal(Data):
    """A recording's seal (see :mod:`footprint_lab.engine._seal`): the chain's ``head``, a SHA-256 digest per
    record kind (the header counts as one), per kind a CRC-32 tag per field (to locate a break), the
    policy names a scrub re-sealed under, when it was sealed, and, in a copy a notebook output
    carries, a digest of what that output displays."""

    algorithm: str
    head: str
    kinds: dict[str, str]
    tags: dict[str, str]
    scrubbed: list[str] = Field(default_factory=list)
    sealed_at: float = 0.0
    #: per MIME type, the SHA-256 of what the notebook output carrying this copy displays (``engine._saved_seal``)
    display: dict[str, str] = Field(default_factory=dict)


class PendingSeal(Seal):
    """A seal owed since the run ended, worked out the first time anything looks at it.

    ``Agent(..., seal=True)`` seals every run, but hashing a recording means making every one
    of its records, which costs more than the run itself; most runs are never saved or
    checked. So a sealed run's recording carries this stand-in, made from the run's closed
    capture and stamped with the run's end as ``sealed_at``: reading any field, comparing,
    copying, pickling or dumping it (the recording's own dump included) computes the seal
    then, exactly as it would have been computed when the run ended, and from then on it is
    an ordinary ``Seal``.

    It is worked out in two parts. Reading the head, the digests or any other field (and
    ``verify``) works out the proof; the locator ``tags``, which only say *where* a broken seal
    broke, are made when they are read or the seal is compared, copied or dumped, from the
    same values, each kind's text checked against its digest first (a kind changed in
    between gets no tag: a later check then names the kind, not the record). The records are
    read from the run's capture, not from the recording's lists, so records made and changed
    in place before the seal is read are not sealed in (``engine._seal``). A seal whose first
    use needs the tags too (a save, a copy, a comparison) gets both in one pass.
    """

    __slots__ = ("_make", "_tags")

    def __init__(self, make: Callable[[bool], Seal], tags: Callable[[Seal], dict[str, str]] | None = None) -> None:
        object.__setattr__(self, "__dict__", {})  # no fields yet: they come on first use
        object.__setattr__(self, "__pydantic_fields_set__", set())
        object.__setattr__(self, "__pydantic_extra__", None)
        object.__setattr__(self, "__pydantic_private__", None)
        object.__setattr__(self, "_make", make)
        object.__setattr__(self, "_tags", tags)

    @property
    def owed(self) -> bool:
        """``True`` until the seal's proof (head and digests) has been worked out."""
        return self._make is not None

    def worked_out(self) -> Seal:
        """This seal with its proof computed (once): every field but, when they are made later, the tags."""
        return self._work_out(whole=self._tags is None)

    def _work_out(self, *, whole: bool) -> Seal:
        """The owed proof worked out by ``make(whole)``; ``whole``: the tags too, in the same pass over the records."""
        make = self._make
        if make is not None:
            object.__setattr__(self, "_make", None)
            try:
                made = make(whole)
            except BaseException:
                object.__setattr__(self, "_make", make)
                raise
            fields = dict(made.__dict__)
            if whole:
                object.__setattr__(self, "_tags", None)
            else:
                del fields["tags"]  # read through __getattr__, which makes them
            self.__dict__.update(fields)
            object.__setattr__(self, "__pydantic_fields_set__", set(made.__pydantic_fields_set__))
        return self

    def settled(self) -> Seal:
        """This seal with every field computed, the locator tags included (each computed once): a proof
        still owed is worked out with its tags, so a seal first dumped or compared makes them in one pass."""
        self._work_out(whole=True)
        tags = self._tags
        if tags is not None:
            object.__setattr__(self, "_tags", None)
            try:
                self.__dict__["tags"] = tags(self)
            except BaseException:
                object.__setattr__(self, "_tags", tags)
                raise
        return self

    def __getattr__(self, name: str) -> Any:
        if name == "tags" and (self._make is not None or self._tags is not None):
            return self.settled().tags
        if self._make is not None and name in Seal.model_fields:
            return getattr(self.worked_out(), name)
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


class Recording(Data):
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
    # The per-step lists are ``Rows`` (footprint_lab.engine._rows): lists whose models are built
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
        return dereferenced(untables(data))

    @model_serializer(mode="wrap")
    def _saved(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        """Write the saved form (JSON): from schema version 2, a transcript message's text is stored once, and
        so is a long text held in several places (``engine._saved_form.share_texts``)."""
        data = handler(self)
        if info.mode_is_json() and self.schema_version >= 2 and isinstance(data, dict):
            reference(data)
            share_texts(data)
        return data

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The run's views and this recording as JSON under :data:`RECORDING_MIME` (see ``engine._display``)."""
        from footprint_lab.engine._display import bundle

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
