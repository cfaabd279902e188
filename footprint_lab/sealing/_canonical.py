"""The canonical text a seal hashes: each record kind of a recording, in the chain's order, written one way.

Rule kept here: the text is the same in every process and from every form of the same recording (its
models, a finished run's columns, its saved JSON data): compact orjson, keys sorted at every level;
a kind of records as its model's columns (:data:`COLUMNS`, :func:`columns_of`), the header, the
transcript's messages and ``message_pieces`` as their lists.

Role: sealing layer, for the seal (``sealing.seal``), its locator (``sealing._locator``) and the
saved-data check (``sealing.saved_seal``).
"""

from __future__ import annotations

import json
import operator
from typing import Any

import orjson
from pydantic import BaseModel

from footprint_lab.record.recording import Recording
from footprint_lab.record.rows import Rows, transposed
from footprint_lab.record.spliced import Spliced

#: the record kinds, in the order the chain takes them
KINDS = ("steps", "reads", "commits", "decisions", "events", "context_pieces", "exchanges", "messages",
         "message_pieces")
#: the one kind of a sealed checkpoint (or any other document with a ``seal`` field)
DOCUMENT = "document"
#: fields the seal leaves out: notes stay writable, members carry their own seal
_OUTSIDE = frozenset({"annotations", "seal", "children"})
HEADER = tuple(name for name in Recording.model_fields if name not in _OUTSIDE and name not in KINDS)
HEADER_OF = operator.attrgetter(*HEADER)
#: the kinds of records of a model, with its fields in order: the chain takes each as one column per field
#: (the transcript's messages are free-form and ``message_pieces`` plain numbers: they stay lists)
COLUMNS: dict[str, tuple[str, ...]] = {
    kind: tuple(model.model_fields) for kind in KINDS
    if isinstance(model := getattr(Recording.model_fields[kind].annotation, "__args__", (None,))[0], type)
    and issubclass(model, BaseModel)}




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


def fields_of(value: Any) -> Any:
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
        return orjson.dumps(value, default=fields_of, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return json.dumps(value, default=fields_of, sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False).encode("utf-8", "surrogatepass")
