"""The canonical text a seal hashes: each record kind of a recording, in chain order, written one way.

Rule kept here: every form of the same recording (its models, a finished run's columns, its saved
JSON data) gives the same text, in every process. The text is compact orjson with keys sorted at
every level. A kind of records is written as its model's columns (:data:`COLUMNS`); the header, the
transcript's messages and ``message_pieces`` are written as lists.

Role: sealing layer, shared by the seal, its locator and the saved-data check.
"""

from __future__ import annotations

import functools
import json
import math
import operator
from collections.abc import Callable
from typing import Any

import orjson
from pydantic import BaseModel

from footprint_lab.record.recording import Recording
from footprint_lab.record.rows import Rows, transposed
from footprint_lab.record.spliced import Spliced

#: the record kinds, in the order the chain takes them
KINDS = ("steps", "reads", "commits", "decisions", "events", "context_pieces", "exchanges", "messages",
         "message_pieces")
#: the one kind of a sealed checkpoint (or any other model with a ``seal`` field)
DOCUMENT = "document"
#: fields the seal leaves out: notes stay writable, members carry their own seal
_OUTSIDE = frozenset({"annotations", "seal", "children"})
HEADER = tuple(name for name in Recording.model_fields if name not in _OUTSIDE and name not in KINDS)
HEADER_OF = operator.attrgetter(*HEADER)
#: each kind made of model records, with the model's fields in order: the chain takes one column per field
#: (messages are free-form and ``message_pieces`` plain numbers, so both stay lists)
COLUMNS: dict[str, tuple[str, ...]] = {
    kind: tuple(model.model_fields) for kind in KINDS
    if isinstance(model := getattr(Recording.model_fields[kind].annotation, "__args__", (None,))[0], type)
    and issubclass(model, BaseModel)}


def columns_of(records: Any, fields: tuple[str, ...]) -> list[Any]:
    """Records as the chain reads them: one sequence per field of ``fields``, values in record order.

    ``records`` are models or saved record dicts (every field present). The columns are made in C
    loops, since a long run holds tens of thousands of records. A kind not yet built is read from
    its capture instead (``Rows.columns``).
    """
    take = operator.itemgetter(*fields)
    try:
        rows = list(map(take, map(_OWN_FIELDS, records)))  # models
    except AttributeError:  # record dicts
        rows = [take(record.__dict__ if isinstance(record, BaseModel) else record) for record in records]
    return transposed(rows, len(fields))


_OWN_FIELDS = operator.attrgetter("__dict__")


def fields_of(value: Any) -> Any:
    """How orjson writes what it does not know: a model as its fields in order; a ``Rows`` or a
    ``Spliced`` (a live run's transcript, shared with its conversation) as its list."""
    if isinstance(value, BaseModel):
        return value.__dict__
    if isinstance(value, Rows):
        return value.transient()
    if isinstance(value, Spliced):
        return list(value)
    raise TypeError(type(value).__name__)


def encode(value: Any, *, standard: bool = False) -> bytes:
    """The canonical encoding: compact orjson, keys sorted at every level.

    Data orjson cannot write (an integer beyond 64 bits), or any data with ``standard``, is written by the
    standard library's encoder instead. Both sides of a check take the same branch for the same data, so
    their texts agree.
    """
    if not standard:
        try:
            return orjson.dumps(value, default=fields_of, option=orjson.OPT_SORT_KEYS)
        except TypeError:
            pass
    return json.dumps(_finite(value), default=fields_of, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False, allow_nan=False).encode("utf-8", "surrogatepass")


def _finite(value: Any) -> Any:
    """``value`` with each NaN or infinity as ``None``, as orjson writes them (and a saved recording reads back)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    if isinstance(value, BaseModel | Rows | Spliced):
        return _finite(fields_of(value))
    return value


def encoder_of(value: Any) -> Callable[[Any], bytes]:
    """What writes each part of ``value`` as :func:`encode` wrote it inside ``value``: the two encoders spell
    some floats differently (``1e-05``), so a part is measured by the one that wrote the whole."""
    try:
        orjson.dumps(value, default=fields_of, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return functools.partial(encode, standard=True)
    return encode
