"""The saved form of a recording: tables for long lists of flat records, and repeated text written once.

Rule kept here: what a recording writes to JSON is compact and reads back equal.

- **Tables**: each list of flat records (steps, reads, events, context pieces) may be written as a
  table that names each field once (:func:`packed`).
- **References** (schema version 2): a commit entry or context piece that holds a transcript
  message's text refers to the message by index instead (:func:`reference`, ``record.schema``).
- **Copies**: a long text held in several places (an answer is also the last message's text, the
  reply's content and two commit values) is written once; each other place is written ``null`` and
  named under ``copies`` (:func:`share_texts`).

:func:`unpacked` and the ``Recording``'s own validator read all of them back, so every reader in
memory sees whole records (the copies put back are one text object, not one each).

Role: record layer; works on JSON-native data.
"""

from __future__ import annotations

import itertools
import operator
from typing import TYPE_CHECKING, Any, TypeGuard

from pydantic import BaseModel

from footprint_lab.record.records import ContextPiece, Data, Event, Read, Step
from footprint_lab.record.schema import COPIES, COPY_MIN, MESSAGE_REF, MESSAGES

if TYPE_CHECKING:
    from footprint_lab.record.recording import Recording


#: the lists of flat records a recording stores as tables in its compact form, with each record's model
TABLES: dict[str, type[Data]] = {"steps": Step, "reads": Read, "events": Event, "context_pieces": ContextPiece}


def packed(recording: Recording) -> dict[str, Any]:
    """The recording as compact JSON-native data that ``Recording.model_validate`` reads back equal.

    Fields at their defaults are left out, except ``schema_version`` (a reader needs it to read
    the rest). Each list of flat records becomes a table, ``{"columns": [...], "rows": [[...], ...]}``,
    naming each field once instead of once per record; a column with one value in every row is
    written once, under ``same``. Members are packed the same way. Nothing is dropped: in a table, a
    record's field left at its default is written as that default.
    """
    data: dict[str, Any] = recording.model_dump(mode="json", exclude_defaults=True)
    return {"schema_version": recording.schema_version, **_pack(data)}


def _pack(data: dict[str, Any]) -> dict[str, Any]:
    for name, model in TABLES.items():
        records = data.get(name)
        if records:
            data[name] = _table(records, model)
    if data.get("children"):
        data["children"] = [_pack(child) for child in data["children"]]
    return data


def _table(records: list[dict[str, Any]], model: type[Data]) -> dict[str, Any]:
    columns = list(dict.fromkeys(key for record in records for key in record))
    fields = model.model_fields
    defaults = {name: fields[name].get_default(call_default_factory=True) for name in columns
                if not fields[name].is_required()}
    rows = [[record[name] if name in record else defaults[name] for name in columns] for record in records]
    same = {name: rows[0][at] for at, name in enumerate(columns)
            if len(rows) > 1 and all(row[at] == rows[0][at] for row in rows)}
    if same:
        keep = [at for at, name in enumerate(columns) if name not in same]
        columns = [columns[at] for at in keep]
        rows = [[row[at] for at in keep] for row in rows]
    return {"columns": columns, "rows": rows, **({"same": same} if same else {})}


def unpacked(data: Any) -> Any:
    """Recording data with every table (its members' too) back in record form, and every reference read;
    other data as given.

    For readers that work on the data rather than the model, e.g. a scrubber masking values by key.
    """
    data = dereferenced(untables(data))
    if isinstance(data, dict) and isinstance(data.get("children"), list):
        data = {**data, "children": [unpacked(child) for child in data["children"]]}
    return data


def untables(data: Any) -> Any:
    if isinstance(data, dict) and any(isinstance(data.get(name), dict) for name in TABLES):
        data = {**data, **{name: _untable(data[name]) for name in TABLES if isinstance(data.get(name), dict)}}
    return data


def _untable(table: dict[str, Any]) -> Any:
    """A table back to its records; anything else is given back for the schema to refuse by field."""
    if not _is_table(table):
        return table
    columns, rows, same = table["columns"], table["rows"], table.get("same", {})
    return [{**same, **dict(zip(columns, row, strict=True))} for row in rows]


def _is_table(table: dict[str, Any]) -> bool:
    """Whether ``table`` is a table as :func:`packed` writes one: names, rows of one value per name, and
    the columns written once (``same``)."""
    columns, rows, same = table.get("columns"), table.get("rows"), table.get("same", {})
    return (isinstance(columns, list) and all(isinstance(name, str) for name in columns) and isinstance(rows, list)
            and isinstance(same, dict) and all(map(isinstance, rows, itertools.repeat(list)))
            and set(map(len, rows)) <= {len(columns)})


