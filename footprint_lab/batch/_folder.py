"""A saved run set: a folder of recordings plus one index, read lazily.

Rule kept: the index is the set's table of contents and the only file ``RunSet.load`` reads.
The folder holds ``runset.json`` (the format's name and version, and one row per run: its
summary and the file of its recording, as one table) and ``recordings/``, one JSON file per run
named by its position (never by its run id, which may come from outside: an imported trace).
The index is read back through the one parser of saved JSON (``engine.saved_json``), and
written last, through a temporary file renamed into place, so a folder whose save
was cut short has no index and is refused as no run set rather than read half. A folder is
written only when it is new, empty, or (with ``overwrite=True``) an earlier run set, whose
files are removed first; a folder holding anything else is never written into.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from footprint_lab.batch._entries import SUMMARY_FIELDS, Entry
from footprint_lab.batch._refusals import BatchConfigError, RunSetFolderError
from footprint_lab.engine._refusal import describe_shape
from footprint_lab.engine._saved_json import NestingTooDeep, parse_json

INDEX = "runset.json"
RECORDINGS = "recordings"
FORMAT = "footprint_lab.runset"
VERSION = 1


def folder_path(function: str, folder: Any) -> Path:
    if isinstance(folder, str | os.PathLike) and str(folder).strip():
        return Path(folder)
    raise BatchConfigError(function, "folder", describe_shape(folder), "must be a folder's path (a str or a Path)")


def prepare(folder: Path, *, overwrite: bool, sources: set[Path]) -> None:
    """Make ``folder`` ready to receive a set, or refuse before writing anything."""
    function = "RunSet.save"
    if folder.exists() and not folder.is_dir():
        raise RunSetFolderError(function, "not_empty", "is a file, not a folder")
    if folder.resolve() in sources:
        raise RunSetFolderError(function, "source", "is the one this set reads its recordings from")
    present = sorted(folder.iterdir()) if folder.exists() else []
    if not present:
        folder.mkdir(parents=True, exist_ok=True)
        return
    ours = {INDEX, RECORDINGS}
    if not (folder / INDEX).is_file() or any(p.name not in ours for p in present):
        raise RunSetFolderError(function, "not_empty", f"holds {len(present)} entr(ies) that are not a run set")
    if not overwrite:
        raise RunSetFolderError(function, "not_empty", "already holds a saved run set")
    (folder / INDEX).unlink()
    stored = folder / RECORDINGS
    if stored.is_dir():
        for item in stored.iterdir():
            item.unlink()


def write(folder: Path, entries: Sequence[Entry], advance: Callable[[int], None]) -> None:
    """Every recording, then the index."""
    stored = folder / RECORDINGS
    stored.mkdir(exist_ok=True)
    rows = []
    for position, entry in enumerate(entries):
        name = f"{position:06d}.json"
        live = entry.live()
        if live is not None or entry.path is None:
            (stored / name).write_text(entry.run().recording.model_dump_json(), encoding="utf-8")
        else:
            (stored / name).write_bytes(Path(entry.path).read_bytes())
        rows.append([*entry.row(), name])
        advance(1)
    index = {"format": FORMAT, "version": VERSION, "columns": [*SUMMARY_FIELDS, "file"], "rows": rows}
    temporary = folder / f".{INDEX}.partial"
    temporary.write_bytes(orjson.dumps(index))
    temporary.replace(folder / INDEX)


def read(folder: Path) -> list[Entry]:
    """The entries a saved set's index lists (no recording is opened)."""
    function = "RunSet.load"
    if not folder.is_dir():
        raise RunSetFolderError(function, "missing", "does not exist" if not folder.exists() else "is a file")
    index_file = folder / INDEX
    if not index_file.is_file():
        raise RunSetFolderError(function, "not_a_run_set", "holds no runset.json")
    try:
        index = parse_json(index_file.read_bytes())
    except NestingTooDeep:
        raise RunSetFolderError(function, "unreadable_index", "holds a runset.json nested too deep") from None
    except ValueError:
        raise RunSetFolderError(function, "unreadable_index", "holds a runset.json that is not JSON") from None
    problem = _index_problem(index)
    if problem is not None:
        raise RunSetFolderError(function, "unreadable_index", f"holds a runset.json whose {problem}")
    stored = os.path.join(folder, RECORDINGS, "")
    at = len(SUMMARY_FIELDS)
    return [Entry(path=stored + row[at], row=tuple(row[:at])) for row in index["rows"]]


_TYPES: dict[str, tuple[type, ...]] = {
    "run_id": (str,), "input": (str, type(None)), "answer": (str, type(None)), "status": (str,),
    "error": (str, type(None)), "tokens": (int,), "duration_ms": (int, float), "members": (int,), "calls": (int,),
}


def _index_problem(index: Any) -> str | None:
    """What is wrong with an index, by shape, or ``None``."""
    if not isinstance(index, dict) or index.get("format") != FORMAT:
        return "format is not a run set's"
    if index.get("version") != VERSION:
        return f"version is not {VERSION} (this footprint_lab reads version {VERSION})"
    if index.get("columns") != [*SUMMARY_FIELDS, "file"] or not isinstance(index.get("rows"), list):
        return "columns or rows are not the ones RunSet.save writes"
    for number, row in enumerate(index["rows"]):
        if not isinstance(row, list) or len(row) != len(SUMMARY_FIELDS) + 1:
            return f"row {number} does not have one value per column"
        for name, value in zip(SUMMARY_FIELDS, row, strict=False):
            if not isinstance(value, _TYPES[name]) or isinstance(value, bool):
                return f"row {number} has a '{name}' that is {describe_shape(value)}"
        name = row[-1]
        if not isinstance(name, str) or not name.endswith(".json") or "/" in name or "\\" in name:
            return f"row {number} names a file outside recordings/"
    return None
