"""The notebook door: a ``.ipynb`` file read as untrusted data, and the recordings its outputs carry.

Rule kept here: nothing from a notebook file is executed or trusted. The file is parsed as
JSON and checked to be a notebook (version 4) before anything else reads it; each recording
a displayed run left under :data:`~footprint_lab.engine.recording.RECORDING_MIME` is
validated by the ``Recording`` model and checked for tampering (every context piece's
``content_hash`` must be its content's, every piece index an exchange names must exist). A
recording that fails is skipped with a :class:`RecordingSkippedWarning` naming its cell and
the field, never its value, and the others still load.

Role: lab layer (``footprint_lab.notebook``), the one place a notebook file is opened.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from footprint_lab.engine.recording import RECORDING_MIME, Recording, content_hash
from footprint_lab.engine.refusal import Refusal, describe_shape

if TYPE_CHECKING:
    from footprint_lab.core.run import Run
    from footprint_lab.engine.seal import Verdict

#: Where Jupyter keeps a notebook's widget state, inside ``metadata.widgets``.
WIDGET_STATE_MIME = "application/vnd.jupyter.widget-state+json"


class NotebookFileError(Refusal):
    """Raised when a notebook path cannot be read as a notebook (missing, not JSON, not nbformat 4).

    Carries ``argument`` (which parameter), ``reason`` (``missing``, ``not-json``,
    ``not-a-notebook`` or ``not-a-path``) and ``received`` (the shape of what arrived).
    """

    code = "ERR_NOTEBOOK_FILE"
    fields = ("argument", "reason", "received")

    _FIX: ClassVar[dict[str, str]] = {
        "missing": "no file exists there; pass the path of a saved .ipynb file",
        "not-json": "the file is not JSON; pass a notebook saved by Jupyter (.ipynb)",
        "not-a-notebook": "the file is JSON but not an nbformat 4 notebook (it needs 'cells' and 'nbformat': 4)",
        "not-a-path": "pass a path (a str or pathlib.Path)",
    }

    def __init__(self, argument: str, reason: str, received: str) -> None:
        super().__init__(f"footprint_lab.notebook: '{argument}': {self._FIX[reason]} (received {received}).")
        self.argument = argument
        self.reason = reason
        self.received = received


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


def read_notebook(path: Any, argument: str = "path") -> dict[str, Any]:
    """The notebook at ``path`` as plain JSON data, checked to be an nbformat 4 notebook."""
    where = as_path(path, argument)
    try:
        raw = where.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise NotebookFileError(argument, "missing", "a path with no file") from None
    try:
        notebook = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise NotebookFileError(argument, "not-json", f"a file of {len(raw)} bytes") from None
    if (not isinstance(notebook, dict) or notebook.get("nbformat") != 4
            or not isinstance(notebook.get("cells"), list) or not isinstance(notebook.get("metadata", {}), dict)):
        raise NotebookFileError(argument, "not-a-notebook", describe_shape(notebook))
    return notebook


def write_notebook(notebook: dict[str, Any], path: Path) -> None:
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
    path.write_text(text + "\n", encoding="utf-8")


def outputs(notebook: dict[str, Any]) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """Every output of every code cell, as ``(cell index, output index, output)``, in file order."""
    for cell_index, cell in enumerate(notebook["cells"]):
        cell_outputs = cell.get("outputs") if isinstance(cell, dict) else None
        if isinstance(cell_outputs, list):
            for output_index, output in enumerate(cell_outputs):
                if isinstance(output, dict):
                    yield cell_index, output_index, output


def embedded(notebook: dict[str, Any]) -> Iterator[tuple[int, int, Recording]]:
    """Every trustworthy recording in the outputs, in file order; the others are skipped with a warning."""
    for cell_index, output_index, output in outputs(notebook):
        data = output.get("data")
        if not isinstance(data, dict) or RECORDING_MIME not in data:
            continue
        recording = check_recording(data[RECORDING_MIME])
        if isinstance(recording, Recording):
            yield cell_index, output_index, recording
        else:
            field, problem = recording
            warnings.warn(RecordingSkippedWarning(cell_index, output_index, field, problem), stacklevel=3)


def check_recording(value: Any) -> Recording | tuple[str, str]:
    """``value`` (a JSON object, or its text) as a ``Recording``, or ``(field, problem)`` saying why not."""
    from pydantic import ValidationError

    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return "(the recording)", "is not JSON"
    try:
        recording = Recording.model_validate(value)
    except ValidationError as invalid:
        first = invalid.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(the recording)"
        return field, f"does not fit the recording schema ({first['type']})"
    problem = tampered(recording)
    return recording if problem is None else problem


def tampered(recording: Recording, prefix: str = "") -> tuple[str, str] | None:
    """The first field whose value contradicts the rest of the recording, or ``None``."""
    pieces = recording.context_pieces
    for index, piece in enumerate(pieces):
        if piece.content_hash != content_hash(piece.content):
            return f"{prefix}context_pieces.{index}.content_hash", "does not match the piece's content"
    size = len(pieces)
    if any(not 0 <= i < size for i in recording.message_pieces):
        return f"{prefix}message_pieces", "names a context piece that does not exist"
    for index, exchange in enumerate(recording.exchanges):
        for name in ("system_pieces", "message_pieces", "tool_pieces"):
            if any(not 0 <= i < size for i in getattr(exchange, name)):
                return f"{prefix}exchanges.{index}.{name}", "names a context piece that does not exist"
        if exchange.message_count > len(recording.messages):
            return f"{prefix}exchanges.{index}.message_count", "is longer than the recorded transcript"
    for index, child in enumerate(recording.children):
        problem = tampered(child, f"{prefix}children.{index}.")
        if problem is not None:
            return problem
    return None


def widget_state(notebook: dict[str, Any]) -> dict[str, Any] | None:
    """The notebook's saved widget state block (``metadata.widgets[<widget-state MIME>]``), if any."""
    widgets = notebook.get("metadata", {}).get("widgets")
    block = widgets.get(WIDGET_STATE_MIME) if isinstance(widgets, dict) else None
    return block if isinstance(block, dict) else None