def table_columns(table: Any, model: type[BaseModel], defaults: dict[str, Any]) -> list[Any]:
    """A saved table as ``model``'s columns, in field order, with no record made per row. A column
    written once (``same``) or left out (at its default, from ``defaults``) is repeated for every row.
    Raises ``TypeError`` for anything that is not such a table, names a field the model lacks, or
    leaves out one it needs (the schema then names the fault)."""
    if not isinstance(table, dict) or not _is_table(table):
        raise TypeError("not a table")
    names, rows, same = table["columns"], table["rows"], table.get("same", {})
    fields = tuple(model.model_fields)
    if not {*names, *same} <= set(fields) or len(set(names)) != len(names) or set(names) & set(same):
        raise TypeError("a table naming what its model does not hold, or a field twice")
    count = len(rows)
    by_name = dict(zip(names, zip(*rows, strict=True), strict=True)) if rows else dict.fromkeys(names, ())
    columns = []
    for name in fields:
        if name in by_name:
            columns.append(by_name[name])
        elif name in same or name in defaults:
            columns.append([same[name] if name in same else defaults[name]] * count)
        else:
            raise TypeError("a table that leaves out a field its model needs")
    return columns


def content_of(content: Any, messages: list[Any]) -> Any:
    """A context piece's content as saved, read: the text of the message a reference names
    (:func:`reference`), or the content as it is."""
    text = _message_of(content, messages)
    return content if text is None else text


def reference(data: dict[str, Any]) -> None:
    """Replace each copy of a transcript message, in one recording's JSON data, by the message's index.

    A commit entry that appends message ``k`` keeps ``{"message": k}`` in place of its value, and a
    context piece whose content is message ``k``'s text keeps ``{"message": k}`` as its content.
    Only exact copies are replaced, so a value a redaction policy masked differently stays as it is.
    """
    messages = data.get("messages")
    if not messages:
        return
    path = list(MESSAGES)
    at = 0
    for commit in data.get("commits") or ():
        for entry in commit["entries"]:
            if entry.get("verb") == "append" and entry.get("path") == path and at < len(messages):
                found = _next_equal(messages, entry.get("value"), at)
                if found is not None:
                    del entry["value"]
                    entry[MESSAGE_REF] = found
                    at = found + 1
    pieces = data.get("context_pieces") or []
    for k, index in enumerate(data.get("message_pieces") or ()):
        if k < len(messages) and isinstance(index, int) and 0 <= index < len(pieces):
            piece, text = pieces[index], messages[k].get("content")
            if isinstance(text, str) and text and piece.get("content") == text:
                piece["content"] = {MESSAGE_REF: k}


def share_texts(data: dict[str, Any]) -> None:
    """Write each long text that one recording's JSON data holds in several places only once.

    It looks where a run repeats text: the answer, the input's message, each message's content, each
    reply's content, each commit entry's value, and the same places in its members' saved forms
    (already shared, so only where each kept a text). A text of at least
    :data:`~footprint_lab.record.schema.COPY_MIN` characters found in two places or more stays in
    the first and is written ``null`` in the others, which ``copies`` lists:
    ``{"of": ["answer"], "at": [["messages", 1, "content"], ...]}``. Run it after :func:`reference`,
    which needs the messages' texts in place.
    """
    found: dict[str, list[list[Any]]] = {}
    for path, text in _text_places(data):
        found.setdefault(text, []).append(path)
    copies = []
    for paths in found.values():
        if len(paths) > 1:
            for path in paths[1:]:
                _node(data, path)[path[-1]] = None
            copies.append({"of": paths[0], "at": paths[1:]})
    if copies:
        data[COPIES] = copies


def _text_places(data: dict[str, Any]) -> list[tuple[list[Any], str]]:
    """Each long text of the places :func:`share_texts` looks at, with its path, the answer first."""
    places: list[tuple[list[Any], Any]] = [(["answer"], data.get("answer"))]
    given = data.get("input")
    if isinstance(given, dict):
        places.append((["input", "message"], given.get("message")))
    for k, message in enumerate(data.get("messages") or ()):
        if isinstance(message, dict):
            places.append((["messages", k, "content"], message.get("content")))
    for k, exchange in enumerate(data.get("exchanges") or ()):
        response = exchange.get("response") if isinstance(exchange, dict) else None
        if isinstance(response, dict):
            places.append((["exchanges", k, "response", "content"], response.get("content")))
    for k, commit in enumerate(data.get("commits") or ()):
        for j, entry in enumerate(_entries(commit) if isinstance(commit, dict) else ()):
            if isinstance(entry, dict):
                places.append((["commits", k, "entries", j, "value"], entry.get("value")))
    found = [(path, text) for path, text in places if isinstance(text, str) and len(text) >= COPY_MIN]
    # members' texts too (their own copies already written), so the whole run tree holds each text once
    for k, child in enumerate(data.get("children") or ()):
        if isinstance(child, dict):
            found.extend((["children", k, *path], text) for path, text in _text_places(child))
    return found


def _node(data: Any, path: list[Any]) -> Any:
    """The mapping or list that holds the place ``path`` names (its last key or index)."""
    for key in path[:-1]:
        data = data[key]
    return data


