"""Every shipped notebook executes top to bottom on the embedded mock provider, in a real kernel."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

FOLDER = Path(__file__).parent.parent / "notebooks"
NOTEBOOKS = sorted(p.name for p in FOLDER.glob("*.ipynb"))


@cache
def executed(name: str) -> nbformat.NotebookNode:
    """A shipped notebook, executed once per test session in a fresh kernel."""
    notebook = nbformat.read(FOLDER / name, as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(FOLDER)}}).execute()
    return notebook


def outputs(name: str) -> list[nbformat.NotebookNode]:
    return [o for c in executed(name).cells if c.cell_type == "code" for o in c.get("outputs", [])]


def printed_by(name: str) -> str:
    return "\n".join(o.get("text", "") for o in outputs(name) if o.output_type == "stream")


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_executes_without_errors(name):
    assert [o for o in outputs(name) if o.output_type == "error"] == []


def test_quickstart_shows_the_answer_and_the_refusal_card():
    text = printed_by("quickstart.ipynb")
    assert "DECLINED: order A-1001 is 47 days old (window 30 days)." in text
    assert "ERR_INVALID_RUN_INPUT" in text
    cards = [o.data["text/html"] for o in outputs("quickstart.ipynb")
             if o.output_type == "display_data" and "fl-card" in o.data.get("text/html", "")]
    assert len(cards) == 1 and "InvalidRunInputError" in cards[0]


def test_planted_fact_notebook_walks_the_wrong_answer_back_to_the_planted_fact():
    text = printed_by("planted_fact.ipynb")
    assert "APPROVED: order A-1001 is refunded under the customer's VIP override." in text
    assert "BORN     define_fact('vip-override') at In[2]:" in text and "[not proven]" not in text
    assert "Clear winner: 'vip-override'" in text
    assert "CAUSAL: removing 'vip-override' flipped the outcome in 3/3 reruns" in text
    assert "NOT CONFIRMED: removing 'customer'" in text and "NOT CONFIRMED: removing 'lookup_order'" in text
    assert "instruction 'refund-policy' (system slot of call-llm#6): dropped" in text


def test_localize_shows_a_progress_bar_in_the_kernel():
    notebook = executed("planted_fact.ipynb")
    cell = next(c for c in notebook.cells if c.cell_type == "code" and "await localize(" in c.source)
    views = [o for o in cell.outputs if o.output_type == "display_data"
             and "application/vnd.jupyter.widget-view+json" in o.data]
    assert len(views) == 1


def test_pipeline_notebook_proves_the_upstream_fact_on_the_whole_pipeline():
    text = printed_by("pipeline.ipynb")
    assert "APPROVED: order A-1001 is refunded under the customer's VIP override." in text
    assert "fact 'vip-status' of member 'triage'" in text
    assert "CARRIED  the answer of member 'triage', written by sequence-step#2/final#4, was passed by" in text
    assert "CAUSAL: removing 'vip-status' in member 'triage' flipped the outcome in 3/3 reruns" in text
    assert "NOT CONFIRMED: removing 'refunds/customer' in member 'refunds'" in text
    assert "[not proven]" not in text and "['vip-status']" in text
