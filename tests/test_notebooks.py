"""Every shipped notebook executes top to bottom on the embedded mock provider."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes_without_errors(path):
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    errors = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])
              if o.output_type == "error"]
    assert errors == []


def test_quickstart_shows_the_answer_and_the_refusal():
    path = Path(__file__).parent.parent / "notebooks" / "quickstart.ipynb"
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3").execute()
    text = "\n".join(o.get("text", "") for c in notebook.cells if c.cell_type == "code" for o in c.get("outputs", [])
                     if o.output_type == "stream")
    assert "DECLINED: order A-1001 is 47 days old (window 30 days)." in text
    assert "ERR_INVALID_RUN_INPUT" in text
