"""``%load_ext footprint_lab`` in a real kernel: a refusal shows as one card, no traceback, and the cell still fails."""

from __future__ import annotations

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbformat.v4 import new_code_cell, new_notebook

from footprint_lab.errors import InvalidRunInputError
from footprint_lab.lab.cards import error_card_html

SECRET = "sk-live-DO-NOT-SHOW-1234567890abcdef"

CELLS = [
    "%load_ext footprint_lab",
    "from footprint_lab import Agent\nfrom footprint_lab.providers import mock\n"
    "agent = Agent(provider=mock(reply='ok'))",
    f"agent.run_sync({{'text': '{SECRET}'}})",
    "print('after')",
]


def execute(allow_errors: bool) -> nbformat.NotebookNode:
    notebook = new_notebook(cells=[new_code_cell(source) for source in CELLS])
    NotebookClient(notebook, timeout=120, kernel_name="python3", allow_errors=allow_errors).execute()
    return notebook


def test_refusal_renders_as_a_card_and_the_cell_fails():
    notebook = execute(allow_errors=True)
    outputs = notebook.cells[2].outputs
    cards = [o for o in outputs if o.output_type == "display_data" and "text/html" in o.data]
    assert len(cards) == 1 and len(outputs) == 1  # the card alone: no traceback repeating it
    html = cards[0].data["text/html"]
    assert "ERR_INVALID_RUN_INPUT" in html and "InvalidRunInputError" in html
    assert "a dict with 1 key (not shown)" in html   # a key the door does not know is never named
    assert cards[0].data["text/plain"].startswith("InvalidRunInputError [ERR_INVALID_RUN_INPUT]")
    assert SECRET not in str(outputs)


def test_run_all_stops_at_the_refused_cell():
    with pytest.raises(CellExecutionError):
        execute(allow_errors=False)


def test_card_escapes_everything_and_shows_the_fields():
    refusal = InvalidRunInputError("Agent.run", "<script>alert(1)</script>", "hint <b>x</b>")
    html = error_card_html(refusal)
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    assert "<b>x</b>" not in html
    assert "received" in html and "runner" in html
    assert "<script" not in html.replace("<style>", "")
