"""A saved run set: a folder of recordings plus one index, read lazily.

Rule kept: the index is the set's table of contents and the only file ``RunSet.load`` reads.
The folder holds ``runset.json`` (the format's name and version, and one row per run: its
summary and the file of its recording, as one table) and ``recordings/``, one JSON file per run
named by its position (never by its run id, which may come from outside: an imported trace).
The index is read back through the one parser of saved JSON (``base.saved_json``); a
recording is read only when its run is touched, only as a regular file inside ``recordings/``
(never through a link, never a FIFO or a device, never past a size), and checked against its
row (:func:`footprint_lab.batch._entries.read_saved`).

Saving claims the folder first: a lock (``.runset.lock``, held with ``flock`` while the save
lasts, so a save killed midway never leaves it held) makes a second save into the same folder
a refusal, not a race. A folder is written only when it is new, empty, or (with
``overwrite=True``) an earlier run set exactly as a save leaves it: a link, a folder or a file
no save writes is never written into, removed or followed. The new set is written whole into
``.runset.saving/`` inside the folder (each recording copied only after it was read and checked
like a touched one, so nothing but recordings is ever copied) and swapped in at the end, the
index last; a save refused, failing or stopped before the swap leaves the earlier set as it was
(and no folder the save made), and a swap once begun is finished even when an interrupt lands in it.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import orjson

from footprint_lab.base.refusal import describe_shape
from footprint_lab.base.regular_file import UnreadableFile, read_regular
from footprint_lab.base.saved_json import NestingTooDeep, parse_json
from footprint_lab.batch._entries import SUMMARY_FIELDS, Entry, read_saved
from footprint_lab.batch.refusals import BatchConfigError, RunSetFolderError

INDEX = "runset.json"
RECORDINGS = "recordings"
FORMAT = "footprint_lab.runset"
VERSION = 1
#: the save lock, the folder a new set is written into before it is swapped in, and an older save's temporary index
LOCK = ".runset.lock"
STAGING = ".runset.saving"
PARTIAL = f".{INDEX}.partial"
_LEFTOVERS = frozenset({PARTIAL, STAGING})
#: the name of a recording file as a save writes it: its position
RECORDING_NAME = re.compile(r"[0-9]{6,12}\.json")
#: the most an index may hold (one row per run, with its input and answer)
MAX_INDEX_BYTES = 1 << 30
_SAVE = "RunSet.save"


def folder_path(function: str, folder: Any) -> Path:
    if isinstance(folder, str | os.PathLike) and str(folder).strip():
        return Path(folder)
    raise BatchConfigError(function, "folder", describe_shape(folder), "must be a folder's path (a str or a Path)")


@contextmanager
def claim(folder: Path, *, overwrite: bool, sources: set[Path]) -> Iterator[Path]:
    """Hold ``folder`` for one save (checked, its leftovers cleared), or refuse before writing anything.

    A save that fails or is stopped inside the claim leaves no folder it made: the folder is removed again
    when the save made it and it is still empty.
    """
    try:
        if folder.exists() and not folder.is_dir():
            raise RunSetFolderError(_SAVE, "not_empty", "is a file, not a folder")
        if folder.resolve() in sources:
            raise RunSetFolderError(_SAVE, "source", "is the one this set reads its recordings from")
        made = not os.path.lexists(folder)
        folder.mkdir(parents=True, exist_ok=True)
    except RunSetFolderError:  # a refusal is itself a ValueError: it goes out as it was raised
        raise
    except (OSError, ValueError):  # no permission, a name the system cannot take
        raise RunSetFolderError(_SAVE, "unwritable", "could not be made or written") from None
    try:
        _judge(folder, overwrite)  # a folder of other files is refused before the lock is made in it
        lock = _lock(folder)
        try:
            _judge(folder, overwrite)  # and judged again, now no other save can change it
            _clear(folder / PARTIAL, folder / STAGING)
            yield folder
        finally:
            _unlock(folder, lock)
    except BaseException:
        if made:
            with suppress(OSError):  # not empty (another process wrote there): left as it is
                folder.rmdir()
        raise


def _judge(folder: Path, overwrite: bool) -> None:
    """Refuse a folder a save may not write into: one holding anything else than an earlier run set."""
    present = [entry for entry in os.scandir(folder) if entry.name != LOCK]
    if any(entry.name not in _LEFTOVERS for entry in present):
        foreign = _foreign(folder, present)
        if foreign:
            raise RunSetFolderError(_SAVE, "not_empty", f"holds {foreign} entr(ies) that are not a run set's "
                                    "(a link, a folder or a file RunSet.save does not write)")
        if not overwrite:
            raise RunSetFolderError(_SAVE, "not_empty", "already holds a saved run set")


def stage(folder: Path, entries: Sequence[Entry], advance: Callable[[int], None]) -> None:
    """Every recording, then the index, into the staging folder (removed again when this fails or is stopped)."""
    staging = folder / STAGING
    stored = staging / RECORDINGS
    try:
        stored.mkdir(parents=True)
        rows = []
        for position, entry in enumerate(entries):
            name = f"{position:06d}.json"
            if entry.live() is not None or entry.path is None:
                data = entry.run().recording.model_dump_json().encode("utf-8")
            else:  # copied only once read as a recording, and one that matches its row
                data = read_saved(entry.path, _SAVE, entry.row())[0]
            _write_new(stored / name, data)
            rows.append([*entry.row(), name])
            advance(1)
        index = {"format": FORMAT, "version": VERSION, "columns": [*SUMMARY_FIELDS, "file"], "rows": rows}
        _write_new(staging / INDEX, orjson.dumps(index))
    except OSError:
        _clear(staging)
        raise RunSetFolderError(_SAVE, "unwritable", "could not be written (permissions or free space)") from None
    except BaseException:
        _clear(staging)
        raise


def unstage(folder: Path) -> None:
    """What :func:`stage` wrote, removed (a save stopped before its swap leaves the folder as it was)."""
    _clear(folder / STAGING)


def swap(folder: Path) -> None:
    """The staged set swapped in for what was there, the index last. Once begun it is finished even when an
    interrupt lands midway (two renames), so a stopped save leaves the new set whole or the earlier one."""
    try:
        _swap(folder)
    except OSError:
        _clear(folder / STAGING)
        raise RunSetFolderError(_SAVE, "unwritable", "could not be written (permissions or free space)") from None
    except BaseException:
        _swap(folder)
        raise


def _swap(folder: Path) -> None:
    """Each step of the swap not done yet (called again, it finishes what an interrupt cut short)."""
    staging = folder / STAGING
    if (staging / RECORDINGS).is_dir():
        _clear(folder / INDEX, folder / RECORDINGS)  # checked under the lock: the earlier set's own files
        os.replace(staging / RECORDINGS, folder / RECORDINGS)
    if (staging / INDEX).is_file():
        os.replace(staging / INDEX, folder / INDEX)
    if staging.is_dir():
        staging.rmdir()


def _foreign(folder: Path, present: list[os.DirEntry[str]]) -> int:
    """How many entries of ``folder`` no save writes (0: an earlier run set, or what a cut-short save left)."""
    foreign = 0
    for entry in present:
        if entry.name == INDEX:
            foreign += not entry.is_file(follow_symlinks=False)
        elif entry.name == RECORDINGS:
            if not entry.is_dir(follow_symlinks=False):
                foreign += 1
            else:
                foreign += sum(1 for inner in os.scandir(folder / RECORDINGS)
                               if not inner.is_file(follow_symlinks=False) or not RECORDING_NAME.fullmatch(inner.name))
        elif entry.name == STAGING:
            foreign += not entry.is_dir(follow_symlinks=False)
        elif entry.name == PARTIAL:
            foreign += entry.is_dir(follow_symlinks=False)
        else:
            foreign += 1
    return foreign


def _clear(*paths: Path) -> None:
    """Remove what a save wrote (a link is removed, never followed)."""
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.lexists(path):
            path.unlink()


def _write_new(path: Path, data: bytes) -> None:
    """``data`` into a file that did not exist (never through a link left there)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(descriptor, "wb") as file:
        file.write(data)


