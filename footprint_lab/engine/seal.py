"""Sealed recordings: a SHA-256 hash chain a reviewer can check offline, with no key and no network.

Defect closed: a shared notebook's evidence could be edited after the run (a commit's value, a
piece's content, the answer) and nothing showed it. :func:`seal` computes a hash chain over the
recording and stores it in ``recording.seal``; :func:`verify` recomputes it and returns a
:class:`Verdict` that holds, names the first broken link (the record kind, its index, its step
id and the field that changed), or says the recording was never sealed (not an error).

What the chain covers, in this order: a header (run id, runner, schema version, status, input,
answer, timings, redaction report, ...), then each record kind in recorded order (``steps``,
``reads``, ``commits``, ``decisions``, ``events``, ``context_pieces``, ``exchanges``,
``messages``, ``message_pieces``), then each member run's own seal. Annotations stay outside,
so a sealed run can still be annotated. Each kind is one canonical JSON text (its records in
order, each field behind a marker, keys sorted) hashed with SHA-256; the head chains
``sha256(previous + kind + digest)`` kind by kind, then the members' heads, then the scrub
names and the time of sealing. Beside the digests the seal keeps a CRC-32 per field, a locator
only (the SHA-256 chain is the proof): when a kind's digest fails, the first tag that differs
names the record and the field. The work is one model dump, one JSON encoding and one hash per
kind, so a long recording verifies fast and sealing a short run costs little.

A seal proves the recording was not changed since it was sealed by this library; it is not a
signature (anyone with the library can seal an edited recording again). Publish the head beside
the notebook when the reader must also trust who sealed it. Scrubbing a sealed notebook
(``footprint_lab.notebook.scrub``) seals it again and names the policy's keys and patterns in
``seal.scrubbed``, so a reviewer sees the evidence was changed on purpose.

Role: engine layer, next to the ``Recording`` it seals; pure functions of recording data.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from footprint_lab.engine.recording import Recording, Seal
from footprint_lab.engine.refusal import Refusal, describe_shape

ALGORITHM = "sha256-chain/1"
#: the record kinds, in the order the chain takes them
KINDS = ("steps", "reads", "commits", "decisions", "events", "context_pieces", "exchanges", "messages",
         "message_pieces")
#: fields the seal leaves out: notes stay writable, members carry their own seal
_OUTSIDE = frozenset({"annotations", "seal", "children"})
_HEADER = tuple(name for name in Recording.model_fields if name not in _OUTSIDE and name not in KINDS)
_EXCLUDE = set(_OUTSIDE)


class SealSourceError(Refusal):
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
    """What :func:`verify` found: ``status`` is ``holds``, ``broken`` or ``unsealed``.

    A broken verdict names the first link that fails: ``run`` (``""`` for the top run, ``children.0``
    for a member), ``kind`` (``header``, ``steps``, ``commits``... or ``seal``), ``index`` and
    ``step_id`` of the record, and ``field``. ``scrubbed`` lists the policy names a scrub re-sealed under.
    """

    status: str
    run: str = ""
    kind: str | None = None
    index: int | None = None
    step_id: str | None = None
    field: str | None = None
    problem: str = ""
    scrubbed: tuple[str, ...] = ()

    @property
    def holds(self) -> bool:
        return self.status == "holds"

    def __bool__(self) -> bool:
        return self.holds

    def __str__(self) -> str:
        if self.status == "unsealed":
            return "not sealed: this recording carries no seal (nothing to check)"
        if self.status == "holds":
            note = f" (re-sealed after a scrub by: {', '.join(self.scrubbed)})" if self.scrubbed else ""
            return "seal holds: the recording is as it was sealed" + note
        place = ".".join(part for part in (self.run, self.kind or "", "" if self.index is None else str(self.index),
                                           self.field or "") if part)
        step = f" (step {self.step_id})" if self.step_id else ""
        return f"seal broken at {place}{step}: {self.problem}"


# -- sealing -------------------------------------------------------------------------------------
def seal(recording: Recording, *, scrubbed: list[str] | None = None) -> Recording:
    """Seal ``recording`` (and each member run) in place and return it; sealing again replaces the seal.

    ``scrubbed`` names the redaction keys and patterns that changed the evidence since it was first
    sealed (``notebook.scrub`` passes them); they are sealed too, and kept on re-sealing.
    """
    if not isinstance(recording, Recording):
        raise SealSourceError("seal", describe_shape(recording))
    kept = list(recording.seal.scrubbed) if recording.seal is not None else []
    names = sorted({*kept, *(scrubbed or [])})
    for child in recording.children:
        seal(child, scrubbed=scrubbed)
    kinds: dict[str, str] = {}
    tags: dict[str, str] = {}
    for kind, records in _kinds(recording):
        text = _flat(kind, records)
        kinds[kind] = hashlib.sha256(text).hexdigest()
        tags[kind] = _tags(text)
    made = Seal(algorithm=ALGORITHM, head="", kinds=kinds, tags=tags, scrubbed=names, sealed_at=time.time())
    made.head = _head(made, [child.seal.head for child in recording.children if child.seal is not None])
    recording.seal = made
    return recording


def sealing(build: Callable[[], Recording]) -> Callable[[], Recording]:
    """A recording builder that seals what it builds (``Agent(..., seal=True)`` wraps its runs' builders).

    A run's capture is closed when the run ends, so sealing the recording when it is first built
    seals exactly what the run recorded, redaction already applied; a run nobody looks at pays nothing.
    """
    return lambda: seal(build())


#: markers between records and between fields in a kind's canonical text (JSON strings, so the text
#: stays one unambiguous JSON value; a value that spells a marker can only blur where a break is named)
_RECORD = "\x00fl-record"
_FIELD = "\x00fl-field"
_RECORD_TEXT = json.dumps(_RECORD).encode("ascii") + b","
_FIELD_TEXT = json.dumps(_FIELD).encode("ascii") + b","


def _kinds(recording: Recording) -> list[tuple[str, list[Any]]]:
    """The header (one record) and each record kind, as JSON data, in chain order."""
    data = recording.model_dump(mode="json", exclude=_EXCLUDE)
    return [("header", [{name: data[name] for name in _HEADER}]), *((kind, data[kind]) for kind in KINDS)]


def _fields(kind: str, record: Any) -> list[tuple[str, Any]]:
    """A record's fields by name: a model's in its field order, a free-form message's sorted (a saved
    notebook sorts its keys)."""
    if isinstance(record, dict):
        return sorted(record.items()) if kind == "messages" else list(record.items())
    return [("value", record)]


def _flat(kind: str, records: list[Any]) -> bytes:
    """One canonical JSON text for a whole kind: each record, then each of its fields, behind a marker."""
    flat: list[Any] = []
    for record in records:
        flat.append(_RECORD)
        for name, value in _fields(kind, record):
            flat += (_FIELD, name, value)
    return json.dumps(flat, sort_keys=True, separators=(",", ":")).encode("ascii") + b","


def _tags(text: bytes) -> str:
    """A CRC-32 (8 hex digits) of each field's text, in order: a locator only, the SHA-256 chain is the proof."""
    fields = text.split(_FIELD_TEXT)[1:]
    return struct.pack(f">{len(fields)}I", *map(zlib.crc32, fields)).hex()


