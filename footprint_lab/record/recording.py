"""``Recording``: one run as plain, versioned data (pydantic, exact JSON round trip).

Every explanation and notebook view is a pure function of a ``Recording``. It holds only
JSON-native values, so ``Recording.model_validate_json(r.model_dump_json()) == r`` for every run,
and a recording saved in one process explains the same way in another. A composed run nests its
members' recordings in ``children``. The seal (``Seal``, made by ``sealing.seal``) sits beside the
records. Displayed, a recording carries itself under :data:`RECORDING_MIME` beside its views, so a
saved notebook holds its own evidence.

The record models (from ``record.records`` and ``record.exchange``) are offered here too. The saved
form is in ``record.saved_form``, the build from a capture in ``record.build``, and every path and
key in ``record.schema``.

Role: record layer. Imported lazily (on the first ``run.recording``), so ``import footprint_lab`` stays light.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    Field,
    ModelWrapValidatorHandler,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    StrictInt,
    WrapSerializer,
    model_serializer,
    model_validator,
)

from footprint_lab.record.exchange import LLMExchange, ResponseRecord, ToolCallRecord, ToolMargin, UsageRecord
from footprint_lab.record.kinds import saved_rows
from footprint_lab.record.records import (
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
from footprint_lab.record.rows import rows_field
from footprint_lab.record.saved_form import dereferenced, reference, share_texts, untables
from footprint_lab.record.schema import COPIES, RECORDING_MIME, SCHEMA_VERSION
from footprint_lab.record.spliced import Spliced

#: the records a recording is made of, offered here beside it (they live in ``records`` and ``exchange``)
__all__ = ["RECORDING_MIME", "SCHEMA_VERSION", "Annotation", "Commit", "CommitEntry", "ContextPiece", "Decision",
           "Event", "LLMExchange", "Read", "Recording", "ResponseRecord", "RuleEvidence",
           "RunnerInfo", "Seal", "Step", "ToolCallRecord", "ToolMargin", "UsageRecord"]


class Seal(Data):
    """A recording's seal (see :mod:`footprint_lab.sealing.seal`): the chain's ``head``, a SHA-256 digest per
    record kind (the header counts as one), locator tags per kind (to find where it broke), the policy
    names a scrub re-sealed under, and when it was sealed. A copy a notebook output carries also holds
    digests of what that output displays."""

    algorithm: str
    head: str
    kinds: dict[str, str]
    tags: dict[str, str]
    scrubbed: list[str] = Field(default_factory=list)
    sealed_at: float = 0.0
    #: per MIME type, the SHA-256 of what the notebook output carrying this copy displays (``sealing.output_seal``)
    display: dict[str, str] = Field(default_factory=dict)


def _as_list(value: Any, handler: SerializerFunctionWrapHandler) -> Any:
    """A transcript that shares a conversation's messages (a :class:`~footprint_lab.record.spliced.Spliced`)
    is written as the list it reads as."""
    return handler(list(value) if isinstance(value, Spliced) else value)


class Recording(Data):
    """A whole run, as data."""

    #: kept as written when a recording is masked again (``record.by_field``): a member's mount path (an id
    #: records join on), the seal and the redaction report (made again after masking)
    FIELDS_AS_WRITTEN: ClassVar[tuple[str, ...]] = ("path", "seal", "redaction")

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
    # The per-step lists are ``Rows`` (record.rows): their models are built from the capture on
    # first use, and they write the JSON of plain lists.
    steps: Annotated[list[Step], *rows_field(Step)] = Field(default_factory=list)
    reads: Annotated[list[Read], *rows_field(Read)] = Field(default_factory=list)
    commits: Annotated[list[Commit], *rows_field(Commit)] = Field(default_factory=list)
    decisions: Annotated[list[Decision], *rows_field(Decision)] = Field(default_factory=list)
    events: Annotated[list[Event], *rows_field(Event)] = Field(default_factory=list)
    context_pieces: Annotated[list[ContextPiece], *rows_field(ContextPiece)] = Field(default_factory=list)
    exchanges: Annotated[list[LLMExchange], *rows_field(LLMExchange)] = Field(default_factory=list)
    #: the transcript (a leg that continued a conversation shares its messages until first read)
    messages: Annotated[list[dict[str, Any]], WrapSerializer(_as_list)] = Field(default_factory=list)
    #: for each transcript message, the index of the context piece that carries it
    message_pieces: Annotated[list[int], WrapSerializer(_as_list)] = Field(default_factory=list)
    children: list[Recording] = Field(default_factory=list)
    annotations: list[Annotation] = Field(default_factory=list)
    redaction: dict[str, Any] | None = None
    listener_errors: int = 0
    meta: dict[str, Any] = Field(default_factory=dict)
    #: set by ``footprint_lab.seal``; annotations stay outside it
    seal: Seal | None = None

    def __getattribute__(self, name: str) -> Any:
        """A transcript held shared (a leg that continued a conversation: ``record.spliced``) becomes this
        recording's own list the first time it is read, so a reader always gets a list. Until then nothing
        is kept per carried message (most of a long chat's turns are never read)."""
        value = object.__getattribute__(self, name)
        if type(value) is Spliced:
            value = list(value)
            object.__getattribute__(self, "__dict__")[name] = value
        return value

    @model_validator(mode="wrap")
    @classmethod
    def _unpack(cls, data: Any, handler: ModelWrapValidatorHandler[Recording]) -> Recording:
        """Read the saved form: each kind of records as checked columns (``record.kinds``), each
        other table (:func:`packed`) back to its records, each reference to its value."""
        if not isinstance(data, dict):
            return handler(data)
        # copies name places in records, which a table holds as rows: with copies, the tables are read first
        data, flat = saved_rows(dereferenced(untables(data) if COPIES in data else data))
        recording = handler(dereferenced(untables(data)))
        recording.__dict__.update(flat)
        return recording

    @model_serializer(mode="wrap")
    def _saved(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        """Write the saved form (JSON): from schema version 2, a transcript message's text is stored once,
        and so is a long text held in several places (``record.saved_form.share_texts``)."""
        data = handler(self)
        if info.mode_is_json() and self.schema_version >= 2 and isinstance(data, dict):
            reference(data)
            share_texts(data)
        return data

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The run's views and this recording as JSON under :data:`RECORDING_MIME` (see ``base.display``)."""
        from footprint_lab.base.display import bundle

        return bundle("recording", self, lambda: {"text/plain": repr(self), RECORDING_MIME: self.model_dump(
            mode="json")}, include, exclude)

    def request_messages(self, exchange: LLMExchange) -> list[dict[str, Any]]:
        """The messages an exchange sent, reconstructed exactly from the transcript."""
        held = self.__dict__["messages"]  # read as held: a shared transcript stays shared (see __getattribute__)
        return [*held[: exchange.message_count], *exchange.injected_messages]

    def exchange_pieces(self, exchange: LLMExchange) -> dict[str, list[int]]:
        """The context-piece indices each slot of an exchange was assembled from."""
        return {
            "system": list(exchange.system_pieces),
            "messages": [*self.__dict__["message_pieces"][: exchange.message_count], *exchange.message_pieces],
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
        context ``piece``'s source id, members included (a step id wins over a source of the same name)."""
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
