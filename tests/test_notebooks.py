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


def printed_by(name: str) -> str:
    """Everything a shipped notebook prints when executed top to bottom."""
    notebook = nbformat.read(Path(__file__).parent.parent / "notebooks" / name, as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3").execute()
    return "\n".join(o.get("text", "") for c in notebook.cells if c.cell_type == "code" for o in c.get("outputs", [])
                     if o.output_type == "stream")


def test_quickstart_shows_the_answer_and_the_refusal():
    text = printed_by("quickstart.ipynb")
    assert "DECLINED: order A-1001 is 47 days old (window 30 days)." in text
    assert "ERR_INVALID_RUN_INPUT" in text


def test_planted_fact_notebook_walks_the_wrong_answer_back_to_the_planted_fact():
    text = printed_by("planted_fact.ipynb")
    assert "APPROVED: order A-1001 is refunded under the customer's VIP override." in text
    assert "BORN     define_fact('vip-override')" in text and "[not proven]" not in text
    assert "Clear winner: 'vip-override'" in text
    assert "CAUSAL: removing 'vip-override' flipped the outcome in 3/3 reruns" in text
    assert "NOT CONFIRMED: removing 'customer'" in text and "NOT CONFIRMED: removing 'lookup_order'" in text
    assert "instruction 'refund-policy' (system slot of call-llm#6): dropped" in text
