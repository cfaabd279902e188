"""Share annotated notebooks: recordings travel inside the ``.ipynb``, safe to share and to read offline.

- :func:`load_runs` reads every recording a notebook's outputs carry, as ``Run`` objects that
  explain exactly like live ones (nothing in the file is executed; untrustworthy ones are
  skipped with a warning naming the cell and field). Reading many shows its progress once it lasts;
  stopped, it says so in one line and :func:`last_stopped` gives the runs read.
- :func:`scan` lists what a redaction policy would still find, anywhere in the file (metadata,
  attachments, every MIME type, base64 and PNG text, widget state, through HTML entities, comments
  and ANSI codes); :func:`scrub` masks it there, keeping the recordings loadable.
- :func:`export` writes runs as a new notebook (title, per run its views, backtrack and notes,
  the recordings embedded); :func:`to_html` writes one offline HTML page from a notebook.
- :func:`check_widget_state` reports saved widget state that breaks GitHub's renderer or bloats the file.

- :func:`bug_report` (``run.bug_report(path)``, ``chat.bug_report(path)``) writes a zip to attach to an
  issue: the recordings masked and scanned clean, their views offline, versions, and a manifest of every file.

- :func:`verify_file` checks the seal of every recording a notebook (or ``.json`` file) carries, and
  what each output that carries a sealed recording displays beside it.

The console script ``footprint-lab`` (``scan``, ``scrub``, ``html``, ``verify``, ``lint-tools``) runs the
same functions and exits 0 when clean, 1 on findings, 2 when an input is refused (see ``cli``);
``.pre-commit-hooks.yaml`` lets a team refuse a commit that still holds a match. Every file is read
through one door (``_read``): a missing, unreadable, malformed or too deeply nested file, or a path
to write whose folder does not exist, is refused by name (:class:`NotebookFileError`).

Role: lab layer. Reached as ``footprint_lab.notebook``; nothing else in the library imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from footprint_lab.base.exports import public

if TYPE_CHECKING:
    from footprint_lab.base.progress import last_stopped as last_stopped
    from footprint_lab.notebook._export import export as export
    from footprint_lab.notebook._html import to_html as to_html
    from footprint_lab.notebook._scrub import ScanFinding as ScanFinding
    from footprint_lab.notebook._scrub import WidgetStateProblem as WidgetStateProblem
    from footprint_lab.notebook._scrub import check_widget_state as check_widget_state
    from footprint_lab.notebook._scrub import scan as scan
    from footprint_lab.notebook._scrub import scrub as scrub
    from footprint_lab.notebook.bug_bundle import BugReportError as BugReportError
    from footprint_lab.notebook.bug_bundle import bug_report as bug_report
    from footprint_lab.notebook.read import WIDGET_STATE_MIME as WIDGET_STATE_MIME
    from footprint_lab.notebook.read import NotebookFileError as NotebookFileError
    from footprint_lab.notebook.read import RecordingSkippedWarning as RecordingSkippedWarning
    from footprint_lab.notebook.read import SharingConfigError as SharingConfigError
    from footprint_lab.notebook.read import load_runs as load_runs
    from footprint_lab.notebook.read import verify_file as verify_file

__all__ = [
    "WIDGET_STATE_MIME",
    "BugReportError",
    "NotebookFileError",
    "RecordingSkippedWarning",
    "ScanFinding",
    "SharingConfigError",
    "WidgetStateProblem",
    "bug_report",
    "check_widget_state",
    "export",
    "last_stopped",
    "load_runs",
    "scan",
    "scrub",
    "to_html",
    "verify_file",
]
__getattr__, __dir__ = public(__name__)

