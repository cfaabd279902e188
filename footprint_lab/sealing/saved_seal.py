"""A seal checked on saved data: a recording's JSON, and the notebook output that shows it.

Rule kept here: :func:`verify_saved` can only be quicker than ``sealing.seal.verify``, never give
another verdict. It reads a saved recording's JSON as the chain wrote it (tables and references
read back, fields left at their defaults put back, each kind of records as columns, keys sorted at
every level), at the cost of one encoding and one hash per kind, with no model built. When every
digest and the head agree, the seal holds. When anything differs it answers ``None``; the caller
then builds the recording and checks it the long way, which names the record and field that broke.

Displays: :func:`bind_display` writes into an output's copy of the seal the SHA-256 of what each
MIME type of the output displays, and chains them into the head; :func:`display_verdict` checks an
output against them. The hashed text is normalised the ways a notebook file may change without a
reader seeing it: nbformat's list of lines joined, ``\\n`` line endings, no final line break, base64
without its line breaks, JSON by its content. A MIME type added or removed breaks the seal too.

Claims: an output can show a seal it cannot back. A badge (``data-fl-seal``, or the words
"sealed · verified" in any markup) may sit in an output whose recording was removed or never
sealed; a recording may sit in an output that no longer displays its data (turned into a
``stream``). :func:`unbacked` names such an output, so a forged display is broken wherever it goes.

Role: sealing layer, next to ``sealing.seal``; pure functions of JSON-native data.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import html
import itertools
import operator
import re
import types
import typing
from typing import Any

from pydantic import BaseModel, TypeAdapter

from footprint_lab.base.unicode import invisible_class
from footprint_lab.record.recording import Recording, Seal
from footprint_lab.record.records import Annotation
from footprint_lab.record.saved_form import content_of, copies_placed, dereferenced, table_columns
from footprint_lab.record.saved_json import NestingTooDeep, parse_json
from footprint_lab.record.schema import READABLE_VERSIONS, RECORDING_MIME, SCHEMA_VERSION
from footprint_lab.sealing._canonical import COLUMNS, HEADER, KINDS, columns_of, encode
from footprint_lab.sealing._locator import altered_tag
from footprint_lab.sealing.seal import ALGORITHM, _head
from footprint_lab.sealing.verdict import Verdict

#: data the recording door would refuse never holds here: the keys saved data may have once its copies are
#: placed (a recording's fields), and the shape its notes (outside the seal) must have
_FIELDS = frozenset(Recording.model_fields)
#: the parts a recording's seal holds a digest and tags of
_LINKED = frozenset(("header", *KINDS))
_NOTES = TypeAdapter(list[Annotation])
#: the record kinds a saved recording may write as a table (``record.saved_form``)
_TABLED = ("steps", "reads", "events", "context_pieces")


# -- a saved recording, checked as data ----------------------------------------------------------
def verify_saved(data: Any) -> Verdict | None:
    """``holds`` when ``data`` (a saved recording's JSON data, members included) is exactly what its
    seal sealed. ``None`` when it is not, or this cannot tell (unsealed, another algorithm, another
    schema): the caller then checks the recording itself, through the door."""
    # a member's saved form leaves out its schema version (the default)
    if not isinstance(data, dict) or data.get("schema_version", SCHEMA_VERSION) not in READABLE_VERSIONS:
        return None
    saved = data.get("seal")
    if not isinstance(saved, dict) or saved.get("algorithm") != ALGORITHM:
        return None
    # a long text written once (here or for a member) put back in each place; copies that are not as the
    # saved form writes them (a place that is not there, or not null) are the door's to read or refuse
    data = copies_placed(data)
    children = data.get("children", [])  # left out at its default; any other value must be a list
    if not isinstance(children, list) or not data.keys() <= _FIELDS:  # a key the door refuses: the door names it
        return None
    heads = []
    for child in children:
        if verify_saved(child) is None:
            return None
        heads.append(child["seal"]["head"])
    try:
        made = Seal.model_validate(saved)
        if made.kinds.keys() != _LINKED or made.tags.keys() != _LINKED:  # parts the seal does not cover
            return None
        _NOTES.validate_python(data.get("annotations", []))  # outside the seal, but held to the schema too
        records = dereferenced(data)  # its tables stay tables: read as columns as they are
        for kind, items in _saved_kinds(records):
            text = encode(items)
            if made.kinds.get(kind) != hashlib.sha256(text).hexdigest() or altered_tag(made, kind, text):
                return None
    except (ValueError, TypeError, KeyError):  # not the shape a seal wrote: the long way names it
        return None
    if made.head != _head(made, heads):
        return None
    return Verdict("holds", scrubbed=tuple(made.scrubbed))


def _saved_kinds(data: dict[str, Any]) -> list[tuple[str, list[Any]]]:
    """The header and each record kind as the chain encodes them, from saved data (references read): a
    kind of records as its columns, each record with every field of its model and no other. A kind saved
    as a table is read as columns directly, with no record made per row."""
    (header,) = _completed([{name: data[name] for name in HEADER if name in data}], Recording)
    kinds: list[tuple[str, list[Any]]] = [("header", [{name: header[name] for name in HEADER}])]
    for kind in KINDS:
        items = data.get(kind, [])
        model = _item_model(Recording.model_fields[kind].annotation)
        if kind in _TABLED and isinstance(items, dict):
            assert model is not None
            items = table_columns(items, model, _shape(model)[0])
            if kind == "context_pieces":  # a piece's content may be saved as a reference to a message
                at = COLUMNS[kind].index("content")
                items[at] = [content_of(content, data.get("messages") or []) for content in items[at]]
        else:
            if not isinstance(items, list):
                raise TypeError(kind)
            if model is not None and kind not in _TABLED:  # a table's records are whole, its defaults written
                items = _completed(items, model)
            if kind in COLUMNS:
                if not all_whole(items, len(COLUMNS[kind])):
                    raise TypeError(kind)  # a field the model does not know: the model refuses it by name
                items = columns_of(items, COLUMNS[kind])
        kinds.append((kind, items))
    return kinds


@functools.cache
def _shape(model: type[BaseModel]) -> tuple[dict[str, Any], dict[str, tuple[type[BaseModel], bool]]]:
    """A model's defaults (fields a saved form may leave out) and its fields that hold models (one, or a list)."""
    defaults: dict[str, Any] = {}
    nested: dict[str, tuple[type[BaseModel], bool]] = {}
    for name, field in model.model_fields.items():
        if name in ("children", "annotations", "seal"):  # outside the seal, or sealed on their own
            continue
        if not field.is_required():
            defaults[name] = field.get_default(call_default_factory=True)
        inner = _item_model(field.annotation)
        if inner is not None:
            nested[name] = (inner, True)
        elif isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            nested[name] = (field.annotation, False)
        else:
            one = _optional_model(field.annotation)
            if one is not None:
                nested[name] = (one, False)
    return defaults, nested


def all_whole(records: list[Any], count: int) -> bool:
    """Whether each of ``records`` is a mapping of ``count`` fields (in C loops: a long run holds tens of
    thousands of records)."""
    return all(map(isinstance, records, itertools.repeat(dict))) and all(map(count.__eq__, map(len, records)))


@functools.cache
def _field_count(model: type[BaseModel]) -> int:
    return len(model.model_fields)  # read once: pydantic's class property costs a call per record


def _item_model(annotation: Any) -> type[BaseModel] | None:
    """The model of a ``list[Model]`` annotation, or ``None``."""
    if typing.get_origin(annotation) is list:
        (inner,) = typing.get_args(annotation)
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            return inner
    return None


def _optional_model(annotation: Any) -> type[BaseModel] | None:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        models = [arg for arg in typing.get_args(annotation) if isinstance(arg, type) and issubclass(arg, BaseModel)]
        return models[0] if len(models) == 1 else None
    return None


def _completed(records: list[Any], model: type[BaseModel]) -> list[Any]:
    """Saved records of ``model`` with every field left at its default put back, nested records too.

    The very list given comes back when nothing was left out; a record that is no mapping is left for
    the encoder. It works level by level, not record by record: first the records missing a field
    (found in C loops; nearly all are whole), then each field that holds records, over all of them at
    once (every commit's entries in one list). Only a record whose nested records changed is copied.
    """
    count = _field_count(model)
    defaults, nested = _shape(model)
    out = records if all_whole(records, count) else [
        record if isinstance(record, dict) and len(record) == count else _own_fields(record, defaults, count)
        for record in records]
    for name, (inner, many) in nested.items():
        kind = list if many else dict
        values = [record.get(name) if isinstance(record, dict) else None for record in out]
        at = [n for n, value in enumerate(values) if isinstance(value, kind)]
        taken: list[Any] = [values[n] for n in at]
        if many:
            flat = list(itertools.chain.from_iterable(taken))
            made = _completed(flat, inner)
            if made is flat:
                continue
            ends = itertools.accumulate(map(len, taken))
            news = [made[end - len(listed):end] for listed, end in zip(taken, ends, strict=True)]
            changed = [(n, new) for n, old, new in zip(at, taken, news, strict=True)
                       if any(map(operator.is_not, new, old))]
        else:
            news = _completed(taken, inner)
            changed = [(n, new) for n, old, new in zip(at, taken, news, strict=True) if new is not old]
        if changed:
            out = list(out)
            for n, new in changed:
                out[n] = {**out[n], name: new}
    return out


def _own_fields(record: Any, defaults: dict[str, Any], count: int) -> Any:
    """A saved record with its own fields left at their defaults put back (nested records as they are)."""
    if not isinstance(record, dict) or len(record) >= count:  # a record holds each field at most once
        return record
    missing = [name for name in defaults if name not in record]
    return {**{name: defaults[name] for name in missing}, **record} if missing else record


# -- what an output displays ---------------------------------------------------------------------
def display_digests(bundle: dict[str, Any]) -> dict[str, str]:
    """The SHA-256 of what each MIME type of an output's data displays (the recording itself left out)."""
    return {mime: hashlib.sha256(_shown(mime, value)).hexdigest() for mime, value in bundle.items()
            if mime != RECORDING_MIME}


def _shown(mime: str, value: Any) -> bytes:
    if isinstance(value, list) and all(isinstance(line, str) for line in value):
        value = "".join(value)
    if isinstance(value, str) and mime.endswith("json"):
        with contextlib.suppress(ValueError, NestingTooDeep):  # text that is no JSON data is held as text
            value = parse_json(value)
    if isinstance(value, str):
        if mime.startswith("image/") and not mime.endswith("+xml"):  # base64: its line breaks do not count
            return "".join(value.split()).encode("ascii", "replace")
        return value.replace("\r\n", "\n").rstrip("\n").encode("utf-8", "surrogatepass")
    return encode([value])  # JSON data: its keys sorted


def bind_display(bundle: dict[str, Any], *, scrubbed: list[str] | None = None,
                 digests: dict[str, str] | None = None) -> dict[str, Any]:
    """``bundle`` (an output's data) with its recording's copy of the seal holding the digests of what the
    bundle displays, chained into the head. ``digests`` gives the ones held before instead, so an edited
    display stays broken; ``scrubbed`` adds names to the seal's (a scrub that masked the display). A
    bundle with no sealed recording comes back as it is."""
    carried = carried_recording(bundle)
    saved = carried.get("seal") if carried is not None else None
    if not isinstance(saved, dict):
        return bundle
    assert carried is not None
    try:
        made = Seal.model_validate(saved)
    except ValueError:  # not a seal this library wrote: left for verify to call broken
        return bundle
    made.display = display_digests(bundle) if digests is None else digests
    made.scrubbed = sorted({*made.scrubbed, *(scrubbed or [])})
    made.head = _head(made, _child_heads(carried))
    return {**bundle, RECORDING_MIME: {**carried, "seal": made.model_dump(mode="json", exclude_defaults=True)}}


def _child_heads(carried: dict[str, Any]) -> list[str]:
    heads = []
    for child in carried.get("children") or []:
        seal = child.get("seal") if isinstance(child, dict) else None
        if isinstance(seal, dict) and isinstance(seal.get("head"), str):
            heads.append(seal["head"])
    return heads


def display_verdict(bundle: dict[str, Any]) -> Verdict | None:
    """``None`` when an output still displays what its recording's copy of the seal holds, or when that
    copy holds no display; otherwise a broken verdict of kind ``display`` naming the MIME type."""
    saved = _seal_copy(bundle)
    held = saved.get("display") if saved is not None else None
    if not isinstance(held, dict) or not held or saved is None:
        return None
    now = display_digests(bundle)
    for mime in sorted({*held, *now}):
        if mime not in now:
            problem = "was removed from the output after the run was sealed"
        elif mime not in held:
            problem = "was added to the output after the run was sealed"
        elif now[mime] != held[mime]:
            problem = "is not what was displayed when the run was sealed"
        else:
            continue
        return Verdict("broken", kind="display", field=mime, problem=problem,
                       scrubbed=tuple(saved.get("scrubbed") or ()))
    return None


def held_digests(bundle: dict[str, Any]) -> dict[str, str]:
    """The display digests an output's sealed copy holds (empty when none)."""
    saved = _seal_copy(bundle)
    held = saved.get("display") if saved is not None else None
    return dict(held) if isinstance(held, dict) else {}


def carried_recording(bundle: dict[str, Any]) -> dict[str, Any] | None:
    """The recording an output's data carries, as JSON data, whether the file holds it as data or as
    text (nbformat allows both, and the door reads both), so a copy stored as text is held to its display
    too. ``None`` when there is none or it is not a JSON object."""
    carried = bundle.get(RECORDING_MIME)
    if isinstance(carried, str):
        try:
            carried = parse_json(carried)
        except (ValueError, NestingTooDeep):  # not a recording's text: the recording door names what is wrong
            return None
    return carried if isinstance(carried, dict) else None


def _seal_copy(bundle: dict[str, Any]) -> dict[str, Any] | None:
    carried = carried_recording(bundle)
    saved = carried.get("seal") if carried is not None else None
    return saved if isinstance(saved, dict) else None


def holds_display(bundle: dict[str, Any]) -> bool:
    """Whether an output's sealed copy holds a display (digests to check it against)."""
    return bool(held_digests(bundle))


# -- what an output claims -----------------------------------------------------------------------
#: the output types whose ``data`` a notebook displays (a ``stream`` shows its ``text``, an ``error`` its traceback)
DISPLAYING = ("display_data", "execute_result")
_BADGE = re.compile(r"data-fl-seal\s*=", re.IGNORECASE)
_VERIFIED = re.compile(r"\bsealed\W{0,12}verified\b", re.IGNORECASE)
#: a tag; it never holds a "<", so a scan from each "<" stops at the next one (a text of "<" is read in one pass)
_TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9-]*)?[^<>]*>")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
#: elements drawn in line with the text around them: ``<b>sea</b>led`` is one word to a reader
_INLINE = frozenset({"a", "abbr", "b", "bdi", "bdo", "cite", "code", "del", "dfn", "em", "font", "i", "ins", "kbd",
                     "mark", "q", "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "tt", "u", "var",
                     "wbr"})