def load_runs(path: str | os.PathLike[str]) -> list[Run]:
    """Every run whose recording a notebook's outputs carry, in file order, each as a ``Run``.

    A run shown more than once comes back once, where it was first shown, with the recording
    it was last shown with (the one carrying the most recent notes). Nothing in the file is
    executed; a recording that fails its checks is skipped with a :class:`RecordingSkippedWarning`.
    """
    from footprint_lab.core.run import Run

    found: dict[str, Recording] = {}
    for _, _, recording in embedded(read_notebook(path)):
        found[recording.run_id] = recording
    return [Run.from_recording(recording) for recording in found.values()]


def verify_file(path: str | os.PathLike[str]) -> list[tuple[str, Verdict]]:
    """The seal verdict of every recording a file carries, each with where it sits.

    A ``.ipynb`` notebook gives one verdict per embedded recording (``cell 3, output 0``), every
    copy checked; a recording that no longer fits the schema is a broken verdict naming the field.
    Any other path is read as one saved recording (``.json``), or a saved checkpoint (an agent's
    or a composition's, told apart by their fields).
    """
    from footprint_lab.engine.seal import Verdict, verify

    where = as_path(path)
    if where.suffix.lower() != ".ipynb":
        return [_saved_json(where)]
    found: list[tuple[str, Verdict]] = []
    for cell, output, data in outputs(read_notebook(where)):
        carried = data.get("data")
        if not isinstance(carried, dict) or RECORDING_MIME not in carried:
            continue
        recording = check_recording(carried[RECORDING_MIME])
        place = f"cell {cell}, output {output}"
        if isinstance(recording, Recording):
            found.append((place, verify(recording)))
        else:
            field, problem = recording
            found.append((place, Verdict("broken", kind="recording", field=field, problem=problem)))
    return found


def _saved_json(where: Path) -> tuple[str, Verdict]:
    """The verdict of a saved recording or checkpoint (an agent's or a composition's, told apart by
    their fields), the file read and parsed once; what is not a readable ``.json`` file is refused
    by ``verify`` itself, naming what arrived."""
    from pydantic import ValidationError

    from footprint_lab.core.checkpoint import Checkpoint
    from footprint_lab.engine.seal import Verdict, verify
    from footprint_lab.flow.checkpoint import FlowCheckpoint

    if where.suffix.lower() != ".json" or not where.is_file():
        return "recording", verify(where)
    try:
        data = json.loads(where.read_bytes())
    except ValueError:
        return "recording", verify(where)
    kind = (Checkpoint if isinstance(data, dict) and {"first_run_id", "history"} <= data.keys()
            else FlowCheckpoint if isinstance(data, dict) and {"answers", "paused"} <= data.keys() else None)
    if kind is None:
        return "recording", verify(data)
    try:
        return "checkpoint", verify(kind.model_validate(data))
    except ValidationError as problem:
        field = ".".join(str(part) for part in problem.errors()[0]["loc"])
        return "checkpoint", Verdict("broken", kind="checkpoint", field=field,
                                     problem="does not fit the checkpoint schema")
