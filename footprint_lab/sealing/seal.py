"""Sealed recordings: a SHA-256 hash chain a reviewer can check offline, with no key and no network.

Defect closed: a shared notebook's evidence (a commit's value, a piece's content, the answer) could
be edited after the run, and nothing showed it. :func:`seal` stores a hash chain in
``recording.seal``; :func:`verify` recomputes it and returns a :class:`Verdict`.

The chain (``sha256-chain/6``, the one algorithm) covers, in order: a header (run id, runner, status,
input, answer, timings, redaction report...), each record kind in ``_canonical.KINDS`` order, then
each member run's own seal. Annotations stay outside, so a sealed run can still be annotated. Each
kind is one canonical text (``sealing._canonical``, the same from models, columns or saved JSON),
hashed with SHA-256. The head hashes the algorithm, every digest, the members' heads, a notebook
output's display digests (``sealing.output_seal``), the scrub names and the time of sealing.

A check compares the header, then the transcript, then the other kinds, and names the first that
differs, down to its record and field (``sealing._locator``). A seal of an earlier chain (``/2`` to
``/5``, from the unreleased 0.1) is refused by name at the recording door, to be sealed again.

A seal proves the recording is unchanged since this library sealed it. It is not a signature: anyone
with the library can seal an edited recording again, so publish the head beside the notebook when
readers must also trust who sealed it. ``Agent(..., seal=True)`` seals each run as it is made, and
``footprint_lab.notebook.scrub`` seals again, naming the policy's keys and patterns in ``seal.scrubbed``.

Role: sealing layer, next to the ``Recording`` it seals; pure functions of recording data.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol, TypeGuard

import orjson
from pydantic import BaseModel

from footprint_lab.base.refusal import Refusal, describe_shape
from footprint_lab.record.by_field import by_field
from footprint_lab.record.recording import Recording, Seal
from footprint_lab.record.records import content_hash
from footprint_lab.record.rows import Rows
from footprint_lab.record.schema import SEAL_ALGORITHM, UNRELEASED_SEALS
from footprint_lab.sealing._canonical import COLUMNS, DOCUMENT, HEADER, HEADER_OF, KINDS, columns_of, encode
from footprint_lab.sealing._locator import altered_tag, locate, tag_of
from footprint_lab.sealing.verdict import Verdict

#: the one chain this library seals with
ALGORITHM = SEAL_ALGORITHM
#: the digests the head holds, in its order
_LINKED = ("header", *KINDS, DOCUMENT)
#: what a broken verdict says of a seal's algorithm that is none this library seals with
_UNKNOWN = f"is not the algorithm this library seals with ({ALGORITHM})"


class SealSourceError(Refusal, ValueError):
    """Raised when ``verify`` (or ``seal``) is handed something that is neither a recording nor where to find one.

    Carries ``argument`` and ``received`` (the shape of what arrived).
    """

    code = "ERR_SEAL_SOURCE"
    fields = ("argument", "received")

    def __init__(self, function: str, received: str) -> None:
        super().__init__(
            f"footprint_lab.{function}: 'recording' is {received}. Pass a Recording, a Run, a recording's JSON "
            "text or the path of a saved .json recording; for a notebook use "
            "[footprint_lab.verify(run) for run in footprint_lab.notebook.load_runs(path)].")
        self.argument = "recording"
        self.received = received


# -- sealing -------------------------------------------------------------------------------------
def seal(recording: Recording, *, scrubbed: list[str] | None = None) -> Recording:
    """Seal ``recording`` and each member run in place, and return it. Sealing again replaces the seal.

    ``scrubbed`` names the redaction keys and patterns that changed the evidence since it was first
    sealed (``notebook.scrub`` passes them). They are sealed too, and kept when it is sealed again. A
    ``Checkpoint`` or ``FlowCheckpoint`` is sealed the same way, over its saved (masked) form.
    """
    if _is_document(recording):
        recording.seal = _made(_document_kinds(recording), [], time.time(), [])
        return recording
    if not isinstance(recording, Recording):
        raise SealSourceError("seal", describe_shape(recording))
    try:
        recording.seal = _seal_of(recording, scrubbed or [], time.time())
    except _Unwritable as unwritable:
        from footprint_lab.record.recording_door import InvalidRecordingError

        raise InvalidRecordingError("seal", unwritable.kind, _UNWRITABLE, "Make every value JSON data (text, "
                                    "numbers, lists, mappings) before sealing, or seal the recording as the run "
                                    "left it") from None
    return recording


# -- checkpoints and other documents -------------------------------------------------------------
def masked_again(data: dict[str, Any], mask: Callable[[Any], Any], *, keys: Iterable[str],
                 patterns: Iterable[str]) -> Recording | None:
    """A recording's data (its tables and references read back) masked after its run by ``mask``, field by field
    (``record.by_field``), and made again: its pieces' hashes recomputed, every report (its members' too) naming
    the policy's ``keys`` and ``patterns``, sealed again naming them when it was sealed, so a reviewer sees the
    evidence was changed on purpose. ``None`` when ``mask`` changed nothing; ``ValueError`` when what it made no
    longer fits the schema. A notebook's scrub and a chat (a secret a later turn learned) mask through here."""
    masked = by_field(data, mask, Recording)
    if masked == data:
        return None
    recording = Recording.model_validate(masked)
    keys, patterns = sorted(set(keys)), sorted(set(patterns))
    pending = [recording]
    while pending:
        member = pending.pop()
        for piece in member.context_pieces:
            piece.content_hash = content_hash(piece.content)
        report = dict(member.redaction or {"keys": [], "patterns": [], "matched": [], "counts": {}})
        report.update(keys=sorted({*report.get("keys", ()), *keys}), scrubbed=True,
                      patterns=sorted({*report.get("patterns", ()), *patterns}))
        member.redaction = report
        pending += member.children
    return seal(recording, scrubbed=sorted({*keys, *patterns})) if recording.seal is not None else recording


