"""The notebook door: a ``.ipynb`` file read as untrusted data, the recordings its outputs carry, and
where the sharing functions write.

Rule kept here: nothing from a notebook file is executed or trusted. The file is parsed once,
by ``base.saved_json`` (JSON nested deeper than ``MAX_NESTING`` levels is refused by name,
never left to crash a reader with ``RecursionError``), and checked to be a notebook (version
4) before anything else reads it; each recording a displayed run left under
:data:`~footprint_lab.record.recording.RECORDING_MIME` goes through the recording door
(``record.recording_door.load_recording``: the schema and its version, member runs that nest
as a tree, every cross reference) and is checked for tampering (every context piece's
``content_hash`` must be its content's). A recording that fails is skipped with a
:class:`RecordingSkippedWarning` naming its cell and the field, never its value (a newer
schema version is named: it is a number this library cannot read, not data), and the others
still load.

A path to write (``export``, ``to_html``, ``scrub(out=...)``) is checked before anything is
built or written: its folder must exist and it must not name a folder; a file the system
then will not let us write is refused too, by the argument's name, never by the path's text.

Role: lab layer (``footprint_lab.notebook``), the one place a notebook file is opened or written.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import secrets
import stat
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from footprint_lab.base.progress import PROGRESS_FIX, SHOW_AFTER, Progress, Wanted, progress_problem, stopping
from footprint_lab.base.refusal import Refusal, SettingRefusal, describe_shape
from footprint_lab.base.regular_file import UnreadableFile, kind_of, read_regular
from footprint_lab.base.saved_json import MAX_NESTING, NestingTooDeep, parse_json
from footprint_lab.core.checkpoint import Checkpoint
from footprint_lab.core.run import Run
from footprint_lab.flow.checkpoint import FlowCheckpoint
from footprint_lab.notebook.seal_claims import unbacked, unsealed_claim
from footprint_lab.record.recording import RECORDING_MIME, Recording
from footprint_lab.record.recording_door import (
    InvalidRecordingError,
    RecordingVersionError,
    load_parsed,
    load_recording,
    read_json,
)
from footprint_lab.record.records import content_hash
from footprint_lab.record.rows import as_rows
from footprint_lab.sealing.output_seal import display_verdict, holds_display
from footprint_lab.sealing.seal import verify
from footprint_lab.sealing.verdict import Verdict

if TYPE_CHECKING:
    from footprint_lab.core.run import Run

#: the most a notebook or saved recording file may hold: more is refused before it is read whole
MAX_FILE_BYTES = 256 << 20
#: the most ``scan`` and ``scrub`` read: they hold a notebook many times over while they read every layer of
#: it (up to some 25 times its size, for a file of many small values), so 64 MiB fits in 2 GB of memory
MAX_SWEEP_BYTES = 64 << 20
#: What a stopped ``load_runs`` kept, and where.
KEPT = "the runs of the {done} read: footprint_lab.notebook.last_stopped()"
#: Where Jupyter keeps a notebook's widget state, inside ``metadata.widgets``.
WIDGET_STATE_MIME = "application/vnd.jupyter.widget-state+json"


class NotebookFileError(Refusal, ValueError):
    """Raised when a path cannot be read as a notebook (missing, unreadable, not JSON, nested too
    deep, not nbformat 4), or cannot be written (no such folder, a folder, not writable).

    Carries ``argument`` (which parameter), ``reason`` (``missing``, ``unreadable``, ``not-a-file``,
    ``too-large``, ``not-json``, ``too-deep``, ``not-a-notebook``, ``not-a-path``, ``no-folder``,
    ``is-a-folder``, ``not-writable`` or ``is-the-input``) and ``received`` (the shape of what
    arrived, never the path's text).
    """

    code = "ERR_NOTEBOOK_FILE"
    fields = ("argument", "reason", "received")

    _FIX: ClassVar[dict[str, str]] = {
        "missing": "no file exists there; pass the path of a saved .ipynb file",
        "unreadable": "the file could not be read (check its permissions); pass a file you can open",
        "not-a-file": "the path names no regular file (a FIFO, a device or a socket is never opened, since reading "
                      "one can block or never end); pass a notebook saved on disk",
        "too-large": f"the file is larger than this reads ({MAX_SWEEP_BYTES >> 20} MiB for scan and scrub, "
                     f"{MAX_FILE_BYTES >> 20} MiB for the rest); clear large outputs in Jupyter first, or pass a "
                     "smaller file",
        "not-json": "the file is not JSON; pass a notebook saved by Jupyter (.ipynb)",
        "too-deep": f"the file nests JSON deeper than {MAX_NESTING} levels, which no notebook Jupyter or "
                    "footprint_lab writes comes near; it is refused rather than read",
        "not-a-notebook": "the file is JSON but not an nbformat 4 notebook (it needs 'cells' and 'nbformat': 4)",
        "not-a-path": "pass a path (a str or pathlib.Path)",
        "no-folder": "the folder to write into does not exist; create it first, or pass a path in an existing folder",
        "is-a-folder": "names a folder; pass the path of a file to write inside it",
        "not-writable": "the file could not be written there (check the folder's permissions and free space); "
                        "pass a path you can write to",
        "is-the-input": "names the very file being read, which writing would replace; pass another path to write",
    }

    def __init__(self, argument: str, reason: str, received: str) -> None:
        super().__init__(f"footprint_lab.notebook: '{argument}': {self._FIX[reason]} (received {received}).")
        self.argument = argument
        self.reason = reason
        self.received = received


class SharingConfigError(SettingRefusal):
    """Raised when a sharing function (``scrub``, ``scan``, ``export``, ``load_runs``...) is handed an argument it
    cannot use.

    Carries ``setting`` (the argument) and ``received`` (its shape).
    """

    code = "ERR_SHARING_CONFIG"


class RecordingSkippedWarning(UserWarning):
    """A recording in a notebook that could not be trusted, skipped; ``cell`` and ``field`` say where."""

    def __init__(self, cell: int, output: int, field: str, problem: str) -> None:
        super().__init__(f"cell {cell}, output {output}: recording skipped, field '{field}' {problem}")
        self.cell = cell
        self.output = output
        self.field = field


def as_path(path: Any, argument: str = "path") -> Path:
    if not isinstance(path, str | os.PathLike):
        raise NotebookFileError(argument, "not-a-path", describe_shape(path))
    return Path(path)


def read_bytes(path: Any, argument: str = "path", limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the file at ``path``; refused by name when there is none, it cannot be read or it holds
    more than ``limit`` bytes (refused before it is read)."""
    where = as_path(path, argument)
    try:
        return read_regular(where, limit=limit)
    except UnreadableFile as refused:
        if refused.reason in ("missing", "folder"):
            raise NotebookFileError(argument, "missing", "a path with no file") from None
        if refused.reason in ("special", "too-large"):
            reason = "not-a-file" if refused.reason == "special" else "too-large"
            raise NotebookFileError(argument, reason, refused.kind) from None
        # permissions, a name the system cannot take (an embedded NUL)
        raise NotebookFileError(argument, "unreadable", "a path that could not be read") from None


def read_notebook(path: Any, argument: str = "path", limit: int = MAX_FILE_BYTES) -> dict[str, Any]:
    """The notebook at ``path`` (at most ``limit`` bytes) as plain JSON data, checked to be an nbformat 4 notebook."""
    raw = read_bytes(path, argument, limit)
    try:
        notebook = parse_json(raw)
    except NestingTooDeep:
        raise NotebookFileError(argument, "too-deep", f"a file of {len(raw)} bytes") from None
    except ValueError:
        raise NotebookFileError(argument, "not-json", f"a file of {len(raw)} bytes") from None
    if (not isinstance(notebook, dict) or notebook.get("nbformat") != 4
            or not isinstance(notebook.get("cells"), list) or not isinstance(notebook.get("metadata", {}), dict)):
        raise NotebookFileError(argument, "not-a-notebook", describe_shape(notebook))
    return notebook


def output_path(path: Any, argument: str, *, reading: Path | None = None) -> Path:
    """``path`` as where a file will be written, refused by name (before anything is built or written)
    when its folder does not exist, it names a folder or something other than a regular file (a FIFO,
    a device), or it is the file ``reading`` names (by any spelling or link)."""
    where = as_path(path, argument)
    try:
        if where.is_dir():
            raise NotebookFileError(argument, "is-a-folder", "a path to a folder")
        if not where.parent.is_dir():
            raise NotebookFileError(argument, "no-folder", "a path whose folder does not exist")
        if where.exists() and not where.is_file():
            raise NotebookFileError(argument, "not-a-file", kind_of(where.stat().st_mode))
        if reading is not None and where.exists() and reading.exists() and where.samefile(reading):
            raise NotebookFileError(argument, "is-the-input", "the path of the file being read")
    except NotebookFileError:  # a refusal is itself a ValueError: it goes out as it was raised
        raise
    except (OSError, ValueError):  # a name the system cannot take
        raise NotebookFileError(argument, "not-writable", "a path that cannot be written") from None
    return where


def write_text(text: str, path: Path, argument: str) -> None:
    """Write ``text`` (UTF-8) at ``path``, a regular file (a FIFO or a device put there since the path was
    checked is refused, never waited on); what the system refuses (permissions, a full disk) is refused by name."""
    data = text.encode("utf-8")  # before the file is opened: running out of memory here leaves it as it was
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NONBLOCK", 0), 0o666)
    except (OSError, ValueError):  # a FIFO with no reader, permissions, a name the system cannot take
        raise NotebookFileError(argument, "not-writable", "a path that could not be written") from None
    with os.fdopen(descriptor, "wb") as file:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise NotebookFileError(argument, "not-a-file", kind_of(mode))
        try:
            file.truncate(0)
            file.write(data)
            file.flush()
        except OSError:
            raise NotebookFileError(argument, "not-writable", "a path that could not be written") from None


def write_notebook(notebook: dict[str, Any], path: Path, argument: str) -> None:
    """Write notebook data as Jupyter does (indented JSON, sorted keys, a final newline), except that
    each embedded recording is written on one line: a third smaller, and several times faster
    (an indented dump cannot use the C encoder)."""
    held: list[tuple[dict[str, Any], Any]] = []
    token = secrets.token_hex(8)  # a placeholder no string in the file can spell by chance
    for _, _, output in outputs(notebook):
        data = output.get("data")
        if isinstance(data, dict) and isinstance(data.get(RECORDING_MIME), dict):
            held.append((data, data[RECORDING_MIME]))
            data[RECORDING_MIME] = f"\x00{token}-{len(held) - 1}\x00"
    try:
        text = json.dumps(notebook, indent=1, ensure_ascii=False, sort_keys=True)
    finally:
        for data, recording in held:  # the caller's data is left as it was given
            data[RECORDING_MIME] = recording
    compact = [json.dumps(recording, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
               for _, recording in held]
    # one pass over the text for all placeholders (a replace per recording would rescan the whole file each time)
    text = re.sub(f'"\\\\u0000{token}-([0-9]+)\\\\u0000"', lambda found: compact[int(found.group(1))], text)
    write_text(text + "\n", path, argument)


def outputs(notebook: dict[str, Any]) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """Every output of every code cell, as ``(cell index, output index, output)``, in file order."""
    for cell_index, cell in enumerate(notebook["cells"]):
        cell_outputs = cell.get("outputs") if isinstance(cell, dict) else None
        if isinstance(cell_outputs, list):
            for output_index, output in enumerate(cell_outputs):
                if isinstance(output, dict):
                    yield cell_index, output_index, output


def embedded(notebook: dict[str, Any], door: str,
             read: Callable[[], None] | None = None) -> Iterator[tuple[int, int, Recording]]:
    """Every trustworthy recording in the outputs, in file order; the others are skipped with a warning.

    ``read`` is called once per recording, skipped or trusted (a bar's step), once the caller took it."""
    for cell_index, output_index, output in outputs(notebook):
        if not _carries(output):
            continue
        recording = check_recording(output["data"][RECORDING_MIME], door)
        if isinstance(recording, Recording):
            yield cell_index, output_index, recording
        else:
            warnings.warn(RecordingSkippedWarning(cell_index, output_index, recording.field, recording.problem),
                          stacklevel=3)
        if read is not None:
            read()


def _carries(output: dict[str, Any]) -> bool:
    """Whether an output holds a recording (under :data:`RECORDING_MIME` in its data)."""
    data = output.get("data")
    return isinstance(data, dict) and RECORDING_MIME in data


def check_recording(value: Any, door: str) -> Recording | InvalidRecordingError:
    """``value`` (a recording's JSON data, or its text) through the recording door and the tampering
    check, or the refusal that says which field is at fault (a :class:`RecordingVersionError` for a
    recording written by a newer footprint_lab)."""
    try:
        # JSON data of the parsed file is within its nesting bound already; text is parsed (and measured) anew
        recording = load_recording(value, door=door) if isinstance(value, str) else load_parsed(value, door=door)
    except InvalidRecordingError as refused:
        return refused
    field = tampered(recording)
    if field is not None:
        return InvalidRecordingError(door, field, "does not match the piece's content")
    return recording


def tampered(recording: Recording) -> str | None:
    """The first context piece (its field path) whose ``content_hash`` is not its content's, member runs
    included, or ``None``; cross references are the recording door's to check."""
    stack = [(recording, "")]
    while stack:
        member, prefix = stack.pop()
        contents, hashes = as_rows(member.context_pieces).values("content", "content_hash")  # no piece made a model
        for index, (content, held) in enumerate(zip(contents, hashes, strict=True)):
            if held != content_hash(content):
                return f"{prefix}context_pieces.{index}.content_hash"
        stack.extend((child, f"{prefix}children.{n}.") for n, child in reversed(list(enumerate(member.children))))
    return None


def widget_state(notebook: dict[str, Any]) -> dict[str, Any] | None:
    """The notebook's saved widget state block (``metadata.widgets[<widget-state MIME>]``), if any."""
    widgets = notebook.get("metadata", {}).get("widgets")
    block = widgets.get(WIDGET_STATE_MIME) if isinstance(widgets, dict) else None
    return block if isinstance(block, dict) else None


def load_runs(path: str | os.PathLike[str], *, progress: Wanted = None) -> list[Run]:
    """Every run whose recording a notebook's outputs carry, in file order, each as a ``Run``.

    A run shown more than once comes back once, where it was first shown, with the recording
    it was last shown with (the one carrying the most recent notes). Nothing in the file is
    executed; a recording that fails its checks is skipped with a :class:`RecordingSkippedWarning`.

    ``progress``: by default a bar (in a notebook, or a line on a terminal) once reading many
    recordings lasts a moment; ``True`` shows it at once, ``False`` never, a function ``(done, total)``
    hears each recording. Stopped (an interrupt), it raises ``Stopped`` in one line; the runs read so
    far are kept for ``footprint_lab.notebook.last_stopped()``.
    """
    problem = progress_problem(progress)
    if problem is not None:
        raise SharingConfigError("load_runs", "progress", problem, PROGRESS_FIX)
    notebook = read_notebook(path)
    total = sum(1 for _, _, output in outputs(notebook) if _carries(output))
    bar = Progress(total, "load_runs", progress, unit="recordings read", after=SHOW_AFTER)
    found: dict[str, Recording] = {}

    def runs() -> list[Run]:
        return [Run.from_recording(recording) for recording in found.values()]

    with stopping(bar, runs, KEPT):
        for _, _, recording in embedded(notebook, "load_runs", bar.step):
            found[recording.run_id] = recording
    return runs()


def verify_file(path: str | os.PathLike[str]) -> list[tuple[str, Verdict]]:
    """The seal verdict of every recording a file carries, each with where it sits.

    A ``.ipynb`` notebook gives one verdict per embedded recording (``cell 3, output 0``), every
    copy checked; a recording that no longer fits the schema is a broken verdict naming the field.
    A copy whose seal holds what its output displays (a run shown by this library) is also checked
    against the output: an edited, added or removed MIME type there is a broken verdict of kind
    ``display`` naming it (see ``sealing.output_seal``). An output that shows a seal it cannot back is
    a broken verdict of kind ``display`` too, wherever it sits: a seal badge with no recording beside
    it, or beside a recording that carries no seal, and a recording in an output that no longer
    displays its data (turned into a ``stream``: field ``output_type``).
    Any other path is read as one saved recording (``.json``), or a saved checkpoint (an agent's
    or a composition's, told apart by their fields). A recording written by a newer footprint_lab
    (a higher schema version) is not checked: its verdict is ``unsupported``, naming the version.
    """
    where = as_path(path)
    if where.suffix.lower() != ".ipynb":
        return [_saved_json(where)]
    found: list[tuple[str, Verdict]] = []
    for cell, output, data in outputs(read_notebook(where)):
        verdict = output_verdict(data)
        if verdict is not None:
            found.append((f"cell {cell}, output {output}", verdict))
    return found


def output_verdict(output: dict[str, Any]) -> Verdict | None:
    """The verdict on one output (``None`` when it neither carries a recording nor shows a seal): what it
    claims and where (:func:`~footprint_lab.notebook.seal_claims.unbacked`), then its recording's seal (read through the
    recording door, which names what broke), then what the output displays beside it."""
    claimed = unbacked(output)
    carried = output.get("data")
    if claimed is not None or not isinstance(carried, dict) or RECORDING_MIME not in carried:
        return claimed
    recording = check_recording(carried[RECORDING_MIME], "verify")
    verdict = verify(recording) if isinstance(recording, Recording) else _unchecked(recording)
    if verdict.status == "unsealed":
        claimed = unsealed_claim(output)  # a Verdict is falsy unless it holds: compared with None, not by truth
        return claimed if claimed is not None else verdict
    if not verdict.holds:
        return verdict
    shown = display_verdict(carried)  # a Verdict is falsy unless it holds: compared with None, not by truth
    return shown if shown is not None else dataclasses.replace(verdict, display=holds_display(carried))


def _unchecked(refused: InvalidRecordingError, kind: str = "recording") -> Verdict:
    """The verdict on a recording (or checkpoint) the door would not let in: in a format this library does not
    check (newer, or sealed by the unreleased 0.1), or broken (not as written)."""
    status = "unsupported" if isinstance(refused, RecordingVersionError) else "broken"
    return Verdict(status, kind=kind, field=refused.field, problem=refused.problem)


def _saved_json(where: Path) -> tuple[str, Verdict]:
    """The verdict of a saved recording or checkpoint (an agent's or a composition's, told apart by
    their fields), the file read and parsed once; what is not a readable ``.json`` recording is
    refused by the recording door, naming what arrived."""
    from pydantic import ValidationError

    if where.suffix.lower() != ".json" or not where.is_file():
        return "recording", verify(where)
    data = read_json(read_bytes(where), "verify")
    kind = (Checkpoint if isinstance(data, dict) and {"first_run_id", "history"} <= data.keys()
            else FlowCheckpoint if isinstance(data, dict) and {"answers", "paused"} <= data.keys() else None)
    if kind is None:
        try:
            return "recording", verify(data)
        except RecordingVersionError as newer:
            return "recording", _unchecked(newer)
    try:
        return "checkpoint", verify(kind.model_validate(data))
    except RecordingVersionError as unreleased:
        return "checkpoint", _unchecked(unreleased, "checkpoint")
    except ValidationError as problem:
        field = ".".join(str(part) for part in problem.errors()[0]["loc"])
        return "checkpoint", Verdict("broken", kind="checkpoint", field=field,
                                     problem="does not fit the checkpoint schema")
