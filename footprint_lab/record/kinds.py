"""The kinds of records a recording lists, each held as ``Rows`` made from its fields' columns.

Defect closed: loading a long recording made every step, read, commit, event and exchange a pydantic
model at once, hundreds of thousands of objects, and the collector walked them again and again while
they were made. Most are never looked at: a check of the seal reads columns, a view reads a few.

Rule kept here: a recording's records have one form in memory, whether a run made them or a file
held them: a :class:`~footprint_lab.record.rows.Rows` of a kind, made from one column per field
(JSON-native values, nested records as dicts), whose models are made when first asked for without
validating again. :func:`rows_of` makes it from a finished run's capture (``record.build``) and
:func:`saved_rows` from saved data. Saved records are validated column by column against each
field's type, strictly, so a column that passes holds what the models would; each column is validation's
copy, so a loaded recording shares nothing with the data it came from, nor one record with another.
Records that do not read as columns (not a list of records, a key no field has, a required field left
out) or a column that fails validation are left to the schema, which reads them record by record
(leniently, unless the caller asked for strict validation) and names the field at fault.

Role: record layer, used by ``record.build`` and by ``Recording``'s validator.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from footprint_lab.record import exchange, records
from footprint_lab.record.records import ContextPiece, Data, maker
from footprint_lab.record.rows import Rows
from footprint_lab.record.saved_form import TABLES, content_of, table_columns

#: each kind of records a recording lists, with its model, in the order the seal takes them
MODELS: dict[str, type[Data]] = {
    "steps": records.Step, "reads": records.Read, "commits": records.Commit, "decisions": records.Decision,
    "events": records.Event, "context_pieces": ContextPiece, "exchanges": exchange.LLMExchange}
_entry, _rule = maker(records.CommitEntry), maker(records.RuleEvidence)
_response, _usage = maker(exchange.ResponseRecord), maker(exchange.UsageRecord)
_tool_call, _tool_margin = maker(exchange.ToolCallRecord), maker(exchange.ToolMargin)
_commit, _decision, _exchange = maker(records.Commit), maker(records.Decision), maker(exchange.LLMExchange)


def _commit_model(values: dict[str, Any]) -> records.Commit:
    return _commit({**values, "entries": list(map(_entry, values["entries"]))})


def _decision_model(values: dict[str, Any]) -> records.Decision:
    return _decision({**values, "evidence": list(map(_rule, values["evidence"]))})


def _exchange_model(values: dict[str, Any]) -> exchange.LLMExchange:
    response = values["response"]
    return _exchange({**values, "response": _response({
        **response, "tool_calls": list(map(_tool_call, response["tool_calls"])), "usage": _usage(response["usage"]),
        "tool_margins": list(map(_tool_margin, response["tool_margins"]))})})


#: what makes one record of each kind from its values (nested records as dicts), unvalidated
_MAKE: dict[str, Callable[[dict[str, Any]], Any]] = {
    "steps": maker(records.Step), "reads": maker(records.Read), "commits": _commit_model,
    "decisions": _decision_model, "events": maker(records.Event), "context_pieces": maker(ContextPiece),
    "exchanges": _exchange_model}


def rows_of(kind: str, count: int, columns: Callable[[], list[Any]]) -> Rows[Any]:
    """``count`` records of ``kind``, made from ``columns()`` (one per field, in the model's order) on first use."""
    return Rows(count=count, columns=columns, fields=tuple(MODELS[kind].model_fields), model=_MAKE[kind])


def saved_rows(data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Rows[Any]]]:
    """``data`` (a saved recording's, its copies placed) with each kind that reads as valid columns set to an
    empty list, and those kinds as ``Rows``, to set on the recording once the rest is validated. A kind
    that does not read so is left in ``data`` as it was, for the schema."""
    rows: dict[str, Rows[Any]] = {}
    for kind, model in MODELS.items():
        columns = _columns(kind, data.get(kind), data.get("messages"))
        if columns is not None and (checked := _checked(columns, model)) is not None:
            rows[kind] = rows_of(kind, len(checked[0]), functools.partial(list, checked))
    return ({**data, **{kind: [] for kind in rows}} if rows else data), rows


def _columns(kind: str, saved: Any, messages: Any) -> list[Any] | None:
    """Saved records (a list of records, or a table) as one column per field, in field order, a field left
    out at its default; a piece's content saved as a reference to a message read back. ``None`` when they
    are not records of ``kind``, or none."""
    model = MODELS[kind]
    fields, defaults = tuple(model.model_fields), _defaults(model)
    if isinstance(saved, dict) and kind in TABLES:  # only these kinds are ever saved as tables
        try:
            columns = table_columns(saved, model, defaults)
        except TypeError:
            return None
    elif not _records_of(saved, frozenset(fields)):
        return None
    else:
        try:
            columns = [[record[name] if name in record else defaults[name] for record in saved] for name in fields]
        except KeyError:  # a required field left out: the schema names it
            return None
    if model is ContextPiece and isinstance(messages, list) and messages:
        at = fields.index("content")
        columns[at] = [content_of(content, messages) for content in columns[at]]
    return columns


def _records_of(saved: Any, fields: frozenset[str]) -> bool:
    """Whether ``saved`` is a list of records, each a mapping of some of ``fields`` and nothing else."""
    return (isinstance(saved, list) and bool(saved) and all(map(isinstance, saved, itertools.repeat(dict)))
            and all(map(fields.issuperset, saved)))


def _checked(columns: list[Any], model: type[Data]) -> list[Any] | None:
    """Each column as its field's type validates it (nested records as dicts of their fields), or ``None`` when
    one does not validate."""
    try:
        return [_column(adapter, nested, column) for (adapter, nested), column in
                zip(_adapters(model), columns, strict=True)]
    except ValidationError:
        return None


def _column(adapter: TypeAdapter[Any], nested: bool, column: Sequence[Any]) -> Sequence[Any]:
    """A column as its field's type validates it: the recording's own copy (a list or mapping in it is shared with
    nothing the caller holds, nor with another record), nested records as dicts of their fields."""
    checked: list[Any] = adapter.validate_python(list(column))
    return _plain(checked) if nested else checked


def _plain(value: Any) -> Any:
    """Validated records as the values a column holds: a model as a dict of its fields, a list item by item, and
    anything else (a free-form value) as it is."""
    if isinstance(value, BaseModel):
        return {name: _plain(item) for name, item in value.__dict__.items()}
    return [_plain(item) for item in value] if isinstance(value, list) else value


#: columns are validated strictly (no text read as a number, no tuple as a list): a record that only the model's
#: own, lax, validation accepts is read record by record, as ``model_validate(..., strict=...)`` asks
_STRICT = ConfigDict(extra="forbid", strict=True)


@functools.cache
def _adapters(model: type[Data]) -> tuple[tuple[TypeAdapter[Any], bool], ...]:
    """Per field of ``model``: what validates a list of its values, under the model's settings, and whether the
    field holds records."""
    made = []
    for field in model.model_fields.values():
        kind: Any = Annotated[(field.annotation, *field.metadata)] if field.metadata else field.annotation
        made.append((TypeAdapter(list[kind], config=_STRICT), _holds_records(field.annotation)))
    return tuple(made)


def _holds_records(annotation: Any) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    return any(_holds_records(inner) for inner in getattr(annotation, "__args__", ()))


@functools.cache
def _defaults(model: type[Data]) -> dict[str, Any]:
    return {name: field.get_default(call_default_factory=True)
            for name, field in model.model_fields.items() if not field.is_required()}