def _is_document(value: Any) -> TypeGuard[BaseModel]:
    """A model other than a recording that keeps a seal of its own (a ``Checkpoint``, a ``FlowCheckpoint``)."""
    return isinstance(value, BaseModel) and not isinstance(value, Recording) and "seal" in type(value).model_fields


def _document_kinds(document: BaseModel) -> list[tuple[str, list[Any], bytes]]:
    """A document as the seal reads it, one kind: its saved form (a checkpoint's masked one), every field but the
    seal."""
    records = [document.model_dump(mode="json", exclude={"seal"})]
    return [(DOCUMENT, records, encode(records))]


def _verify_document(document: BaseModel) -> Verdict:
    made = getattr(document, "seal", None)
    if made is None:
        return Verdict("unsealed")
    if isinstance(made, Seal) and made.algorithm in UNRELEASED_SEALS:  # refused by name, as a recording's is
        from footprint_lab.record.recording_door import RecordingVersionError

        raise RecordingVersionError("verify", "seal.algorithm", made.algorithm)
    if not isinstance(made, Seal) or made.algorithm != ALGORITHM:
        return Verdict("broken", "", "seal", field="algorithm", problem=_UNKNOWN)
    return _checked(made, _document_kinds(document), [], "")


def seal_at_end(recording: Recording) -> None:
    """Seal a just-built recording (``Agent(..., seal=True)``), stamped with the run's end. Members are
    sealed first; a member its own runner already sealed keeps that seal."""
    _seal_at(recording, recording.started_at + recording.duration_ms / 1000)


def _seal_at(recording: Recording, ended: float) -> None:
    for child in recording.children:
        if child.seal is None:
            _seal_at(child, ended)
    recording.seal = _seal_of(recording, [], ended, members="keep")


