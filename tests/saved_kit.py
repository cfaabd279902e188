"""Saved recordings for the tests of pure explanations: no agent runs, the recording is read from a file.

The files live in ``tests/recordings/`` (``regenerate.py`` there writes them again from the
scenarios) and are read through ``load_recording``, the one door for a recording from outside.
"""

from __future__ import annotations

from pathlib import Path

from footprint_lab import Run, load_recording

RECORDINGS = Path(__file__).parent / "recordings"


def saved_run(name: str) -> Run:
    """The run saved as ``tests/recordings/<name>.json``, as ``Run.from_recording`` gives it back."""
    return Run.from_recording(load_recording((RECORDINGS / f"{name}.json").read_text()))