def _lock(folder: Path) -> int:
    """The folder's save lock, held; a second save while one holds it is refused.

    The lock file is removed when the save ends, so a lock taken on a file another save just removed
    is no lock: it is taken again on the file now there.
    """
    path = folder / LOCK
    for _ in range(3):
        try:
            descriptor = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except OSError:
            raise RunSetFolderError(_SAVE, "not_empty", f"holds a {LOCK} that is not a regular file") from None
        try:
            _hold(descriptor)
            if os.path.samestat(os.fstat(descriptor), os.lstat(path)):
                return descriptor
        except OSError:
            os.close(descriptor)
            raise RunSetFolderError(_SAVE, "busy", "is being written by another save") from None
        os.close(descriptor)
    raise RunSetFolderError(_SAVE, "busy", "is being written by other saves")


def _hold(descriptor: int) -> None:
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        msvcrt.locking(descriptor, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        return
    fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _unlock(folder: Path, descriptor: int) -> None:
    """The lock file removed while still held, then let go (closing releases it)."""
    try:
        os.unlink(folder / LOCK)
    finally:
        os.close(descriptor)


def read(folder: Path) -> list[Entry]:
    """The entries a saved set's index lists (no recording is opened)."""
    function = "RunSet.load"
    if not folder.is_dir():
        raise RunSetFolderError(function, "missing", "does not exist" if not folder.exists() else "is a file")
    try:
        raw = read_regular(folder / INDEX, limit=MAX_INDEX_BYTES, follow=False)
    except UnreadableFile as refused:
        if refused.reason == "missing":
            raise RunSetFolderError(function, "not_a_run_set", "holds no runset.json") from None
        found = {"too-large": f"larger than {MAX_INDEX_BYTES >> 20} MiB", "unreadable": "unreadable"}
        raise RunSetFolderError(function, "unreadable_index", "holds a runset.json that is "
                                f"{found.get(refused.reason, refused.kind)}") from None
    try:
        index = parse_json(raw)
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
    files: set[str] = set()
    for number, row in enumerate(index["rows"]):
        if not isinstance(row, list) or len(row) != len(SUMMARY_FIELDS) + 1:
            return f"row {number} does not have one value per column"
        for name, value in zip(SUMMARY_FIELDS, row, strict=False):
            if not isinstance(value, _TYPES[name]) or isinstance(value, bool):
                return f"row {number} has a '{name}' that is {describe_shape(value)}"
        name = row[-1]
        if not isinstance(name, str) or not RECORDING_NAME.fullmatch(name):
            return f"row {number} names a file RunSet.save does not write (its position, as 000000.json)"
        if name in files:
            return f"row {number} names the file of an earlier row"
        files.add(name)
    return None