def copies_placed(data: dict[str, Any]) -> dict[str, Any]:
    """Recording data with each text :func:`share_texts` wrote once put back in every place ``copies``
    names (the same text object in each), and ``copies`` dropped. The caller's data is not changed:
    only what leads to a filled place is copied. When ``copies`` is not as :func:`share_texts` writes
    it (a place missing, or not ``null``), the data comes back as given, for the schema to refuse."""
    copies = data.get(COPIES)
    if not isinstance(copies, list):
        return data
    out = {name: value for name, value in data.items() if name != COPIES}
    made = {id(out)}
    for group in copies:
        if not (isinstance(group, dict) and set(group) == {"of", "at"} and isinstance(group["at"], list)):
            return data
        text = _found(out, group["of"])
        if not isinstance(text, str):
            return data
        for path in group["at"]:
            if not _placed(out, path, text, made):
                return data
    return out


_MISSING = object()


def _step(node: Any, key: Any) -> Any:
    if isinstance(node, dict) and type(key) is str:
        return node.get(key, _MISSING)
    if isinstance(node, list) and _is_index(key, node):
        return node[key]
    return _MISSING


def _found(data: Any, path: Any) -> Any:
    """The value at ``path`` (a non-empty list of keys and indices), or ``_MISSING``."""
    if not isinstance(path, list) or not path:
        return _MISSING
    for key in path:
        data = _step(data, key)
        if data is _MISSING:
            return _MISSING
    return data


def _placed(out: dict[str, Any], path: Any, text: str, made: set[int]) -> bool:
    """Put ``text`` at ``path`` in ``out``, which must hold ``null`` there. Each mapping or list on the way
    is copied once (``made`` holds those already copied), so the caller's data stays as it was."""
    if _found(out, path) is not None:
        return False
    node: Any = out
    for key in path[:-1]:
        child = node[key]
        if id(child) not in made:
            child = dict(child) if isinstance(child, dict) else list(child)
            node[key] = child
            made.add(id(child))
        node = child
    node[path[-1]] = text
    return True


def _next_equal(messages: list[Any], value: Any, start: int) -> int | None:
    """The first message from ``start`` on equal to ``value`` (the next one is nearly always it)."""
    for k in range(start, len(messages)):
        if messages[k] == value:
            return k
    return None


def dereferenced(data: Any) -> Any:
    """Recording data with each copy :func:`share_texts` left out and each reference :func:`reference`
    wrote back to the value it stands for.

    A reference that names no message is left as it is, for the schema to refuse by its field.
    """
    if not isinstance(data, dict):
        return data
    if COPIES in data:
        data = copies_placed(data)
    messages = data.get("messages")
    if not isinstance(messages, list) or not messages:
        return data
    commits, pieces = data.get("commits"), data.get("context_pieces")
    if isinstance(commits, list):
        read = [_commit_values(commit, messages) for commit in commits]
        if any(map(operator.is_not, read, commits)):
            data = {**data, "commits": read}
    if isinstance(pieces, list) and any(isinstance(piece, dict) and _message_of(piece.get("content"), messages)
                                        is not None for piece in pieces):
        data = {**data, "context_pieces": [_piece_content(piece, messages) for piece in pieces]}
    return data


def _entries(commit: dict[str, Any]) -> list[Any]:
    entries = commit.get("entries")
    return entries if isinstance(entries, list) else []


def _refers(entry: Any) -> bool:
    return isinstance(entry, dict) and MESSAGE_REF in entry


def _commit_values(commit: Any, messages: list[Any]) -> Any:
    """A commit with each entry's reference read: the message it names, or a value written beside it."""
    if not isinstance(commit, dict) or not any(map(_refers, _entries(commit))):
        return commit
    entries = []
    for entry in _entries(commit):
        if _refers(entry):  # anything else is left for the schema to refuse by field
            k = entry[MESSAGE_REF]
            if "value" in entry:  # a value written beside the reference is the value
                entry = {name: value for name, value in entry.items() if name != MESSAGE_REF}
            elif _is_index(k, messages):
                entry = {**{name: value for name, value in entry.items() if name != MESSAGE_REF}, "value": messages[k]}
        entries.append(entry)
    return {**commit, "entries": entries}


def _message_of(content: Any, messages: list[Any]) -> str | None:
    """The text a piece's content reference names, or ``None`` when it is no such reference."""
    if isinstance(content, dict) and len(content) == 1:
        k = content.get(MESSAGE_REF)
        if _is_index(k, messages) and isinstance(messages[k], dict) and isinstance(messages[k].get("content"), str):
            return str(messages[k]["content"])
    return None


def _piece_content(piece: Any, messages: list[Any]) -> Any:
    if not isinstance(piece, dict):
        return piece
    content = piece.get("content")
    text = content_of(content, messages)
    return piece if text is content else {**piece, "content": text}


def _is_index(value: Any, items: list[Any]) -> TypeGuard[int]:
    return type(value) is int and 0 <= value < len(items)
