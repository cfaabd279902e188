"""Sealed recordings: a SHA-256 hash chain a reviewer can check offline, with no key and no network.

Defect closed: a shared notebook's evidence could be edited after the run (a commit's value, a
piece's content, the answer) and nothing showed it. :func:`seal` computes a hash chain over the
recording and stores it in ``recording.seal``; :func:`verify` recomputes it and returns a
:class:`Verdict` that holds, names the first broken link (the record kind, its index, its step
id and the field that changed), or says the recording was never sealed (not an error).

What the chain covers, in this order: a header (run id, runner, schema version, status, input,
answer, timings, redaction report, ...), then each record kind in recorded order (``steps``,
``reads``, ``commits``, ``decisions``, ``events``, ``context_pieces``, ``exchanges``,
``messages``, ``message_pieces``), then each member run's own seal. Annotations stay outside, so a
sealed run can still be annotated. Each kind is one canonical JSON text hashed with SHA-256,
written compactly by orjson with the keys sorted at every level (``sha256-chain/5``): a kind of
records as its columns, one list per field of its model in the model's order, each holding that
field's value for every record in recorded order, and the values a record nests (a routine event's
payload, a commit's entries, an exchange's response) as columns of their own (``sealing._chain``);
the header, the transcript's messages and ``message_pieces`` as their list. A finished run's kinds
are read as the columns its records are made from (``record.build``), with no model built; the text
is the same from the models and from the saved JSON data, its tables unpacked and its defaults put
back (``sealing.saved_seal.verify_saved`` checks a notebook's copy that way, no model built). This is
the one chain: a recording sealed by an earlier one (``/2`` to ``/4``, of the unreleased 0.1) is
refused by name at the recording door (``RecordingVersionError``), to be sealed again. The head is
the SHA-256 of one JSON array: the algorithm, each kind's digest in chain order, the members'
heads, in a copy a notebook output carries the digests of what that output displays
(``sealing.saved_seal``), the scrub names and the time of sealing. A check compares the header first,
then the transcript (whose text the commits and pieces of a saved recording refer to), then the
other kinds in chain order, and names the first that differs.

Speed: checking a seal is one orjson encoding and one hash per kind, no Python work per record
(a 10,000-step recording of about 20 MB verifies in well under a second, see bench/bench_trust.py).
To say *where* a broken seal broke, the seal also keeps, per kind, a 16-bit CRC of each stretch
of text between two cuts (a locator only: the SHA-256 chain is the proof); they are compared
when a digest fails, and the first stretch that differs is traced back to its record and field.
The head does not chain them, so a check holds them to the text too once every digest matched
(:func:`altered_tag`): tags edited in a saved seal are the seal altered, never a seal that holds.

``Agent(..., seal=True)`` seals each run's recording as it is made from the finished run (its records
read as their columns, no model built), stamped with the run's end: a seal over the finished
recording, its members sealed first, the same seal :func:`seal` would make of it then.

A seal proves the recording was not changed since it was sealed by this library; it is not a
signature (anyone with the library can seal an edited recording again). Publish the head beside
the notebook when the reader must also trust who sealed it. Scrubbing a sealed notebook
(``footprint_lab.notebook.scrub``) seals it again and names the policy's keys and patterns in
``seal.scrubbed``, so a reviewer sees the evidence was changed on purpose.

Role: sealing layer, next to the ``Recording`` it seals; pure functions of recording data.
"""

from __future__ import annotations

import array
import base64
import hashlib
import json
import operator
import os
import re
import sys
import time
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel

from footprint_lab.record.recording import Recording, Seal
from footprint_lab.record.refusal import Refusal, describe_shape
from footprint_lab.record.rows import Rows, transposed
from footprint_lab.record.schema import SEAL_ALGORITHM, UNRELEASED_SEALS
from footprint_lab.record.spliced import Spliced
from footprint_lab.sealing._chain import NAMES, chained, located

#: the one chain this library seals with: each kind of records as its columns, keys sorted at every level,
#: the values a record nests taken as columns of their own (``sealing._chain``), so a reader checks a saved
#: recording on its JSON data without building a model (``sealing.saved_seal``)
ALGORITHM = SEAL_ALGORITHM
#: the record kinds, in the order the chain takes them
KINDS = ("steps", "reads", "commits", "decisions", "events", "context_pieces", "exchanges", "messages",
         "message_pieces")
