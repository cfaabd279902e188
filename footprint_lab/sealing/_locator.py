"""Where a broken seal broke: the locator tags a seal keeps per kind, and a break traced back to its record.

Rule kept here: the SHA-256 chain is the proof; the tags only say *where*. Per kind, a seal keeps a
16-bit CRC of each stretch of the canonical text between two cuts. When a kind's digest fails,
:func:`locate` traces the first stretch whose tag differs back to its record and field. The head
does not chain the tags, so once every digest matches, a check holds the tags to the text
(:func:`altered_tag`).

Role: sealing layer, used by ``sealing.seal`` and ``sealing.output_seal``.
"""

from __future__ import annotations

import array
import base64
import re
import sys
import zlib
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

from footprint_lab.record.recording import Seal
from footprint_lab.sealing._canonical import COLUMNS, DOCUMENT, encoder_of, fields_of
from footprint_lab.sealing.verdict import Verdict

#: where a kind's text is cut into stretches: a kind stored as columns and ``message_pieces`` (integers
#: only) at every comma; the header, the messages and a document just after every key (``":``). Each
#: cut is a literal, so cutting is one C split of the text.
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
    """Whether the seal keeps other locator tags for ``kind`` than its ``text`` (whose digest matched)
    gives. Edited tags would point a later break at the wrong place, so they count as an altered seal."""
    return made.tags.get(kind) != tag_of(kind, text)


def _starts(kind: str, text: bytes) -> list[int]:
    """Where each stretch of ``text`` starts (the first at 0, the others just after a cut)."""
    return [0, *(match.end() for match in _cuts(kind).finditer(text))]


def locate(kind: str, records: list[Any], text: bytes, packed: str, run: str, scrubbed: tuple[str, ...],
           digest_sealed: bool = True) -> Verdict:
    """The first stretch of ``kind`` whose tag no longer matches, traced to its record (index, step id) and field.

    With every tag matching, a changed stretch kept its 16-bit tag (one change in 65,536 does): the kind changed,
    somewhere, when the seal's head still chains its digest (``digest_sealed``); else the seal was altered."""
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
        if digest_sealed:
            return Verdict("broken", run, kind, problem="changed after the run was sealed", scrubbed=scrubbed)
        return Verdict("broken", run, "seal", field=f"kinds.{kind}", problem="the seal itself was altered",
                       scrubbed=scrubbed)
    starts = _starts(kind, text)
    # the first stretch that differs; with none (a kind cut short or grown), where the shorter ends
    stretch = first if first is not None else min(len(now), len(then)) // 2
    offset = starts[stretch] if stretch < len(starts) else len(text)
    if first is not None and len(now) > len(then) and kind not in COLUMNS and stretch + 1 < len(starts):
        # a stretch runs from one key's value to the next key's name: with a key added, the name is what changed
        offset = starts[stretch + 1] - len(_KEY_END.pattern) - 1
    problem = ("changed after the run was sealed" if len(now) == len(then)
               else "changed, or records were added or removed here, after the run was sealed")
    index, field = _place(kind, records, offset, encoder_of(records))
    columns = kind in COLUMNS
    count = len(records[0]) if columns and records else len(records)
    if index >= count:
        return Verdict("broken", run, kind, count, problem="a record was removed after the run was sealed",
                       scrubbed=scrubbed)
    if columns:
        names = COLUMNS[kind]
        step = records[names.index("step_id")][index] if "step_id" in names else None
    else:
        record = records[index]
        step = record.get("step_id") if isinstance(record, dict) else getattr(record, "step_id", None)
    return Verdict("broken", run, kind, None if kind in ("header", DOCUMENT) else index,
                   step if isinstance(step, str) else None,
                   field, problem, scrubbed)


def _place(kind: str, records: list[Any], offset: int, encode: Callable[[Any], bytes]) -> tuple[int, str | None]:
    """Which record of ``kind``, and which of its fields, holds byte ``offset`` of its canonical text.

    It walks the encodings themselves, so nested data that spells a field name cannot mislead it. A
    list of records is ``[`` + records joined by ``,`` + ``]``, each ``{"name":value,...}``; a kind
    of columns is the same list of columns, each ``[`` + one value per record + ``]``.
    """
    if kind in COLUMNS:
        at = 1
        for name, column in zip(COLUMNS[kind], records, strict=False):
            size = len(encode(column))
            if offset < at + size + 1:
                return (_within(column, offset - at, encode) if isinstance(column, list | tuple) else 0), name
            at += size + 1
        return len(records[0]) if records else 0, None
    at = 1
    for index, record in enumerate(records):
        size = len(encode(record))
        if offset < at + size + 1:
            fields = fields_of(record) if isinstance(record, BaseModel) else record
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


def _within(items: Sequence[Any], offset: int, encode: Callable[[Any], bytes]) -> int:
    """Which item of a list holds byte ``offset`` of the list's encoding (its length past the last)."""
    at = 1
    for index, item in enumerate(items):
        at += len(encode(item)) + 1
        if offset < at:
            return index
    return len(items)