@functools.cache
def _unseen() -> re.Pattern[str]:
    return re.compile(f"[{invisible_class()}]+")


def _inline_as_nothing(tag: re.Match[str]) -> str:
    return "" if (tag.group(1) or "").lower() in _INLINE else " "


def _shows_verified(text: str) -> bool:
    """Whether a reader sees "sealed · verified" in ``text``: comments and invisible characters dropped,
    entities read, tags read as a space, and again with inline tags read as nothing."""
    text = _COMMENT.sub("", text)
    return any(_VERIFIED.search(_unseen().sub("", html.unescape(_TAG.sub(gap, text))))
               for gap in (" ", _inline_as_nothing))


def seal_claim(output: dict[str, Any]) -> str | None:
    """Where an output shows a seal (a seal badge, or "sealed · verified" in any markup or spacing): the MIME
    type, or ``text`` for a stream output's text; ``None`` when it shows none. The recording is not looked at."""
    data = output.get("data")
    places: list[tuple[str, Any]] = ([(mime, value) for mime, value in data.items() if mime != RECORDING_MIME]
                                     if isinstance(data, dict) else [])
    places.append(("text", output.get("text")))
    for where, value in places:
        if isinstance(value, list):
            value = "".join(line for line in value if isinstance(line, str))
        if isinstance(value, str) and (_BADGE.search(value) or _shows_verified(value)):
            return where
    return None


def unbacked(output: dict[str, Any]) -> Verdict | None:
    """A broken verdict (kind ``display``) for an output that shows a seal nothing in it backs: a recording
    in an output that does not display its data, or a seal shown with no recording beside it. ``None``
    otherwise (a carried recording is then for its seal to judge)."""
    data = output.get("data")
    if isinstance(data, dict) and RECORDING_MIME in data:
        if output.get("output_type") in DISPLAYING:
            return None
        return Verdict("broken", kind="display", field="output_type",
                       problem="is no longer an output that displays its data (a reader sees other text than the "
                               "sealed run's): it was changed after the run was sealed")
    return _claimed(output, "shows a seal, but the output carries no recording to check it against (removed "
                            "after the run was sealed, or never kept): what it shows cannot be verified")


def unsealed_claim(output: dict[str, Any]) -> Verdict | None:
    """A broken verdict for an output that shows a seal while the recording it carries has none; else ``None``."""
    return _claimed(output, "shows a seal, but the recording it carries is not sealed: the seal was removed after "
                            "the run was shown")


def _claimed(output: dict[str, Any], problem: str) -> Verdict | None:
    claim = seal_claim(output)
    return None if claim is None else Verdict("broken", kind="display", field=claim, problem=problem)