#: the one kind of a sealed checkpoint (or any other document with a ``seal`` field)
DOCUMENT = "document"
#: the digests the head holds, in its order
_LINKED = ("header", *KINDS, DOCUMENT)
#: fields the seal leaves out: notes stay writable, members carry their own seal
_OUTSIDE = frozenset({"annotations", "seal", "children"})
_HEADER = tuple(name for name in Recording.model_fields if name not in _OUTSIDE and name not in KINDS)
_HEADER_OF = operator.attrgetter(*_HEADER)
#: the kinds of records of a model, with its fields in order: the chain takes each as one column per field
#: (the transcript's messages are free-form and ``message_pieces`` plain numbers: they stay lists)
COLUMNS: dict[str, tuple[str, ...]] = {
    kind: tuple(model.model_fields) for kind in KINDS
    if isinstance(model := getattr(Recording.model_fields[kind].annotation, "__args__", (None,))[0], type)
    and issubclass(model, BaseModel)}


#: what a broken verdict says of a seal's algorithm that is none this library seals with
_UNKNOWN = f"is not the algorithm this library seals with ({ALGORITHM})"


class SealSourceError(Refusal, ValueError):
    """Raised when ``verify`` (or ``seal``) is handed something that is not a recording or where to find one.

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


@dataclass(frozen=True)
class Verdict:
    """What :func:`verify` found: ``status`` is ``holds``, ``broken`` or ``unsealed``; and, from
    ``footprint_lab.notebook.verify_file``, ``unsupported`` for a recording written by a newer
    footprint_lab (a higher schema version: not checked, ``field`` and ``problem`` say which).

    A broken verdict names the first link that fails: ``run`` (``""`` for the top run, ``children.0``
    for a member), ``kind`` (``header``, ``steps``, ``commits``... or ``seal``), ``index`` and
    ``step_id`` of the record, and ``field``; an edited notebook display is kind ``display``, its field
    the MIME type. ``scrubbed`` lists the policy names a scrub re-sealed under; ``display`` says whether
    what a notebook output displays was checked too.
    """

    status: str
    run: str = ""
    kind: str | None = None
    index: int | None = None
    step_id: str | None = None
    field: str | None = None
    problem: str = ""
    scrubbed: tuple[str, ...] = ()
    #: from ``verify_file``: whether what the output displays was checked too (its seal holds a display)
    display: bool = False

    @property
    def holds(self) -> bool:
        return self.status == "holds"

    def __bool__(self) -> bool:
        return self.holds

    def __str__(self) -> str:
        if self.status == "unsealed":
            return "not sealed: this recording carries no seal (nothing to check)"
        if self.status == "unsupported":
            return f"not checked: the recording's '{self.field}' {self.problem}"
        if self.status == "holds":
            note = f" (re-sealed after a scrub by: {', '.join(self.scrubbed)})" if self.scrubbed else ""
            shown = ", and so is what this output displays" if self.display else ""
            return "seal holds: the recording is as it was sealed" + shown + note
        place = ".".join(part for part in (self.run, self.kind or "", "" if self.index is None else str(self.index),
                                           self.field or "") if part)
        step = f" (step {self.step_id})" if self.step_id else ""
        return f"seal broken at {place}{step}: {self.problem}"


# -- sealing -------------------------------------------------------------------------------------
def seal(recording: Recording, *, scrubbed: list[str] | None = None) -> Recording:
    """Seal ``recording`` (and each member run) in place and return it; sealing again replaces the seal.

    ``scrubbed`` names the redaction keys and patterns that changed the evidence since it was first
    sealed (``notebook.scrub`` passes them); they are sealed too, and kept on re-sealing. A
    ``Checkpoint`` or ``FlowCheckpoint`` is sealed the same way, over its saved (masked) form.
    """
    if _is_document(recording):
        recording.seal = _document_seal(recording)
        return recording
    if not isinstance(recording, Recording):
        raise SealSourceError("seal", describe_shape(recording))
    recording.seal = _seal_of(recording, scrubbed or [], time.time())
    return recording


# -- checkpoints and other documents -------------------------------------------------------------
def _is_document(value: Any) -> bool:
    """A model other than a recording that keeps a seal of its own (a ``Checkpoint``, a ``FlowCheckpoint``)."""
    return isinstance(value, BaseModel) and not isinstance(value, Recording) and "seal" in type(value).model_fields


def _document_records(document: BaseModel) -> list[Any]:
    """A document as the seal reads it: its saved form (a checkpoint's masked one), every field but the seal."""
    return [document.model_dump(mode="json", exclude={"seal"})]


def _document_seal(document: BaseModel) -> Seal:
    text = _text(DOCUMENT, _document_records(document))
    made = Seal(algorithm=ALGORITHM, head="", kinds={DOCUMENT: hashlib.sha256(text).hexdigest()},
                tags={DOCUMENT: tag_of(DOCUMENT, text)}, sealed_at=time.time())
    made.head = _head(made, [])
    return made


def _verify_document(document: BaseModel) -> Verdict:
    made = getattr(document, "seal", None)
    if made is None:
        return Verdict("unsealed")
    if not isinstance(made, Seal) or made.algorithm != ALGORITHM:
        return Verdict("broken", "", "seal", field="algorithm", problem=_UNKNOWN)
    records = _document_records(document)
    text = _text(DOCUMENT, records)
    if made.kinds.get(DOCUMENT) != hashlib.sha256(text).hexdigest():
        return _locate(DOCUMENT, records, text, made.tags.get(DOCUMENT, ""), "", ())
    if altered_tag(made, DOCUMENT, text):
        return Verdict("broken", "", "seal", field=f"tags.{DOCUMENT}", problem="the seal itself was altered")
    if made.head != _head(made, []):
        return Verdict("broken", "", "seal", field="head", problem="the seal itself was altered")
    return Verdict("holds")


def seal_at_end(recording: Recording) -> None:
    """Seal a just-built recording as its run ended (``Agent(..., seal=True)``): its members first (each
    member already sealed by its own runner keeps that seal), all stamped with the run's end."""
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
    kinds: dict[str, str] = {}
    tags: dict[str, str] = {}
    for kind, _, text in _kinds(recording):
        kinds[kind] = hashlib.sha256(text).hexdigest()
        tags[kind] = tag_of(kind, text)
    # each value made here, of its field's type; ``display`` left at its default (only an output's copy sets it)
    made = Seal.model_construct(algorithm=ALGORITHM, head="", kinds=kinds, tags=tags, scrubbed=names,
                                sealed_at=float(sealed_at))
    made.head = _head(made, [child.seal.head for child in recording.children if child.seal is not None])
    return made


# -- the canonical text --------------------------------------------------------------------------
def _kinds(recording: Recording) -> Iterator[tuple[str, list[Any], bytes]]:
    """The header (one record) and each record kind, in chain order, each with its canonical text: a kind
    of records as its columns (:func:`columns_of`). One kind at a time, so a kind's values are let go
    before the next one's are made."""
    header = [dict(zip(_HEADER, _HEADER_OF(recording), strict=True))]
    yield "header", header, _text("header", header)
    held = recording.__dict__  # a transcript still shared with its conversation is sealed as it is held
    for kind in KINDS:
        value = held[kind]
        yield ((kind, *_columns_text(kind, value, recording.run_id)) if kind in COLUMNS
               else (kind, value, _text(kind, value)))


def _columns_text(kind: str, records: Any, run_id: str) -> tuple[list[Any], bytes]:
    """A kind's columns as the chain reads them, and their canonical text. A kind not yet built is
    read from its columns (``Rows.columns``), made JSON-native, with no model built."""
    columns = records.columns() if isinstance(records, Rows) else None
    if columns is None:
        columns = columns_of(records, COLUMNS[kind])
    columns = chained(kind, columns, run_id)
    return columns, _text(kind, columns)


def columns_of(records: Any, fields: tuple[str, ...]) -> list[Any]:
    """Records as the chain reads them: one sequence per field of ``fields``, its values in record order.

    Models give their own values, a saved recording's record dicts theirs (every field present), each
    record's taken and the whole turned into columns in C loops (a 10,000-step recording holds some
    80,000 records); a kind not yet built is read from the capture instead (``Rows.columns``,
    :func:`_columns_text`).
    """
    take = operator.itemgetter(*fields)
    try:
        rows = list(map(take, map(_OWN_FIELDS, records)))  # models
    except AttributeError:  # record dicts
        rows = [take(record.__dict__ if isinstance(record, BaseModel) else record) for record in records]
    return transposed(rows, len(fields))


_OWN_FIELDS = operator.attrgetter("__dict__")


def _fields_of(value: Any) -> Any:
    """How orjson writes what it does not know: a model as its fields in order, a ``Rows`` or a ``Spliced`` (a live
    run's transcript, shared with its conversation) as its list."""
    if isinstance(value, BaseModel):
        return value.__dict__
    if isinstance(value, Rows):
        return value.transient()
    if isinstance(value, Spliced):
        return list(value)
    raise TypeError(type(value).__name__)


def encode(value: Any) -> bytes:
    """The canonical encoding: compact orjson, keys sorted at every level.

    Data orjson cannot write (an integer beyond 64 bits) falls back to the standard library's
    encoder; both sides of a check take the same branch for the same data, so the texts agree.
    """
    try:
        return orjson.dumps(value, default=_fields_of, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return json.dumps(value, default=_fields_of, sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False).encode("utf-8", "surrogatepass")


def _text(kind: str, records: list[Any]) -> bytes:
    return encode(records)


#: where a kind's text is cut into stretches for the locator tags: a kind of records (its columns)
#: and ``message_pieces`` (integers only) at every comma, the header, the messages and a document
#: just after every key (``":``); each a literal, so the cut is one C split of the text, and
#: :func:`_place` walks the encodings to the record and field that hold a stretch.
_KEY_END = re.compile(rb'":')
_COMMA = re.compile(rb",")


def _cuts(kind: str) -> re.Pattern[bytes]:
    return _COMMA if kind == "message_pieces" or kind in COLUMNS else _KEY_END


def _tags(kind: str, text: bytes) -> bytes:
    """A 16-bit CRC of each stretch of ``text`` between two cuts, big-endian, two bytes each."""
    pieces = text.split(_cuts(kind).pattern)  # a literal: no regex
    crcs = array.array("I", map(zlib.crc32, pieces))
    if sys.byteorder == "big":
        crcs.byteswap()
    words = crcs.tobytes()  # little-endian: a CRC's low half is its first two bytes, low byte first
    halves = bytearray(len(words) // 2)
    halves[0::2], halves[1::2] = words[1::4], words[0::4]  # each low half, written high byte first
    return bytes(halves)


def tag_of(kind: str, text: bytes) -> str:
    """The locator tags of one kind's text as a seal of this library's chain keeps them (base64)."""
    return base64.b64encode(_tags(kind, text)).decode("ascii")


def altered_tag(made: Seal, kind: str, text: bytes) -> bool:
    """Whether a seal of this library's chain keeps other locator tags for ``kind`` than its ``text`` (whose
    digest matched) has. The head does not chain the tags, so they are held here: a seal whose tags were
    edited is no seal as it was made, and would point a later break at another place."""
    return made.tags.get(kind) != tag_of(kind, text)


def _starts(kind: str, text: bytes) -> list[int]:
    """Where each stretch of ``text`` starts (the first at 0, the others just after a cut)."""
    return [0, *(match.end() for match in _cuts(kind).finditer(text))]


def _head(made: Seal, child_heads: list[str]) -> str:
    """One text, one hash: every part of the seal in its place in one JSON array (a notebook output's copy
    holds the digests of what it displays)."""
    return hashlib.sha256(orjson.dumps(
        [made.algorithm, [made.kinds.get(kind, "") for kind in _LINKED], child_heads, made.display,
         made.scrubbed, repr(made.sealed_at)], option=orjson.OPT_SORT_KEYS)).hexdigest()


# -- verifying -----------------------------------------------------------------------------------
def verify(recording: Any) -> Verdict:
    """Check a recording's seal offline: a ``Recording``, a ``Run``, JSON text or a saved ``.json`` path;
    or a checkpoint's (``Checkpoint.model_validate_json(text)`` reads a stored one back).

    Returns a :class:`Verdict`; a broken or missing seal is a verdict, not an error.
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
    retagged = None  # the first kind whose locator tags are not its text's: the seal altered, once no record is
    for kind, records, text in sorted(_kinds(recording), key=_checked_first):
        if made.kinds.get(kind) != hashlib.sha256(text).hexdigest():
            return _locate(kind, records, text, made.tags.get(kind, ""), run, scrubbed, run_id=recording.run_id)
        if retagged is None and altered_tag(made, kind, text):
            retagged = kind
    if retagged is not None:
        return Verdict("broken", run, "seal", field=f"tags.{retagged}", problem="the seal itself was altered",
                       scrubbed=scrubbed)
    if made.head != _head(made, child_heads):
        return Verdict("broken", run, "seal", field="head", problem="the seal itself was altered", scrubbed=scrubbed)
    return Verdict("holds", run, scrubbed=scrubbed)


def _checked_first(kind_records: tuple[str, list[Any], bytes]) -> int:
    """The order a check compares kinds in: the header, then the transcript, then the chain's order.

    A saved recording stores each transcript message's text once (``record.schema``), and the
    commits and pieces that carry the same text read it from there; so an edit of a message
    changes those records too, and naming the first broken link means naming the message.
    """
    kind = kind_records[0]
    return 0 if kind == "header" else 1 if kind == "messages" else 2


def _locate(kind: str, records: list[Any], text: bytes, packed: str, run: str, scrubbed: tuple[str, ...], *,
            run_id: str | None = None) -> Verdict:
    """The first stretch of ``kind`` whose tag no longer matches, traced to its record (index, step id) and field."""
    if not packed:  # a seal that keeps no locator for this kind: the digest alone says it changed
        return Verdict("broken", run, kind, problem="changed after the run was sealed", scrubbed=scrubbed)
    now = _tags(kind, text)
    try:
        then = base64.b64decode(packed, validate=True)
    except ValueError:
        return Verdict("broken", run, "seal", field=f"tags.{kind}", problem="the seal itself was altered",
                       scrubbed=scrubbed)
    first = next((k // 2 for k in range(0, min(len(now), len(then)) - 1, 2) if now[k:k + 2] != then[k:k + 2]), None)
    if first is None and len(now) == len(then):
        return Verdict("broken", run, "seal", field=f"kinds.{kind}", problem="the seal itself was altered",
                       scrubbed=scrubbed)
    starts = _starts(kind, text)
    # the first stretch that differs; with none (a kind cut short or grown), where the shorter ends
    stretch = first if first is not None else min(len(now), len(then)) // 2
    offset = starts[stretch] if stretch < len(starts) else len(text)
    problem = ("changed after the run was sealed" if len(now) == len(then)
               else "changed, or records were added or removed here, after the run was sealed")
    index, field = _place(kind, records, offset, run_id)
    if field == "run_id" and kind == "events" and records[1] is None:
        # sealed written whole (some event of another run), now every event the recording's own: compared
        # written whole again, the first event that differs is the one edited
        whole = [records[0], [run_id] * len(records[0]), *records[2:]]
        return _locate(kind, whole, _text(kind, whole), packed, run, scrubbed, run_id=run_id)
    columns = kind in COLUMNS
    count = len(records[0]) if columns and records else len(records)
    if index >= count:
        return Verdict("broken", run, kind, count, problem="a record was removed after the run was sealed",
                       scrubbed=scrubbed)
    if columns:
        names = NAMES.get(kind, COLUMNS[kind])
        step = records[names.index("step_id")][index] if "step_id" in names else None
    else:
        record = records[index]
        step = record.get("step_id") if isinstance(record, dict) else getattr(record, "step_id", None)
    return Verdict("broken", run, kind, None if kind in ("header", DOCUMENT) else index,
                   step if isinstance(step, str) else None,
                   field, problem, scrubbed)


def _place(kind: str, records: list[Any], offset: int, run_id: str | None = None) -> tuple[int, str | None]:
    """Which record of ``kind``, and which of its fields, holds byte ``offset`` of its canonical text.

    Walks the encodings themselves, so nested data that spells a field name cannot mislead it: a
    list of records is ``[`` + records joined by ``,`` + ``]``, each ``{"name":value,...}``; a kind
    of columns is the same list of columns, each ``[`` + one value per record + ``]``, a place in a
    column of nested values traced back to its record (``sealing._chain.located``).
    """
    if kind in COLUMNS:
        at = 1
        for name, column in zip(NAMES.get(kind, COLUMNS[kind]), records, strict=False):
            size = len(encode(column))
            if offset < at + size + 1:
                index = _within(column, offset - at) if isinstance(column, list | tuple) else 0
                return located(kind, records, name, index, run_id)
            at += size + 1
        return len(records[0]) if records else 0, None
    at = 1
    for index, record in enumerate(records):
        size = len(encode(record))
        if offset < at + size + 1:
            fields = _fields_of(record) if isinstance(record, BaseModel) else record
            if not isinstance(fields, dict):
                return index, None
            inner = at + 1
            for name in sorted(fields):
                inner += len(encode(name)) + 1 + len(encode(fields[name])) + 1
                if offset < inner:
                    return index, name
            return index, None
        at += size + 1
    return len(records), None


def _within(items: Sequence[Any], offset: int) -> int:
    """Which item of a list holds byte ``offset`` of the list's encoding (its length past the last)."""
    at = 1
    for index, item in enumerate(items):
        at += len(encode(item)) + 1
        if offset < at:
            return index
    return len(items)
