"""What the seal's chain (``sha256-chain/5``) reads of a kind of records: its columns, with the nested
values the run's capture holds flat taken as columns of their own.

Rule kept here: the chain reads each kind as its model's columns, and three kinds nest values a
record holds as dicts (a routine event's payload, a commit's entries, an exchange's response): the
chain takes those as columns too, so the text is the same read from models, from a finished run's
columns (``record.build``) or from a saved recording's JSON data:

- ``events``: ``seq``, ``run_id`` (``null`` when every event carries the recording's own run id),
  ``type``, ``step_id`` and ``payload``; a routine event (:data:`ROUTINE`: its type, and a payload
  that is a mapping of exactly its type's keys) has ``null`` as its payload, and its values join
  one column per routine type and key, in event order (``write.path``, ``write.verb``, ...); a
  payload of a routine type that is not such a mapping is written as ``[payload]``, so no two
  recordings read the same;
- ``commits``: ``step_id``, each commit's number of entries, then the entries' ``path``,
  ``verb`` and ``value`` over all commits in order;
- ``exchanges``: the model's columns, with ``response`` given as its fields' columns, each usage
  as its counts in the model's field order.

Every other kind is its model's columns as they are. :func:`chained` turns a kind's columns (from
models, or from a saved recording's data) into what the chain reads (tests/sealing/test_seal_chain.py
holds the readings equal over runs of every shape). :func:`located` maps a place
in those columns back to the record and field a check names.

Role: sealing layer, beside the seal (``sealing.seal``) and the saved-data check (``sealing.saved_seal``).
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

from footprint_lab.record.exchange import LLMExchange, ResponseRecord, UsageRecord
from footprint_lab.record.records import CommitEntry
from footprint_lab.record.rows import transposed
from footprint_lab.record.schema import ROUTINE_PAYLOADS as ROUTINE

#: the fields of what a nested record holds, in the model's order
ENTRY_FIELDS = tuple(CommitEntry.model_fields)
RESPONSE_FIELDS = tuple(ResponseRecord.model_fields)
USAGE_FIELDS = tuple(UsageRecord.model_fields)
_EXCHANGE_FIELDS = tuple(LLMExchange.model_fields)
_AT_RESPONSE = _EXCHANGE_FIELDS.index("response")
#: each routine type's value columns, in order: ``write.path``, ``write.verb``, ``read.path``...
VALUE_COLUMNS = tuple(f"{kind}.{key}" for kind, keys in ROUTINE.items() for key in keys)
#: the names of the columns the chain reads, for the kinds it reads otherwise than as the model's columns
NAMES: dict[str, tuple[str, ...]] = {
    "events": ("seq", "run_id", "type", "step_id", "payload", *VALUE_COLUMNS),
    "commits": ("step_id", "entries.count", *(f"entries.{name}" for name in ENTRY_FIELDS)),
    "exchanges": (*_EXCHANGE_FIELDS[:_AT_RESPONSE], *(f"response.{name}" for name in RESPONSE_FIELDS),
                  *_EXCHANGE_FIELDS[_AT_RESPONSE + 1:]),
}


def chained(kind: str, columns: list[Any], run_id: Any) -> list[Any]:
    """A kind's columns (its model's fields, in order; nested records as models or dicts) as the chain
    reads them. Raises ``TypeError`` for a nested record that is not a whole record of its model
    (saved data a model would refuse: the caller checks it the long way)."""
    if kind == "events":
        seqs, run_ids, types, steps, payloads = columns
        main, values = routine_split(types, payloads)
        return [seqs, None if run_ids.count(run_id) == len(run_ids) else run_ids, types, steps, main, *values]
    if kind == "commits":
        step_ids, entries = columns
        flat = _whole(itertools.chain.from_iterable(entries), ENTRY_FIELDS)
        return [step_ids, list(map(len, entries)), *_fields_columns(flat, ENTRY_FIELDS)]
    if kind == "exchanges":
        responses = _whole(columns[_AT_RESPONSE], RESPONSE_FIELDS)
        content, calls, stop, model, usage, margins = _fields_columns(responses, RESPONSE_FIELDS)
        counts = _rows(_whole(usage, USAGE_FIELDS), USAGE_FIELDS)  # each usage as its counts, in field order
        return [*columns[:_AT_RESPONSE], content, calls, stop, model, counts, margins, *columns[_AT_RESPONSE + 1:]]
    return columns


def routine_split(types: Sequence[str], payloads: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """The events' payload column as the chain reads it, and the routine types' value columns.

    One pass, each payload looked at once (a long run's payloads lie all over the heap: every look
    at one costs a trip to memory); when a payload of a routine type is not a mapping of exactly
    its type's keys, the events are read again one by one (:func:`_split_each`).
    """
    taken: dict[str, tuple[list[Any], int, Callable[[dict[str, Any]], Any]]] = {
        kind: ([], len(keys), _TAKE[kind]) for kind, keys in ROUTINE.items()}
    get = taken.get
    main: list[Any] = []
    add = main.append
    try:
        for kind, payload in zip(types, payloads, strict=True):
            spec = get(kind)
            if spec is None:
                add(payload)
                continue
            got, size, take = spec
            if not isinstance(payload, dict) or len(payload) != size:
                return _split_each(types, payloads)
            add(None)
            got.append(take(payload))
    except KeyError:
        return _split_each(types, payloads)
    values: list[Any] = []
    for kind, keys in ROUTINE.items():
        got = taken[kind][0]
        values.extend(transposed(got, len(keys)) if len(keys) > 1 else [got])
    return main, values


def _split_each(types: Sequence[str], payloads: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """:func:`routine_split`, event by event: a payload of a routine type that is not a mapping of exactly
    its keys stays in the payload column, wrapped in a list."""
    main: list[Any] = []
    columns: dict[str, list[list[Any]]] = {kind: [[] for _ in keys] for kind, keys in ROUTINE.items()}
    for kind, payload in zip(types, payloads, strict=True):
        keys = ROUTINE.get(kind)
        if keys is None:
            main.append(payload)
        elif isinstance(payload, dict) and len(payload) == len(keys) and all(key in payload for key in keys):
            main.append(None)
            for key, column in zip(keys, columns[kind], strict=True):
                column.append(payload[key])
        else:
            main.append([payload])
    return main, [column for kind in ROUTINE for column in columns[kind]]


def located(kind: str, columns: list[Any], name: str, index: int, run_id: Any) -> tuple[int, str]:
    """The record (its index) and the field that item ``index`` of the chain's column ``name`` of ``kind``
    stands for."""
    if kind == "events":
        types, main = columns[2], columns[4]
        if name == "run_id":  # sealed as null (every event the recording's own) and now a list: the first other one
            run_ids = columns[1] or ()
            if index < len(run_ids) and run_ids[index] != run_id:
                return index, name
            return next((at for at, value in enumerate(run_ids) if value != run_id), index), name
        if name in VALUE_COLUMNS:
            routine = name.split(".", 1)[0]
            places = [at for at, (kind_, payload) in enumerate(zip(types, main, strict=True))
                      if kind_ == routine and payload is None]
            return (places[index] if index < len(places) else len(types)), "payload"
        return index, name
    if kind == "commits" and name.startswith("entries."):
        if name == "entries.count":
            return index, "entries"
        ends = list(itertools.accumulate(columns[1]))  # the flat index each commit's entries end before
        return bisect.bisect_right(ends, index), "entries"
    if kind == "exchanges" and name.startswith("response."):
        return index, "response"
    return index, name


#: what takes a routine payload's values, in its type's key order (one value alone for one key)
_TAKE = {kind: operator.itemgetter(*keys) for kind, keys in ROUTINE.items()}
_OWN_FIELDS = operator.attrgetter("__dict__")
_NOT_WHOLE = "a nested record that is not a whole record of its model"


def all_whole(records: list[Any], count: int) -> bool:
    """Whether each of ``records`` is a mapping of ``count`` fields (told in C loops: a long run holds tens
    of thousands of nested records)."""
    return all(map(isinstance, records, itertools.repeat(dict))) and all(map(count.__eq__, map(len, records)))


def _whole(records: Any, fields: tuple[str, ...]) -> list[Any]:
    """Nested records as mappings of their fields (a model's own), each holding exactly ``fields``."""
    out = records if isinstance(records, list) else list(records)
    if not all(map(isinstance, out, itertools.repeat(dict))):
        try:  # models (a pydantic isinstance check costs a Python call: their own fields are read in C)
            out = list(map(_OWN_FIELDS, out))
        except AttributeError:  # models beside mappings
            out = [record.__dict__ if isinstance(record, BaseModel) else record for record in out]
    if not all_whole(out, len(fields)):
        raise TypeError(_NOT_WHOLE)
    return out


def _fields_columns(records: list[dict[str, Any]], fields: tuple[str, ...]) -> list[list[Any]]:
    """Whole records (:func:`_whole`) as one column per field."""
    try:
        return [list(map(operator.itemgetter(name), records)) for name in fields]
    except KeyError:
        raise TypeError(_NOT_WHOLE) from None


def _rows(records: list[dict[str, Any]], fields: tuple[str, ...]) -> list[Any]:
    """Whole records (:func:`_whole`) as their values in ``fields``' order, one tuple each."""
    try:
        return list(map(operator.itemgetter(*fields), records))
    except KeyError:
        raise TypeError(_NOT_WHOLE) from None