def _seal_of(recording: Recording, scrubbed: list[str], sealed_at: float, *, members: str = "reseal") -> Seal:
    """The seal of ``recording`` now; ``members="keep"`` keeps each member's own seal, else each is sealed again."""
    previous = recording.seal
    names = sorted({*(previous.scrubbed if previous is not None else ()), *scrubbed})
    for child in recording.children:
        if members != "keep" or child.seal is None:
            child.seal = _seal_of(child, scrubbed, sealed_at)
    return _made(_kinds(recording), names, sealed_at,
                 [child.seal.head for child in recording.children if child.seal is not None])


def _made(kinds: Iterable[tuple[str, list[Any], bytes]], scrubbed: list[str], sealed_at: float,
          child_heads: list[str]) -> Seal:
    """A seal over ``kinds`` (each kind's name, records and canonical text) and the members' heads."""
    digests: dict[str, str] = {}
    tags: dict[str, str] = {}
    for kind, _, text in kinds:
        digests[kind] = hashlib.sha256(text).hexdigest()
        tags[kind] = tag_of(kind, text)
    # no validation needed: every value is made here with its field's type; ``display`` stays empty
    # (only an output's copy sets it)
    made = Seal.model_construct(algorithm=ALGORITHM, head="", kinds=digests, tags=tags, scrubbed=scrubbed,
                                sealed_at=float(sealed_at))
    made.head = _head(made, child_heads)
    return made


# -- the canonical text --------------------------------------------------------------------------
def _kinds(recording: Recording) -> Iterator[tuple[str, list[Any], bytes]]:
    """The header (one record) and each record kind in chain order, each with its canonical text. One
    kind at a time, so a kind's values are freed before the next one's are made."""
    header = [dict(zip(HEADER, HEADER_OF(recording), strict=True))]
    yield "header", header, _written("header", header)
    held = recording.__dict__  # read as held: a transcript shared with its conversation is not copied
    for kind in KINDS:
        value = held[kind]
        if kind in COLUMNS:  # a kind not yet built is read from its capture's columns, no model made
            value = (value.columns() if isinstance(value, Rows) else None) or columns_of(value, COLUMNS[kind])
        yield kind, value, _written(kind, value)


