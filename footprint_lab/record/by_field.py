"""A recording's data walked field by field: its field names are its structure, never a policy's keys.

Rule kept here: a policy's covered keys name keys in what a run was given, sent and received (a tool's
arguments, an input, an event's payload). They never name a recording's own fields (``status``, ``path``,
``content``, ``args``...) nor a transcript message's (``record.schema.MESSAGE_FIELDS``). :func:`by_field`
walks data along the models and hands each field's value to ``each`` (a scrubber, or what learns from
one): a field holding records (a step, an exchange, a message, a member run) is walked in turn; one
holding a fixed choice or a number (a slot, a verb, a count, a time) is kept when it holds one; the ids
records join on, and what a model lists in ``FIELDS_AS_WRITTEN``, are kept as written; a tool's schema has
its texts handed over one by one (it is the tool's declaration, never data under a key). So a masked
recording still fits its schema whatever keys the policy covers, and a word learned from a masked value
never renames a field. The recorder masks a message written to the conversation this way, ``record.build``
a run's exchanges and transcript, and a notebook's scrub or a chat a recording masked again.

Role: record layer (imports no model: the generic recorder uses it).
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel

from footprint_lab.record.schema import CALL_FIELDS, MESSAGE_FIELDS, ROLES

#: a field that holds numbers (or a list of them): nothing a policy covers is in it
NUMBER = "number"
#: a field kept as written whatever it holds
AS_WRITTEN = "as written"
#: a field whose texts are handed over one by one, its keys and shape kept: a tool's schema
TEXTS = "texts"
#: the ids the library makes, which records join on and a run never masks
_IDS = ("run_id", "step_id", "writer")
_NUMBERS = (int, float)

#: what a field holds: records (their model, or their fields' kinds), a fixed choice (its choices), numbers,
#: as written, texts, or data (``None``)
Kind = type[BaseModel] | dict[str, "Kind"] | frozenset[Any] | str | None

#: a tool call's fields, and a transcript message's
CALL: dict[str, Kind] = dict.fromkeys(CALL_FIELDS)
MESSAGE: dict[str, Kind] = {**dict.fromkeys(MESSAGE_FIELDS), "role": frozenset(ROLES), "tool_calls": CALL,
                            "is_error": NUMBER}


def by_field(data: Any, each: Callable[[Any], Any], kinds: type[BaseModel] | dict[str, Kind]) -> Any:
    """``data`` (a record's, or a recording's with its tables and references read back) with each field's value
    kept, walked, or handed to ``each``, by what the field holds (``kinds``: a model, or its fields' kinds). A
    key that is no field is handed over with its value, as data; a value that is not what its field holds is
    handed over as it is."""
    if not isinstance(data, dict):
        return each(data)
    if isinstance(kinds, type):
        kinds = kinds_of(kinds)
    out: dict[Any, Any] = {}
    for name, value in data.items():
        kind = kinds.get(name)
        walked = isinstance(kind, type | dict)
        if walked and isinstance(value, list) and all(isinstance(item, dict) for item in value):
            out[name] = [by_field(item, each, kind) for item in value]  # type: ignore[arg-type]
        elif walked and isinstance(value, dict):
            out[name] = by_field(value, each, kind)  # type: ignore[arg-type]
        elif kind == TEXTS:
            out[name] = texts(value, each)
        elif name in kinds:
            out[name] = value if value is None or _kept(kind, value) else each(value)
        else:  # data kept beside the fields (a message's other keys): masked as data, its key a key
            out.update(each({name: value}))
    return out


def texts(value: Any, each: Callable[[Any], Any]) -> Any:
    """``value`` with each text in it handed to ``each``, its keys and shape kept."""
    if isinstance(value, str):
        return each(value)
    if isinstance(value, dict):
        return {key: texts(item, each) for key, item in value.items()}
    return [texts(item, each) for item in value] if isinstance(value, list) else value


def _kept(kind: Kind, value: Any) -> bool:
    """Whether a field's value is kept as written: as written, or what a fixed choice or numbers hold (records
    written as their numbers, a usage's counts, count as numbers)."""
    if kind == AS_WRITTEN:
        return True
    if isinstance(value, list):
        return all(_kept(kind, item) for item in value)
    if kind == NUMBER or isinstance(kind, type | dict):
        return isinstance(value, _NUMBERS)
    return isinstance(kind, frozenset) and isinstance(value, str | int) and value in kind


@functools.cache
def kinds_of(model: type[BaseModel]) -> dict[str, Kind]:
    """What each field of ``model`` holds."""
    kinds = {name: AS_WRITTEN if name in _IDS else _kind(field.annotation)
             for name, field in model.model_fields.items()}
    kinds.update(dict.fromkeys(getattr(model, "FIELDS_AS_WRITTEN", ()), AS_WRITTEN))
    kinds.update({name: MESSAGE for name in ("messages", "injected_messages") if name in kinds})
    if "tools" in kinds:
        kinds["tools"] = TEXTS
    return kinds


def _kind(annotation: Any) -> Kind:
    """What a field of this type holds. An optional field, or a list, holds what its items hold."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _kind(typing.get_args(annotation)[0])
    if origin is Literal:
        return frozenset(typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType, list):
        kinds = [_kind(inner) for inner in typing.get_args(annotation) if inner is not type(None)]
        return kinds[0] if len(kinds) == 1 else None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return NUMBER if annotation in _NUMBERS or annotation is bool else None