def _head(made: Seal, child_heads: list[str]) -> str:
    link = hashlib.sha256(made.algorithm.encode("ascii")).digest()
    for kind in ("header", *KINDS):
        link = hashlib.sha256(link + kind.encode("ascii") + made.kinds.get(kind, "").encode("ascii")).digest()
    for head in child_heads:
        link = hashlib.sha256(link + b"child" + head.encode("ascii")).digest()
    end = json.dumps([made.scrubbed, repr(made.sealed_at)]).encode("utf-8")
    return hashlib.sha256(link + b"end" + end).hexdigest()


# -- verifying -----------------------------------------------------------------------------------
def verify(recording: Any) -> Verdict:
    """Check a recording's seal offline: a ``Recording``, a ``Run``, JSON text or a saved ``.json`` path.

    Returns a :class:`Verdict`; a broken or missing seal is a verdict, not an error.
    """
    return _verify(_as_recording(recording), "")


def _as_recording(value: Any) -> Recording:
    if isinstance(value, Recording):
        return value
    inner = getattr(value, "recording", None)  # a Run (core sits above this layer)
    if isinstance(inner, Recording):
        return inner
    from footprint_lab.engine.recording_door import load_recording

    if isinstance(value, dict):
        return load_recording(value, door="verify")
    if isinstance(value, str) and value.lstrip()[:1] == "{":
        return load_recording(value, door="verify")
    if isinstance(value, str | os.PathLike):
        path = Path(value)
        if path.suffix.lower() != ".json" or not path.is_file():
            raise SealSourceError("verify", "a path that is not a saved .json recording")
        return load_recording(path.read_bytes(), door="verify")
    raise SealSourceError("verify", describe_shape(value))


def _verify(recording: Recording, run: str) -> Verdict:
    made = recording.seal
    if made is None:
        return Verdict("unsealed", run=run)
    scrubbed = tuple(made.scrubbed)
    if made.algorithm != ALGORITHM:
        return Verdict("broken", run, "seal", field="algorithm", problem="is not an algorithm this library knows",
                       scrubbed=scrubbed)
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
    for kind, records in _kinds(recording):
        text = _flat(kind, records)
        if made.kinds.get(kind) != hashlib.sha256(text).hexdigest():
            return _locate(kind, records, _tags(text), made.tags.get(kind, ""), run, scrubbed)
    if made.head != _head(made, child_heads):
        return Verdict("broken", run, "seal", field="head", problem="the seal itself was altered", scrubbed=scrubbed)
    return Verdict("holds", run, scrubbed=scrubbed)


def _locate(kind: str, records: list[Any], now: str, then: str, run: str, scrubbed: tuple[str, ...]) -> Verdict:
    """The first field of ``kind`` whose tag no longer matches: its record (index, step id) and name."""
    first = next((k for k in range(0, min(len(now), len(then)), 8) if now[k:k + 8] != then[k:k + 8]), None)
    if first is None and len(now) == len(then):
        return Verdict("broken", run, "seal", field=f"kinds.{kind}", problem="the seal itself was altered",
                       scrubbed=scrubbed)
    position = (first if first is not None else min(len(now), len(then))) // 8
    seen = 0
    for index, record in enumerate(records):
        fields = _fields(kind, record)
        if position < seen + len(fields):
            step = record.get("step_id") if isinstance(record, dict) else None
            problem = ("changed after the run was sealed" if len(now) == len(then)
                       else "changed, or records were added or removed here, after the run was sealed")
            return Verdict("broken", run, kind, None if kind == "header" else index,
                           step if isinstance(step, str) else None, fields[position - seen][0], problem, scrubbed)
        seen += len(fields)
    return Verdict("broken", run, kind, len(records), problem="a record was removed after the run was sealed",
                   scrubbed=scrubbed)