class _Unwritable(Exception):
    """A kind holding a value JSON cannot write (bytes, a NumPy number): only a recording changed by hand does."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def _written(kind: str, value: Any) -> bytes:
    try:
        return encode(value)
    except (TypeError, ValueError):
        raise _Unwritable(kind) from None


_UNWRITABLE = "holds a value JSON cannot write (bytes, a NumPy number...), so it cannot be as it was recorded"


def _head(made: Seal, child_heads: list[str]) -> str:
    """The head: one SHA-256 over every part of the seal, in one JSON array (a notebook output's copy
    adds the digests of what it displays)."""
    return hashlib.sha256(orjson.dumps(
        [made.algorithm, [made.kinds.get(kind, "") for kind in _LINKED], child_heads, made.display,
         made.scrubbed, repr(made.sealed_at)], option=orjson.OPT_SORT_KEYS)).hexdigest()


# -- verifying -----------------------------------------------------------------------------------
class CarriesRecording(Protocol):
    """What holds a recording as its ``recording`` (a ``Run``; ``core`` sits above this layer)."""

    @property
    def recording(self) -> Recording: ...


#: what ``verify`` accepts: a recording, what carries one, its JSON text or data, the path of a saved
#: ``.json`` recording, or another model with a seal of its own (a ``Checkpoint``, a ``FlowCheckpoint``)
Verifiable = Recording | CarriesRecording | BaseModel | str | os.PathLike[str] | dict[str, Any]


def verify(recording: Verifiable) -> Verdict:
    """Check a seal offline and return a :class:`Verdict`.

    ``recording`` is a ``Recording``, a ``Run``, a recording's JSON text or data, or the path of a
    saved ``.json`` recording; or a checkpoint (``Checkpoint.model_validate_json(text)`` reads a
    stored one back). A broken or missing seal is a verdict, not an error.
    """
    if _is_document(recording):
        return _verify_document(recording)
    return _verify(_as_recording(recording), "")


def _as_recording(value: Any) -> Recording:
    if isinstance(value, Recording):
        return value
    inner = getattr(value, "recording", None)  # a Run (core sits above this layer)
    if isinstance(inner, Recording):
        return inner
    from footprint_lab.record.recording_door import load_recording

    if isinstance(value, dict):
        return load_recording(value, door="verify")
    if isinstance(value, str) and value.lstrip()[:1] == "{":
        return load_recording(value, door="verify")
    if isinstance(value, str | os.PathLike):
        path = Path(value)
        if path.suffix.lower() != ".json" or not path.is_file():
            raise SealSourceError("verify", "a path that is not a saved .json recording")
        try:
            saved = path.read_bytes()
        except OSError:
            raise SealSourceError("verify", "a path to a .json file that could not be read") from None
        return load_recording(saved, door="verify")
    raise SealSourceError("verify", describe_shape(value))


def _verify(recording: Recording, run: str) -> Verdict:
    made = recording.seal
    if made is None:
        return Verdict("unsealed", run=run)
    scrubbed = tuple(made.scrubbed)
    if made.algorithm in UNRELEASED_SEALS:  # a recording made without the door: refused as the door refuses it
        from footprint_lab.record.recording_door import check_seal

        check_seal(recording, "verify", f"{run}." if run else "")
    if made.algorithm != ALGORITHM:
        return Verdict("broken", run, "seal", field="algorithm", problem=_UNKNOWN, scrubbed=scrubbed)
    child_heads: list[str] = []
    for n, child in enumerate(recording.children):
        verdict = _verify(child, f"{run}.children.{n}" if run else f"children.{n}")
        if verdict.status == "unsealed":
            return Verdict("broken", verdict.run, "seal", problem="a member run sealed with its parent lost its seal",
                           scrubbed=scrubbed)
        if not verdict.holds:
            return verdict
        assert child.seal is not None
        child_heads.append(child.seal.head)
    try:
        kinds = sorted(_kinds(recording), key=_checked_first)
    except _Unwritable as unwritable:
        return Verdict("broken", run, unwritable.kind, problem=_UNWRITABLE, scrubbed=tuple(made.scrubbed))
    return _checked(made, kinds, child_heads, run)


def _checked(made: Seal, kinds: Iterable[tuple[str, list[Any], bytes]], child_heads: list[str], run: str) -> Verdict:
    """``made`` held to ``kinds`` (in the order they are compared) and the members' heads: the first kind
    whose digest differs, traced to its record; else tags or a head that are not the seal's own."""
    scrubbed = tuple(made.scrubbed)
    retagged = None  # the first kind whose locator tags do not match its text: reported only if no record changed
    checked = set()
    for kind, records, text in kinds:
        checked.add(kind)
        if made.kinds.get(kind) != hashlib.sha256(text).hexdigest():
            return locate(kind, records, text, made.tags.get(kind, ""), run, scrubbed,
                          made.head == _head(made, child_heads))
        if retagged is None and altered_tag(made, kind, text):
            retagged = kind
    if retagged is not None:
        return Verdict("broken", run, "seal", field=f"tags.{retagged}", problem="the seal itself was altered",
                       scrubbed=scrubbed)
    for part, held in (("kinds", made.kinds), ("tags", made.tags)):
        if held.keys() != checked:  # a digest or tags of something the seal does not cover: not as it was made
            return Verdict("broken", run, "seal", field=part, problem="the seal itself was altered", scrubbed=scrubbed)
    if made.head != _head(made, child_heads):
        return Verdict("broken", run, "seal", field="head", problem="the seal itself was altered", scrubbed=scrubbed)
    return Verdict("holds", run, scrubbed=scrubbed)


def _checked_first(kind_records: tuple[str, list[Any], bytes]) -> int:
    """The order a check compares kinds in: the header, then the transcript, then chain order.

    A saved recording stores each message's text once, and the commits and pieces holding the same
    text refer to it (``record.schema``). Editing a message changes those records too, so the
    message is checked first: it is the real first break.
    """
    kind = kind_records[0]
    return 0 if kind == "header" else 1 if kind == "messages" else 2


