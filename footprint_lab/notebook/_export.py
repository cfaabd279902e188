"""``export(runs, path, title=...)``: a new notebook that tells the story of some runs, evidence included.

Rule kept here: what ``export`` writes, ``load_runs`` reads back identically. The notebook
opens with a title cell (and the analyst's notes), then per run a heading, the run's own
display (its answer view, with the recording under the recording MIME type), its tree when
it is composed, its backtrack, and each of its notes as a markdown quote next to what it is
about (notes on the answer after the answer view, notes on steps and pieces after the
backtrack). Every text a note, a title or a run carries is HTML-escaped in the markdown.
With ``redact``, the written notebook is scrubbed with that policy before it is saved. The path
is checked before any view is drawn (its folder must exist; see ``_read.output_path``).

Role: lab layer (``footprint_lab.notebook``); the views are ``footprint_lab.lab.views``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from footprint_lab.base.refusal import describe_shape
from footprint_lab.core.run import Run
from footprint_lab.core.runs_given import Runs, runs_given
from footprint_lab.lab.views import run_bundle
from footprint_lab.lab.views.tree import PLOTLY_MIME, tree_figure, tree_html
from footprint_lab.markup.elements import Html, el, esc, raw
from footprint_lab.notebook._scrub import check_policy, sweep
from footprint_lab.notebook.read import SharingConfigError, output_path, write_notebook
from footprint_lab.record.recording import Annotation, Recording
from footprint_lab.redact.policy import Redaction
from footprint_lab.sealing.output_seal import bind_display

NBFORMAT_MINOR = 5


def export(runs: Runs, path: str | os.PathLike[str], *, title: str, notes: str | None = None,
           redact: Redaction | None = None) -> Path:
    """Write ``runs`` (a ``Run``, a ``Recording``, or a list, ``RunSet`` or other iterable of them) as a shareable
    notebook at ``path``."""
    items = _runs(runs)
    if not isinstance(title, str) or not title.strip():
        raise SharingConfigError("export", "title", describe_shape(title), "must be a non-empty string")
    if notes is not None and not isinstance(notes, str):
        raise SharingConfigError("export", "notes", describe_shape(notes), "must be a string, or left out")
    policy = check_policy("export", redact) if redact is not None else None
    target = output_path(path, "path")  # its folder checked before any view is drawn
    cells = [_markdown(f"# {_md(title)}" + (f"\n\n{_md(notes)}" if notes else ""))]
    for number, run in enumerate(items, start=1):
        cells.extend(_run_cells(run, number))
    notebook = {"cells": cells, "metadata": {"footprint_lab": {"exported": len(items)}},
                "nbformat": 4, "nbformat_minor": NBFORMAT_MINOR}
    for index, cell in enumerate(cells):
        cell["id"] = f"fl-{index}"
    if policy is not None:
        sweep(notebook, policy, write=True, argument="runs")
    write_notebook(notebook, target, "path")
    return target


_RUNS_FIX = "must be a Run or a Recording, or a list (or RunSet) of them"


def _runs(runs: Runs) -> list[Run]:
    items = runs_given(runs)
    if items is None:
        raise SharingConfigError("export", "runs", describe_shape(runs), _RUNS_FIX)
    if not items:
        raise SharingConfigError("export", "runs", "an empty list", "must hold at least one run")
    out = []
    for item in items:
        if isinstance(item, Recording):
            item = Run.from_recording(item)
        if not isinstance(item, Run):
            raise SharingConfigError("export", "runs", describe_shape(item), _RUNS_FIX)
        out.append(item)
    return out


def _run_cells(run: Any, number: int) -> list[dict[str, Any]]:
    recording: Recording = run.recording
    runner = recording.runner
    who = runner.name or runner.id or runner.kind
    notes = recording.annotations
    cells = [_markdown(f"## {number}. {_md(who)} · {_code(recording.run_id)} · {_md(recording.status)}")]
    cells.append(_display("the run: its answer view (the recording rides in this output, whatever its size)",
                          bind_display(run_bundle(recording, budget=None))))
    cells.extend(_note_cells([n for n in notes if n.target == "answer"]))
    if recording.children:
        cells.append(_display("run.tree()", _tree_bundle(run.tree())))
    if recording.exchanges or recording.children:
        # Its text only: the answer view above already draws each piece's chain of custody in HTML,
        # and the same backtrack again as HTML and markdown would double the file.
        cells.append(_display("run.backtrack()", {"text/plain": str(run.backtrack())}))
    cells.extend(_note_cells([n for n in notes if n.target != "answer"]))
    return cells


def _tree_bundle(tree: Any) -> dict[str, Any]:
    """A tree's figure as plotly JSON beside its no-script HTML: no copy of plotly.js in the file
    (JupyterLab draws the JSON itself; ``to_html`` embeds plotly.js once for the whole page)."""
    return {"text/plain": tree.summary(), PLOTLY_MIME: json.loads(tree_figure(tree).to_json()),
            "text/html": tree_html(tree)}


def _note_cells(notes: list[Annotation]) -> list[dict[str, Any]]:
    cells = []
    for note in notes:
        tag = f" *({_md(note.tag)})*" if note.tag else ""
        target = "the answer" if note.target == "answer" else _code(note.target)
        cells.append(_markdown(f"> **Note on {target}**{tag}: {_md(note.text)}"))
    return cells


def _code(text: str) -> Html:
    """An id in a markdown cell, as code (its controls as plain marks: a markdown line holds no badge)."""
    return el("code", raw(_md(text)))  # markdown reads what sits between the tags: its markers escaped too


def _md(text: str) -> str:
    """Text for a markdown cell: drawn as every value is (``markup.elements.esc``), markdown's markers neutralised."""
    escaped = esc(text, badges=False)  # its markers are escaped next: no element may be written
    for marker in ("\\", "`", "*", "_", "[", "]", "#", "|", "~", "$", "!"):
        escaped = escaped.replace(marker, "\\" + marker)
    return escaped.replace("\n", " ")


def _markdown(source: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "metadata": {}, "source": source}


def _display(what: str, data: dict[str, Any]) -> dict[str, Any]:
    """A code cell holding one saved display; its source only says what it shows (it is not meant to run)."""
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "source": f"# {what}",
            "outputs": [{"output_type": "display_data", "data": data, "metadata": {}}]}
